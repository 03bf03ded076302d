"""README's quick start and the client configurations of docs/clients.md, run as far as they run without a
network client.

The quick start's index command is run with this environment's `lancelot-index` on examples/docs, copied to
where it says the documents are, in a temporary folder standing for the home folder; the server is then
started over real stdio by the MCP SDK's client with the command and environment the Claude Code line and
the `mcpServers` entry give (`~/.local/bin/lancelot`, what `scripts/install` links, is a link to this
environment's `lancelot`), and searched.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.docs import pages
from tests.docs.stdio_session import call_tools, isolated
from tests.support.claude_code import claude_mcp_add

BIN = Path(sys.executable).parent
EXAMPLE_DOCS = pages.ROOT / "examples" / "docs"
HOME = "/home/you"
INSTALLED = f"{HOME}/.local/bin/lancelot"


def sh_lines(body: str) -> list[str]:
    return [line for block in pages.code_blocks(body, "sh") for line in block.splitlines()]


def quick_start() -> list[str]:
    """The first block of README's quick start: clone, install, index, connect."""
    return pages.code_blocks(pages.section("Quick start", pages.readme()), "sh")[0].splitlines()


def package_index_lines() -> list[str]:
    return sh_lines(pages.section("From the package index (not yet)", pages.readme()))


def the_line(lines: list[str], prefix: str) -> str:
    found = [line for line in lines if line.startswith(prefix)]
    assert found, f"no line starting {prefix!r}"
    return found[0]


def indexer_arguments(line: str, home: str = HOME) -> list[str]:
    """The arguments after `lancelot-index`, with a leading `~/` expanded to `home` as a shell would."""
    words = shlex.split(line.split("&&")[-1])
    arguments = words[words.index("lancelot-index") + 1 :]
    return [home + word[1:] if word.startswith("~/") else word for word in arguments]


def client_entries() -> tuple[dict, dict]:
    """The `mcpServers` entry (Claude Desktop, Cursor, Windsurf) and VS Code's entry of docs/clients.md."""
    clients = pages.page("clients.md")
    (desktop,) = pages.code_blocks(pages.section("Claude Desktop, Cursor and Windsurf", clients), "json")
    (vscode,) = pages.code_blocks(pages.section("VS Code", clients), "json")
    return json.loads(desktop)["mcpServers"]["lancelot"], json.loads(vscode)["servers"]["lancelot"]


def test_the_quick_start_clones_installs_indexes_and_connects():
    clone, install, index, connect = quick_start()
    assert clone == f"git clone {pages.REPO_URL}"
    assert install == f"{pages.REPO_URL.rsplit('/', 1)[1]}/scripts/install"
    assert indexer_arguments(index) == [f"{HOME}/notes", f"{HOME}/lancelot-db"]  # no --embed: no key needed
    assert connect.startswith("claude mcp add ")


def test_every_package_index_form_builds_the_same_database():
    forms = [line for line in package_index_lines() if "lancelot-index " in line]
    assert [line.split(" lancelot-index ")[0] for line in forms] == [
        "uvx --from lancelot-indexer",
        "pipx run --spec lancelot-indexer",
        "pip install lancelot-indexer &&",
    ]
    assert {tuple(indexer_arguments(line)) for line in forms} == {("./docs", "./lancelot-db")}


def test_the_claude_code_lines_give_the_name_and_an_absolute_path():
    readme = pages.readme()
    installed = [
        the_line(quick_start(), "claude mcp add "),
        *[line for line in sh_lines(pages.section("Connect Claude Code", readme)) if line.startswith("claude ")],
        *[
            line
            for line in sh_lines(pages.section("Claude Code", pages.page("clients.md")))
            if line.startswith("claude ")
        ],
    ]
    published = [line for line in package_index_lines() if line.startswith("claude ")]
    assert (len(installed), len(published)) == (3, 1)
    for line in installed + published:
        env, options, names, command = claude_mcp_add(line)
        assert names == ["lancelot"]
        assert options == {}
        assert env["LANCEDB_PATH"] == f"{HOME}/lancelot-db"
        assert command == ([INSTALLED] if line in installed else ["uvx", "lancelot-server"])
    assert "OPENAI_API_KEY" in claude_mcp_add(installed[1])[0]  # the line for vector search


def test_without_an_option_after_env_the_name_is_swallowed():
    # What docs/clients.md warns about, so the reading above is Claude Code's and not a lenient one.
    env, _, names, _ = claude_mcp_add("claude mcp add -e LANCEDB_PATH=/db lancelot -- uvx lancelot-server")
    assert names == []
    assert env == {"LANCEDB_PATH": "/db", "lancelot": ""}


def test_the_client_configurations_run_the_installed_server():
    desktop, vscode = client_entries()
    assert desktop["command"] == INSTALLED
    assert pages.assert_runs_the_installed_server(desktop) == f"{HOME}/lancelot-db"
    assert vscode.pop("type") == "stdio"
    assert pages.assert_runs_the_installed_server(vscode) == "${workspaceFolder}/lancelot-db"


def test_a_published_entry_is_not_taken_for_an_installed_one():
    entry = {"command": "uvx", "args": ["lancelot-server"], "env": {"LANCEDB_PATH": "/db"}}
    assert pages.assert_runs_the_published_server(entry) == "/db"
    with pytest.raises(AssertionError):
        pages.assert_runs_the_installed_server(entry)


@pytest.mark.slow
def test_the_quick_start_indexes_a_folder_and_the_configured_server_finds_it(tmp_path, clean_env):
    home = tmp_path / "home"
    shutil.copytree(EXAMPLE_DOCS, home / "notes")
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "lancelot").symlink_to(BIN / "lancelot")  # what scripts/install links
    index = the_line(quick_start(), "lancelot-index ")
    done = subprocess.run(
        [BIN / "lancelot-index", *indexer_arguments(index, str(home))],
        cwd=home,
        env=clean_env | {"HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Indexed 4 documents into ")

    env, _, _, command = claude_mcp_add(the_line(quick_start(), "claude mcp add "), home=str(home))
    desktop, _ = client_entries()
    # The page's entry, its /home/you made the temporary home, is the quick start's line in JSON.
    assert [desktop["command"].replace(HOME, str(home)), *desktop["args"]] == command
    assert desktop["env"]["LANCEDB_PATH"].replace(HOME, str(home)) == env["LANCEDB_PATH"]
    # Started from elsewhere, as a client does: the absolute path must still find the database.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (result,) = call_tools(
        command[0],
        command[1:],
        isolated(clean_env, LANCEDB_PATH=env["LANCEDB_PATH"]),
        [("lancedb_search", {"query": "how do I fix a puncture"})],
        cwd=elsewhere,
    )
    assert not result.is_error, result.content
    reply = result.structured_content
    assert reply is not None and reply["searchType"] == "text"
    assert reply["hits"][0]["source"] == "guide/puncture.md"
