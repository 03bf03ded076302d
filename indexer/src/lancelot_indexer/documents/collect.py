"""Turn documents into rows: decode, extract, chunk, hash; handed on in batches as they are read.

    with Reader(chunk_size, files=len(found)) as reader:
        reader.start()                            # forks the workers: before any thread, before Lance
        for columns in reader.batches(found): ... # at most BATCH_ROWS rows each; reader.tally counts
    collect(docs, chunk_size) -> Collected        # a whole folder at once (small folders, tests)

Documents are independent: they are read by worker processes (`workers.py`; one per core when there
are many and more than one core), each file within a time limit and a memory limit; results come back in
walk order, so the table does not depend on timing. Batches keep memory flat however large the folder: a
batch is written while the next is read. Whatever a reader raises on a file costs that file only: it is
skipped with the reason (a bug or a hostile file, not the user's mistake, and never the whole run's end).
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from lancelot_indexer import memory
from lancelot_indexer.chunking.chunk import Document, chunk
from lancelot_indexer.documents.generated import KINDS, Generated
from lancelot_indexer.documents.walk import Duplicate, Excluded, Found, Skipped, walk
from lancelot_indexer.documents.workers import Lost, Workers, over_memory
from lancelot_indexer.errors import DocsError
from lancelot_indexer.readers import formats
from lancelot_indexer.readers.decode import CP1252, BinaryError, decode
from lancelot_indexer.readers.formats import Unreadable
from lancelot_schema import layout

# Called as on_progress(stage, done, total); stage is "read" (and "embed" for --embed).
ProgressCallback = Callable[[str, int, int], None]

# Below this many files, starting more than one worker process costs more than it saves.
POOL_MIN_FILES = 64
# Seconds a file may take to read: beyond it, its worker is stopped and the file skipped.
DEFAULT_FILE_TIMEOUT = 60.0
# Megabytes a worker may grow by while it reads a file, and the passages one file may yield per megabyte of
# that: this process holds a file's rows whole, and many tiny passages must cost it less than reading them
# may (docs/decisions.md, "A hostile file costs itself only").
DEFAULT_FILE_MEMORY = 1024
PASSAGES_PER_MB = 200
# Characters of an unexpected error's message kept in a skipped file's reason.
_MESSAGE = 100
# Rows handed on at a time: about 10 MB of text, few enough that memory stays flat, many enough that
# Lance writes large pages and an embedding batch fills its requests.
BATCH_ROWS = 8192
# Imported once by a forkserver, not by each worker it starts: the readers whose libraries are always installed.
_READERS = [
    "lancelot_indexer.documents.collect",
    *dict.fromkeys(kind.module for kind in formats.FORMATS.values() if kind.extra is None),
]

# A document's rows in layout.INDEXER_COLUMNS order but the columns that are the same on all of them (its path,
# its file's hash, its metadata: `_PER_DOCUMENT`), with its encoding, the hash of its file and its metadata's
# columns (`Described`); or why it was skipped; or that it is a generated page, left out.
Row = tuple[str, str, str, str, str, int, int, int | None, int | None, str | None, int | None]
Rows = list[Row]
Described = tuple[str | None, str | None, str | None, str]  # layout.META, TAGS, DATE, FILE_TYPE
_PER_DOCUMENT = (layout.PATH, layout.FILE_HASH, layout.META, layout.TAGS, layout.DATE, layout.FILE_TYPE)
_ROW_COLUMNS = tuple(name for name in layout.INDEXER_COLUMNS if name not in _PER_DOCUMENT)
Outcome = tuple[str, str, Rows, Described] | str | Generated
Columns = dict[str, list[Any]]  # layout.INDEXER_COLUMNS, one entry per chunk


@dataclass(frozen=True)
class Collected:
    columns: Columns
    documents: int
    skipped: list[Skipped]
    windows_1252: list[str]
    excluded: list[Excluded]
    duplicates: list[Duplicate]
    generated: list[Generated]


@dataclass
class Tally:
    """What the batches so far came from: documents with rows, rows, files skipped and why, Windows-1252 files."""

    documents: int = 0
    rows: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    windows_1252: list[str] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)  # path -> SHA-256 of the file its rows came from
    generated: list[Generated] = field(default_factory=list)  # pages left out once read (tables of contents)


# What a binary document records where a text one records its encoding (only Windows-1252 is reported).
BINARY = "binary"


def parse(found: Found, data: bytes) -> tuple[str, Document]:
    """The encoding a document was read with and its title and blocks, by its kind (`formats.FORMATS`)."""
    reader = formats.format_of(found.path)
    if reader.binary:
        return BINARY, formats.extract(reader, data, found.path.name)
    try:
        decoded = decode(data)
    except BinaryError as exc:
        raise Unreadable(str(exc)) from exc
    return decoded.encoding, formats.extract(reader, decoded.text, found.path.name)


def read_bytes(path: Path) -> bytes:
    """The file's bytes. Plain `os.read` calls: half the time of `Path.read_bytes` (its buffered file object)
    for the small files of a manual, which is most of what hashing a folder costs (docs/decisions.md)."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            parts, wanted = [], os.fstat(handle).st_size + 1  # all in one read, unless the file grew
            while chunk := os.read(handle, wanted):
                parts.append(chunk)
                wanted = 1 << 20
            return b"".join(parts)  # one part: no copy
        finally:
            os.close(handle)
    except OSError as exc:
        raise Unreadable(f"unreadable: {exc.strerror or exc}") from exc


def content(found: Found) -> bytes:
    """The document's bytes: its file's, or its object's on a bucket."""
    return read_bytes(found.path) if found.store is None else found.store.read(found.relative)


def read_document(
    found: Found, chunk_size: int, keep_generated: bool = False, file_memory: int | None = None
) -> Outcome:
    """One file's encoding, content hash, rows and metadata columns, or why it cannot be used, or that it is a
    page a documentation generator made (unless `keep_generated`); runs in a worker too.

    `file_memory`: the megabytes the worker may grow by (None: no limit); a file may yield `PASSAGES_PER_MB`
    passages a megabyte.
    """
    try:
        return _read(found, chunk_size, keep_generated, file_memory)
    except Exception as exc:  # any reader, any file: it costs that file only
        return _failed(exc, memory.limited())


def _read(found: Found, chunk_size: int, keep_generated: bool, file_memory: int | None) -> Outcome:
    data = content(found)
    encoding, document = parse(found, data)
    if document.generated is not None and not keep_generated:
        generator, kind = document.generated
        return Generated(found.relative, generator, KINDS[kind], hashlib.sha256(data).hexdigest())
    pieces = chunk(document.blocks, chunk_size, document.title if document.title_heads_trail else "")
    if not pieces:
        return "no text"
    if file_memory is not None and len(pieces) > (most := file_memory * PASSAGES_PER_MB):
        return (
            f"{len(pieces):,} passages, more than one file may yield ({most:,}: {PASSAGES_PER_MB} per MB of "
            "--file-memory): split it into smaller files"
        )
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
            piece.page,
        )
        for number, piece in enumerate(pieces)
    ]
    described = (*document.metadata.columns(), layout.FILE_TYPES.get(formats.suffix_of(found.path.name), "txt"))
    # The hash of the bytes that were parsed: a file that changes after this is seen as changed next time.
    return encoding, hashlib.sha256(data).hexdigest(), rows, described


def _failed(exc: Exception, megabytes: int | None) -> str:
    """Why a file whose reading raised `exc` is skipped."""
    if memory.reached_limit() or isinstance(exc, MemoryError):
        # Whatever the reader made of it: lxml reports a failed allocation as a syntax error.
        return over_memory(megabytes) if megabytes is not None else "ran out of memory reading it"
    if isinstance(exc, Unreadable):
        return str(exc)
    if isinstance(exc, RecursionError):  # markup nested thousands deep
        return "could not be parsed (RecursionError)"
    what = type(exc).__name__
    if message := " ".join(str(exc).split()):
        what += ": " + (message if len(message) <= _MESSAGE else message[: _MESSAGE - 1] + "…")
    return f"could not be read ({what})"


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


def empty_columns() -> Columns:
    return {name: [] for name in layout.INDEXER_COLUMNS}


class Engine(Protocol):
    """Reads files elsewhere than in this machine's worker processes (`ray_tasks.Cluster`): `read(item)` for
    every item, in order, or why it could not be read; and runs other work there (`map`: --embed's requests)."""

    def outcomes(self, read: Callable[[Found], Outcome], found: Sequence[Found]) -> Iterator[Outcome]: ...

    def map(self, function: Callable[[Any], Any], items: Sequence[Any], in_flight: int) -> Iterator[Any]: ...


class Reader:
    """Reads documents into batches of columns, in worker processes when there are enough files or a time limit.

    `files`: how many files there are in all (it decides the number of workers).
    `file_timeout`: seconds a file may take to read before its worker is stopped and the file skipped;
    `file_memory`: megabytes a worker may grow by while it reads (None: no limit; without either, and with
    one worker, the documents are read in this process). `keep_generated`: read the pages a reader knows as
    generated (a table of contents) as documents. `engine`: read by it (a Ray cluster), with no worker here.
    """

    def __init__(
        self,
        chunk_size: int,
        files: int,
        *,
        workers: int | None = None,
        file_timeout: float | None = DEFAULT_FILE_TIMEOUT,
        file_memory: int | None = DEFAULT_FILE_MEMORY,
        batch_rows: int | None = None,
        keep_generated: bool = False,
        engine: Engine | None = None,
    ) -> None:
        self.tally = Tally()
        self._engine = engine
        self._read = partial(
            read_document, chunk_size=chunk_size, keep_generated=keep_generated, file_memory=file_memory
        )
        self._count = _workers(files, workers)
        self._limit = file_timeout
        self._memory = file_memory
        self._batch_rows = batch_rows or BATCH_ROWS
        self._pool: Workers[Found, Outcome] | None = None

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """End the worker processes (a later `batches` starts new ones)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def start(self) -> None:
        """Start the worker processes now, if any are to read. Forked, a child must not inherit a lock a
        thread holds: call this before starting threads or importing Lance."""
        if (
            self._engine is None
            and self._pool is None
            and (self._count > 1 or self._limit is not None or self._memory is not None)
        ):
            self._pool = Workers(self._read, self._count, self._limit, preload=_READERS, memory=self._memory)

    def _outcomes(self, found: Sequence[Found]) -> Iterator[Outcome]:
        if not found:
            return iter(())
        if self._engine is not None:
            return self._engine.outcomes(self._read, found)
        self.start()
        if self._pool is None:
            return (self._read(item) for item in found)
        return (_outcome(result) for result in self._pool.map(found))

    def batches(self, found: Sequence[Found], on_progress: ProgressCallback | None = None) -> Iterator[Columns]:
        """The rows of `found`, in walk order, `batch_rows` at a time (the last batch may be smaller)."""
        tally = self.tally
        columns = empty_columns()
        by_row = [columns[name] for name in _ROW_COLUMNS]
        for done, (item, outcome) in enumerate(zip(found, self._outcomes(found), strict=True), start=1):
            if isinstance(outcome, str):
                tally.skipped.append(Skipped(item.relative, outcome))
            elif isinstance(outcome, Generated):
                tally.generated.append(outcome)
            else:
                encoding, digest, rows, described = outcome
                tally.documents += 1
                tally.rows += len(rows)
                tally.hashes[item.relative] = digest
                if encoding == CP1252:
                    tally.windows_1252.append(item.relative)
                for name, value in zip(_PER_DOCUMENT, (item.relative, digest, *described), strict=True):
                    columns[name].extend([value] * len(rows))
                for column, values in zip(by_row, zip(*rows, strict=True), strict=True):
                    column.extend(values)
            if on_progress is not None:
                on_progress("read", done, len(found))
            if len(columns[layout.ID]) >= self._batch_rows:
                yield columns
                columns = empty_columns()
                by_row = [columns[name] for name in _ROW_COLUMNS]
        # Every file is read: the workers go now, not after the write (their memory would add to its peaks).
        self.close()
        if columns[layout.ID]:
            yield columns


def require_folder(docs: Path) -> None:
    if not docs.is_dir():
        raise DocsError(f"The documents folder {docs} does not exist or is not a folder.")


@dataclass(frozen=True)
class Walked:
    """The walk's findings, by kind."""

    found: list[Found]
    skipped: list[Skipped]
    excluded: list[Excluded]
    duplicates: list[Duplicate]
    generated: list[Generated]
    ignored: Counter[str] = field(default_factory=Counter)  # files of other formats, by suffix


def walked(docs: Path, exclude: Sequence[str] = (), *, leave_generated: bool = True) -> Walked:
    require_folder(docs)
    ignored: Counter[str] = Counter()
    items = list(walk(docs, exclude, ignored, leave_generated=leave_generated))
    return Walked(
        [item for item in items if isinstance(item, Found)],
        [item for item in items if isinstance(item, Skipped)],
        [item for item in items if isinstance(item, Excluded)],
        [item for item in items if isinstance(item, Duplicate)],
        [item for item in items if isinstance(item, Generated)],
        ignored,
    )


def collect(
    docs: Path,
    chunk_size: int,
    on_progress: ProgressCallback | None = None,
    *,
    workers: int | None = None,
    exclude: Sequence[str] = (),
    file_timeout: float | None = DEFAULT_FILE_TIMEOUT,
    keep_generated: bool = False,
    file_memory: int | None = DEFAULT_FILE_MEMORY,
) -> Collected:
    """Walk `docs` and turn every usable document into rows, all at once; unusable files are listed, never fatal.

    `workers`, `file_timeout`, `file_memory`, `keep_generated`: as for `Reader`. `exclude`: patterns of paths
    (relative to `docs`) or names to leave out, see `walk.excluded_by`.
    """
    found = walked(docs, exclude, leave_generated=not keep_generated)
    columns = empty_columns()
    with Reader(
        chunk_size,
        len(found.found),
        workers=workers,
        file_timeout=file_timeout,
        file_memory=file_memory,
        keep_generated=keep_generated,
    ) as reader:
        for batch in reader.batches(found.found, on_progress):
            for name, values in batch.items():
                columns[name].extend(values)
    tally = reader.tally
    skipped = [*found.skipped, *tally.skipped]
    generated = sorted([*found.generated, *tally.generated], key=lambda page: page.relative)
    return Collected(columns, tally.documents, skipped, tally.windows_1252, found.excluded, found.duplicates, generated)
