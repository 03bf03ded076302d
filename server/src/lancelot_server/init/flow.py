"""What `lancelot-init` checks and says, apart from the prompts: database folders, key shape, client config.

Nothing here writes; a database folder is only listed (its `*.lance` table folders), never opened for
writing, so pointing lancelot-init at a folder cannot change it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from lancelot_schema import folders, installation
from lancelot_schema.layout import DEFAULT_TABLE

DISTRIBUTION = "lancelot-server"
SERVER_NAME = "lancelot"

# Visible ASCII, no spaces: OpenAI keys (sk-…, sk-proj-…) and those of OpenAI-compatible services.
_KEY_SHAPE = re.compile(r"[\x21-\x7e]{20,512}")


class SetupError(Exception):
    """A choice lancelot-init cannot use; the message says what is wrong and what to do.

    Its own root, not under `errors.LancelotError`: it never reaches an MCP client, and init/cli.py turns
    it into a click error in one place.
    """


@dataclass(frozen=True)
class Database:
    path: Path
    tables: tuple[str, ...]


def inspect_database(raw: str) -> Database:
    """The absolute database folder named by `raw` and its tables; SetupError when it is not one."""
    text = raw.strip()
    if not text:
        raise SetupError("Give the database folder: the DB folder you gave lancelot-index.")
    path = Path(text).expanduser().resolve()
    if not path.exists():
        raise SetupError(f"{path} does not exist. Give the DB folder you gave lancelot-index.")
    if not path.is_dir():
        raise SetupError(f"{path} is a file, not a folder. Give the DB folder you gave lancelot-index.")
    if folders.is_table(path):
        raise SetupError(f"{path} is one table; give the folder that holds it: {path.parent}")
    tables = list_tables(path)
    if tables:
        return Database(path, tables)
    if folders.holds_files(path):
        # The documents, not the database lancelot-index writes from them: never advise indexing into them.
        db = "./lancelot-db"
        raise SetupError(
            f"{path} holds no LanceDB table: it looks like a folder of documents. Index it into a database "
            f"folder, then give that folder: `lancelot-index {shlex.quote(text)} {db}`, then `lancelot-init --db {db}`."
        )
    raise SetupError(
        f"{path} holds no LanceDB table. Build one with `lancelot-index DOCS {shlex.quote(str(path))}` first."
    )


def list_tables(path: Path) -> tuple[str, ...]:
    """The tables of the LanceDB database at `path`, read from the folder names (nothing is opened)."""
    try:
        return folders.tables(path)
    except OSError as exc:
        raise SetupError(f"Cannot read {path}: {exc.strerror}.") from exc


def choose_table(database: Database, wanted: str | None) -> str:
    """`wanted` if the database has it; without one, `documents` or the only table; else SetupError."""
    if wanted is not None:
        name = wanted.strip()
        if name in database.tables:
            return name
        raise SetupError(f"{database.path} has no table {name!r}; it has: {', '.join(database.tables)}.")
    return default_table(database.tables)


def default_table(tables: tuple[str, ...]) -> str:
    return DEFAULT_TABLE if DEFAULT_TABLE in tables or not tables else tables[0]


def check_key(raw: str) -> str:
    """The key without surrounding white space, if it looks like an API key; the message never shows it."""
    key = raw.strip()
    if not _KEY_SHAPE.fullmatch(key):
        raise SetupError(
            "That does not look like an API key (20 to 512 visible characters, no spaces; "
            "OpenAI keys start with sk-). Nothing was stored."
        )
    return key


def mask(key: str) -> str:
    """Enough of a key to recognise it, never enough to use it."""
    head = key[:3] if key.startswith("sk-") else ""
    return f"{head}…{key[-4:]}"


def server_command() -> tuple[str, ...]:
    """The command that starts this installation's server, for a client's configuration.

    Under uvx, uvx again (its environment is a cache entry, gone with `uv cache clean`): `uvx lancelot-server`
    when the package came from an index, else with `--from` the folder or URL it came from. Otherwise the
    absolute path of the `lancelot` installed beside this `lancelot-init` (a venv, scripts/install, pipx,
    `uv tool install`), which a client finds whatever its PATH; failing that, this Python with `-m`.
    """
    if installation.under_uvx():
        url = installation.installed_from(DISTRIBUTION)
        if url is None:
            return ("uvx", DISTRIBUTION)
        folder = installation.local_folder(url)
        return ("uvx", "--from", str(folder) if folder is not None else url, DISTRIBUTION)
    script = "lancelot.exe" if os.name == "nt" else "lancelot"
    beside = [Path(sys.argv[0]).resolve().parent, Path(sysconfig.get_path("scripts")), Path(sys.executable).parent]
    for folder in beside:
        if (folder / script).is_file():
            return (str(folder / script),)
    return (sys.executable, "-m", "lancelot_server")


def server_env(db_path: Path, table: str = DEFAULT_TABLE) -> dict[str, str]:
    env = {"LANCEDB_PATH": str(db_path)}
    if table != DEFAULT_TABLE:
        env["LANCEDB_TABLE"] = table
    return env


def claude_code_line(env: dict[str, str], command: tuple[str, ...]) -> str:
    """The `claude mcp add` line that runs `command` with `env`."""
    # The name first: Claude Code's -e takes every word after it up to the next option or `--`.
    flags = " ".join(f"-e {shlex.quote(f'{name}={value}')}" for name, value in env.items())
    return f"claude mcp add {SERVER_NAME} {flags} -- {shlex.join(command)}"


def client_config(db_path: Path, table: str, command: tuple[str, ...]) -> str:
    """The exact text a person pastes into Claude Code or an `mcpServers` configuration to run `command`."""
    env = server_env(db_path, table)
    entry = {"command": command[0], "args": list(command[1:]), "env": env}
    servers = {"mcpServers": {SERVER_NAME: entry}}
    return (
        "Add Lancelot to Claude Code:\n\n"
        f"  {claude_code_line(env, command)}\n\n"
        "Or add this to another MCP client's configuration (in VS Code's mcp.json, under \"servers\"):\n\n"
        f"{json.dumps(servers, indent=2)}"
    )
