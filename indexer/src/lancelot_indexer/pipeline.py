"""The indexing pipeline as plain functions: `collect` reads DOCS into rows, `build` writes them.

    build(docs, db, Options()) -> Report

`build` holds the database lock from the first read of the current table to the last write, so an
`Extension` (embeddings, later) can look at the current table, add columns and metadata, and be sure
that what it looked at is what gets replaced.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import lancedb
import pyarrow as pa
import structlog

from lancelot_indexer import __version__, html, markdown, write
from lancelot_indexer.chunk import Document, chunk, paragraphs
from lancelot_indexer.decode import CP1252, BinaryError, decode
from lancelot_indexer.errors import DocsError, EmptyDocsError
from lancelot_indexer.walk import Found, Skipped, walk
from lancelot_schema import layout

log = structlog.get_logger("lancelot_indexer")

# Called as on_progress(stage, done, total); stage is "read" (and later "embed").
ProgressCallback = Callable[[str, int, int], None]

SCHEMA = pa.schema([pa.field(name, pa.string()) for name in layout.INDEXER_COLUMNS])


@dataclass(frozen=True)
class Options:
    table: str = layout.DEFAULT_TABLE
    chunk_size: int = layout.DEFAULT_CHUNK_SIZE
    fts: bool = True
    allow_empty: bool = False
    keep_versions: timedelta = write.DEFAULT_KEEP_VERSIONS


@dataclass(frozen=True)
class Collected:
    rows: pa.Table
    documents: int
    skipped: list[Skipped]
    windows_1252: list[str]


@dataclass(frozen=True)
class Report:
    """What a run did, for the summary line and for callers of `build`."""

    docs: str
    db: str
    table: str
    documents: int
    chunks: int
    skipped: list[Skipped]
    windows_1252: list[str]
    seconds: float
    strategy: str
    version: int
    fts: bool
    extra: dict[str, int] = field(default_factory=dict)


class Extension(Protocol):
    """Adds columns (and metadata) to the rows before they are written; `current` is the table now."""

    def extend(self, rows: pa.Table, current: lancedb.table.Table | None) -> tuple[pa.Table, dict[str, str]]: ...


class _Unusable(Exception):
    """A file that is skipped, with the reason as its message."""


def parse(found: Found, text: str) -> Document:
    """A document's title and blocks, by its kind."""
    name = found.path.name
    suffix = found.path.suffix.lower()
    if suffix in (".html", ".htm"):
        return html.extract(text, name)
    if suffix in (".md", ".markdown"):
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


def collect(docs: Path, chunk_size: int, on_progress: ProgressCallback | None = None) -> Collected:
    """Walk `docs` and turn every usable document into rows; unusable files are listed, never fatal."""
    if not docs.is_dir():
        raise DocsError(f"The documents folder {docs} does not exist or is not a folder.")
    items = list(walk(docs))
    found = [item for item in items if isinstance(item, Found)]
    skipped = [item for item in items if isinstance(item, Skipped)]
    columns: dict[str, list[str]] = {name: [] for name in layout.INDEXER_COLUMNS}
    windows_1252: list[str] = []
    documents = 0
    for done, item in enumerate(found, start=1):
        try:
            text, encoding = _read(item)
            document = parse(item, text)
            chunks = chunk(document.blocks, chunk_size)
            if not chunks:
                raise _Unusable("no text")
        except _Unusable as exc:
            skipped.append(Skipped(item.relative, str(exc)))
        else:
            documents += 1
            if encoding == CP1252:
                windows_1252.append(item.relative)
            for number, piece in enumerate(chunks):
                columns[layout.ID].append(layout.chunk_id(item.relative, number))
                columns[layout.PATH].append(item.relative)
                columns[layout.TITLE].append(document.title)
                columns[layout.HEADING].append(piece.heading)
                columns[layout.TEXT].append(piece.text)
                columns[layout.TEXT_HASH].append(hashlib.sha256(piece.text.encode("utf-8")).hexdigest())
        if on_progress is not None:
            on_progress("read", done, len(found))
    for refused in skipped:
        log.warning("skipped", path=refused.relative, reason=refused.reason)
    return Collected(pa.table(columns, schema=SCHEMA), documents, skipped, windows_1252)


def metadata(chunk_size: int) -> dict[str, str]:
    return {
        layout.META_LAYOUT_VERSION: layout.LAYOUT_VERSION,
        layout.META_INDEXER_VERSION: __version__,
        layout.META_CHUNK_SIZE: str(chunk_size),
        layout.META_INDEXED_AT: datetime.now(UTC).isoformat(timespec="seconds"),
    }


def build(
    docs: Path,
    db: Path,
    options: Options | None = None,
    *,
    on_progress: ProgressCallback | None = None,
    extension: Extension | None = None,
) -> Report:
    """Index `docs` into table `options.table` of the database at `db`, replacing it atomically."""
    options = options or Options()
    started = time.perf_counter()
    collected = collect(docs, options.chunk_size, on_progress)
    if collected.documents == 0 and not options.allow_empty:
        raise EmptyDocsError(
            f"No documents found in {docs} (.md, .markdown, .txt, .html, .htm); the table was left as it was. "
            "Pass --allow-empty to empty the table."
        )
    stamp = metadata(options.chunk_size)
    with write.locked(db):
        rows = collected.rows
        if extension is not None:
            rows, extra = extension.extend(rows, write.open_table(db, options.table))
            stamp.update(extra)
        result = write.replace_table(
            db, options.table, rows, stamp, fts=options.fts, keep_versions=options.keep_versions
        )
    report = Report(
        docs=str(docs),
        db=str(db),
        table=options.table,
        documents=collected.documents,
        chunks=result.rows,
        skipped=collected.skipped,
        windows_1252=collected.windows_1252,
        seconds=time.perf_counter() - started,
        strategy=result.strategy,
        version=result.version,
        fts=result.fts,
    )
    log.info("indexed", documents=report.documents, chunks=report.chunks, strategy=report.strategy)
    return report
