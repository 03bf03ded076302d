"""What a run is given: the caller's `Options`, the stamp they make (`metadata`), and what is resolved before the
lock (`Given`: the documents, the database, what the walk found)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lancelot_indexer import __version__
from lancelot_indexer.documents.collect import DEFAULT_FILE_MEMORY, DEFAULT_FILE_TIMEOUT, ProgressCallback, Walked
from lancelot_indexer.readers import formats
from lancelot_indexer.writing.replace import Extension
from lancelot_schema import languages, layout
from lancelot_schema.storage import Location

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
    keep_generated: bool = False  # index the generated pages of documentation builds too (documents/generated.py)
    file_memory: int | None = DEFAULT_FILE_MEMORY  # megabytes a reader process may grow by; None: no limit
    # What the documents are (`about.problem` checked); None: the table's own, else derived (`documents/description`).
    description: str | None = None
    ray: str | None = None  # read in Ray tasks: a cluster's address, or ray_tasks.LOCAL (documents/ray_tasks.py)


def metadata(
    chunk_size: int,
    link: str | None = None,
    language: str = languages.DEFAULT,
    exclude: tuple[str, ...] = (),
    source: Path | Location | None = None,
    keep_generated: bool = False,
) -> dict[str, str]:
    stamp = {
        layout.META_LAYOUT_VERSION: layout.LAYOUT_VERSION,
        layout.META_INDEXER_VERSION: __version__,
        layout.META_CHUNK_SIZE: str(chunk_size),
        layout.META_INDEXED_AT: datetime.now(UTC).isoformat(timespec="seconds"),
        layout.META_LANGUAGE: language,
        layout.META_EXCLUDE: json.dumps(list(exclude)),
        layout.META_READERS: formats.stamp(),
    }
    if keep_generated:
        stamp[layout.META_KEEP_GENERATED] = "true"
    if link is not None:
        stamp[layout.META_LINK_TEMPLATE] = link
    if source is not None:
        stamp[layout.META_SOURCE] = str(source.absolute() if isinstance(source, Path) else source)
    return stamp


def stamp_of(options: Options, docs: Path | Location) -> dict[str, str]:
    return metadata(
        options.chunk_size, options.link, options.language, options.exclude, docs, keep_generated=options.keep_generated
    )


@dataclass(frozen=True)
class Given:
    """What a run is given, resolved: the documents (a folder, or a bucket's prefix), the database, the options,
    the stamp and what the walk found."""

    docs: Path | Location
    db: Path | Location  # as given, for the report
    location: Location
    options: Options
    stamp: dict[str, str]
    wanted: dict[str, str]  # the settings the rows depend on (sources.ROW_SETTINGS), the extension's too
    found: Walked
    extension: Extension | None
    on_progress: ProgressCallback | None


def table_dir(run: Given) -> Path | None:
    """The table's folder, when the database is one."""
    return run.location.path / f"{run.options.table}.lance" if run.location.local else None


def unmatched(options: Options, found: Walked) -> list[str]:
    """The --exclude patterns that matched nothing."""
    used = {item.pattern for item in found.excluded}
    return [pattern for pattern in options.exclude if pattern not in used]
