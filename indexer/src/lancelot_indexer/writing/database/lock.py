"""The database's lock: one lancelot-index at a time, from the first read to the last write.

    with locked(db) as held: ...   # LockedError at once when another indexer holds DB
        held.check()               # LockedError if the lock was lost meanwhile (object storage only)

A folder's lock is a lock file held with flock, which the system releases when its process dies; a bucket's
is a lease in a Lance dataset beside the tables (`lease.py`). The folder lock creates DB when missing
(and removes it again, empty, when the run fails before writing anything). Tables themselves are written
by `write.py` alone. Importing this module is cheap (no Lance), so a folder's lock is taken before the
documents are read and a second indexer stops at once.

The lock also tells whether the last run finished: a run killed or stopped by an error may have left files
it wrote but never committed. The lock file holds the record of the run holding it, emptied when it
finishes (a record found there is a run that did not); a bucket's lease is found taken over, or marked
unfinished. Then the files no version names are removed (`leftovers.py`) as soon as the lock is held, before
the run writes anything, also by a run that has nothing to write; a run after a finished one pays nothing
for it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from lancelot_indexer import log
from lancelot_indexer.errors import DatabaseError, LockedError
from lancelot_indexer.writing.database.location import failure, located
from lancelot_schema.storage import Location

LOCK_FILE = ".lancelot-index.lock"


class Held(Protocol):
    """A lock held: `check` raises once it is lost. `leftovers`: why files a run that did not finish wrote may
    be left (None once they are removed, or when the last run finished)."""

    leftovers: str | None

    def check(self) -> None: ...


class _FileLock:
    def __init__(self, leftovers: str | None) -> None:
        self.leftovers = leftovers

    def check(self) -> None:
        """A lock file is held until this process ends."""


@contextlib.contextmanager
def locked(db: Path | Location) -> Iterator[Held]:
    """Hold the database's lock; raise LockedError when another indexer holds it. What a run that did not
    finish left is removed first."""
    location = located(db)
    if not location.local:
        from lancelot_indexer.writing.database import lease

        with lease.held(location) as taken:
            _remove_leftovers(location, taken)
            yield taken
        return
    with _folder_locked(db.path if isinstance(db, Location) else db) as held:
        _remove_leftovers(location, held)
        yield held


def _remove_leftovers(location: Location, held: Held) -> None:
    if held.leftovers is None:
        return
    from lancelot_indexer.writing.database import leftovers

    try:
        removed = leftovers.remove(location, held.check)
    except Exception as exc:  # a store that refuses deletes, say: the lock keeps the mark, the next run tries again
        problem = failure(location, exc)
        log.warning("could not remove what a run that did not finish left", error=str(problem or exc)[:300])
        return
    log.info("removed what a run that did not finish left", why=held.leftovers, files=removed)
    held.leftovers = None


@contextlib.contextmanager
def _folder_locked(db: Path) -> Iterator[_FileLock]:
    if db.exists() and not db.is_dir():
        raise DatabaseError(f"{db} is a file, not a database folder.")
    created = not db.exists()
    try:
        db.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseError(f"Cannot create the database folder {db}: {exc.strerror}.") from exc
    try:
        handle = (db / LOCK_FILE).open("a+b")
    except OSError as exc:
        raise DatabaseError(f"Cannot write in the database folder {db}: {exc.strerror}.") from exc
    try:
        with handle:
            try:
                _lock(handle)
            except OSError as exc:
                raise LockedError(f"Another lancelot-index is writing to {db}; wait for it to finish.") from exc
            held = _FileLock(_unfinished(handle))
            try:
                _record(handle, _holder())
            except OSError as exc:
                raise DatabaseError(f"Cannot write in the database folder {db}: {exc.strerror}.") from exc
            yield held
            if held.leftovers is None:
                with contextlib.suppress(OSError):  # else the next run looks for leftovers once, in vain
                    _record(handle, "")  # finished, and nothing left behind
    except BaseException:
        if created:
            _remove_if_only_the_lock(db)
        raise


def _remove_if_only_the_lock(db: Path) -> None:
    # A run that failed before writing (no documents, a stop) leaves no new empty folder behind.
    with contextlib.suppress(OSError):
        if [entry.name for entry in db.iterdir()] == [LOCK_FILE]:
            (db / LOCK_FILE).unlink()
            db.rmdir()


def _holder() -> str:
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": now}) + "\n"


def _unfinished(handle: Any) -> str | None:
    """Which run did not finish, when the lock file still holds its record."""
    handle.seek(0)
    record = handle.read().decode("utf-8", "replace").strip()
    if not record:
        return None
    try:
        run = json.loads(record)
        return f"the run of pid {run['pid']} on {run['host']} since {run['since']} did not finish"
    except (ValueError, TypeError, KeyError):
        return "the last run did not finish"


def _record(handle: Any, text: str) -> None:
    handle.seek(0)
    handle.truncate()
    handle.write(text.encode("utf-8"))  # appended (the file is opened so): at 0, as it is empty
    handle.flush()  # in the system's hands: a kill -9 does not lose it


def _lock(handle: Any) -> None:
    handle.seek(0)  # Windows locks a byte at the position: always the first one
    if sys.platform == "win32":
        import msvcrt

        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
