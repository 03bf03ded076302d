"""The write stage of a run: the rows read, in batches, into the table; and what the table holds now.

    with writer_import() as start: start()      # Lance imported in a thread while the workers read
    from_table(db, table, fts)                   # what the current table was built from (imports Lance)
    write_rows(db, target, first, rest, ...)     # the whole table, or the changed documents' rows

`db` is a `Location`: a folder or a URI on object storage.

Batches go through `stream.Feed` (Lance's writer in a thread of its own), so memory stays flat and a
stop on the reading side commits nothing; the extension (`--embed`) adds its columns batch by batch, and
stages what it embeds beside the table until the commit (`staged.py`), for the next run if this one stops.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

from lancelot_indexer import log, memory
from lancelot_indexer.documents.collect import Columns, Engine
from lancelot_indexer.writing import sources
from lancelot_indexer.writing.staged import Staged
from lancelot_schema import layout
from lancelot_schema.storage import Location

if TYPE_CHECKING:
    import lance
    import pyarrow as pa


@dataclass(frozen=True)
class Target:
    """Where and how the rows are written: the table, its full-text indexes, how long old versions stay."""

    table: str
    fts: bool
    language: str
    keep_versions: timedelta


class Extension(Protocol):
    """Adds columns (and metadata) to the rows before they are written, a batch at a time; `current` is the
    table now, `staged` what runs that did not finish embedded for it (and where this one stages its own).
    `settings` is the part of its stamp known beforehand: a table stamped otherwise is rebuilt whole.
    `kept` is told, last, how many rows stayed as they were (their columns too; `width`: of the table's vectors).
    `use` is told first where the documents are read (a Ray cluster, or None: here), to do its work there too."""

    def settings(self) -> dict[str, str]: ...

    def extend(
        self, rows: pa.Table, current: lance.LanceDataset | None, staged: Staged
    ) -> tuple[pa.Table, dict[str, str]]: ...

    def kept(self, rows: int, width: int) -> None: ...

    def use(self, engine: Engine | None) -> None: ...


def load_writer() -> None:
    # pyarrow and Lance take a few tenths of a second to import: done while the workers read.
    import lancelot_indexer.writing.write  # noqa: F401


@contextlib.contextmanager
def writer_import() -> Iterator[Callable[[], None]]:
    """A function that starts importing the writer in a thread (once); the thread is waited for on the way
    out: an interpreter that exits while a thread is halfway through importing pyarrow and Lance aborts
    ("Fatal Python error: PyGILState_Release")."""
    started: list[threading.Thread] = []

    def start() -> None:
        if not started and "lancelot_indexer.writing.write" not in sys.modules:
            started.append(threading.Thread(target=load_writer, daemon=True))
            started[0].start()

    try:
        yield start
    finally:
        for thread in started:
            # RuntimeError: a stop (SIGTERM) came while `start` waited for it to begin, and it never ran.
            with contextlib.suppress(RuntimeError):
                thread.join()


def tables(
    first: Columns | None,
    rest: Iterator[Columns],
    extension: Extension | None,
    current: object,
    stamp: dict[str, str],
    staged: Staged,
) -> Iterator[pa.Table]:
    """Each batch as an Arrow table with the extension's columns, stamped (`stamp` is completed meanwhile)."""
    from lancelot_indexer.writing import write

    head = first if first is not None else {name: [] for name in layout.INDEXER_COLUMNS}
    for columns in itertools.chain([head], rest):
        rows = write.rows_table(columns)
        if extension is not None:
            rows, extra = extension.extend(rows, current, staged)  # type: ignore[arg-type]
            stamp.update(extra)
        yield rows.replace_schema_metadata(stamp)


@dataclass(frozen=True)
class Result:
    strategy: str
    version: int
    rows: int
    fts: bool
    width: int  # of the vectors, 0 when there are none


def write_rows(
    db: Location,
    target: Target,
    first: Columns | None,
    rest: Iterator[Columns],
    extension: Extension | None,
    stamp: dict[str, str],
    replaced: frozenset[str] | None,
    on_write: Callable[[], None] | None,
) -> Result:
    """Write the batches: the whole table (`replaced` None) or the rows of the `replaced` paths (a merge)."""
    from lancelot_indexer.writing import stream, write

    current = write.open_table(db, target.table)
    staged = Staged.open(db, target.table, extension.settings() if extension is not None else None)
    stamped = tables(first, rest, extension, current, stamp, staged)
    head = next(stamped)
    plan = write.prepare(db, target.table, head.schema, before_change=on_write)
    if first is None and replaced is not None and not replaced:
        # Nothing to write, only the indexes to look at (the saved copy was not the latest version's:
        # perhaps a run stopped between its commit and its indexes).
        written = None
    else:
        with stream.Feed(head.schema, lambda data: write.apply(plan, data, replaced)) as feed:
            feed.put(head)
            for table in stamped:
                feed.put(table)
                memory.trim()  # what the last batches took, before the next grows the heap
            if on_write is not None:
                on_write()  # the input is complete: Lance commits next
            written = feed.close()
        memory.trim()  # before the index builds stack their peaks on it
    _unstage(staged)
    result = write.finish(
        plan,
        written,
        stamp if written is not None else None,
        fts=target.fts,
        language=target.language,
        keep_versions=target.keep_versions,
    )
    width = stamp.get(layout.META_VECTOR_WIDTH, "")
    version = result.version
    if written is None and plan.dataset is not None:
        stamped_now = layout.decode_metadata(plan.dataset.schema.metadata)
        width = stamped_now.get("vector_width", "")
        # Nothing changed but the folder the same documents were read from, or their description: the stamp
        # says the new one.
        values = {
            key: stamp[key]
            for key in _RESTAMPED
            if key in stamp and stamped_now.get(key.removeprefix("lancelot.")) != stamp[key]
        }
        if values:
            version = restamp(db, target, values)
    return Result(result.strategy, version, result.rows, result.fts, int(width) if width.isdigit() else 0)


def _unstage(staged: Staged) -> None:
    """The table holds every staged vector now (or needed none): they go. A failure costs only their space until
    the next commit, so it is said, not raised."""
    if staged.dataset is None:
        return
    try:
        staged.clear()
    except Exception as exc:  # a store refusing deletes, say
        log.warning("could not remove the vectors staged for the table", table=staged.table, error=str(exc)[:300])


# What a run that changes no row may still stamp: no row depends on either.
_RESTAMPED = (layout.META_SOURCE, layout.META_DESCRIPTION)


def restamp(db: Location, target: Target, values: dict[str, str]) -> int:
    """Stamp table `target.table` with `values` (one metadata commit, the other keys kept); its new version."""
    from lancelot_indexer.writing import write

    return write.restamp(db, target.table, values, target.keep_versions)


def from_table(db: Location, table: str, fts: bool) -> sources.Sources | None:
    """What the current table says it was built from (this imports Lance), or None when there is none."""
    if db.local and not (db.path / f"{table}.lance").is_dir():
        return None
    from lancelot_indexer.writing import write

    current = write.open_table(db, table)
    return sources.from_table(current, fts) if current is not None else None
