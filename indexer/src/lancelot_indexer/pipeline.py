"""The indexing pipeline: walk DOCS, read what changed into rows, write them.

    build(docs, db, Options()) -> Report

A rebuild hashes every file and reads (parses, chunks, embeds) only those whose hash differs from the
one their rows were made from (`sources.py`, `changes.py`); the rows of the changed documents replace
theirs in one merge. Any change to what a row holds (chunk size, language, link template, exclusions,
generated pages kept, embedding model, layout or indexer version) reads every file again; a reader that
changed reads its own format's files again (`sources.known`). The generated pages of documentation builds
are left out (`documents/generated.py`): not in the folder's documents, their rows of an older table go. Rows go to
the writer in batches as they are read (`stream.py`), so memory does not grow with the folder.

Under the lock, a run plans, then applies: `_plan` learns what the table was built from and decides which
files are read, which documents keep their rows and whose rows go (a `Plan`: every file hashed, none
parsed); `_apply` reads those files into rows and writes them in one commit, or, when nothing changed,
writes at most a new stamp.

`build` holds the database lock from the first read of the current table to the last write, so an
`Extension` (embeddings) can look at the current table, add columns and metadata, and be sure that what
it looked at is what gets replaced. Importing this module is cheap: the writer (pyarrow, Lance) is
imported while the documents are read, and not at all when nothing changed in a folder.

The database is a folder (a Path, or a `Location`) or a `Location` on object storage: the same steps, the
same promises. There the lock is a lease in a Lance dataset (`lease.py`), so Lance is imported before the
documents are read, and the worker processes are forked before it. A run that changes no row but finds the
table stamped with another DOCS folder (the same documents, elsewhere) stamps its own in one metadata commit,
and so does one given another `--description`: what the server tells an assistant the table holds, kept by
every rebuild until given again; a table without one gets one from the documents (`documents/description.py`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lancelot_indexer import __version__, log, memory
from lancelot_indexer.documents import bucket, empty, swapped
from lancelot_indexer.documents import description as described
from lancelot_indexer.documents.changes import Changes, changes
from lancelot_indexer.documents.collect import (
    DEFAULT_FILE_MEMORY,
    DEFAULT_FILE_TIMEOUT,
    Columns,
    Engine,
    ProgressCallback,
    Reader,
    Tally,
    Walked,
    require_folder,
    walked,
)
from lancelot_indexer.documents.generated import Generated
from lancelot_indexer.documents.walk import Duplicate, Excluded, Found, Skipped
from lancelot_indexer.readers import formats
from lancelot_indexer.wording import count
from lancelot_indexer.writing import database, replace, sources
from lancelot_indexer.writing.replace import Extension
from lancelot_schema import languages, layout
from lancelot_schema.storage import Location

__all__ = ["Extension", "Options", "ProgressCallback", "Report", "build", "count", "log_leftovers", "metadata"]

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
    read: int = 0  # documents read (parsed and chunked) in this run: all of them in a full build
    kept: int = 0  # documents whose rows stayed as they were: their files hash as before
    removed: int = 0  # documents of the previous table that are gone (removed, renamed, unusable now)
    full: str | None = None  # why every document was read, when there was a table: a setting that changed
    kept_rows: int = 0  # rows of the kept documents (their vectors too were reused)
    generated: list[Generated] = field(default_factory=list)  # pages of documentation builds left out
    reread: dict[str, int] = field(default_factory=dict)  # documents read again as their reader changed, by suffix
    description: str = ""  # what the table is stamped as holding: what the server tells an assistant


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


def _stamp(options: Options, docs: Path | Location) -> dict[str, str]:
    return metadata(
        options.chunk_size, options.link, options.language, options.exclude, docs, keep_generated=options.keep_generated
    )


@dataclass(frozen=True)
class _Run:
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


@dataclass(frozen=True)
class Plan:
    """What a run does, known before any document is parsed (every file is hashed): which files are read,
    which documents keep their rows, and whose rows go.

    `previous`: what the table was built from (None: no table), `cached` the same when the copy beside the
    table gave it (no Lance needed), `copy` where that copy lives; `full`: why every document is read (None:
    only the changed ones, `changed.to_read`); `reread`: the paths read again as their reader changed.
    `description`: `--description`, else the table's (kept across rebuilds), else a build's own name."""

    copy: sources.Folder | sources.Prefix | None
    cached: sources.Sources | None
    previous: sources.Sources | None
    full: str | None
    changed: Changes
    reread: frozenset[str] = frozenset()
    description: str = ""  # given, the table's, or a build's name; "": derived from the titles read

    @property
    def replaced(self) -> frozenset[str] | None:
        """The paths whose rows an incremental merge replaces; None: the whole table is written."""
        return None if self.full is not None else self.changed.replaced


def build(
    docs: Path | Location,
    db: Path | Location,
    options: Options | None = None,
    *,
    on_progress: ProgressCallback | None = None,
    extension: Extension | None = None,
    on_write: Callable[[], None] | None = None,
) -> Report:
    """Index `docs` (a folder, or an s3:// `Location`: `documents/bucket.py`) into table `options.table` of the
    database at `db` (a folder, or a `Location` such as a bucket's), replacing it atomically.

    `on_write` is called just before the first change to the database (a stop before it changed nothing).
    """
    options = options or Options()
    started = time.perf_counter()
    if isinstance(docs, Path):
        swapped.check(docs, db)
        require_folder(docs)
    location = database.located(db)
    memory.limit_arenas()
    stamp = _stamp(options, docs)
    wanted = sources.settings_of({**stamp, **(extension.settings() if extension is not None else {})})
    if isinstance(docs, Path):
        found = walked(docs, options.exclude, leave_generated=not options.keep_generated)
    else:
        found = bucket.listed(docs, options.exclude, leave_generated=not options.keep_generated)
    run = _Run(docs, db, location, options, stamp, wanted, found, extension, on_progress)
    with (
        _engine(options, extension) as engine,
        Reader(
            options.chunk_size,
            len(found.found),
            workers=options.workers,
            file_timeout=options.file_timeout,
            keep_generated=options.keep_generated,
            file_memory=options.file_memory,
            engine=engine,
        ) as reader,
    ):
        if not location.local:
            reader.start()  # forked before the lock imports Lance
        # Locked before reading: a second indexer stops at once, not after reading the whole folder.
        with (
            database.storage_failures(location),
            database.locked(location) as held,
            replace.writer_import() as import_writer,
        ):

            def changing() -> None:
                held.check()  # a bucket's lease lost (this run froze for a minute): no commit
                if on_write is not None:
                    on_write()

            plan = _plan(run, reader)
            if plan.changed.to_read:
                reader.start()
            if plan.full is not None or plan.replaced:
                import_writer()  # a write is coming: Lance is imported while the workers read
            result, description = _apply(run, plan, reader, import_writer, changing)
    report = _report(run, plan, result, reader.tally, time.perf_counter() - started, description)
    if extension is not None:
        extension.kept(report.kept_rows, result.width)
    log.info("indexed", documents=report.documents, passages=report.chunks, strategy=report.strategy, read=report.read)
    return report


@contextlib.contextmanager
def _engine(options: Options, extension: Extension | None) -> Iterator[Engine | None]:
    """Where the documents are read, and the extension's work done: here (None), or in Ray tasks with --ray."""
    if options.ray is None:
        yield None
        return
    from lancelot_indexer.documents.ray_tasks import Cluster  # Ray only with --ray

    with Cluster(options.ray, cpus=options.workers, file_timeout=options.file_timeout) as cluster:
        if extension is not None:
            extension.use(cluster)
        yield cluster


def _plan(run: _Run, reader: Reader) -> Plan:
    """What the table was built from, and what this run reads, keeps and replaces (under the lock)."""
    options, location = run.options, run.location
    copy = sources.place(location, options.table)
    cached = sources.cached(copy) if copy is not None else None
    table_dir = _table_dir(run)
    if cached is None and table_dir is not None and table_dir.is_dir():
        reader.start()  # forked before Lance is imported to read the table
    previous = cached or replace.from_table(location, options.table, options.fts)
    full = "no table" if previous is None else sources.full_rebuild_reason(previous.settings, run.wanted)
    known = sources.known(previous if full is None else None)
    changed = changes(run.found.found, known.files, known.left_out)
    given = options.description or (previous.description if previous is not None else "")
    built = described.built(run.docs) if isinstance(run.docs, Path) else None
    return Plan(copy, cached, previous, full, changed, known.reread, given or built or "")


def _apply(
    run: _Run, plan: Plan, reader: Reader, import_writer: Callable[[], None], changing: Callable[[], None]
) -> tuple[replace.Result, str]:
    """Read the files `plan` reads and write their rows (or, when nothing changed, at most a new stamp);
    `changing` is called before the first change to the database. Also the description stamped."""
    options, location, found = run.options, run.location, run.found
    stamp = dict(run.stamp)
    batches = reader.batches(plan.changed.to_read, run.on_progress)
    if plan.description:
        stamp[layout.META_DESCRIPTION] = plan.description
    else:
        batches = _titled(batches, run.docs, stamp)
    first = next(batches, None)
    if first is None and not plan.changed.kept and not options.allow_empty:
        skipped = [*found.skipped, *reader.tally.skipped]
        table = options.table if plan.previous is not None else None
        generated = len(found.generated) + len(reader.tally.generated)
        raise empty.error(run.docs, found, skipped, _unmatched(options, found), table, generated)
    unchanged = first is None and plan.full is None and not plan.replaced
    target = replace.Target(options.table, options.fts, options.language, options.keep_versions)
    source = stamp[layout.META_SOURCE]
    cached, left_out = plan.cached, _left_out(plan, reader.tally)
    if unchanged and cached is not None and cached.fts == options.fts:
        # Nothing to write and nothing to check: the table is as the last run left it (no Lance needed
        # in a folder), but perhaps for the folder it is stamped as read from, or with another description.
        if (table_dir := _table_dir(run)) is not None:
            database.remove_temp_files(table_dir)
        description = stamp.setdefault(layout.META_DESCRIPTION, described.folder_name(run.docs))
        record = dataclasses.replace(cached, left_out=left_out, source=source, description=description)
        if (cached.source, cached.description) != (source, description):
            changing()
            values = {layout.META_SOURCE: source, layout.META_DESCRIPTION: description}
            record = dataclasses.replace(record, version=replace.restamp(location, target, values))
        if plan.copy is not None and record != cached:
            sources.save(plan.copy, record)
        return replace.Result("merge", record.version, cached.rows, options.fts, cached.width), description
    import_writer()
    result = replace.write_rows(location, target, first, batches, run.extension, stamp, plan.replaced, changing)
    previous = plan.previous
    kept = {path: previous.files[path] for path in plan.changed.kept} if previous is not None else {}
    files = {**kept, **reader.tally.hashes}
    description = stamp[layout.META_DESCRIPTION]
    done = sources.Sources(
        run.wanted,
        files,
        options.fts,
        result.rows,
        result.version,
        result.width,
        source,
        formats.stamp(),
        left_out,
        description,
    )
    if plan.copy is not None:
        sources.save(plan.copy, done)
    return result, description


def _titled(batches: Iterator[Columns], docs: Path | Location, stamp: dict[str, str]) -> Iterator[Columns]:
    """The batches, their documents' titles counted; once they end, `stamp` holds the description they make:
    the suffix most titles share, else DOCS's name (a build's own name was looked for before)."""
    titles = described.Titles()
    for columns in batches:
        for title, passage in zip(columns[layout.TITLE], columns[layout.PASSAGE], strict=True):
            if passage == 0:
                titles.add(title)
        yield columns
    stamp[layout.META_DESCRIPTION] = titles.common() or described.folder_name(docs)


def _table_dir(run: _Run) -> Path | None:
    """The table's folder, when the database is one."""
    return run.location.path / f"{run.options.table}.lance" if run.location.local else None


def _left_out(plan: Plan, tally: Tally) -> dict[str, Generated]:
    """The generated pages that were read and left out (tables of contents), by path: unread as before, or read now."""
    return {page.relative: page for page in [*plan.changed.left_out, *tally.generated]}


def _report(run: _Run, plan: Plan, result: replace.Result, tally: Tally, seconds: float, description: str) -> Report:
    options, found, changed = run.options, run.found, plan.changed
    skipped = [*found.skipped, *tally.skipped]
    reread = [item for item in changed.to_read if item.relative in plan.reread]
    unmatched = _unmatched(options, found)
    return Report(
        docs=str(run.docs),
        db=str(run.db),
        table=options.table,
        documents=len(changed.kept) + tally.documents,
        chunks=result.rows,
        skipped=skipped,
        windows_1252=_in_walk_order([*changed.windows_1252, *tally.windows_1252], found.found),
        seconds=seconds,
        strategy=result.strategy,
        version=result.version,
        fts=result.fts,
        excluded=found.excluded,
        unmatched_exclude=unmatched,
        duplicates=found.duplicates,
        language=options.language,
        read=tally.documents,
        kept=len(changed.kept),
        removed=len(changed.replaced - tally.hashes.keys()) if plan.replaced is not None else 0,
        full=plan.full if plan.previous is not None else None,
        kept_rows=result.rows - tally.rows,
        generated=sorted([*found.generated, *_left_out(plan, tally).values()], key=lambda page: page.relative),
        reread=dict(sorted(Counter(formats.suffix_of(item.relative) for item in reread).items())),
        description=description,
    )


def _unmatched(options: Options, found: Walked) -> list[str]:
    """The --exclude patterns that matched nothing."""
    used = {item.pattern for item in found.excluded}
    return [pattern for pattern in options.exclude if pattern not in used]


def _in_walk_order(paths: list[str], found: list[Found]) -> list[str]:
    wanted = set(paths)
    return [item.relative for item in found if item.relative in wanted]


def log_leftovers(report: Report) -> None:
    """Log what the run left out: for a caller that prints no summary (which says the same), so it is said once."""
    for refused in report.skipped:
        log.warning("skipped", path=refused.relative, reason=refused.reason)
    for duplicate in report.duplicates:
        log.info("left out, found before under another path", path=duplicate.relative, first=duplicate.first)
    for pattern in report.unmatched_exclude:
        log.warning("--exclude matched nothing", pattern=pattern)
