"""The database's lock: one lancelot-index at a time, from the first read to the last write.

    with locked(db) as held: ...   # LockedError at once when another indexer holds DB
        held.check()               # LockedError if the lock was lost meanwhile (object storage only)

A folder's lock is a lock file held with flock, which the system releases when its process dies; a bucket's
is a lease in a Lance dataset beside the tables (`lease.py`). The folder lock creates DB when missing
(and removes it again, empty, when the run fails before writing anything). Tables themselves are written
by `write.py` alone; what a killed write left behind is removed under the lock (`remove_temp_files`), also
by a run that has nothing to write. Importing this module is cheap (no Lance), so a folder's lock is taken
before the documents are read and a second indexer stops at once.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from lancelot_indexer.errors import DatabaseError, LockedError
from lancelot_schema.storage import Location

LOCK_FILE = ".lancelot-index.lock"


class Held(Protocol):
    """A lock held: `check` raises once it is lost."""

    def check(self) -> None: ...


class _FileLock:
    def check(self) -> None:
        """A lock file is held until this process ends."""


@contextlib.contextmanager
def locked(db: Path | Location) -> Iterator[Held]:
    """Hold the database's lock; raise LockedError when another indexer holds it."""
    if isinstance(db, Location):
        if not db.local:
            from lancelot_indexer import lease

            with lease.held(db) as taken:
                yield taken
            return
        db = db.path
    with _folder_locked(db):
        yield _FileLock()


@contextlib.contextmanager
def _folder_locked(db: Path) -> Iterator[None]:
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
            yield
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


def _lock(handle: Any) -> None:
    if sys.platform == "win32":
        import msvcrt

        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def remove_temp_files(table_dir: Path) -> int:
    """Remove the `.tmp*` files a killed write leaves behind (Lance's cleanup never sees them)."""
    removed = 0
    if not table_dir.is_dir():
        return 0
    for leftover in table_dir.rglob(".tmp*"):
        with contextlib.suppress(OSError):
            if leftover.is_file():
                leftover.unlink()
                removed += 1
    return removed
