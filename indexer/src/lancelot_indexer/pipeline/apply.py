"""A run's plan applied, under the lock: the files it reads turned into rows and written in one commit, or, when
nothing changed, at most a new stamp (the folder the documents were read from, the description)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

from lancelot_indexer.documents import description as described
from lancelot_indexer.documents import empty
from lancelot_indexer.documents.collect import Columns, Reader
from lancelot_indexer.pipeline.given import Given, table_dir, unmatched
from lancelot_indexer.pipeline.plan import Plan, left_out
from lancelot_indexer.readers import formats
from lancelot_indexer.writing import database, replace, sources
from lancelot_schema import layout
from lancelot_schema.storage import Location


def apply(
    run: Given, plan: Plan, reader: Reader, import_writer: Callable[[], None], changing: Callable[[], None]
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
        raise empty.error(run.docs, found, skipped, unmatched(options, found), table, generated)
    unchanged = first is None and plan.full is None and not plan.replaced
    target = replace.Target(options.table, options.fts, options.language, options.keep_versions)
    source = stamp[layout.META_SOURCE]
    cached, pages = plan.cached, left_out(plan, reader.tally)
    if unchanged and cached is not None and cached.fts == options.fts:
        # Nothing to write and nothing to check: the table is as the last run left it (no Lance needed
        # in a folder), but perhaps for the folder it is stamped as read from, or with another description.
        if (folder := table_dir(run)) is not None:
            database.remove_temp_files(folder)
        description = stamp.setdefault(layout.META_DESCRIPTION, described.folder_name(run.docs))
        record = dataclasses.replace(cached, left_out=pages, source=source, description=description)
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
        pages,
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
