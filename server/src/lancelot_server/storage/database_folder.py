"""What is wrong with a local LANCEDB_PATH, as a stat tells: said once as the server starts, by
lancedb_status, and by every tool that needs the database, in the same words.

A relative LANCEDB_PATH is resolved against the working directory the MCP client started the server in,
which the person rarely knows and another client chooses differently: every message names the folder it
was resolved to and that directory, and asks for an absolute path.
"""

from __future__ import annotations

from pathlib import Path

from lancelot_schema import folders

NOT_SET = "No database is configured. Set LANCEDB_PATH to the folder that lancelot-index wrote (or run lancelot-init)."


def working_directory() -> str:
    try:
        return str(Path.cwd())
    except OSError:  # removed since the server started
        return "a folder that no longer exists"


def relative(raw: str) -> bool:
    """Whether LANCEDB_PATH `raw`, a local folder, depends on the working directory."""
    return not raw.startswith("file:") and not Path(raw).expanduser().is_absolute()


def _resolved(raw: str) -> str:
    return (
        f"LANCEDB_PATH {raw!r} is relative, so it was resolved against the folder the client started the server "
        f"in ({working_directory()})"
    )


def absent(raw: str, path: Path) -> str | None:
    """Why `path` (LANCEDB_PATH `raw`, made absolute) is no database folder; None when it is a folder."""
    if path.is_dir():
        return None
    what = "does not exist" if not path.exists() else "is a file, not a folder"
    if relative(raw):
        return f"The database folder {path} {what}: {_resolved(raw)}. Set LANCEDB_PATH to an absolute path instead."
    return (
        f"The database folder {path} {what} (LANCEDB_PATH; the server runs in {working_directory()}). "
        "Set LANCEDB_PATH to the folder that lancelot-index wrote."
    )


def fragile(raw: str, path: Path) -> str | None:
    """A warning for a relative LANCEDB_PATH that works from here only; None for an absolute one."""
    if not relative(raw):
        return None
    return f"{_resolved(raw)}: {path}. A client started elsewhere finds no database there; set LANCEDB_PATH to {path}."


def lacks_table(path: Path, table: str) -> str | None:
    """A warning when the database folder holds no table `table`; None when it does."""
    if folders.is_table(path / f"{table}{folders.TABLE_SUFFIX}"):
        return None
    return f"The database {path} holds no table {table!r} (LANCEDB_TABLE). lancedb_status names the tables it holds."
