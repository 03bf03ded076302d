"""scripts/install, run for real as a person without uv runs it, then its printed lines followed literally.

The install needs the package index (pip downloads what the three distributions depend on): about two
minutes, once. What it prints next is run as printed: the indexer on a folder, the server through the
`claude mcp add` line (started by the MCP SDK's client over stdio), lancelot-init for other clients.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.docs.stdio_session import call_tools, isolated
from tests.support.claude_code import claude_mcp_add

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "scripts" / "install"
COMMANDS = ("lancelot-index", "lancelot", "lancelot-init")
MODULES = ["pypdfium2", "docx", "pytest", "ruff", "mypy", "uv", "lancedb"]


@pytest.fixture
def person(clean_env, tmp_path) -> dict[str, str]:
    """A home of their own, and a PATH with this machine's Python (not this venv's) and no uv."""
    home = tmp_path / "home"
    home.mkdir()
    path = os.pathsep.join([str(Path(sys.base_prefix) / "bin"), "/usr/bin", "/bin"])
    assert shutil.which("uv", path=path) is None, "uv is on the PATH this test means to be without it"
    skip = ("VIRTUAL_ENV", "XDG_DATA_HOME", "PYTHONPATH")
    return {name: value for name, value in clean_env.items() if name not in skip} | {"HOME": str(home), "PATH": path}


def install(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([INSTALL, *args], env=env, capture_output=True, text=True, timeout=900, cwd=env["HOME"])


def line_with(output: str, text: str) -> str:
    (line,) = [line.strip() for line in output.splitlines() if text in line and not line.startswith("Usage")]
    return line


def importable(venv: Path) -> list[str]:
    """Which of the optional readers and development tools the environment's Python finds."""
    code = f"import importlib.util as u; print(*[n for n in {MODULES!r} if u.find_spec(n)])"
    done = subprocess.run([venv / "bin" / "python", "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.mark.slow
@pytest.mark.installs
@pytest.mark.timeout(900)  # downloads: as long as the install itself may take
def test_the_install_puts_the_commands_on_path_and_its_printed_lines_index_and_serve(person, clean_env, tmp_path):
    home = Path(person["HOME"])
    done = install(person, "--extras", "pdf,docx")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    venv, links = home / ".local" / "share" / "lancelot" / "venv", home / ".local" / "bin"
    for command in COMMANDS:
        assert (links / command).resolve() == venv / "bin" / command
    assert f"{links} is not on your PATH" in out
    # Runtime only: the readers asked for, none of the development tools.
    assert importable(venv) == ["pypdfium2", "docx"]

    # The printed lines, as printed: DOCS is the one word a person replaces.
    docs = shutil.copytree(ROOT / "examples" / "docs", tmp_path / "my documents")
    index = [str(docs) if word == "DOCS" else word for word in shlex.split(line_with(out, " DOCS "))]
    assert index[0] == str(links / "lancelot-index")
    indexed = subprocess.run(index, env=person, capture_output=True, text=True, timeout=300, cwd=home)
    assert indexed.returncode == 0, indexed.stderr
    assert indexed.stdout.startswith("Indexed 4 documents into ")

    env, options, names, command = claude_mcp_add(line_with(out, "claude mcp add "))
    assert (names, options) == (["lancelot"], {})
    assert env == {"LANCEDB_PATH": str(home / "lancelot-db")}
    assert command == [str(venv / "bin" / "lancelot")]
    (found,) = call_tools(command[0], [], isolated(clean_env, **env), [("lancedb_search", {"query": "oil the chain"})])
    assert found.structured_content["hits"][0]["source"] == "guide/chain-care.txt"

    # lancelot-init, reached through its link, names the same server.
    init = shlex.split(line_with(out, "lancelot-init --db").split("`")[1])
    told = subprocess.run([*init, "--no-api-key"], env=person, capture_output=True, text=True, timeout=60)
    assert told.returncode == 0, told.stderr
    assert line_with(told.stdout, "claude mcp add ") == line_with(out, "claude mcp add ")

    # Again, as after a `git pull`: the same environment, upgraded in place, the extras kept.
    again = install(person)
    assert again.returncode == 0, again.stderr
    assert f"Upgrading the environment in {venv}" in again.stdout
    assert importable(venv) == ["pypdfium2", "docx"]


def test_mistakes_are_refused_before_anything_is_installed(person, tmp_path):
    links = tmp_path / "links"
    links.mkdir()
    (links / "lancelot").write_text("#!/bin/sh\n", encoding="utf-8")
    venv = tmp_path / "venv"
    cases = [
        (["--extras", "pdf,epub"], "--extras takes pdf, docx, ray, local or several (pdf,docx), not 'epub'"),
        (["--venv"], "--venv needs a value"),
        (["--bin", str(links), "--venv", str(venv)], f"{links}/lancelot is there already and is not a link"),
        (["--pdf"], "unknown argument '--pdf'"),
    ]
    for args, message in cases:
        done = install(person, *args)
        assert done.returncode == 2, args
        assert message in done.stderr, done.stderr
    assert not venv.exists()
