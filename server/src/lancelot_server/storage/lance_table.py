"""A table read through Lance itself: the part of lancedb's `Table` the server uses, without importing lancedb.

A LanceDB table `NAME` is the Lance dataset `DB/NAME.lance`, and lancedb 0.40 searches it with Lance 13, the
engine read here. Importing lancedb (its REST client's models) was most of a cold start, Lance alone a small part
of it (docs/decisions.md, "Cold start"); so the server opens the dataset itself:

    table = LanceTable.open(uri, options, refresh)     table.schema, .version, .count_rows(), .list_indices()
    table.pinned() → LanceTable at one version;  table.kept(key, derive) → derive(dataset), once per version
    table.search(MatchQuery | BooleanQuery, query_type="fts") → Query     (a `_score` column, higher is better)
    table.search(vector, vector_column_name=..., query_type="vector") → Query     (`_distance`)
    table.search() → Query;  table.take_row_ids(ids) → Query
    Query.where(condition).select(columns).limit(n).with_row_id() → .to_arrow() | .to_batches(size)

Conditions are pyarrow expressions (`pyarrow.compute.field`, `scalar`: values stay data, Lance reads them
through Substrait). Nothing here writes: the class has no method that commits.

What does not change between versions is kept in memory across queries by Lance itself: one `lance.Session` per
server (`session`), shared by every table and version, holds the index parts and file metadata read (keyed by
the files' names, which a new version changes only where it changed something), within LANCELOT_CACHE_MB. On
object storage a table's full-text indexes are also loaded into it whole, in the background, as it opens and
when a version brings new ones (`ahead.py`: a full-text query waits for them), and the columns a ranking reads
are held per version (`held`, within an eighth of the bound): a warm search then reads only its hits' texts,
and nothing where the table's texts fit there too (docs/benchmarks.md, "Object storage").

Freshness is lancedb's `read_consistency_interval`: before a read, the latest version is looked up once
`refresh` has passed since the last look (zero: every read), so a table that lancelot-index rebuilt is served
at the next call. A version is a snapshot: a read sees the old table or the new one, never a mix.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, TypeVar, cast

import lance
import pyarrow as pa
from lance.dataset import serialize_row_addrs
from lance.file import LanceFileSession

from lancelot_schema.folders import TABLE_SUFFIX
from lancelot_server.storage.ahead import Ahead
from lancelot_server.storage.held import Budget, Columns, Held

# What lancedb calls the index types Lance names otherwise.
_INDEX_TYPES = {"Inverted": "FTS"}
# lancedb's default number of rows of a query without a limit.
DEFAULT_LIMIT = 10
# Of LANCELOT_CACHE_MB, what Lance's metadata cache (manifests, file footers, index descriptions), its index cache
# and, on object storage, the short columns held (`held`) may hold: a quarter is left over, because Lance's caches
# evict only after they grow past their capacity (measured: 1.22 times the capacity given,
# tests/server/storage/test_lance_table_s3.py).
METADATA_SHARE = 8
INDEX_SHARE = 1 / 2
COLUMNS_SHARE = 8
# A folder holds no columns (the page cache serves its rows): its index cache keeps that eighth.
FOLDER_INDEX_SHARE = 5 / 8

T = TypeVar("T")


def table_names(uri: str, options: dict[str, str]) -> list[str]:
    """The tables of a database: the `NAME.lance` folders (prefixes) at its top level, sorted."""
    # s3+ddb is S3 with a DynamoDB commit table (its ?ddbTableName=): a listing needs only the bucket.
    base = uri.partition("?")[0].replace("s3+ddb://", "s3://", 1)
    listed = LanceFileSession(base, storage_options=options or None).list_with_delimiter()
    found = (prefix.rstrip("/").rsplit("/", 1)[-1] for prefix in listed.common_prefixes)
    return sorted(name[: -len(TABLE_SUFFIX)] for name in found if name.endswith(TABLE_SUFFIX) and name != TABLE_SUFFIX)


def session(bound_bytes: int, remote: bool = True) -> Any:
    """The one Lance session of a server: its index and metadata caches within `bound_bytes` in all (beside the
    held columns on object storage, `remote`); None (each dataset with Lance's default caches) when the bound is 0."""
    if bound_bytes <= 0:
        return None
    share = INDEX_SHARE if remote else FOLDER_INDEX_SHARE
    metadata, index = bound_bytes // METADATA_SHARE, int(bound_bytes * share)
    # pylance exports Session without listing it in __all__.
    return lance.Session(index_cache_size_bytes=index, metadata_cache_size_bytes=metadata)  # type: ignore[attr-defined]


def columns_budget(bound_bytes: int) -> Budget:
    """What every table's held columns share of the bound."""
    return Budget(bound_bytes // COLUMNS_SHARE)


@dataclass(frozen=True)
class Index:
    """One index as lancedb's `list_indices` describes it, with its row counts (rows since added are unindexed)."""

    name: str
    index_type: str
    columns: list[str]
    num_indexed_rows: int | None
    num_unindexed_rows: int | None


class LanceTable:
    """One table, opened once; the dataset is swapped for its latest version as `refresh` says."""

    def __init__(self, dataset: Any, refresh: timedelta, preload_bytes: int = 0, budget: Budget | None = None) -> None:
        self._dataset = dataset
        # Object storage, where each read is a request: a search reads fewer, larger parts (`search.core._ranked`),
        # and no file is checked for (`damage`).
        self.remote = "://" in str(dataset.uri)
        self._refresh = refresh.total_seconds()
        self._checked = time.monotonic()
        self._lock = threading.Lock()
        # What was derived from the latest version (its indexes described, its layout), by version: shared with
        # the pinned copies, which are the ones that ask (one per request).
        self._kept: dict[int, dict[Hashable, Any]] = {}
        # Object storage: the bound the full-text indexes are loaded within (0: never), and those loaded.
        self._preload_bytes = preload_bytes
        self._loaded: set[str] = set()
        # Object storage: the short columns a ranking reads, held per version within `budget` (None: never).
        self._held = Held(budget if self.remote else None)
        # The indexes load in the background while the first search scans the held columns (each its own round
        # trips); a full-text query waits for them (`Query._scanner`), so that no part of an index is read twice.
        self._ahead = Ahead(dataset, preload_bytes, self._loaded) if preload_bytes else None

    @classmethod
    def open(
        cls,
        uri: str,
        options: dict[str, str],
        refresh: timedelta,
        session: Any = None,
        preload_bytes: int = 0,
        budget: Budget | None = None,
    ) -> LanceTable:
        """`session`: the server's (`session()`); `preload_bytes`: its bound, to load the full-text indexes within
        (object storage), or 0; `budget`: what the server's held columns share (`columns_budget`), or None."""
        dataset = lance.dataset(uri, storage_options=options or None, session=session)
        return cls(dataset, refresh, preload_bytes if session is not None else 0, budget)

    def to_lance(self) -> Any:
        """The dataset at the version reads now see (checked for a newer one as `refresh` says)."""
        with self._lock:
            if time.monotonic() - self._checked >= self._refresh:
                latest = self._dataset.latest_version  # fails once the table's files are gone
                if latest != self._dataset.version:
                    self._dataset = self._dataset.checkout_version(latest)
                    self._held.moved_to(int(latest))
                    if self._preload_bytes:  # a rebuild's new indexes; those it kept are in the cache already
                        if self._ahead is not None:
                            self._ahead.wait()  # `_loaded` is the loading thread's until it ends
                        self._ahead = Ahead(self._dataset, self._preload_bytes, self._loaded)
                self._checked = time.monotonic()
            return self._dataset

    def last_seen(self) -> Any:
        """The dataset as last looked up, without looking again: no request, even on object storage."""
        with self._lock:
            return self._dataset

    def pinned(self) -> LanceTable:
        """This table at the version reads now see, never looked at again: every read of one request (a search's
        ranking and the rows it then takes by id) sees the same version, whatever a rebuild commits meanwhile."""
        dataset = self.to_lance()
        table = LanceTable(dataset, timedelta.max)
        # The loading of this version's indexes, or of a later one's, which starts only once this one's ended.
        table._kept, table._held, table._ahead = self._kept, self._held, self._ahead
        return table

    def loaded_ahead(self, timeout: float | None = None) -> bool:
        """Wait for the full-text indexes of the version read to be loaded (at once where none are being loaded);
        whether they are by `timeout`."""
        ahead = self._ahead
        return ahead is None or ahead.wait(timeout)

    def held(self, names: Sequence[str], whole: str | None = None) -> Columns | None:
        """These columns of every row of the version reads see, in memory (object storage, within the budget: read
        at the first ask for a version), and column `whole` too where all the table's data files fit (its texts);
        None where they are not held."""
        dataset = self.to_lance()
        if whole is not None and self._held.fits_whole(dataset):
            found = self._held.columns(dataset, [*names, whole])
            if found is not None:
                return found
        return self._held.columns(dataset, names)

    @property
    def held_bytes(self) -> int:
        """What this table's held columns take now."""
        return self._held.nbytes

    def kept(self, key: Hashable, derive: Callable[[Any], T]) -> T:
        """`derive(dataset)` at the version reads see, computed once per version (a failure is not kept)."""
        dataset = self.to_lance()
        version = dataset.version
        derived = self._kept.get(version)
        if derived is None:
            # Only the latest version is kept; threads that race here each derive it once, and one is kept.
            self._kept.clear()
            derived = self._kept.setdefault(version, {})
        if key not in derived:
            derived[key] = derive(dataset)
        return cast(T, derived[key])

    @property
    def schema(self) -> pa.Schema:
        return self.to_lance().schema

    @property
    def version(self) -> int:
        return int(self.to_lance().version)

    def count_rows(self, filter: str | None = None) -> int:
        return int(self.to_lance().count_rows(filter))

    def list_indices(self) -> list[Index]:
        """Every index, named as lancedb names them ("FTS", "BTree", "NGram"...); kept per version."""
        return self.kept("indices", _indices)

    def index_stats(self, name: str) -> Index | None:
        """The index called `name` with its row counts, as lancedb's `index_stats` gives them; None if none."""
        return next((index for index in self.list_indices() if index.name == name), None)

    def search(self, query: Any = None, query_type: str | None = None, vector_column_name: str | None = None) -> Query:
        if query is None:
            return Query(self)
        if query_type == "fts":
            return Query(self, full_text=query)
        if query_type == "vector" and vector_column_name is not None:
            return Query(self, nearest={"column": vector_column_name, "q": query})
        raise ValueError(f"unsupported search: {query_type!r}")

    def take_row_ids(self, row_ids: Sequence[int]) -> Query:
        """The rows of these row ids, in row-id order; one the table no longer holds is left out."""
        return Query(self, row_ids=tuple(int(row_id) for row_id in row_ids), count=None)


def _indices(dataset: Any) -> list[Index]:
    return [_index(dataset, described) for described in dataset.describe_indices()]


def _index(dataset: Any, described: Any) -> Index:
    indexed = getattr(described, "num_rows_indexed", None)
    unindexed = None
    if indexed is not None:
        covered = {fragment for segment in described.segments for fragment in (segment.fragment_ids or ())}
        unindexed = sum(
            fragment.count_rows() for fragment in dataset.get_fragments() if fragment.fragment_id not in covered
        )
    kind = described.index_type
    return Index(described.name, _INDEX_TYPES.get(kind, kind), list(described.field_names), indexed, unindexed)


@dataclass(frozen=True)
class Query:
    """A read of one table, built like lancedb's query builders and run by Lance's scanner."""

    table: LanceTable
    full_text: Any = None
    nearest: dict[str, Any] | None = None
    row_ids: tuple[int, ...] | None = None
    # Rows a ranking is restricted to before it ranks (Lance's row-address allowlist): no scan finds them.
    among_rows: tuple[int, ...] | None = None
    condition: Any = None
    prefilter: bool = True
    columns: tuple[str, ...] | None = None
    count: int | None = DEFAULT_LIMIT
    row_id: bool = False

    def where(self, condition: Any, prefilter: bool = True) -> Query:
        return replace(self, condition=condition, prefilter=prefilter)

    def among(self, row_ids: Sequence[int]) -> Query:
        """Only these rows are ranked (a full-text or vector search scores these alone, with the whole table's
        statistics): Lance takes them as a bitmap, where a `_rowid` condition would scan the table."""
        return replace(self, among_rows=tuple(int(row_id) for row_id in row_ids))

    def select(self, columns: Sequence[str]) -> Query:
        return replace(self, columns=tuple(columns))

    def limit(self, count: int | None) -> Query:
        return replace(self, count=count)

    def with_row_id(self, row_id: bool = True) -> Query:
        return replace(self, row_id=row_id)

    def distance_type(self, metric: str) -> Query:
        assert self.nearest is not None, "distance_type is for vector searches"
        return replace(self, nearest={**self.nearest, "metric": metric})

    def to_arrow(self) -> pa.Table:
        if self.row_ids is not None and self.condition is None:
            taken = self._taken()
            if taken is not None:
                return taken
        return self._scanner().to_table()

    def _taken(self) -> pa.Table | None:
        """The rows of `row_ids` by Lance's take, several times faster than a scan for them; None when the table no
        longer holds one of them (the scan then says which it holds). `_take_rows` is pylance's, marked unstable:
        pyproject.toml pins pylance and tests/server/storage/test_lance_table.py checks what is relied on."""
        ordered = sorted(set(self.row_ids or ()))
        if not ordered:
            return None
        dataset = self.table.to_lance()
        columns = list(self.columns) if self.columns is not None else None
        try:
            taken = dataset._take_rows(ordered, columns=columns)
        except OSError:  # an id of a fragment a rebuild removed ("belongs to non-existent fragment")
            return None
        if taken.num_rows != len(ordered):  # a row deleted since
            return None
        if self.row_id:
            taken = taken.append_column("_rowid", pa.array(ordered, pa.uint64()))
        return taken.slice(0, self.count) if self.count is not None else taken

    def to_batches(self, batch_size: int | None = None) -> pa.RecordBatchReader:
        return self._scanner(batch_size).to_reader()

    def explain_plan(self, verbose: bool = False) -> str:
        return str(self._scanner().explain_plan(verbose))

    def _scanner(self, batch_size: int | None = None) -> Any:
        if isinstance(self.condition, str):
            raise TypeError("conditions are expressions, never SQL text")
        filters = [self.condition] if self.condition is not None else []
        if self.row_ids is not None:
            # Row ids are integers this server read from the table, never a client's text.
            filters.append(f"_rowid IN ({', '.join(map(str, self.row_ids))})" if self.row_ids else "false")
        if len(filters) == 2:
            raise ValueError("a condition and row ids cannot be combined")
        arguments: dict[str, Any] = {
            "columns": list(self.columns) if self.columns is not None else None,
            "filter": filters[0] if filters else None,
            "prefilter": self.prefilter,
            "with_row_id": self.row_id,
            "batch_size": batch_size,
        }
        if self.among_rows is not None:
            arguments["row_addr_allowlist"] = serialize_row_addrs(sorted(set(self.among_rows)))
        if self.full_text is not None:
            self.table.loaded_ahead()  # or Lance would read again the parts of the index still being loaded
            arguments["full_text_query"] = self.full_text
        if self.nearest is not None:
            arguments["nearest"] = {**self.nearest, "k": self.count if self.count is not None else DEFAULT_LIMIT}
        elif self.count is not None:
            arguments["limit"] = self.count
        return self.table.to_lance().scanner(**arguments)
