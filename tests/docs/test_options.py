"""docs/settings.md lists every option of `lancelot-index`, `lancelot` and `lancelot-init`, and only those.

The options are read from the commands themselves (the click commands their console scripts name), so an
option added, renamed or dropped fails here until the page says so.
"""

from __future__ import annotations

import re
from importlib.metadata import entry_points

import click
import pytest
from tests.docs import pages

OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][a-z-]*")
SECTIONS = {
    "lancelot-index": "lancelot-index options",
    "lancelot": "lancelot options",
    "lancelot-init": "lancelot-init options",
}


def command(name: str) -> click.Command:
    (script,) = entry_points(group="console_scripts", name=name)
    loaded = script.load()
    assert isinstance(loaded, click.Command), name
    return loaded


def command_options(name: str) -> set[str]:
    """Every option the command shows, --help and --version included (a hidden one is an earlier name)."""
    cli = command(name)
    params = cli.get_params(click.Context(cli, **cli.context_settings))
    return {
        option
        for param in params
        if isinstance(param, click.Option) and not param.hidden
        for option in param.opts + param.secondary_opts
    }


def table_options(body: str) -> set[str]:
    """The options in the first column of the section's table."""
    cells = re.findall(r"^\| (`-.*?) \|", body, re.MULTILINE)
    return {option for cell in cells for option in OPTION.findall(cell)}


def section(name: str) -> str:
    return pages.section(SECTIONS[name], pages.page("settings.md"))


@pytest.mark.parametrize("name", SECTIONS)
def test_the_options_table_matches_the_command(name):
    assert table_options(section(name)) == command_options(name)


@pytest.mark.parametrize("name", ["lancelot-index", "lancelot"])
def test_the_synopsis_names_every_long_option_but_help_and_version(name):
    (synopsis,) = pages.code_blocks(section(name), "text")
    assert synopsis.startswith(f"{name} ")
    long_options = {option for option in command_options(name) if option.startswith("--")}
    assert set(OPTION.findall(synopsis)) == long_options - {"--help", "--version"}


def test_the_table_parser_reads_options():
    body = "| option | x |\n|---|---|\n| `--table NAME` | a |\n| `-q`, `--quiet` | b |\n| not `--this` | c |\n"
    assert table_options(body) == {"--table", "-q", "--quiet"}
