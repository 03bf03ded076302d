"""The only module that writes tables, through Lance (the storage engine LanceDB tables are made of).

A LanceDB table `NAME` is the Lance dataset `DB/NAME.lance`; the server opens it with lancedb, and the
FTS index built here is the one `table.search(q, query_type="fts")` uses. The indexer does not import
lancedb: that import alone costs seconds (its REST client's models), more than indexing a manual.
Every change to a table goes through `replace_table`; how a table is replaced without a reader ever
seeing a broken one:

* No table yet: write it, then build the FTS index.
* A table whose `id` and `text` are strings: evolve its columns to the new layout (add or drop columns;
  both keep the FTS index), then one `merge_insert` on `id` that updates changed rows, inserts new ones
  and deletes vanished ones in a single commit. Rows added by the merge are searched without the index
  until `optimize_indices` folds them into it, so full-text search works at every moment.
* Anything else (another tool's layout), and new vectors that are not the current table's (the table
  has none, or they came from another model or are of another width): overwrite it, then the FTS
  index. The merge compares text columns only, so it would keep a stale (or null) vector beside an
  unchanged text; the overwrite swaps data, vectors and metadata in one atomic commit. Full-text
  search is unavailable until the index commit that follows.

Old versions are deleted only once they have been superseded for `keep_versions` (a reader holding an
old version keeps it that long), and leftover `.tmp*` files from a killed write are removed; both run
under a lock file so that no other indexer is writing at the same time.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa

from lancelot_indexer.errors import DatabaseError
from lancelot_schema import languages, layout


@dataclass(frozen=True)
class WriteResult:
    strategy: str  # "create", "merge" or "overwrite"
    version: int
    rows: int
    fts: bool
    versions_removed: int
    temp_files_removed: int


def open_table(db: Path, name: str) -> lance.LanceDataset | None:
    """The current table, or None when there is none (for reuse of stored values before a write)."""
    try:
        return lance.dataset(_uri(db, name))
    except ValueError:
        # Lance's way of saying "no dataset here".
        return None


def rows_table(columns: Mapping[str, list[Any]]) -> pa.Table:
    """The indexer's columns as one Arrow table, in layout order: text, and 32-bit integers where the layout says."""
    return pa.table(
        {
            name: pa.array(columns[name], pa.int32() if name in layout.INTEGER_COLUMNS else pa.string())
            for name in layout.INDEXER_COLUMNS
        }
    )


def replace_table(
    db: Path,
    name: str,
    data: pa.Table,
    metadata: Mapping[str, str],
    *,
    fts: bool = True,
    language: str = languages.DEFAULT,
    keep_versions: timedelta,
) -> WriteResult:
    """Make table `name` hold exactly `data`, stamped with `metadata`, its full-text indexes built for
    `language` (a key of `languages.FTS_PARAMS`). Call it under `lock.locked(db)`."""
    try:
        return _replace(db, name, data, metadata, fts=fts, language=language, keep_versions=keep_versions)
    except OSError as exc:
        # Lance reports a table folder it cannot use (a file in its place, a full disk) as an OSError.
        raise DatabaseError(f"Cannot write table {name!r} in {_uri(db, name)}: {exc}") from exc


def _replace(
    db: Path,
    name: str,
    data: pa.Table,
    metadata: Mapping[str, str],
    *,
    fts: bool,
    language: str,
    keep_versions: timedelta,
) -> WriteResult:
    data = data.replace_schema_metadata(dict(metadata))
    uri = _uri(db, name)
    temp_removed = remove_temp_files(db / f"{name}.lance")
    dataset = open_table(db, name)
    if dataset is None:
        dataset = lance.write_dataset(data, uri, mode="create")
        strategy = "create"
    elif _mergeable(dataset.schema) and not _new_vectors(dataset.schema, data.schema):
        _evolve(dataset, data.schema)
        _merge(dataset, data)
        dataset.update_schema_metadata(dict(metadata), replace=True)
        strategy = "merge"
    else:
        dataset = lance.write_dataset(data, uri, mode="overwrite")
        strategy = "overwrite"
    params = languages.FTS_PARAMS[language] if fts else None
    has_fts = _update_fts(dataset, params, compact=strategy == "merge")
    _update_scalar_indexes(dataset, merged=strategy == "merge", ngram=fts)
    removed = remove_old_versions(uri, keep_versions) if strategy != "create" else 0
    return WriteResult(strategy, dataset.version, dataset.count_rows(), has_fts, removed, temp_removed)


def _uri(db: Path, name: str) -> str:
    # Absolute, so that Lance never reads a folder named `file:db` or `memory:x` as a URL scheme.
    return str(db.absolute() / f"{name}.lance")


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


def _evolve(dataset: lance.LanceDataset, target: pa.Schema) -> None:
    """Bring the table's columns to `target`: drop vanished or retyped columns, add missing ones as nulls."""
    current = dataset.schema
    stale = [
        name
        for name in current.names
        if name not in target.names or current.field(name).type != target.field(name).type
    ]
    if stale:
        dataset.drop_columns(stale)
    missing = [field for field in target if field.name not in current.names or field.name in stale]
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


def _merge(dataset: lance.LanceDataset, data: pa.Table) -> None:
    # Unchanged rows are left alone, so an unchanged folder rewrites nothing. Vectors are compared through
    # the text they were made from (a changed text is a changed row).
    changed = " OR ".join(
        _differs(column)
        for column in data.schema.names
        if column != layout.ID and _comparable(data.schema.field(column).type)
    )
    (
        dataset.merge_insert(layout.ID)
        .when_matched_update_all(condition=changed or None)
        .when_not_matched_insert_all()
        .when_not_matched_by_source_delete()
        .execute(data)
    )


def _full_text_index(dataset: lance.LanceDataset, column: str) -> Any:
    """The index on `column` other than an n-gram one (which `_update_scalar_indexes` keeps), if any."""
    return next(
        (
            index
            for index in dataset.describe_indices()
            if index.field_names == [column] and not index.type_url.endswith("NGramIndexDetails")
        ),
        None,
    )


def _update_fts(dataset: lance.LanceDataset, params: Mapping[str, Any] | None, *, compact: bool) -> bool:
    """The full-text indexes on text, title and heading, with the tokenizer options `params` (made again
    when an index was built with others: another language); none when `params` is None."""
    indexes = {column: _full_text_index(dataset, column) for column in layout.FULL_TEXT_COLUMNS}
    if params is None:
        for index in indexes.values():
            if index is not None and index.type_url.endswith("InvertedIndexDetails"):
                dataset.drop_index(index.name)
    if compact:
        # Rewrites fragments left sparse by the merge (what keeps repeated rebuilds small).
        dataset.optimize.compact_files()
    if params is None:
        return False
    for column, index in indexes.items():
        details = index.details if index is not None and index.type_url.endswith("InvertedIndexDetails") else {}
        if any(details.get(key) != value for key, value in params.items()):
            # Named as lancedb names them (`text_idx`), so that `table.index_stats("text_idx")` finds them.
            name = index.name if index is not None else f"{column}_idx"
            dataset.create_scalar_index(column, "INVERTED", name=name, replace=True, **params)
    return True


# A table of at least this many rows with full-text indexes also gets an n-gram index on its text: when BM25
# finds nothing, the server's substring match looks each word up in it instead of scanning every passage
# (about 2.7 ms per 1,000 passages). Below this size a scan costs less than 10 BM25 searches, and the index
# is dear to build: 6 s at 20,000 rows, 9 s at 100,000, where the three full-text indexes take 1.3 s and
# 7 s (docs/decisions.md, "Search cost").
NGRAM_MIN_ROWS = 50_000
NGRAM_INDEX = "text_ngram_idx"


def _update_scalar_indexes(dataset: lance.LanceDataset, *, merged: bool, ngram: bool) -> None:
    """B-tree indexes on the columns a document read filters on (`path`, `passage`), so that reading one
    document or one passage's neighbours looks rows up instead of scanning the table. An overwrite drops
    them (made again here, about 35 ms per 100,000 rows each); after a merge, `optimize_indices` folds the
    rows it added into every index, the text index too. With `ngram` (the table has full-text indexes), a
    table of `NGRAM_MIN_ROWS` rows or more gets the n-gram index on its text, kept once made; without, it
    is dropped with them."""
    indexes = dataset.describe_indices()
    indexed = {tuple(index.field_names) for index in indexes}
    for column in layout.SCALAR_INDEXED_COLUMNS:
        if (column,) not in indexed and column in dataset.schema.names:
            dataset.create_scalar_index(column, "BTREE", name=f"{column}_idx")
    substrings = [index for index in indexes if index.type_url.endswith("NGramIndexDetails")]
    if not ngram:
        for index in substrings:
            dataset.drop_index(index.name)
    elif not substrings and dataset.count_rows() >= NGRAM_MIN_ROWS:
        dataset.create_scalar_index(layout.TEXT, "NGRAM", name=NGRAM_INDEX)
    if merged:
        dataset.optimize.optimize_indices()


def remove_old_versions(uri: str, keep: timedelta) -> int:
    """Delete the versions that stopped being the latest more than `keep` ago; return how many.

    A reader that opened version N keeps reading it until it checks for a newer one, so N's files must
    outlive the commit that replaced it. Cleaning by age of the version itself (`older_than=0`) would
    delete the version a reader was given a moment ago.
    """
    dataset = lance.dataset(uri)
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


def remove_temp_files(table_dir: Path) -> int:
    """Remove the `.tmp*` files a killed write leaves behind (Lance's cleanup never sees them)."""
    removed = 0
    if not table_dir.is_dir():
        return 0
    for leftover in table_dir.rglob(".tmp*"):
        with contextlib.suppress(OSError):
            if leftover.is_file():
                leftover.unlink()
                removed += 1
    return removed
