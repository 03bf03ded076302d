"""`lancelot-index DOCS DB --watch`: rebuild the table whenever the documents change, until stopped.

    run(docs, db, options, out=click.echo)    # builds, then rebuilds after each burst of changes settles
    watcher = Watcher(docs, db, options); watcher.run(out=...); watcher.stop()   # stop from another thread

watchdog (inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows) reports changes under
DOCS in its own threads; the ones that can change what a rebuild reads (a document's name, or a folder;
not the database's tables when DB lies inside DOCS, not a dot name, not an --exclude match) are queued
with their time. The loop waits until none came for `settle` seconds, so that an editor saving through a
temporary file and a rename, or a copy of many files, causes one rebuild; changes that never settle are
rebuilt every `longest` seconds. A rebuild is `pipeline.build`: incremental, and quick when nothing
changed (docs/decisions.md, "Indexer: `--watch`"). One line is printed per rebuild. Changes made during a
rebuild are queued and cause the next.

A rebuild that fails (no documents left, a file that vanished as it was read, another indexer holding the
lock) prints its error and the watch goes on; only DOCS itself vanishing ends it. A stop (Ctrl-C, the
CLI's SIGTERM) while waiting ends `run`, which returns; during a rebuild it is raised as it is, and the
CLI says what became of the table (Lance commits whole: never half-written). watchdog is imported here
only: the indexer without --watch does not pay for it (docs/decisions.md has the measurements).
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lancelot_indexer.documents import swapped
from lancelot_indexer.documents.collect import require_folder
from lancelot_indexer.documents.walk import excluded_by, is_document
from lancelot_indexer.errors import DocsError, IndexerError
from lancelot_indexer.pipeline import Options, Report, build, count, log_leftovers
from lancelot_indexer.printable import printable

if TYPE_CHECKING:
    from lancelot_schema.storage import Location

SETTLE = 0.5  # seconds without a change before a rebuild
LONGEST = 30.0  # seconds from the first change of a burst that never settles to a rebuild all the same
# The longest wait for a change: a wait on a lock is not interrupted by Ctrl-C on Windows.
_TICK = 1.0
_STOP = -1.0  # queued by `stop`; a change is queued as its time.monotonic()
_STOPS = {signal.SIGINT, signal.SIGTERM}

Write = Callable[[str], None]


class _Stopped(Exception):
    """`Watcher.stop` was called."""


def run(
    docs: Path,
    db: Path | Location,
    options: Options | None = None,
    *,
    out: Write,
    err: Write | None = None,
    build_once: Callable[[], Report] | None = None,
    settle: float = SETTLE,
    longest: float = LONGEST,
) -> int:
    """Build, then rebuild after each burst of changes, until a stop while waiting; the number of rebuilds
    that succeeded. `build_once` runs one build (default: `pipeline.build(docs, db, options)`)."""
    return Watcher(docs, db, options, settle=settle, longest=longest).run(out=out, err=err, build_once=build_once)


class Watcher:
    """The watch over DOCS and the loop of rebuilds (`run`); `stop` ends the loop from any thread."""

    def __init__(
        self,
        docs: Path,
        db: Path | Location,
        options: Options | None = None,
        *,
        settle: float = SETTLE,
        longest: float = LONGEST,
    ) -> None:
        self.docs, self.db, self.options = docs, db, options or Options()
        self.settle, self.longest = settle, longest
        # SimpleQueue: `put` may be called from a signal handler or another thread while the loop waits.
        self._changes: queue.SimpleQueue[float] = queue.SimpleQueue()
        self._building = False  # a stop now is a stop during a rebuild
        self._rebuilds = 0  # the builds that succeeded

    def stop(self) -> None:
        self._changes.put(_STOP)

    def run(self, *, out: Write, err: Write | None = None, build_once: Callable[[], Report] | None = None) -> int:
        err = err or out
        build_once = build_once or partial(build, self.docs, self.db, self.options)
        swapped.check(self.docs, self.db)
        require_folder(self.docs)
        root = self.docs.resolve()
        wanted = partial(relevant, root=root, database=_folder(self.db), exclude=self.options.exclude)
        observer = _observe(root, wanted, self._changes)
        try:
            # Watched before the first build: what changes while it reads is not missed.
            self._rebuild(build_once, out, err)
            out(f"Watching {printable(str(self.docs))} for changes (Ctrl-C to stop).")
            while True:
                self._settled()
                self._rebuild(build_once, out, err)
        except (_Stopped, KeyboardInterrupt):
            if self._building:
                raise  # the caller says what became of the table
            # A stop while waiting, or as a rebuild's line was printed (Ctrl-C at the sight of it): all written.
            return self._rebuilds
        finally:
            _stop(observer)

    def _settled(self) -> None:
        """Wait for a change, then until none came for `settle` s or `longest` s passed since the first one."""
        first = None
        while first is None:
            first = self._next(_TICK)
        last = first
        while (wait := min(last + self.settle, first + self.longest) - time.monotonic()) > 0:
            latest = self._next(wait)
            if latest is None:
                return
            last = max(last, latest)

    def _next(self, within: float) -> float | None:
        """The time of the next change (changes queued during a rebuild come at once), or None when none came
        within `within` s. Raises _Stopped after `stop`."""
        deadline = time.monotonic() + within
        while (wait := deadline - time.monotonic()) > 0:
            try:
                when = self._changes.get(timeout=min(wait, _TICK))
            except queue.Empty:
                continue
            if when == _STOP:
                raise _Stopped
            return when
        return None

    def _rebuild(self, build_once: Callable[[], Report], out: Write, err: Write) -> None:
        """One build and its line, or its error's."""
        self._building = True
        try:
            report = build_once()
        except (IndexerError, OSError) as exc:
            self._building = False
            if not self.docs.is_dir():
                raise DocsError(f"The documents folder {self.docs} is gone; stopped watching it.") from exc
            err(f"{_clock()}  not rebuilt: {printable(str(exc))}")
            return
        self._building = False  # not in a finally: a stop during the build leaves it set
        self._rebuilds += 1
        # The log names each file the line counts as skipped; it comes first, so that the line is the
        # rebuild's last word: a Ctrl-C right after the line cannot cut the names short.
        log_leftovers(report)
        out(f"{_clock()}  {line(report)}")


def line(report: Report) -> str:
    """A rebuild in one line: `3 documents, 7 passages; 1 read, 2 unchanged, 1 removed; 0.3 s`."""
    if report.full is not None:
        what = f"all read again ({report.full})"
    else:
        what = f"{report.read} read, {report.kept} unchanged, {report.removed} removed"
    if report.skipped:
        what += f", {len(report.skipped)} skipped"
    return f"{count(report.documents, 'document')}, {count(report.chunks, 'passage')}; {what}; {report.seconds:.1f} s"


def relevant(path: Path, is_dir: bool, *, root: Path, database: Path | None, exclude: tuple[str, ...]) -> bool:
    """Whether a change at `path` (under `root`) can change what a rebuild reads: a document's name or a
    folder's (one moved away or deleted takes its documents along), outside the database's tables and
    outside what the walk leaves out (dot names, --exclude)."""
    if database is not None and _in_tables(path, database):
        return False
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    if not parts:
        return True  # DOCS itself deleted or moved away: the rebuild says so and the watch ends
    if any(part.startswith(".") for part in parts):
        return False
    for depth, name in enumerate(parts, 1):
        inner = depth < len(parts) or is_dir
        if exclude and excluded_by("/".join(parts[:depth]), name, inner, exclude):
            return False
    return is_dir or is_document(parts[-1])


def _in_tables(path: Path, database: Path) -> bool:
    """The database folder itself or a table's folder in it (`NAME.lance`): what a rebuild writes."""
    if path == database:
        return True
    try:
        inside = path.relative_to(database).parts
    except ValueError:
        return False
    return inside[0].endswith(".lance")


def _folder(db: Path | Location) -> Path | None:
    """The database's folder, resolved as the watch reports paths; None on object storage."""
    if isinstance(db, Path):
        return db.resolve()
    return db.path.resolve() if db.local else None


def _stop(observer: Any) -> None:
    # watchdog logs an error when its reading thread wakes once more after the stop (a race it then ignores).
    quiet = logging.getLogger("watchdog.observers.inotify")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        observer.stop()
        observer.join()
    finally:
        quiet.setLevel(level)


def _clock() -> str:
    return time.strftime("%H:%M:%S")


def _observe(root: Path, wanted: Callable[..., bool], changes: queue.SimpleQueue[float]) -> Any:
    """Start watchdog's observer on `root`; each change `wanted` takes is queued with its time."""
    from watchdog import events
    from watchdog.observers import Observer

    class Queue(events.FileSystemEventHandler):
        def on_any_event(self, event: events.FileSystemEvent) -> None:
            paths = [event.src_path, event.dest_path] if event.dest_path else [event.src_path]
            if any(wanted(Path(os.fsdecode(path)), event.is_directory) for path in paths):
                changes.put(time.monotonic())

    # What changes a file or takes a folder away: no opened, no closed-unwritten, so the kernel does not even
    # report the rebuild's own reading of every file. No folder created or modified: watchdog reports what a
    # new folder holds (moved in or written since) as files created, and a folder's entries report themselves.
    kinds: list[type[events.FileSystemEvent]] = [
        events.FileCreatedEvent,
        events.FileModifiedEvent,
        events.FileClosedEvent,  # a write finished (Linux): the last event of a slow copy
        events.FileDeletedEvent,
        events.FileMovedEvent,
        events.DirDeletedEvent,
        events.DirMovedEvent,
    ]
    # watchdog 7 warns, from its reading thread, when a folder created while its parent's watch was being set
    # up gets its watch twice (Lance making a table's folders inside DOCS): the same watch, harmless; and where
    # warnings are errors the exception would end that thread, and with it the watch.
    warnings.filterwarnings("ignore", message="Callback with id .* already exists for watch", category=RuntimeWarning)
    observer = Observer()
    # Its threads never take Ctrl-C or SIGTERM (they inherit this mask): the main thread blocks both while
    # it starts a reader process (workers.py), and a signal another thread took would be handled all the same.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS) if hasattr(signal, "pthread_sigmask") else None
    try:
        observer.schedule(Queue(), str(root), recursive=True, event_filter=kinds)
        observer.start()  # every folder has its watch when this returns
    except OSError as exc:
        # The kernel's limits: fs.inotify.max_user_watches (a watch per folder) or max_user_instances.
        raise DocsError(f"Cannot watch {root}: {exc.strerror or exc}.") from exc
    finally:
        if held is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return observer
