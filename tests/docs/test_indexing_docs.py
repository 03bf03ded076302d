"""README's "Index your documents" names every option `lancelot-index --help` offers, and only those."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.docs import readme

from lancelot_indexer.documents import walk

BIN = Path(sys.executable).parent
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def help_options() -> set[str]:
    done = subprocess.run([BIN / "lancelot-index", "--help"], capture_output=True, text=True, timeout=60, check=True)
    return set(OPTION.findall(done.stdout))


def table_options(body: str) -> set[str]:
    """The options in the first column of the section's table."""
    cells = re.findall(r"^\| (`-.*?) \|", body, re.MULTILINE)
    return {option for cell in cells for option in OPTION.findall(cell)}


def test_the_options_table_matches_the_help():
    documented = table_options(readme.section("Index your documents"))
    assert documented == help_options()


def test_the_synopsis_names_every_option_but_help_and_version():
    (synopsis, *_) = readme.code_blocks(readme.section("Index your documents"), "text")
    assert synopsis.startswith("lancelot-index DOCS DB ")
    assert set(OPTION.findall(synopsis)) == help_options() - {"--help", "--version"}


def test_the_extensions_read_are_the_walkers():
    body = readme.section("Index your documents")
    match = re.search(r"whose name ends in (.*?) \(in any case\)", body, re.DOTALL)
    assert match, "the sentence naming the extensions is gone"
    assert set(re.findall(r"`(\.\w+)`", match.group(1))) == set(walk.EXTENSIONS)


def test_the_table_parser_reads_options():
    body = "| option | x |\n|---|---|\n| `--table NAME` | a |\n| `-q`, `--quiet` | b |\n| not `--this` | c |\n"
    assert table_options(body) == {"--table", "--quiet"}
