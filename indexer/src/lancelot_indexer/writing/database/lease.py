"""The lock of a database on object storage: a lease, kept in a small Lance dataset beside the tables.

    with held(location) as lease: ...   # LockedError at once when another lancelot-index holds it
        lease.check()                   # LockedError if it was taken over meanwhile (this run froze for LEASE)

A bucket has no lock files, and an object put there outlives a writer that is killed. The lock is the config
key `lancelot.lock` of the Lance dataset `DB/.lancelot-index.lock` (no table: LanceDB lists `*.lance` only),
and every change to it is a Lance commit made against the version that was read. Lance writes each version's
manifest with a create-only request (S3's `If-None-Match: *`, the same on GCS and Azure) and refuses a commit
when one in between set the same config key, so taking, renewing and releasing are compare-and-swaps: of two
indexers that take the lock at once, one is refused. It needs nothing but Lance and the credentials Lance
already uses, on every store Lance writes.

The holder renews the lease every RENEW seconds from a thread. A lease not renewed for LEASE (by the clock of
the run that finds it: clocks may differ by up to LEASE - RENEW), or held by a process of this machine that
is gone, is taken over. A run that stops on an error releases the lock with the config key
`lancelot.unfinished` set; either way the next run knows that the last one did not finish (`leftovers`), and
removes what it wrote but never committed (`leftovers.py`) before clearing the key at its own release.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lancelot_indexer import log
from lancelot_indexer.errors import LockedError
from lancelot_indexer.writing.database.location import conflict, failure, options, storage_failures
from lancelot_schema.storage import Location

NAME = ".lancelot-index.lock"
KEY = "lancelot.lock"
UNFINISHED = "lancelot.unfinished"  # the record of the holder whose run stopped on an error
LEASE = timedelta(seconds=60)
RENEW = 10.0  # seconds between renewals
# The lock dataset gains a version per change; its old ones are removed when a release crosses a multiple of
# this (not at every run: a removal lists and deletes, a dozen requests).
TIDY_EVERY = 16


@dataclass(frozen=True)
class Holder:
    """Who holds the lock. `machine` and `started` tell a process of this machine that is gone (empty where
    /proc does not say: then only the lease's age does)."""

    owner: str
    host: str
    pid: int
    machine: str
    started: str
    since: str
    renewed: str

    @classmethod
    def parse(cls, text: str) -> Holder | None:
        try:
            return cls(**json.loads(text))
        except (ValueError, TypeError):
            return None

    def dumps(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))


def lock_uri(location: Location) -> str:
    base, mark, query = location.uri.partition("?")  # s3+ddb's ?ddbTableName= stays
    return f"{base.rstrip('/')}/{NAME}{mark}{query}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _machine() -> str:
    """This machine's boot and process namespace: where a process id names the same process."""
    if sys.platform != "linux":
        return ""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
        return f"{boot} {Path('/proc/self/ns/pid').readlink()}"
    except OSError:
        return ""


def _started(pid: int) -> str:
    """When process `pid` started (clock ticks since boot), "" when it is gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return ""
    return "" if fields[0] in ("Z", "X") else fields[19]


def _gone(holder: Holder, lease: timedelta) -> str | None:
    """Why `holder` no longer holds the lock, or None while it does."""
    if holder.machine and holder.machine == _machine():
        # A process id is reused: the start time tells the holder from a newer process.
        return None if _started(holder.pid) == holder.started else f"its process {holder.pid} is gone"
    renewed = datetime.fromisoformat(holder.renewed)
    if datetime.now(UTC) - renewed > lease:
        return f"it was last renewed at {holder.renewed}"
    return None


class Lease:
    def __init__(self, location: Location, lease: timedelta = LEASE, renew: float = RENEW) -> None:
        self.location = location
        self.uri = lock_uri(location)
        self.taken_over: str | None = None  # why the previous holder was judged gone, when it was
        # Why the database may hold files a run wrote but never committed (None: none are known of); `lock.py`
        # clears it once they are removed, and the release keeps it for the next run otherwise.
        self.leftovers: str | None = None
        self._marked = False  # whether UNFINISHED was set when the lock was taken
        self._options = options(location)
        self._lease = lease
        self._renew = renew
        self._version = 0
        self._dataset: Any = None  # the lock dataset at `_version`: a commit from it need not read it again
        self._read_at = 0  # the version the lock was taken from
        self._lost: str | None = None
        self._stop = threading.Event()
        self._mutex = threading.Lock()  # one commit at a time: a renewal and the release
        self._thread: threading.Thread | None = None
        pid = os.getpid()
        now = _now()
        self._holder = Holder(uuid.uuid4().hex, socket.gethostname(), pid, _machine(), _started(pid), now, now)

    def _open(self) -> Any:
        import lance
        import pyarrow as pa

        try:
            return lance.dataset(self.uri, storage_options=self._options)
        except ValueError as exc:
            if (known := failure(self.location, exc)) is not None:
                raise known from exc
        try:
            empty = pa.table({"lock": pa.array([], pa.int8())})
            return lance.write_dataset(empty, self.uri, mode="create", storage_options=self._options)
        except OSError as exc:
            if (known := failure(self.location, exc)) is not None and not conflict(exc):
                raise known from exc
            # Made by another indexer at the same moment ("Dataset already exists").
            return lance.dataset(self.uri, storage_options=self._options)

    def _swap(self, version: int, holder: Holder | None, unfinished: bool | None = None) -> int | None:
        """Set the lock to `holder` (None: free) if `version` is still the latest; the new version, or None.
        `unfinished` True records this run as one that did not finish, False clears that, None leaves it."""
        import lance

        updates = {KEY: holder.dumps() if holder is not None else None}
        if unfinished is not None:
            updates[UNFINISHED] = self._holder.dumps() if unfinished else None
        update = lance.LanceOperation.UpdateMap(updates)
        try:
            done = lance.LanceDataset.commit(
                self._dataset,
                lance.LanceOperation.UpdateConfig(config_updates=update),
                read_version=version,
                storage_options=self._options,
            )
        except OSError as exc:
            if conflict(exc):
                return None
            raise
        self._dataset = done
        return int(done.version)

    def _busy(self, holder: Holder | None) -> LockedError:
        if holder is None:
            return LockedError(f"Another lancelot-index took the lock of {self.location} at the same moment.")
        expires = datetime.fromisoformat(holder.renewed) + self._lease
        return LockedError(
            f"Another lancelot-index is writing to {self.location} (pid {holder.pid} on {holder.host}, since "
            f"{holder.since}); wait for it to finish. A run that was stopped without releasing it loses the lock "
            f"{int(self._lease.total_seconds())} s after its last renewal ({expires.isoformat(timespec='seconds')})."
        )

    def take(self) -> None:
        with storage_failures(self.location):
            self._dataset = dataset = self._open()
            config = dataset.config()
            stored = config.get(KEY)
            holder = Holder.parse(stored) if stored else None
            if stored:
                why = _gone(holder, self._lease) if holder is not None else "its record is unreadable"
                if why is None:
                    raise self._busy(holder)
                self.taken_over = self.leftovers = why
                log.warning("taking over the lock of a lancelot-index that stopped without releasing it", why=why)
            self._marked = bool(config.get(UNFINISHED))
            if self._marked and self.leftovers is None:
                self.leftovers = "the last run stopped on an error"
            self._read_at = int(dataset.version)
            version = self._swap(self._read_at, self._holder)
        if version is None:
            raise self._busy(None)
        self._version = version
        self._thread = threading.Thread(target=self._keep, daemon=True, name="lancelot-lease")
        self._thread.start()

    def _keep(self) -> None:
        """Renew the lease until released; a failed renewal is tried again until the lease would be over."""
        renewed = datetime.now(UTC)
        while not self._stop.wait(self._renew):
            with self._mutex:
                if self._stop.is_set():
                    return
                holder = replace(self._holder, renewed=_now())
                try:
                    version = self._swap(self._version, holder)
                except Exception:  # a passing failure of the store: tried again at the next turn
                    if datetime.now(UTC) - renewed > self._lease - timedelta(seconds=self._renew):
                        self._lost = "it could not be renewed in time"
                        return
                    continue
                if version is None:
                    self._lost = "another lancelot-index took it over"
                    return
                self._version, self._holder, renewed = version, holder, datetime.now(UTC)

    def check(self) -> None:
        """LockedError when this run no longer holds the lock: nothing more may be committed."""
        if self._lost is not None:
            raise LockedError(
                f"This lancelot-index lost the lock of {self.location} ({self._lost}): stopped before its next commit."
            )

    def release(self) -> None:
        """Free the lock (never raises: a lock left behind is taken over once its lease is over)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._mutex:
            if self._lost is not None:
                return
            # The mark changes only when it has to: a run after a finished one commits what it always did.
            unfinished = True if self.leftovers is not None else False if self._marked else None
            try:
                version = self._swap(self._version, None, unfinished)
                if version is not None and version // TIDY_EVERY > self._read_at // TIDY_EVERY:
                    self._tidy()
            except Exception as exc:
                log.warning("the lock could not be released; the next run takes it over", error=str(exc)[:300])

    def _tidy(self) -> None:
        # Versions older than a lease only: a run opening the lock dataset meanwhile reads the latest one.
        self._dataset.cleanup_old_versions(older_than=self._lease)


@contextlib.contextmanager
def held(location: Location, lease: timedelta = LEASE, renew: float = RENEW) -> Iterator[Lease]:
    """Hold the lock of the database at `location` (on object storage) for the block."""
    taken = Lease(location, lease, renew)
    taken.take()
    try:
        yield taken
    except BaseException:
        taken.leftovers = taken.leftovers or "it stopped on an error"
        raise
    finally:
        taken.release()
