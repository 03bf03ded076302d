"""A table version's short columns held in memory, on object storage: a ranking then reads nothing but its index.

A warm text search on a bucket read its pool's rows (50: path, id and the columns a hit shows but its text) from
the data file, one ranged GET each once the file is large, and Lance 13 caches no data pages (docs/decisions.md,
"Object storage: the pool's columns held"). So the columns a search asks for are read once per table version, in
one scan, and each ranking takes its rows from memory by row id; only the hits' texts are read after.

    held = Held(budget)                         one per table, shared with its pinned copies
    held.columns(dataset, names) → Columns | None      loaded at the first ask for a version; None: not held
    held.fits_whole(dataset) → bool                   every data file fits: the texts can be held too
    Columns.rows(row_ids) → [dict] | None

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

    def __init__(self, version: int, table: pa.Table) -> None:
        self.version = version
        self.names = frozenset(table.column_names) - {ROW_ID}
        self._ids = table.column(ROW_ID).to_numpy()
        self._table = table.select([name for name in table.column_names if name != ROW_ID])
        self.nbytes = int(table.nbytes)

    def rows(self, row_ids: Sequence[int]) -> list[dict[str, Any]] | None:
        """The rows of these ids, in that order, each with its `_rowid`; None if one is not held."""
        import numpy as np

        wanted = np.asarray(row_ids, dtype=self._ids.dtype)
        at = np.searchsorted(self._ids, wanted)
        if len(wanted) and (at.max() >= len(self._ids) or not (self._ids[at] == wanted).all()):
            return None
        rows: list[dict[str, Any]] = self._table.take(pa.array(at, pa.int64())).to_pylist()
        for row, row_id in zip(rows, row_ids, strict=True):
            row[ROW_ID] = row_id
        return rows


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
    """`names` of every row, read in one scan; None as soon as they take, or at the rate read so far will take,
    more than `room` bytes (a table far too large costs one batch). A text column whose first values repeat (a
    document's path and title, on each of its passages) is dictionary-encoded, batch by batch."""
    import numpy as np

    total = dataset.count_rows()  # from the manifest: no request
    scanner = dataset.scanner(columns=names, with_row_id=True, batch_size=batch_rows)
    batches, size, seen, encoded = [], 0, 0, None
    for batch in scanner.to_reader():
        if encoded is None:
            encoded = {index for index, column in enumerate(batch.columns) if _repeats(column)}
        batch = _encoded(batch, encoded)
        batches.append(batch)
        size, seen = size + batch.nbytes, seen + batch.num_rows
        if size > room or size * total > room * seen:
            return None
    table = pa.Table.from_batches(batches) if batches else scanner.to_table()
    if not (np.diff(table.column(ROW_ID).to_numpy()) > 0).all():  # a scan gives row ids in order, or nearly
        table = table.take(pc.sort_indices(table.column(ROW_ID)))
    return Columns(int(dataset.version), table) if table.nbytes <= room else None


def _encoded(batch: pa.RecordBatch, columns: set[int]) -> pa.RecordBatch:
    arrays = [
        pc.dictionary_encode(column) if index in columns else column for index, column in enumerate(batch.columns)
    ]
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _repeats(column: pa.Array) -> bool:
    """A text column whose first rows hold each value twice or more on average (ids are unique: left as they are)."""
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return False
    sample = column.slice(0, 4096)
    return len(sample) > 0 and pc.count_distinct(sample).as_py() * 2 <= len(sample)
