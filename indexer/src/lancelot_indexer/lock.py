"""The database folder's lock file: one lancelot-index at a time, from the first read to the last write.

    with locked(db): ...   # LockedError at once when another indexer holds DB

It creates DB when missing (and removes it again, empty, when the run fails before writing anything).
Tables themselves are written by `write.py` alone; what a killed write left behind is removed under the
lock (`remove_temp_files`), also by a run that has nothing to write. Importing this module is cheap (no Lance), so the
lock is taken before the documents are read and a second indexer stops at once.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lancelot_indexer.errors import DatabaseError, LockedError

LOCK_FILE = ".lancelot-index.lock"


@contextlib.contextmanager
def locked(db: Path) -> Iterator[None]:
    """Hold the database's lock file; raise LockedError when another indexer holds it."""
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
