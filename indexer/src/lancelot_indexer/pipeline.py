"""The indexing pipeline: `collect` reads DOCS into rows, `build` writes them.

    build(docs, db, Options()) -> Report

`build` holds the database lock from the first read of the current table to the last write, so an
`Extension` (embeddings) can look at the current table, add columns and metadata, and be sure that what
it looked at is what gets replaced. Importing this module is cheap: the writer (pyarrow, Lance) is
imported while the documents are read, so `--help` and usage errors never wait for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from lancelot_indexer import __version__, lock, log
from lancelot_indexer.collect import DEFAULT_FILE_TIMEOUT, ProgressCallback, collect, require_folder
from lancelot_indexer.errors import EmptyDocsError
from lancelot_indexer.walk import Duplicate, Excluded, Skipped
from lancelot_schema import languages, layout

if TYPE_CHECKING:
    import lance
    import pyarrow as pa

__all__ = ["Extension", "Options", "ProgressCallback", "Report", "build", "metadata"]

# How long a version stays on disk after a newer one replaced it (a reader may still be reading it).
DEFAULT_KEEP_VERSIONS = timedelta(minutes=2)


@dataclass(frozen=True)
class Options:
    table: str = layout.DEFAULT_TABLE
    chunk_size: int = layout.DEFAULT_CHUNK_SIZE
    fts: bool = True
    allow_empty: bool = False
    keep_versions: timedelta = DEFAULT_KEEP_VERSIONS
    workers: int | None = None  # processes reading documents; None: one per core for large folders
    exclude: tuple[str, ...] = ()  # patterns of paths or names to leave out (walk.excluded_by)
    link: str | None = None  # a link template (lancelot_schema.links), stamped for the server to fill in
    language: str = languages.DEFAULT  # how the full-text indexes split words (lancelot_schema.languages)
    file_timeout: float | None = DEFAULT_FILE_TIMEOUT  # seconds a file may take to read; None: no limit


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
    language: str = languages.DEFAULT
    excluded: list[Excluded] = field(default_factory=list)
    unmatched_exclude: list[str] = field(default_factory=list)  # --exclude patterns that matched nothing
    duplicates: list[Duplicate] = field(default_factory=list)  # found before under another path, left out


class Extension(Protocol):
    """Adds columns (and metadata) to the rows before they are written; `current` is the table now."""

    def extend(self, rows: pa.Table, current: lance.LanceDataset | None) -> tuple[pa.Table, dict[str, str]]: ...


def _load_writer() -> None:
    # pyarrow and Lance take a few tenths of a second to import; done while the workers read.
    import lancelot_indexer.write  # noqa: F401


def count(number: int, noun: str) -> str:
    """`1 chunk`, `2 chunks`: every noun in the indexer's messages takes a plain -s."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def metadata(chunk_size: int, link: str | None = None, language: str = languages.DEFAULT) -> dict[str, str]:
    stamp = {
        layout.META_LAYOUT_VERSION: layout.LAYOUT_VERSION,
        layout.META_INDEXER_VERSION: __version__,
        layout.META_CHUNK_SIZE: str(chunk_size),
        layout.META_INDEXED_AT: datetime.now(UTC).isoformat(timespec="seconds"),
        layout.META_LANGUAGE: language,
    }
    if link is not None:
        stamp[layout.META_LINK_TEMPLATE] = link
    return stamp


def build(
    docs: Path,
    db: Path,
    options: Options | None = None,
    *,
    on_progress: ProgressCallback | None = None,
    extension: Extension | None = None,
    on_write: Callable[[], None] | None = None,
) -> Report:
    """Index `docs` into table `options.table` of the database at `db`, replacing it atomically.

    `on_write` is called just before the first change to the database (a stop before it changed nothing).
    """
    options = options or Options()
    started = time.perf_counter()
    require_folder(docs)
    # Locked before reading: a second indexer stops at once, not after reading the whole folder.
    with lock.locked(db):
        collected = collect(
            docs,
            options.chunk_size,
            on_progress,
            workers=options.workers,
            meanwhile=_load_writer,
            exclude=options.exclude,
            file_timeout=options.file_timeout,
        )
        for refused in collected.skipped:
            log.warning("skipped", path=refused.relative, reason=refused.reason)
        for duplicate in collected.duplicates:
            log.info("left out, found before under another path", path=duplicate.relative, first=duplicate.first)
        used = {item.pattern for item in collected.excluded}
        unmatched = [pattern for pattern in options.exclude if pattern not in used]
        for pattern in unmatched:
            log.warning("--exclude matched nothing", pattern=pattern)
        if collected.documents == 0 and not options.allow_empty:
            left_out = f"; {count(len(collected.excluded), 'path')} left out by --exclude" if collected.excluded else ""
            raise EmptyDocsError(
                f"No documents found in {docs} (.md, .markdown, .txt, .html, .htm{left_out}); the table was left as "
                "it was. Pass --allow-empty to empty the table."
            )
        from lancelot_indexer import write

        stamp = metadata(options.chunk_size, options.link, options.language)
        rows = write.rows_table(collected.columns)
        if extension is not None:
            rows, extra = extension.extend(rows, write.open_table(db, options.table))
            stamp.update(extra)
        if on_write is not None:
            on_write()
        result = write.replace_table(
            db,
            options.table,
            rows,
            stamp,
            fts=options.fts,
            language=options.language,
            keep_versions=options.keep_versions,
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
        excluded=collected.excluded,
        unmatched_exclude=unmatched,
        duplicates=collected.duplicates,
        language=options.language,
    )
    log.info("indexed", documents=report.documents, chunks=report.chunks, strategy=report.strategy)
    return report
