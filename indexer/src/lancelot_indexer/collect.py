"""Walk DOCS and turn every usable document into rows: decode, extract, chunk, hash.

    collect(docs, chunk_size) -> Collected

Documents are independent, so when there are many of them and more than one core, they are read by
forked worker processes (results come back in walk order, so the table does not depend on timing) and
`meanwhile` runs in a thread of this process, e.g. to import the writer while the workers read.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from lancelot_indexer.chunk import Document, chunk, paragraphs
from lancelot_indexer.decode import CP1252, BinaryError, decode
from lancelot_indexer.errors import DocsError
from lancelot_indexer.walk import Excluded, Found, Skipped, walk
from lancelot_schema import layout

# Called as on_progress(stage, done, total); stage is "read" (and "embed" for --embed).
ProgressCallback = Callable[[str, int, int], None]

# Below this many files, starting worker processes costs more than it saves.
POOL_MIN_FILES = 64
_BATCH = 8  # files per task sent to a worker

# A document's rows in layout.INDEXER_COLUMNS order but `path` (the same for all), with its encoding;
# or why it was skipped.
Row = tuple[str, str, str, str, str, int, int, int | None, int | None, str | None]
Rows = list[Row]
_ROW_COLUMNS = tuple(name for name in layout.INDEXER_COLUMNS if name != layout.PATH)
Outcome = tuple[str, Rows] | str


@dataclass(frozen=True)
class Collected:
    columns: dict[str, list[Any]]  # layout.INDEXER_COLUMNS, one entry per chunk
    documents: int
    skipped: list[Skipped]
    windows_1252: list[str]
    excluded: list[Excluded]


class _Unusable(Exception):
    """A file that is skipped, with the reason as its message."""


def parse(found: Found, text: str) -> Document:
    """A document's title and blocks, by its kind."""
    name = found.path.name
    suffix = found.path.suffix.lower()
    if suffix in (".html", ".htm"):
        from lancelot_indexer import html

        return html.extract(text, name)
    if suffix in (".md", ".markdown"):
        # markdown-it and PyYAML take a tenth of a second to import: only when there is Markdown.
        from lancelot_indexer import markdown

        return markdown.extract(text, name)
    return Document(name, paragraphs(text))


def _read(found: Found) -> tuple[str, str]:
    try:
        data = found.path.read_bytes()
    except OSError as exc:
        raise _Unusable(f"unreadable: {exc.strerror or exc}") from exc
    try:
        decoded = decode(data)
    except BinaryError as exc:
        raise _Unusable(str(exc)) from exc
    return decoded.text, decoded.encoding


def read_document(found: Found, chunk_size: int) -> Outcome:
    """One file's rows and encoding, or the reason it cannot be used (runs in a worker process too)."""
    try:
        text, encoding = _read(found)
        document = parse(found, text)
    except _Unusable as exc:
        return str(exc)
    except (RecursionError, MemoryError) as exc:
        # A pathological file (markup nested thousands deep) costs that file, never the run.
        return f"could not be parsed ({type(exc).__name__})"
    pieces = chunk(document.blocks, chunk_size)
    if not pieces:
        return "no text"
    title, relative = document.title, found.relative
    rows = [
        (
            layout.chunk_id(relative, number),
            title,
            piece.heading,
            piece.text,
            hashlib.sha256(piece.text.encode("utf-8")).hexdigest(),
            number,
            len(pieces),
            piece.line_start,
            piece.line_end,
            piece.anchor,
        )
        for number, piece in enumerate(pieces)
    ]
    return encoding, rows


def _workers(files: int, requested: int | None) -> int:
    if requested is not None:
        return requested
    # Forking is cheap and safe on Linux only (macOS frameworks and Windows cannot fork).
    if sys.platform != "linux" or files < POOL_MIN_FILES:
        return 1
    return min(os.cpu_count() or 1, 8)


_STOPS = {signal.SIGINT, signal.SIGTERM}
_PR_SET_PDEATHSIG = 1


def _leave_stops_to_the_parent(parent: int | None) -> None:
    # Ctrl-C reaches the whole process group. A worker that died of it would print a traceback and be
    # replaced by a fresh fork of a parent that may hold Lance by then; the parent stops the pool instead.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The pool ends its workers with SIGTERM: they die quietly, whatever handler the parent installed,
    # and SIGTERM comes through (the parent blocks it while it forks us; the mask is inherited).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
    # A parent that dies without ending the pool must not leave us waiting for work forever, holding
    # its lock file open (the next run would find the database locked).
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if parent is not None and os.getppid() != parent:
        os._exit(0)  # the parent died before prctl took effect


@contextmanager
def _pool(method: str, workers: int) -> Iterator[Any]:
    """A pool whose construction a stop cannot interrupt halfway (its forked workers would be orphans)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        context = multiprocessing.get_context(method)
        # Forked workers know their parent; a forkserver's are its children, and die with it.
        parent = os.getpid() if method == "fork" else None
        pool = context.Pool(workers, initializer=_leave_stops_to_the_parent, initargs=(parent,))
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        raise
    try:
        # A stop that came meanwhile is raised here.
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        yield pool
    except KeyboardInterrupt:
        # No Pool.terminate on a stop: it can wait for good on its result thread when a worker was cut off
        # halfway through sending. The caller leaves the process at once; the workers die with it.
        raise
    except BaseException:
        pool.terminate()
        raise
    pool.terminate()


@contextmanager
def _outcomes(
    found: list[Found], chunk_size: int, workers: int, meanwhile: Callable[[], object] | None
) -> Iterator[Iterator[Outcome]]:
    if workers <= 1:
        if meanwhile is not None:
            meanwhile()
        yield (read_document(item, chunk_size) for item in found)
        return
    # Fork before starting any thread of ours: a child must not inherit a lock a thread holds. A process
    # that already loaded Lance (its runtime threads are not fork-safe; a library caller, a test) gets
    # workers from a fresh forkserver process instead, which costs their imports.
    method = "forkserver" if "lance" in sys.modules else "fork"
    with _pool(method, workers) as pool:
        helper = threading.Thread(target=meanwhile, daemon=True) if meanwhile is not None else None
        outcomes = pool.imap(partial(read_document, chunk_size=chunk_size), found, chunksize=_BATCH)
        if helper is not None:
            helper.start()
        try:
            yield outcomes
        finally:
            # Also when stopped (Ctrl-C): an interpreter that exits while this thread is halfway through
            # importing pyarrow and Lance aborts ("Fatal Python error: PyGILState_Release").
            if helper is not None:
                helper.join()


def require_folder(docs: Path) -> None:
    if not docs.is_dir():
        raise DocsError(f"The documents folder {docs} does not exist or is not a folder.")


def collect(
    docs: Path,
    chunk_size: int,
    on_progress: ProgressCallback | None = None,
    *,
    workers: int | None = None,
    meanwhile: Callable[[], object] | None = None,
    exclude: Sequence[str] = (),
) -> Collected:
    """Walk `docs` and turn every usable document into rows; unusable files are listed, never fatal.

    `workers`: processes that read documents (None: one per core when there are many files).
    `meanwhile` is called once, in a thread while the workers read, or first when there are none.
    `exclude`: patterns of paths (relative to `docs`) or names to leave out, see `walk.excluded_by`.
    """
    require_folder(docs)
    items = list(walk(docs, exclude))
    found = [item for item in items if isinstance(item, Found)]
    skipped = [item for item in items if isinstance(item, Skipped)]
    excluded = [item for item in items if isinstance(item, Excluded)]
    columns: dict[str, list[Any]] = {name: [] for name in layout.INDEXER_COLUMNS}
    paths = columns[layout.PATH]
    by_row = [columns[name] for name in _ROW_COLUMNS]
    windows_1252: list[str] = []
    documents = 0
    with _outcomes(found, chunk_size, _workers(len(found), workers), meanwhile) as outcomes:
        for done, (item, outcome) in enumerate(zip(found, outcomes, strict=True), start=1):
            if isinstance(outcome, str):
                skipped.append(Skipped(item.relative, outcome))
            else:
                encoding, rows = outcome
                documents += 1
                if encoding == CP1252:
                    windows_1252.append(item.relative)
                paths.extend([item.relative] * len(rows))
                for column, values in zip(by_row, zip(*rows, strict=True), strict=True):
                    column.extend(values)
            if on_progress is not None:
                on_progress("read", done, len(found))
    return Collected(columns, documents, skipped, windows_1252, excluded)
