"""One run: DOCS walked, the readers started, then under the database lock the plan made (`plan.py`) and
applied (`apply.py`), and what was done reported (`report.py`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from lancelot_indexer import log, memory
from lancelot_indexer.documents import bucket, swapped
from lancelot_indexer.documents.collect import Engine, ProgressCallback, Reader, require_folder, walked
from lancelot_indexer.pipeline.apply import apply
from lancelot_indexer.pipeline.given import Given, Options, stamp_of
from lancelot_indexer.pipeline.plan import plan
from lancelot_indexer.pipeline.report import Report, report
from lancelot_indexer.writing import database, replace, sources
from lancelot_indexer.writing.replace import Extension
from lancelot_schema.storage import Location


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
    stamp = stamp_of(options, docs)
    wanted = sources.settings_of({**stamp, **(extension.settings() if extension is not None else {})})
    if isinstance(docs, Path):
        found = walked(docs, options.exclude, leave_generated=not options.keep_generated)
    else:
        found = bucket.listed(docs, options.exclude, leave_generated=not options.keep_generated)
    run = Given(docs, db, location, options, stamp, wanted, found, extension, on_progress)
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

            planned = plan(run, reader)
            if planned.changed.to_read:
                reader.start()
            if planned.full is not None or planned.replaced:
                import_writer()  # a write is coming: Lance is imported while the workers read
            result, description = apply(run, planned, reader, import_writer, changing)
    done = report(run, planned, result, reader.tally, time.perf_counter() - started, description)
    if extension is not None:
        extension.kept(done.kept_rows, result.width)
    log.info("indexed", documents=done.documents, passages=done.chunks, strategy=done.strategy, read=done.read)
    return done


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
