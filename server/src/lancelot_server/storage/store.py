"""Read-only access to the LanceDB database: open lazily, never create, see rebuilds at the next check.

The database is a local folder or a URI on object storage (`lancelot_schema.storage` says which, and how to
reach it); a folder is checked for a new table version at every call, a bucket at most every
LANCELOT_REFRESH_SECONDS.

The store is the only way the tools reach the database. It can list tables, describe one and hand out
its handle for queries; nothing here (or anywhere in the server) writes. Tables are read through Lance
(`lance_table.py`), imported on first use, not at import: `tools/list` must not wait for it, and
`prepare()` opens the default table in the background as soon as a server starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from datetime import timedelta
from functools import partial
from typing import Any, TypeVar

import structlog

from lancelot_schema import storage as storage_module
from lancelot_schema.settings import Storage
from lancelot_schema.storage import Location, LocationError
from lancelot_server.errors import (
    DatabaseNotFound,
    LancelotError,
    StorageError,
    TableLayoutError,
    TableNotFound,
    shown,
)
from lancelot_server.storage import database_folder
from lancelot_server.storage.damage import Damage as Damage
from lancelot_server.storage.damage import damage as damage
from lancelot_server.storage.layouts import UNREADABLE_INDEX as UNREADABLE_INDEX
from lancelot_server.storage.layouts import Layout as Layout
from lancelot_server.storage.layouts import describe as describe

# Zero on a folder: every query checks for a newer table version first, so a table that lancelot-index
# rebuilt is served at the very next call. The check is a small metadata read; LanceDB commits a version
# atomically, so a reader sees the old table or the new one, never a half-written one. On object storage
# the check is a listing (a round trip), made at most every LANCELOT_REFRESH_SECONDS (`_consistency`).
READ_CONSISTENCY = timedelta(0)

log = structlog.get_logger("lancelot.store")

T = TypeVar("T")


def _consistency(location: Location) -> timedelta:
    return READ_CONSISTENCY if location.local else timedelta(seconds=location.refresh_seconds)


def _nothing_stored(location: Location) -> DatabaseNotFound:
    # A prefix is no folder: an empty listing is the bucket's "does not exist" (a mistyped prefix, most often).
    return DatabaseNotFound(
        f"Nothing is stored under {location}: no table. Check LANCEDB_PATH, or build it with "
        f"`lancelot-index DOCS {location}`."
    )


def _started(work: Callable[[], T]) -> Future[T]:
    """`work`, started now in a thread of its own."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(1, thread_name_prefix="lancelot-open")
    future = pool.submit(work)
    pool.shutdown(wait=False)  # the thread ends with `work`
    return future


def _failure_logged(opening: Future[Any]) -> None:
    """A dropped opening's own failure, for the log only: the listing's refusal is the one reported."""
    if opening.exception() is not None:
        log.debug("opening dropped", reason=str(opening.exception())[:200])


class Store:
    """One database, a folder or a URI on object storage, connected on first use; table handles are opened
    once and reused (on Lambda, across warm invocations: the store lives in the container).

    On object storage a listing is a round trip, so the table names (and so `exists`) are kept for
    LANCELOT_REFRESH_SECONDS, as LanceDB keeps each table's version; a failure is kept as long, so a
    bucket that cannot be reached costs one wait per interval, not one per call.
    """

    def __init__(self, db_path: str | None, storage: Storage | None = None) -> None:
        # Never a password written into the URI: this is what status and every message show.
        self.db_path = storage_module.shown(db_path) if db_path is not None else None
        self._lock = threading.Lock()
        self._tables: dict[str, Any] = {}
        # Object storage: when the tables were listed, and their names or the failure.
        self._listed: tuple[float, list[str] | LancelotError] | None = None
        self.location: Location | None = None
        self._refused: str | None = None
        self._preparing: threading.Thread | None = None
        # Lance's caches, one session for every table (`lance_table.session`), made with the first table opened.
        self.cache_bytes = (storage or Storage()).cache_mb * 1024 * 1024
        self._session: Any = None
        self._budget: Any = None  # the held columns' share of the bound (`lance_table.columns_budget`)
        if db_path is not None:
            try:
                self.location = storage_module.locate(db_path, storage)
            except LocationError as exc:
                self._refused = f"LANCEDB_PATH: {exc}"

    def exists(self) -> bool:
        if self.location is None:
            return False
        if self.location.local:
            return self.location.path.is_dir()
        try:
            self.table_names()
        except LancelotError:
            return False
        return True

    def _located(self) -> Location:
        if self.location is None:
            raise DatabaseNotFound(self._refused or database_folder.NOT_SET)
        if self.location.local and not self.location.path.is_dir():  # one look on every call
            raise DatabaseNotFound(database_folder.absent(self.db_path or "", self.location.path) or "")
        return self.location

    def problem(self, table: str | None = None) -> str | None:
        """What is wrong with LANCEDB_PATH (and its table `table`, if given) that a stat or two can tell; nothing on
        object storage, where it would take a request. The server says it once as it starts, lancedb_status too."""
        if self.location is None:
            return self._refused or database_folder.NOT_SET
        if not self.location.local:
            return None
        raw, path = self.db_path or "", self.location.path
        return (
            database_folder.absent(raw, path)
            or database_folder.fragile(raw, path)
            or (database_folder.lacks_table(path, table) if table is not None else None)
        )

    def failure(self, error: BaseException) -> StorageError | None:
        """The object store's refusal or absence behind `error`, as one line naming the URI; else None."""
        if self.location is None:
            return None
        problem = storage_module.failure(self.location, error)
        return StorageError(problem) if problem is not None else None

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Object-storage failures inside become a `StorageError`; Lance's long text goes to the log only."""
        try:
            yield
        except LancelotError:
            raise
        except Exception as exc:
            problem = self.failure(exc)
            if problem is None:
                raise
            log.warning("object storage failed", database=self.db_path, error=str(exc)[:2000])
            raise problem from None

    def prepare(self, name: str) -> None:
        """Open table `name` in the background: Lance's import, the listing and the table's manifest, so that the
        first search finds it open (on a bucket, its full-text indexes loading: `LanceTable.loaded_ahead`). Calls
        that come first wait for it; a failure is left for them to meet again and report. Call it once the server
        answers requests (an import competing with the SDK's slows both)."""
        if self.location is None or self._preparing is not None:
            return
        self._preparing = threading.Thread(target=self._prepare, args=(name,), name="lancelot-prepare", daemon=True)
        self._preparing.start()

    def _prepare(self, name: str) -> None:
        try:
            self.table(name)
        except Exception as exc:  # the first call that needs the table meets it again and says why
            log.debug("table not prepared", table=name, reason=str(exc)[:200])

    def _ready(self) -> None:
        """Wait for `prepare` to end (at once when it has, or was never started)."""
        preparing = self._preparing
        if preparing is not None and preparing is not threading.current_thread():
            preparing.join()

    def settle(self, seconds: float) -> None:
        """Give `prepare`, and the indexes loading in the background, up to `seconds` to end: the server is stopping,
        and a process that exits while a thread is inside Lance's import or a read can abort (SIGABRT), not exit 0."""
        until = time.monotonic() + seconds
        if self._preparing is not None:
            self._preparing.join(seconds)
        for handle in self.opened().values():  # and the full-text indexes it loads in the background
            handle.loaded_ahead(max(0.0, until - time.monotonic()))

    def table_names(self) -> list[str]:
        self._ready()
        location = self._located()
        if location.local:
            return self._listing()
        listed = self._kept(location)
        if listed is None:
            found: list[str] | LancelotError
            try:
                found = self._listing() or _nothing_stored(location)
            except LancelotError as exc:
                found = exc
            listed = (time.monotonic(), found)
            with self._lock:
                self._listed = listed
        if isinstance(listed[1], LancelotError):
            raise type(listed[1])(str(listed[1]))  # a fresh one: the kept one's traceback stays as it was
        return list(listed[1])

    def _listing(self) -> list[str]:
        location = self._located()
        from lancelot_server.storage import lance_table

        with self.reading():
            return lance_table.table_names(location.uri, dict(location.options))

    def table(self, name: str, pinned: bool = False) -> Any:
        """The table's handle, opened once; `pinned`, a copy of it at the version reads see now, for one request
        (`LanceTable.pinned`). A table that is gone (dropped, or its folder replaced) is reopened."""
        self._ready()
        self._located()  # a folder is checked at every call; a bucket through the listing kept below
        with self._lock:
            handle = self._tables.get(name)
        if handle is not None:
            try:
                # A probe that fails once the table's files are gone. Pinning is one, so a search looks up the
                # latest version once, not twice.
                if pinned:
                    return handle.pinned()
                handle.version  # noqa: B018
                return handle
            except Exception:
                with self._lock:
                    self._tables.pop(name, None)
        location = self._located()
        if location.local or self._kept(location) is not None:  # on a bucket, the names or the failure kept: no request
            if name not in self.table_names():
                raise TableNotFound(self._missing_table(name))
            opening = self._open(name, location)
        else:
            # On a bucket the table's manifest is read while the tables are listed: a round trip fewer before the
            # first search. A table the listing does not hold, or a listing that fails, is refused at once; the
            # opening is dropped, never waited for (a bucket that does not answer would hold the refusal).
            started = _started(self._open(name, location))
            try:
                names = self.table_names()
            except LancelotError:
                self._dropped(started)
                raise
            if name not in names:
                self._dropped(started)
                raise TableNotFound(self._missing_table(name))
            opening = started.result
        try:
            with self.reading():
                handle = opening()
        except (FileNotFoundError, ValueError) as exc:
            # Listed but unreadable: a damaged folder, or one dropped since the listing.
            if name not in self.table_names():
                raise TableNotFound(self._missing_table(name)) from exc
            raise self.unreadable(name) from exc
        with self._lock:
            self._tables[name] = handle
        return handle.pinned() if pinned else handle

    def _open(self, name: str, location: Location) -> Callable[[], Any]:
        """The opening of table `name`, to call now or in a thread: the caches it reads through are made here."""
        from lancelot_server.storage import lance_table

        with self._lock:
            if self._session is None:
                self._session = lance_table.session(self.cache_bytes, remote=not location.local)
                self._budget = None if location.local else lance_table.columns_budget(self.cache_bytes)
            session, budget = self._session, self._budget
        # A folder is read through the operating system's page cache: nothing is loaded ahead there.
        preload = 0 if location.local else self.cache_bytes
        return partial(
            lance_table.LanceTable.open,
            location.table_uri(name),
            dict(location.options),
            _consistency(location),
            session,
            preload,
            budget,
        )

    def _kept(self, location: Location) -> tuple[float, list[str] | LancelotError] | None:
        """The tables' listing (or its failure) kept on object storage, while it is fresh; else None."""
        with self._lock:
            listed = self._listed
        return listed if listed is not None and time.monotonic() - listed[0] < location.refresh_seconds else None

    def _dropped(self, opening: Future[Any]) -> None:
        """An opening begun beside a listing that refused it: Lance's caches are let go now while no table is open,
        so that a bucket that cannot be read keeps nothing (`cache`); the opening holds its own until it ends."""
        with self._lock:
            if not self._tables:
                self._session = self._budget = None
        opening.add_done_callback(_failure_logged)

    def opened(self) -> dict[str, Any]:
        """The tables opened so far, by name, without opening or listing anything."""
        with self._lock:
            return dict(self._tables)

    def cache(self) -> tuple[int, int]:
        """What Lance's caches and the held columns may hold (LANCELOT_CACHE_MB, in bytes) and hold now, for every
        table served."""
        with self._lock:
            session, budget = self._session, self._budget
        used = int(session.size_bytes()) if session is not None else 0
        return self.cache_bytes, used + (budget.used_bytes if budget is not None else 0)

    def unreadable(self, name: str, found: Damage | None = None) -> TableLayoutError:
        detail = ""
        if found is not None and found.missing:
            more = len(found.missing) - 1
            others = f", and {more} more file{'s' if more > 1 else ''}" if more else ""
            detail = f": {found.missing[0]} is missing{others}"
        return TableLayoutError(
            f"Table {shown(name)} in {self.db_path} cannot be read (damaged or incomplete{detail}). "
            "Rebuild it with lancelot-index."
        )

    def _missing_table(self, name: str) -> str:
        # No listing here: which tables a caller may hear of is `tables.Tables`'s to say.
        return f"Table {shown(name)} is not in the database {self.db_path}."
