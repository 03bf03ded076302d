"""Walk DOCS and turn every usable document into rows: decode, extract, chunk, hash.

    collect(docs, chunk_size) -> Collected

Documents are independent: they are read by worker processes (`workers.py`; one per core when there
are many and more than one core), each file within a time limit; results come back in walk order, so
the table does not depend on timing, and `meanwhile` runs in a thread of this process, e.g. to import
the writer while the workers read.
"""

from __future__ import annotations

import hashlib
import os
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
from lancelot_indexer.walk import Duplicate, Excluded, Found, Skipped, walk
from lancelot_indexer.workers import Lost, Workers
from lancelot_schema import layout

# Called as on_progress(stage, done, total); stage is "read" (and "embed" for --embed).
ProgressCallback = Callable[[str, int, int], None]

# Below this many files, starting more than one worker process costs more than it saves.
POOL_MIN_FILES = 64
# Seconds a file may take to read: beyond it, its worker is stopped and the file skipped.
DEFAULT_FILE_TIMEOUT = 60.0
# Imported once by a forkserver, not by each worker it starts.
_READERS = ["lancelot_indexer.collect", "lancelot_indexer.html", "lancelot_indexer.markdown"]

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
    duplicates: list[Duplicate]


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
    # Many workers pay off on Linux only, where forking is cheap and safe (elsewhere each one starts a
    # fresh interpreter); one reads alone, so that the time limit can stop it.
    if sys.platform != "linux" or files < POOL_MIN_FILES:
        return 1
    return min(os.cpu_count() or 1, 8)


def _outcome(result: Outcome | Lost) -> Outcome:
    return result.reason if isinstance(result, Lost) else result


@contextmanager
def _outcomes(
    found: list[Found],
    read: Callable[[Found], Outcome],
    workers: int,
    limit: float | None,
    meanwhile: Callable[[], object] | None,
) -> Iterator[Iterator[Outcome]]:
    if not found or (workers <= 1 and limit is None):
        if meanwhile is not None:
            meanwhile()
        yield (read(item) for item in found)
        return
    # The workers start before any thread of ours: forked, a child must not inherit a lock a thread holds.
    with Workers(read, workers, limit, preload=_READERS) as pool:
        helper = threading.Thread(target=meanwhile, daemon=True) if meanwhile is not None else None
        if helper is not None:
            helper.start()
        try:
            yield (_outcome(result) for result in pool.map(found))
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
    file_timeout: float | None = DEFAULT_FILE_TIMEOUT,
) -> Collected:
    """Walk `docs` and turn every usable document into rows; unusable files are listed, never fatal.

    `workers`: processes that read documents (None: one per core when there are many files).
    `file_timeout`: seconds a file may take to read before its worker is stopped and the file skipped
    (None: no limit, and with one worker the documents are read in this process).
    `meanwhile` is called once, in a thread while the workers read, or first when there are none.
    `exclude`: patterns of paths (relative to `docs`) or names to leave out, see `walk.excluded_by`.
    """
    require_folder(docs)
    items = list(walk(docs, exclude))
    found = [item for item in items if isinstance(item, Found)]
    skipped = [item for item in items if isinstance(item, Skipped)]
    excluded = [item for item in items if isinstance(item, Excluded)]
    duplicates = [item for item in items if isinstance(item, Duplicate)]
    columns: dict[str, list[Any]] = {name: [] for name in layout.INDEXER_COLUMNS}
    paths = columns[layout.PATH]
    by_row = [columns[name] for name in _ROW_COLUMNS]
    windows_1252: list[str] = []
    documents = 0
    read = partial(read_document, chunk_size=chunk_size)
    with _outcomes(found, read, _workers(len(found), workers), file_timeout, meanwhile) as outcomes:
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
    return Collected(columns, documents, skipped, windows_1252, excluded, duplicates)
