"""What the tools tell an assistant about the tables served: each one's name, description and size.

    line(store, tables) -> "Tables: documents — PostgreSQL 15 manual, 1,168 documents; api — …"
    Announcer(line, every).run()     # a stdio server's task: notifications/tools/list_changed when the line changes

Tool descriptions reach every client, so this line goes into each of them (and into the instructions), naming
the served tables the caller sees that the database holds, default first. It must cost `tools/list` nothing
worth measuring (docs/benchmarks.md): on a folder it is a listing and the record `NAME.lance/lancelot-about.json`
the indexer writes beside each table (`lancelot_schema.about`), read with a plain file read, never Lance. On
object storage a read would be a request, and Lance's import before `initialize` could answer: there a table is
described by its stamp once the store has opened it (the background preparation opens the default table), and
named alone until then (docs/decisions.md, "What the assistant is told about each table"). A table without the
record (built before layout 6, or by another tool) is named alone too, or by its stamp once open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import structlog

from lancelot_schema import about, folders, layout
from lancelot_server.errors import LancelotError
from lancelot_server.storage.store import Store
from lancelot_server.storage.tables import EVERY, Tables

log = structlog.get_logger("lancelot.server")

# How often a stdio server looks at the records for a change to announce, on a folder (a stat or two a table).
ANNOUNCE_SECONDS = 1.0
# Tables named in a tool's description at most: with LANCELOT_TABLES="*" a database may hold hundreds.
MAX_NAMED = 20
_DESCRIPTION = layout.META_DESCRIPTION.removeprefix("lancelot.")


@dataclass(frozen=True)
class Told:
    """One table as the tools name it: `documents` None where only the passages are known (or neither)."""

    name: str
    description: str | None = None
    documents: int | None = None
    passages: int | None = None

    def said(self) -> str:
        size = _count(self.documents, "document") if self.documents is not None else None
        if size is None and self.passages is not None:
            size = _count(self.passages, "passage")
        details = ", ".join(part for part in (self.description, size) if part)
        return f"{self.name} — {details}" if details else self.name


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def told(store: Store, tables: Tables) -> list[Told]:
    """The served tables the caller sees, as the tools name them (none when the database cannot be listed)."""
    location = store.location
    if location is None:
        return []
    if not location.local:
        opened = store.opened()
        return [_opened(opened.get(name), store, name) for name in tables.visible(list(opened))]
    # Only "*" needs the folder listed; otherwise the tables named are looked at, and those not there left out.
    try:
        there = list(folders.tables(location.path)) if EVERY in (tables.settings.tables or ()) else []
    except OSError:
        return []
    found: list[Told] = []
    for name in tables.visible(there):
        present, record = _record(location.path, name)
        if not present:
            continue
        if record is None:
            found.append(_opened(store.opened().get(name), store, name))
        else:
            found.append(Told(name, record.description or None, record.documents, record.passages))
    return found


# The records read, by database folder and table, with the paths looked at and what they were read at:
# `tools/list` rereads a record only when it or the table's `_versions/` folder changed since (two stats a table,
# where a read is a listing and more; the paths made once, as pathlib's joins cost more than the stats).
_READ: dict[tuple[Path, str], tuple[Path, Path, tuple[int, ...], about.About | None]] = {}
_MAX_READ = 1000


def _record(db: Path, name: str) -> tuple[bool, about.About | None]:
    """Whether table `name` of the database folder `db` is there, and its record if it describes the latest version."""
    known = _READ.get((db, name))
    if known is None:
        table_dir = db / f"{name}{folders.TABLE_SUFFIX}"
        known = (table_dir / "_versions", table_dir / about.ABOUT, (), None)
    versions_path, record_path, read_at, record = known
    try:
        versions = versions_path.stat()
    except OSError:
        return False, None
    try:
        written = record_path.stat()
    except OSError:
        return True, None
    at = (written.st_ino, written.st_size, written.st_mtime_ns, versions.st_ino, versions.st_mtime_ns)
    if at != read_at:
        record = about.read(record_path.parent)
        if len(_READ) >= _MAX_READ:
            _READ.clear()
        _READ[db, name] = (versions_path, record_path, at, record)
    return True, record


def _opened(handle: Any, store: Store, name: str) -> Told:
    """Table `name` described by its stamp when the store holds it open (`handle`); else its name alone."""
    if handle is None:
        return Told(name)
    # The version last looked up: `initialize` asks for the line on the event loop, where a request must not wait.
    dataset = handle.last_seen()
    try:
        with store.reading():
            stamp = layout.decode_metadata(dataset.schema.metadata)
            passages = int(dataset.count_rows())
    except (LancelotError, OSError, ValueError):
        return Told(name)
    return Told(name, about.cleaned(stamp.get(_DESCRIPTION, "")) or None, None, passages)


def interval(store: Store) -> float:
    """Seconds between two looks for a change: on object storage, as often as the store looks for new versions."""
    location = store.location
    return ANNOUNCE_SECONDS if location is None or location.local else max(ANNOUNCE_SECONDS, location.refresh_seconds)


def line(store: Store, tables: Tables) -> str:
    """One line naming the tables (empty when there is none to name)."""
    named = told(store, tables)
    if not named:
        return ""
    shown = "; ".join(table.said() for table in named[:MAX_NAMED])
    more = f"; and {len(named) - MAX_NAMED} more (lancedb_status lists them)" if len(named) > MAX_NAMED else ""
    return f"Tables: {shown}{more}."


@dataclass
class Announcer:
    """How a server names its tables (`line`), and the session of the last `tools/list` (set by the server), which
    a stdio server tells when the line changes: `run` looks every `every` seconds."""

    line: Callable[[], str]
    every: float
    session: Any = None

    async def run(self) -> None:
        """Send `notifications/tools/list_changed` when the line changes (a table rebuilt with another
        description, one more document), to the session that last listed the tools."""
        said = await anyio.to_thread.run_sync(self.line)
        while True:
            await anyio.sleep(self.every)
            try:
                now = await anyio.to_thread.run_sync(self.line)
                if now != said and self.session is not None:
                    await self.session.send_tool_list_changed()
                    log.info("tools changed", tables=now)
                said = now
            except Exception:
                log.exception("tables not looked at")
