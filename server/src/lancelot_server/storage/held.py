"""A table version's short columns held in memory, on object storage: a ranking then reads nothing but its index.

A warm text search on a bucket read its pool's rows (50: path, id and the columns a hit shows but its text) from
the data file, one ranged GET each once the file is large, and Lance 13 caches no data pages (docs/decisions.md,
"Object storage: the pool's columns held"). So the columns a search asks for are read once per table version, in
one scan, and each ranking takes its rows from memory by row id; only the hits' texts are read after.

    held = Held(budget)                         one per table, shared with its pinned copies
    held.columns(dataset, names) → Columns | None      loaded at the first ask for a version; None: not held
    held.fits_whole(dataset) → bool                   every data file fits: the texts can be held too
    Columns.rows(row_ids) → [dict] | None

They are held compactly, so that a million passages fit in the default bound's share (docs/decisions.md,
"Object storage: the pool's columns held"): text that repeats (a document's path, title, headings, anchors) as one
dictionary for the whole version, integers in the fewest bytes that hold them, a column of nulls as none, the ids
(`path#passage`) made again from the path and passage number, and the row ids as runs (one per data file).

A table whose data files all fit in what the budget has left (a small one: the PostgreSQL manual's 9,000 passages
take 5 MB) has its texts held too, and a warm search then makes no request at all.

Every table's columns together stay within `Budget` (their share of LANCELOT_CACHE_MB): a table whose columns do
not fit is read as before, and its scan stops as soon as they are found not to fit. A new version drops the old
one's columns before loading its own (row ids change with a rebuild): a ranking's rows always come from the
version it ranked, never a mix.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lancelot_schema import layout

ROW_ID = "_rowid"
BATCH_ROWS = 65_536


class Budget:
    """Bytes that every table's held columns share (LANCELOT_CACHE_MB's share for them)."""

    def __init__(self, bound_bytes: int) -> None:
        self.bound_bytes = bound_bytes
        self._used = 0
        self._lock = threading.Lock()

    @property
    def used_bytes(self) -> int:
        with self._lock:
            return self._used

    def room(self) -> int:
        with self._lock:
            return self.bound_bytes - self._used

    def take(self, size: int) -> bool:
        with self._lock:
            if self._used + size > self.bound_bytes:
                return False
            self._used += size
            return True

    def give_back(self, size: int) -> None:
        with self._lock:
            self._used -= size


class Columns:
    """Columns of every row of one version, sorted by row id."""

    def __init__(self, version: int, table: pa.Table, derived_id: bool = False) -> None:
        self.version = version
        self.names = frozenset(table.column_names) - {ROW_ID} | ({layout.ID} if derived_id else set())
        self._places = _Places(table.column(ROW_ID).to_numpy())
        self._table = table.select([name for name in table.column_names if name != ROW_ID])
        self._derived_id = derived_id
        self.nbytes = int(self._table.nbytes) + self._places.nbytes

    def rows(self, row_ids: Sequence[int]) -> list[dict[str, Any]] | None:
        """The rows of these ids, in that order, each with its `_rowid`; None if one is not held."""
        at = self._places.of(row_ids)
        if at is None:
            return None
        rows: list[dict[str, Any]] = self._table.take(pa.array(at, pa.int64())).to_pylist()
        for row, row_id in zip(rows, row_ids, strict=True):
            row[ROW_ID] = row_id
            if self._derived_id:
                row[layout.ID] = layout.chunk_id(row[layout.PATH], row[layout.PASSAGE])
        return rows


class _Places:
    """Where each row id sits: runs of consecutive ids (a data file's rows, but those deleted) kept as their first id
    and place, rather than an id per row."""

    def __init__(self, ids: Any) -> None:
        import numpy as np

        ids = ids.astype(np.int64)
        breaks = np.flatnonzero(np.diff(ids) != 1) + 1
        self._places = np.concatenate(([0], breaks)).astype(np.int64) if len(ids) else ids
        self._firsts = ids[self._places]
        self._ends = np.concatenate((breaks, [len(ids)])).astype(np.int64) if len(ids) else ids
        self.nbytes = int(self._places.nbytes + self._firsts.nbytes + self._ends.nbytes)

    def of(self, row_ids: Sequence[int]) -> Any:
        """The places of these ids, or None if one is not held."""
        import numpy as np

        wanted = np.asarray(row_ids, dtype=np.int64)
        if not len(wanted):
            return wanted
        run = np.searchsorted(self._firsts, wanted, side="right") - 1
        if run.min() < 0:
            return None
        at = self._places[run] + (wanted - self._firsts[run])
        return at if (at < self._ends[run]).all() else None


class Held:
    """The columns held of one table's latest version asked for (at most one version at a time)."""

    def __init__(self, budget: Budget | None) -> None:
        self._budget = budget
        self._lock = threading.Lock()
        self._held: Columns | None = None
        # The newest version the table has moved to: an older one (a request pinned before a refresh) is never loaded.
        self._newest = 0
        # The latest version found not to fit, so that its scan is not tried again at each search.
        self._too_large: tuple[int, frozenset[str]] | None = None

    @property
    def nbytes(self) -> int:
        with self._lock:
            return self._held.nbytes if self._held is not None else 0

    def columns(self, dataset: Any, names: Sequence[str]) -> Columns | None:
        """`names` of every row of `dataset`'s version in memory, loading them at the first ask for the version; None
        where they do not fit, the version is older than the one held, or there is no budget."""
        if self._budget is None or self._budget.bound_bytes <= 0:
            return None
        version, wanted = int(dataset.version), frozenset(names)
        with self._lock:
            held = self._held
            if held is not None and held.version == version and wanted <= held.names:
                return held
            if version < self._newest or self._too_large == (version, wanted):
                return None
            if held is not None:  # an older version's, or other columns: dropped before the new ones are read
                self._budget.give_back(held.nbytes)
                self._held = None
            loaded = _load(dataset, sorted(wanted), self._budget.room())
            if loaded is None or not self._budget.take(loaded.nbytes):
                self._too_large = (version, wanted)
                return None
            self._held, self._newest = loaded, version
            return loaded

    def fits_whole(self, dataset: Any) -> bool:
        """Whether every data file of `dataset`'s version, by the sizes its manifest gives (no request), fits in what
        the budget has left, counting what this table holds now (dropped for whatever is loaded next)."""
        if self._budget is None:
            return False
        sizes = [file.file_size_bytes for fragment in dataset.get_fragments() for file in fragment.metadata.files]
        return all(sizes) and sum(sizes) <= self._budget.room() + self.nbytes

    def moved_to(self, version: int) -> None:
        """The table now reads `version`: what was held of an older one is dropped now, not at the next search."""
        with self._lock:
            self._newest = max(self._newest, version)
            if self._held is not None and self._held.version < version:
                if self._budget is not None:
                    self._budget.give_back(self._held.nbytes)
                self._held = None


def _load(dataset: Any, names: list[str], room: int, batch_rows: int = BATCH_ROWS) -> Columns | None:
    """`names` of every row, read in one scan and held compactly (`_compact`); None as soon as they take, or at the
    rate read so far will take, more than `room` bytes (a table far too large costs one batch)."""
    import numpy as np

    total = dataset.count_rows()  # from the manifest: no request
    scanner = dataset.scanner(columns=names, with_row_id=True, batch_size=batch_rows)
    # lancelot-index's ids are `path#passage` (layout 2 on): made again from those when every row's is.
    derived = {layout.ID, layout.PATH, layout.PASSAGE} <= set(names) and _derivable(dataset.schema)
    parts: list[pa.RecordBatch] = []
    size, seen, encoded = 0, 0, None
    for batch in scanner.to_reader():
        derived = derived and _is_derived(batch)
        if encoded is None:
            encoded = {name for name in batch.schema.names if _repeats(batch.column(name))}
        parts.append(_compact(batch, encoded, layout.ID if derived else None))
        if not derived and layout.ID not in parts[0].schema.names:  # this batch's ids are not all `path#passage`
            parts = [_with_id(part, parts[-1].schema.names) for part in parts[:-1]] + parts[-1:]
        size, seen = size + _held_bytes(parts[-1]), seen + batch.num_rows
        if size > room or size * total > room * seen:
            # Each batch's own dictionary counted: joined into one, what will be held, before giving up.
            parts = [_joined_batch(parts)]
            size = _held_bytes(parts[0])
            if size > room or size * total > room * seen:
                return None
    table = pa.Table.from_batches([_joined_batch(parts)]) if parts else scanner.to_table()
    if not (np.diff(table.column(ROW_ID).to_numpy()) > 0).all():  # a scan gives row ids in order, or nearly
        table = table.take(pc.sort_indices(table.column(ROW_ID)))
    columns = Columns(int(dataset.version), table, derived_id=derived)
    return columns if columns.nbytes <= room else None


def _derivable(schema: pa.Schema) -> bool:
    """Whether ids could be `path#passage` as `layout.chunk_id` writes them: text and a whole number (Arrow would
    write a float's `3.0` as `3`, Python not)."""
    path, passage = schema.field(layout.PATH).type, schema.field(layout.PASSAGE).type
    return bool((pa.types.is_string(path) or pa.types.is_large_string(path)) and pa.types.is_integer(passage))


def _is_derived(batch: pa.RecordBatch) -> bool:
    made = _ids(batch.column(layout.PATH), batch.column(layout.PASSAGE))
    return bool(pc.all(pc.fill_null(pc.equal(batch.column(layout.ID), made), False)).as_py())


def _ids(paths: pa.Array, passages: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(paths.cast(pa.string()), passages.cast(pa.string()), "#")


def _with_id(part: pa.RecordBatch, order: Sequence[str]) -> pa.RecordBatch:
    ids = _ids(part.column(layout.PATH), part.column(layout.PASSAGE))
    arrays = {name: part.column(name) for name in part.schema.names}
    return pa.RecordBatch.from_arrays([ids if name == layout.ID else arrays[name] for name in order], names=order)


def _compact(batch: pa.RecordBatch, encoded: set[str], dropped: str | None) -> pa.RecordBatch:
    """A batch as held: a column of nulls as no values, integers in the fewest bytes that hold them, text that
    repeats dictionary-encoded (a batch's dictionary: `_joined` makes one of the whole version's)."""
    names = [name for name in batch.schema.names if name != dropped and name != ROW_ID]
    arrays = [_compact_column(batch.column(name), name in encoded) for name in names]
    return pa.RecordBatch.from_arrays([*arrays, batch.column(ROW_ID)], names=[*names, ROW_ID])


def _compact_column(column: pa.Array, encode: bool) -> pa.Array:
    if column.null_count == len(column):
        return pa.nulls(len(column))
    if encode:
        column = pc.dictionary_encode(column)
        return column.cast(pa.dictionary(_narrowest(0, len(column.dictionary)), column.type.value_type))
    if pa.types.is_signed_integer(column.type) and column.type.bit_width > 8:
        least, most = pc.min_max(column).values()
        return column.cast(_narrowest(least.as_py(), most.as_py()))
    return column


def _joined_batch(parts: list[pa.RecordBatch]) -> pa.RecordBatch:
    names = parts[0].schema.names
    return pa.RecordBatch.from_arrays([_joined([part.column(name) for part in parts]) for name in names], names=names)


def _held_bytes(part: pa.RecordBatch) -> int:
    """What `part` will take held: its row ids become runs (`_Places`)."""
    return int(part.nbytes - part.column(ROW_ID).nbytes)


def _joined(chunks: list[pa.Array]) -> pa.Array:
    """One array of the batches' chunks of a column: one dictionary for the whole version, integers as wide as the
    widest chunk's."""
    kinds = [chunk.type for chunk in chunks if not pa.types.is_null(chunk.type)]
    if not kinds:
        return pa.nulls(sum(len(chunk) for chunk in chunks))
    kind = max(kinds, key=lambda each: each.bit_width) if all(map(pa.types.is_integer, kinds)) else kinds[0]
    if pa.types.is_dictionary(kind):
        kind = pa.dictionary(pa.int32(), kind.value_type)
    whole = pa.concat_arrays([chunk.cast(kind) for chunk in chunks])  # dictionaries unified
    if pa.types.is_dictionary(kind):
        return whole.cast(pa.dictionary(_narrowest(0, len(whole.dictionary)), kind.value_type))
    return whole


def _narrowest(least: int, most: int) -> pa.DataType:
    """The narrowest signed integer type that holds `least` to `most`."""
    for kind in (pa.int8(), pa.int16(), pa.int32()):
        if -(1 << (kind.bit_width - 1)) <= least and most < 1 << (kind.bit_width - 1):
            return kind
    return pa.int64()


def _repeats(column: pa.Array) -> bool:
    """A text column whose first batch holds each value twice or more on average (ids are unique: left as they are)."""
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return False
    return len(column) > 0 and pc.count_distinct(column).as_py() * 2 <= len(column)
