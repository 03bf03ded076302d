"""The plan of a run, made under the lock before any document is parsed (every file is hashed): what the table
was built from, which files are read, which documents keep their rows and whose rows go."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lancelot_indexer.documents import description as described
from lancelot_indexer.documents.changes import Changes, changes
from lancelot_indexer.documents.collect import Reader, Tally
from lancelot_indexer.documents.generated import Generated
from lancelot_indexer.pipeline.given import Given, table_dir
from lancelot_indexer.writing import replace, sources


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


def plan(run: Given, reader: Reader) -> Plan:
    """What the table was built from, and what this run reads, keeps and replaces (under the lock)."""
    options, location = run.options, run.location
    copy = sources.place(location, options.table)
    cached = sources.cached(copy) if copy is not None else None
    folder = table_dir(run)
    if cached is None and folder is not None and folder.is_dir():
        reader.start()  # forked before Lance is imported to read the table
    previous = cached or replace.from_table(location, options.table, options.fts)
    full = "no table" if previous is None else sources.full_rebuild_reason(previous.settings, run.wanted)
    known = sources.known(previous if full is None else None)
    changed = changes(run.found.found, known.files, known.left_out)
    given = options.description or (previous.description if previous is not None else "")
    built = described.built(run.docs) if isinstance(run.docs, Path) else None
    return Plan(copy, cached, previous, full, changed, known.reread, given or built or "")


def left_out(plan: Plan, tally: Tally) -> dict[str, Generated]:
    """The generated pages that were read and left out (tables of contents), by path: unread as before, or read now."""
    return {page.relative: page for page in [*plan.changed.left_out, *tally.generated]}
