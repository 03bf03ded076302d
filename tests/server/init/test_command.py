"""lancelot-init prints the command that starts this installation's server, as each kind of install has it.

Through the real CLI: this environment's `lancelot-init` (a venv), the same reached through a link (as
scripts/install lays it out), and uvx for real, from this clone's folder and from built wheels found as a
package index would serve them. The printed command is then started by the MCP SDK's client and searched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.docs.stdio_session import call_tools, isolated
from tests.support.claude_code import claude_mcp_add

import lancelot_server

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[3]
UV_BIN = ROOT / ".tools" / "bin"


def printed(output: str) -> tuple[dict[str, str], list[str], dict]:
    """The Claude Code line's variables and server command, and the JSON entry, from lancelot-init's output."""
    (line,) = [line.strip() for line in output.splitlines() if line.strip().startswith("claude mcp add ")]
    env, options, names, command = claude_mcp_add(line)
    assert (names, options) == (["lancelot"], {}), line
    entry = json.loads(output[output.index('{\n  "mcpServers"') :])["mcpServers"]["lancelot"]
    assert entry["env"] == env
    assert [entry["command"], *entry["args"]] == command
    return env, command, entry


def init(command: list[str | Path], db: Path, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        [*command, "--db", str(db), "--no-api-key"], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def finds_the_chain_guide(command: list[str], env: dict[str, str], clean_env: dict[str, str], cwd: Path) -> None:
    (result,) = call_tools(
        command[0], command[1:], isolated(clean_env, **env), [("lancedb_search", {"query": "oil the chain"})], cwd=cwd
    )
    assert not result.is_error, result.content
    assert result.structured_content["hits"][0]["source"] == "guide/chain-care.txt"


@pytest.fixture
def uv_env(clean_env):
    """clean_env with uv (scripts/setup's) on PATH, as a person who runs uvx has it."""
    if not (UV_BIN / "uvx").is_file():
        pytest.fail("uvx not found: run scripts/setup")
    return clean_env | {"PATH": f"{UV_BIN}{os.pathsep}{clean_env['PATH']}"}


def test_a_venv_s_init_names_its_own_server_by_absolute_path_and_it_runs(indexed_db, clean_env, tmp_path):
    env, command, _ = printed(init([BIN / "lancelot-init"], indexed_db, clean_env, tmp_path))
    assert command == [str(BIN / "lancelot")]
    assert env == {"LANCEDB_PATH": str(indexed_db)}
    finds_the_chain_guide(command, env, clean_env, tmp_path)


def test_through_a_link_it_names_the_server_beside_the_linked_init(indexed_db, clean_env, tmp_path):
    # scripts/install links the commands into ~/.local/bin; the link's folder need not hold `lancelot`.
    links = tmp_path / "bin"
    links.mkdir()
    (links / "lancelot-init").symlink_to(BIN / "lancelot-init")
    _, command, _ = printed(init([links / "lancelot-init"], indexed_db, clean_env, tmp_path))
    assert command == [str(BIN / "lancelot")]


def a_clone(tmp_path: Path) -> Path:
    """The workspace's distributions copied to a new folder. uvx keeps an environment per requirement and
    reuses it while the versions resolve the same, so `--from` this clone's own folder could run a build
    of its code from an earlier run: a new folder is a new requirement."""
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copy(ROOT / "pyproject.toml", clone)
    for member in ("shared", "indexer", "server"):
        shutil.copytree(ROOT / member, clone / member, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return clone


@pytest.mark.slow
def test_under_uvx_from_a_clone_it_names_uvx_from_the_same_folder(indexed_db, uv_env, clean_env, tmp_path):
    server = a_clone(tmp_path) / "server"
    env, command, entry = printed(init(["uvx", "--from", server, "lancelot-init"], indexed_db, uv_env, tmp_path))
    assert command == ["uvx", "--from", str(server), "lancelot-server"]
    assert entry["command"] == "uvx"
    # uvx asks the package index whether anything changed, with this machine's certificates as a client would.
    certificates = {name: uv_env[name] for name in ("SSL_CERT_FILE", "SSL_CERT_DIR") if name in uv_env}
    finds_the_chain_guide([str(UV_BIN / "uvx"), *command[1:]], env | certificates, clean_env, tmp_path)


@pytest.mark.slow
def test_under_uvx_from_a_package_index_it_names_uvx_lancelot_server(indexed_db, uv_env, tmp_path):
    wheels = tmp_path / "wheels"
    for member in ("shared", "server"):
        built = subprocess.run(
            [UV_BIN / "uv", "build", "--quiet", "--wheel", "--out-dir", wheels, ROOT / member],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert built.returncode == 0, built.stderr
    # A folder of wheels is read as an index is: no record of a folder or URL in the installed package. Its
    # new path each run is a new requirement to uvx, so no environment of an earlier run is reused.
    spec = f"lancelot-server=={lancelot_server.__version__}"
    uvx = ["uvx", "--find-links", wheels, "--from", spec, "lancelot-init"]
    _, command, _ = printed(init(uvx, indexed_db, uv_env, tmp_path))
    assert command == ["uvx", "lancelot-server"]
