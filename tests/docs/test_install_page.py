"""docs/install.md against what it describes: scripts/install's options and defaults, the uv commands it
gives for a clone (run for real into a folder of their own), and the registry commands marked as such."""

from __future__ import annotations

import os
import re
import shlex
import subprocess

import pytest
from tests.docs import pages
from tests.server.init.test_command import UV_BIN, a_clone, printed

ROOT = pages.ROOT


def page() -> str:
    return pages.page("install.md")


def section(title: str) -> str:
    return pages.section(title, page())


def shell_lines(body: str) -> list[str]:
    lines = [line for block in pages.code_blocks(body, "sh") for line in block.splitlines()]
    return [line.split(" #")[0].strip() for line in lines if line.strip() and not line.startswith("#")]


def install_help() -> str:
    return subprocess.run([ROOT / "scripts" / "install", "--help"], capture_output=True, text=True, check=True).stdout


def test_the_page_says_first_that_the_packages_are_not_on_pypi():
    first = page().split("\n\n")[1]
    assert first.startswith("**The packages are not on PyPI yet.**")
    assert "## From PyPI (not yet published)" in page()
    assert section("From PyPI (not yet published)").lstrip().startswith("**Not yet published")


def test_every_scripts_install_line_uses_its_real_options():
    usage = install_help().splitlines()[0]
    assert usage == "Usage: scripts/install [--extras pdf,docx] [--venv DIR] [--bin DIR]"
    options = set(re.findall(r"--\w+", usage))
    table = section("From a clone, with `scripts/install`")
    assert set(re.findall(r"^\| `(--\w+)", table, re.MULTILINE)) == options
    lines = [line for line in shell_lines(page()) if line.startswith("scripts/install")]
    assert lines
    for line in lines:
        words = shlex.split(line)[1:]
        assert {word for word in words if word.startswith("--")} <= options, line
        if "--extras" in words:
            assert set(words[words.index("--extras") + 1].split(",")) <= {"pdf", "docx"}


def test_uninstall_removes_what_scripts_install_made():
    lines = shell_lines(section("Uninstall"))
    help_text = " ".join(install_help().split())
    assert "(default: ~/.local/share/lancelot/venv)" in help_text
    assert "(default: ~/.local/bin)" in help_text
    assert "rm ~/.local/bin/lancelot-index ~/.local/bin/lancelot ~/.local/bin/lancelot-init" in lines
    assert "rm -r ~/.local/share/lancelot/venv" in lines
    assert "lancelot-init --forget" in lines


@pytest.mark.slow
@pytest.mark.installs
@pytest.mark.timeout(900)  # downloads: as long as the install itself may take
def test_the_uv_tool_commands_install_the_three_commands_from_a_clone(tmp_path, clean_env, indexed_db):
    clone = a_clone(tmp_path)
    tools, links = tmp_path / "tools", tmp_path / "bin"
    env = clean_env | {
        "PATH": f"{UV_BIN}{os.pathsep}{clean_env['PATH']}",
        "UV_TOOL_DIR": str(tools),
        "UV_TOOL_BIN_DIR": str(links),
    }
    lines = [line for line in shell_lines(section("With uv or pipx, from the clone")) if line.startswith("uv ")]
    assert lines == [
        "uv tool install ./server",
        "uv tool install './indexer[pdf,docx]'",
        "uv tool install --reinstall ./server",
        "uv tool install --reinstall './indexer[pdf,docx]'",
    ]
    for line in lines[:3]:
        done = subprocess.run(shlex.split(line), cwd=clone, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    assert {"lancelot-index", "lancelot", "lancelot-init"} <= {path.name for path in links.iterdir()}
    told = subprocess.run(
        [links / "lancelot-init", "--db", indexed_db, "--no-api-key"], env=env, capture_output=True, text=True
    )
    assert told.returncode == 0, told.stderr
    _, command, _ = printed(told.stdout)
    assert command == [str(tools / "lancelot-server" / "bin" / "lancelot")]
