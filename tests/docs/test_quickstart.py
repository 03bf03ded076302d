"""README's quickstart and client configurations, run as far as they run without a network client.

The index command is taken from README's quickstart and run with this environment's `lancelot-index` on
examples/docs; the server is then started over real stdio by the MCP SDK's client with the command and
environment of README's `mcpServers` entry (`uvx lancelot-server` becomes this environment's
`lancelot-server`, LANCEDB_PATH the path README's `claude mcp add` line gives), and searched.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.docs import readme
from tests.docs.stdio_session import call_tools, isolated

BIN = Path(sys.executable).parent
EXAMPLE_DOCS = readme.ROOT / "examples" / "docs"
INDEX_COMMAND = "uvx --from lancelot-indexer lancelot-index "


def quickstart_lines() -> list[str]:
    return [line for block in readme.code_blocks(readme.section("Quickstart"), "sh") for line in block.splitlines()]


def the_line(prefix: str) -> str:
    """The first quickstart line that starts with `prefix` (the full-text form comes before the --embed one)."""
    return next(line for line in quickstart_lines() if line.startswith(prefix))


def claude_mcp_add(line: str, pwd: str = "/home/you") -> tuple[dict[str, str], dict[str, str], list[str], list[str]]:
    """Read a `claude mcp add` line as Claude Code's CLI does: (env, other options, names, server command).

    `-e/--env` is variadic there: it takes every following word up to the next option, so a name written
    straight after it becomes one more variable (without `=`, an empty value here).
    """
    words = shlex.split(line.replace("$PWD", pwd))
    assert words[:3] == ["claude", "mcp", "add"], line
    cut = words.index("--")
    words, command = words[3:cut], words[cut + 1 :]
    env: dict[str, str] = {}
    options: dict[str, str] = {}
    names: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word in ("-e", "--env"):
            while index < len(words) and not words[index].startswith("-"):
                name, _, value = words[index].partition("=")
                env[name] = value
                index += 1
        elif word.startswith("-"):
            options[word] = words[index]
            index += 1
        else:
            names.append(word)
    return env, options, names, command


def indexer_arguments(line: str) -> list[str]:
    words = shlex.split(line.split("&&")[-1])
    return words[words.index("lancelot-index") + 1 :]


def test_every_indexer_form_in_the_quickstart_builds_the_same_database():
    forms = [line for line in quickstart_lines() if "lancelot-index " in line and "--embed" not in line]
    assert [line.split(" lancelot-index ")[0] for line in forms] == [
        "uvx --from lancelot-indexer",
        "pipx run --spec lancelot-indexer",
        "pip install lancelot-indexer &&",
    ]
    assert {tuple(indexer_arguments(line)) for line in forms} == {("./docs", "./lancelot-db")}


def test_the_claude_code_lines_give_the_name_and_an_absolute_path():
    lines = [line for line in quickstart_lines() if line.startswith("claude mcp add ")]
    assert len(lines) == 2  # full-text search, and with a key for vector search
    for line in lines:
        env, options, names, command = claude_mcp_add(line)
        assert names == ["lancelot"]
        assert options == {"--transport": "stdio"}
        assert env["LANCEDB_PATH"] == "/home/you/lancelot-db"
        assert command == ["uvx", "lancelot-server"]
    assert "OPENAI_API_KEY" in claude_mcp_add(lines[1])[0]


def test_without_an_option_after_env_the_name_is_swallowed():
    # What the README warns about, so the reading above is Claude Code's and not a lenient one.
    env, _, names, _ = claude_mcp_add("claude mcp add --env LANCEDB_PATH=/db lancelot -- uvx lancelot-server")
    assert names == []
    assert env == {"LANCEDB_PATH": "/db", "lancelot": ""}


def test_the_client_configurations_are_json_that_run_the_server():
    blocks = [json.loads(block) for block in readme.code_blocks(readme.section("Other clients"), "json")]
    assert [list(block) for block in blocks] == [["mcpServers"], ["servers"]]
    desktop, vscode = blocks[0]["mcpServers"]["lancelot"], blocks[1]["servers"]["lancelot"]
    assert readme.assert_runs_the_server(desktop).startswith("/")
    assert vscode.pop("type") == "stdio"
    assert readme.assert_runs_the_server(vscode) == "${workspaceFolder}/lancelot-db"


def test_every_link_to_a_section_finds_its_heading():
    document = readme.text()
    targets = set(re.findall(r"\]\(#([\w-]+)\)", document))
    assert {"quickstart", "troubleshooting", "other-clients", "index-your-documents"} <= targets
    assert sorted(targets - readme.anchors(document)) == []


@pytest.mark.slow
def test_the_quickstart_indexes_a_folder_and_the_configured_server_finds_it(tmp_path, clean_env):
    shutil.copytree(EXAMPLE_DOCS, tmp_path / "docs")
    arguments = indexer_arguments(the_line(INDEX_COMMAND))
    done = subprocess.run(
        [BIN / "lancelot-index", *arguments], cwd=tmp_path, env=clean_env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Indexed 4 documents into ")

    env, _, _, _ = claude_mcp_add(the_line("claude mcp add --env LANCEDB_PATH="), pwd=str(tmp_path))
    (block, *_) = readme.code_blocks(readme.section("Other clients"), "json")
    entry = json.loads(block)["mcpServers"]["lancelot"]
    assert (entry["command"], *entry["args"]) == ("uvx", "lancelot-server")
    server_env = isolated(clean_env, **(entry["env"] | {"LANCEDB_PATH": env["LANCEDB_PATH"]}))
    # Started from elsewhere, as a client does: the absolute path must still find the database.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (result,) = call_tools(
        BIN / "lancelot-server",
        [],
        server_env,
        [("lancedb_search", {"query": "how do I fix a puncture"})],
        cwd=elsewhere,
    )
    assert not result.is_error, result.content
    reply = result.structured_content
    assert reply is not None and reply["searchType"] == "text"
    assert reply["hits"][0]["source"] == "guide/puncture.md"
