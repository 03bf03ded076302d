"""The only module that writes tables, through Lance (the storage engine LanceDB tables are made of).

A LanceDB table `NAME` is the Lance dataset `DB/NAME.lance`, in a folder or on object storage (`DB` a
`Location`, its storage options given to every call); the server opens it through Lance too
(`lancelot_server.lance_table`), and its full-text searches use the FTS index built here. Neither side
imports lancedb, whose import alone costs more than indexing a manual (docs/decisions.md, "Indexer:
writing through Lance, not lancedb").
Every change to a table goes through `prepare`, `apply` (the data commit, from a table or a stream of
batches) and `finish` (stamp, indexes, old versions), or `replace_table` for a table in memory; how a
table is replaced without a reader ever seeing a broken one:

* No table yet: write it, then build the FTS index.
* A table whose `id` and `text` are strings: evolve its columns to the new layout (add or drop columns;
  both keep the FTS index), then one `merge_insert` on `id` that updates changed rows, inserts new ones
  and deletes vanished ones in a single commit, made against the version it was planned on (a commit of
  another writer in between makes Lance refuse it: never merged again on top of that writer's table,
  which `merge_insert` would otherwise do, keeping a copy of the input for it). Rows added by the merge
  are searched without the index until `optimize_indices` folds them into it, so full-text search works
  at every moment. An incremental rebuild merges the rows of the changed documents only: the merge then
  deletes only rows of the paths it replaces (`replaced`), and the indexes take the new rows as a delta
  (`indexes.py`).
* Anything else (another tool's layout), and new vectors that are not the current table's (the table
  has none, or they came from another model or are of another width): overwrite it, then the FTS
  index. The merge compares text columns only, so it would keep a stale (or null) vector beside an
  unchanged text; the overwrite swaps data, vectors and metadata in one atomic commit. Full-text
  search is unavailable until the index commit that follows.

A data file holds at most `indexes.ROWS_PER_FILE` rows, as written, as merged (`_within_cap`) and as compacted,
so that no object of a table on a bucket is large.

Old versions are deleted only once they have been superseded for `keep_versions` (a reader holding an
old version keeps it that long), with every file no version names that is older than the oldest version
kept; leftover `.tmp*` files from a killed write in a folder are removed at every run. What a run that did
not finish wrote but never committed is removed sooner, by the next run as soon as it holds the lock
(`database/leftovers.py`). All of it runs under the database's lock (`database/lock.py`), so that no
other indexer is writing at the same time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa

from lancelot_indexer.errors import DatabaseError, IndexerError
from lancelot_indexer.writing import database, indexes
from lancelot_schema import languages, layout
from lancelot_schema.storage import Location


@dataclass(frozen=True)
class WriteResult:
    strategy: str  # "create", "merge" or "overwrite"
    version: int
    rows: int
    fts: bool
    versions_removed: int
    temp_files_removed: int


@dataclass(frozen=True)
class Plan:
    """How a table is replaced: `strategy` is "create", "merge" or "overwrite"; `dataset` the table now."""

    strategy: str
    dataset: lance.LanceDataset | None
    temp_files_removed: int
    location: Location
    table: str


@dataclass(frozen=True)
class Written:
    """The dataset after the data commit, and how many rows that commit inserted, updated or deleted."""

    dataset: lance.LanceDataset
    changed_rows: int


def open_table(db: Path | Location, name: str) -> lance.LanceDataset | None:
    """The current table, or None when there is none (for reuse of stored values before a write)."""
    location = database.located(db)
    try:
        return lance.dataset(location.table_uri(name), storage_options=database.options(location))
    except ValueError as exc:
        # Lance's way of saying "no dataset here", and also of a bucket it cannot read.
        if (known := database.failure(location, exc)) is not None:
            raise known from exc
        return None


def rows_table(columns: Mapping[str, list[Any]]) -> pa.Table:
    """The indexer's columns as one Arrow table, in layout order: text, and 32-bit integers where the layout says."""
    return pa.table(
        {
            name: pa.array(columns[name], pa.int32() if name in layout.INTEGER_COLUMNS else pa.string())
            for name in layout.INDEXER_COLUMNS
        }
    )


def _database_error(location: Location, name: str, exc: OSError) -> IndexerError:
    # A bucket's failure or a refused commit, in one line; else a table folder Lance cannot use (a file in its
    # place, a full disk), which Lance reports as an OSError.
    known = database.failure(location, exc, name)
    return known or DatabaseError(f"Cannot write table {name!r} in {location.table_uri(name)}: {exc}")


def replace_table(
    db: Path | Location,
    name: str,
    data: pa.Table,
    metadata: Mapping[str, str],
    *,
    fts: bool = True,
    language: str = languages.DEFAULT,
    keep_versions: timedelta,
) -> WriteResult:
    """Make table `name` hold exactly `data`, stamped with `metadata`, its full-text indexes built for
    `language` (a key of `languages.FTS_PARAMS`). Call it under `database.locked(db)`."""
    data = data.replace_schema_metadata(dict(metadata))
    plan = prepare(db, name, data.schema)
    written = apply(plan, data, None)
    return finish(plan, written, metadata, fts=fts, language=language, keep_versions=keep_versions)


def prepare(db: Path | Location, name: str, schema: pa.Schema, before_change: Callable[[], None] | None = None) -> Plan:
    """Choose how table `name` becomes rows of `schema` (stamped with its metadata), and bring a table that is
    merged into to that schema (added and dropped columns: commits that keep it readable and its indexes,
    made after calling `before_change`)."""
    location = database.located(db)
    try:
        temp_removed = database.remove_temp_files(location.path / f"{name}.lance") if location.local else 0
        dataset = open_table(location, name)
        if dataset is None:
            return Plan("create", None, temp_removed, location, name)
        if _mergeable(dataset.schema) and not _new_vectors(dataset.schema, schema):
            _evolve(dataset, schema, before_change)
            return Plan("merge", dataset, temp_removed, location, name)
        return Plan("overwrite", dataset, temp_removed, location, name)
    except OSError as exc:
        raise _database_error(location, name, exc) from exc


def apply(plan: Plan, data: pa.Table | pa.RecordBatchReader, replaced: Collection[str] | None) -> Written:
    """The data commit: `data` becomes the table (`replaced` None), or the rows of the paths in `replaced`
    (a merge only: rows of other paths stay as they are)."""
    try:
        if plan.strategy == "merge" and plan.dataset is not None:
            transaction, changed = _merge(plan.dataset, data, replaced)
            return Written(_commit(plan.dataset, _within_cap(plan, plan.dataset, transaction)), changed)
        if replaced is not None:
            raise ValueError(f"only a merge replaces some paths, not a {plan.strategy}")
        mode = "create" if plan.strategy == "create" else "overwrite"
        uri, options = plan.location.table_uri(plan.table), database.options(plan.location)
        return Written(
            lance.write_dataset(data, uri, mode=mode, max_rows_per_file=indexes.ROWS_PER_FILE, storage_options=options),
            -1,
        )
    except OSError as exc:
        raise _database_error(plan.location, plan.table, exc) from exc


def _within_cap(plan: Plan, dataset: lance.LanceDataset, transaction: Any) -> Any:
    """The merge's `transaction` with each data file it added of more than `indexes.ROWS_PER_FILE` rows written
    again as files within the cap, `ROWS_PER_FILE` rows read at a time, and deleted. Lance's merge writes files of up
    to its own default (a rebuild that changed every row: one file), and compaction never splits a file."""
    cap, added = indexes.ROWS_PER_FILE, list(getattr(transaction.operation, "new_fragments", None) or [])
    large = [fragment for fragment in added if fragment.physical_rows > cap]
    if not large:
        return transaction
    from lance.file import LanceFileSession
    from lance.fragment import write_fragments

    options = database.options(plan.location)
    files = LanceFileSession(plan.location.table_uri(plan.table), storage_options=options)
    kept = [fragment for fragment in added if fragment.physical_rows <= cap]
    for fragment in large:
        (data_file,) = fragment.files  # a merge writes each row whole, in one file
        reader = files.open_reader(f"data/{data_file.path}")
        for start in range(0, reader.num_rows(), cap):
            rows = reader.read_range(start, min(cap, reader.num_rows() - start)).to_table()
            rows = rows.select(dataset.schema.names)
            kept += write_fragments(rows, dataset, max_rows_per_file=cap, storage_options=options)
    operation = replace(transaction.operation, new_fragments=kept)
    for fragment in large:
        files.delete_file(f"data/{fragment.files[0].path}")
    return replace(transaction, operation=operation)


def _commit(dataset: lance.LanceDataset, transaction: Any) -> lance.LanceDataset:
    """Commit the merge's transaction on the version it was made from: the table as it was, or refused."""
    return lance.LanceDataset.commit(dataset, transaction, read_version=dataset.version)


def finish(
    plan: Plan,
    written: Written | None,
    metadata: Mapping[str, str] | None,
    *,
    fts: bool,
    language: str,
    keep_versions: timedelta,
) -> WriteResult:
    """After the data commit (`written`; None when nothing was to change): the stamp (after a merge; None
    keeps it), the indexes, and versions superseded for longer than `keep_versions` removed."""
    dataset = written.dataset if written is not None else plan.dataset
    if dataset is None:
        raise ValueError("nothing was written to a table that does not exist")
    try:
        # A merge keeps the table's stamp until now; a new table's stamp may have been completed while its rows
        # streamed in (a description derived from their titles).
        if metadata is not None and (plan.strategy == "merge" or _stamp_of(dataset) != dict(metadata)):
            dataset.update_schema_metadata(dict(metadata), replace=True)
        params = languages.FTS_PARAMS[language] if fts else None
        fold = None
        if plan.strategy == "merge":
            small = indexes.small_change(dataset, written.changed_rows if written is not None else 0)
            fold = "delta" if small else "merge"
        indexes.update_ngram(dataset, wanted=fts, min_rows=NGRAM_MIN_ROWS)
        has_fts = indexes.update_fts(dataset, params, compact=fold == "merge")
        indexes.update_scalar_indexes(dataset, fold=fold)
        removed = remove_old_versions(dataset, keep_versions) if plan.strategy != "create" else 0
        return WriteResult(
            plan.strategy, dataset.version, dataset.count_rows(), has_fts, removed, plan.temp_files_removed
        )
    except OSError as exc:
        raise _database_error(plan.location, plan.table, exc) from exc


def _stamp_of(dataset: lance.LanceDataset) -> dict[str, str]:
    return {key.decode(): value.decode("utf-8", "replace") for key, value in (dataset.schema.metadata or {}).items()}


def restamp(db: Path | Location, name: str, values: Mapping[str, str], keep_versions: timedelta) -> int:
    """Set the stamp's `values` (the other keys kept) in one metadata commit, nothing else; the new version."""
    location = database.located(db)
    try:
        dataset = open_table(location, name)
        if dataset is None:
            raise DatabaseError(f"Table {name!r} of {location} is gone.")
        dataset.update_schema_metadata(dict(values), replace=False)
        remove_old_versions(dataset, keep_versions)
        return int(dataset.version)
    except OSError as exc:
        raise _database_error(location, name, exc) from exc


def _mergeable(schema: pa.Schema) -> bool:
    names = set(schema.names)
    return all(column in names and pa.types.is_string(schema.field(column).type) for column in (layout.ID, layout.TEXT))


def _new_vectors(current: pa.Schema, target: pa.Schema) -> bool:
    """True when `target` carries vectors the current table does not hold: absent, retyped, of another model,
    or embedded from another input."""
    if layout.VECTOR not in target.names:
        return False
    if layout.VECTOR not in current.names or current.field(layout.VECTOR).type != target.field(layout.VECTOR).type:
        return True
    stamped, wanted = layout.decode_metadata(current.metadata), layout.decode_metadata(target.metadata)
    if any(stamped.get(key) != wanted.get(key) for key in ("embedding_model", "vector_width")):
        return True
    # Vectors of another input (text alone, or with its title and headings) are never mixed: a merge would
    # keep the old vector of every unchanged row. A table stamped before layout 3 embedded the text alone.
    embedded = layout.META_EMBEDDED.removeprefix("lancelot.")
    return stamped.get(embedded, layout.EMBEDDED_TEXT) != wanted.get(embedded, layout.EMBEDDED_TEXT)


def _evolve(dataset: lance.LanceDataset, target: pa.Schema, before_change: Callable[[], None] | None) -> None:
    """Bring the table's columns to `target`: drop vanished or retyped columns, add missing ones as nulls."""
    current = dataset.schema
    stale = [
        name
        for name in current.names
        if name not in target.names or current.field(name).type != target.field(name).type
    ]
    missing = [field for field in target if field.name not in current.names or field.name in stale]
    if (stale or missing) and before_change is not None:
        before_change()
    if stale:
        dataset.drop_columns(stale)
    if missing:
        dataset.add_columns(pa.schema(missing))


def _differs(column: str) -> str:
    # Null-safe inequality (Lance's SQL has no IS DISTINCT FROM): a column just added holds nulls, and a
    # locator an HTML passage lacks is null on both sides.
    target, source = f"target.{column}", f"source.{column}"
    one_null = f"({target} IS NULL AND {source} IS NOT NULL) OR ({target} IS NOT NULL AND {source} IS NULL)"
    return f"{one_null} OR {target} != {source}"


def _comparable(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_integer(kind))


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _merge(
    dataset: lance.LanceDataset, data: pa.Table | pa.RecordBatchReader, replaced: Collection[str] | None
) -> tuple[Any, int]:
    """The merge's data files and its transaction, not committed yet; and the rows it inserts, updates and
    deletes. Only rows of `replaced` paths that the data does not hold are deleted (None: every row it does
    not hold)."""
    merge = dataset.merge_insert(layout.ID)
    if replaced is None:
        # Unchanged rows are left alone, so rows a full rebuild makes again as they were are not rewritten.
        # Vectors are compared through the text they were made from (a changed text is a changed row).
        changed = " OR ".join(
            _differs(column)
            for column in data.schema.names
            if column != layout.ID and _comparable(data.schema.field(column).type)
        )
        merge = merge.when_matched_update_all(condition=changed or None).when_not_matched_insert_all()
        merge = merge.when_not_matched_by_source_delete()
    else:
        # The rows of changed documents only: their comparison would cost more than it saves (the condition
        # makes Lance read every matched column; docs/decisions.md, "One commit, only the changed documents").
        merge = merge.when_matched_update_all().when_not_matched_insert_all()
        if replaced:
            # Sorted: the same change is the same condition.
            paths = ", ".join(map(_quoted, sorted(replaced)))
            merge = merge.when_not_matched_by_source_delete(f"{layout.PATH} IN ({paths})")
    transaction, stats = merge.execute_uncommitted(data)
    return transaction, sum(
        int(stats.get(key, 0)) for key in ("num_inserted_rows", "num_updated_rows", "num_deleted_rows")
    )


# A table of at least this many rows with full-text indexes also gets an n-gram index on its text: when BM25
# finds nothing, the server's substring match looks each word up in it instead of scanning every passage.
# Below this size a scan costs less than 10 BM25 searches, and the index is dear to build, dearer than the
# three full-text indexes at 20,000 rows (docs/decisions.md, "Search cost").
NGRAM_MIN_ROWS = 50_000
NGRAM_INDEX = indexes.NGRAM_INDEX


def remove_old_versions(dataset: lance.LanceDataset, keep: timedelta) -> int:
    """Delete the versions that stopped being the latest more than `keep` ago; return how many.

    A reader that opened version N keeps reading it until it checks for a newer one, so N's files must
    outlive the commit that replaced it. Cleaning by age of the version itself (`older_than=0`) would
    delete the version a reader was given a moment ago. Files that no version names and that are older
    than the oldest version kept go too, whatever their age (`delete_unverified`: Lance otherwise waits
    7 days, in case they belong to a write under way): only one indexer writes at a time (the lock).
    """
    versions = sorted((int(item["version"]), _timestamp(item["timestamp"])) for item in dataset.versions())
    if not versions:
        return 0
    # Lance reports naive local times; compare like with like.
    cutoff = datetime.now(versions[-1][1].tzinfo) - keep
    doomed = [older for (older, _), (_, superseded_at) in itertools.pairwise(versions) if superseded_at < cutoff]
    if doomed:
        dataset.cleanup_old_versions(versions=doomed, delete_unverified=True, error_if_tagged_old_versions=False)
    return len(doomed)


def _timestamp(value: object) -> datetime:
    if isinstance(value, datetime):
        return value
    raise DatabaseError(f"Lance reported a version time of an unexpected type: {value!r}.")
