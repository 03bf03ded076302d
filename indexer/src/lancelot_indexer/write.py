"""The only module that writes to LanceDB. Every change to a table goes through `replace_table`.

How a table is replaced without a reader ever seeing a broken one:

* No table yet: create it, then build the FTS index.
* A table whose `id` and `text` are strings: evolve its columns to the new layout (add or drop columns;
  both keep the FTS index), then one `merge_insert` on `id` that updates changed rows, inserts new ones
  and deletes vanished ones in a single commit. Rows added by the merge are searched without the index
  until `optimize` folds them into it, so full-text search works at every moment.
* Anything else (another tool's layout): `create_table(mode="overwrite")`, then the FTS index. The data
  swap is atomic; full-text search is unavailable until the index commit that follows.

Old versions are deleted only once they have been superseded for `keep_versions` (a reader holding an
old version keeps it that long), and leftover `.tmp*` files from a killed write are removed; both run
under a lock file so that no other indexer is writing at the same time.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import lance
import lancedb
import pyarrow as pa
from lancedb.index import FTS

from lancelot_indexer.errors import DatabaseError, LockedError
from lancelot_schema import layout

LOCK_FILE = ".lancelot-index.lock"
DEFAULT_KEEP_VERSIONS = timedelta(minutes=2)

# English stemming, lower-casing, ASCII folding, positions for phrase queries.
FTS_CONFIG = FTS(
    with_position=True,
    base_tokenizer="simple",
    language="English",
    stem=True,
    lower_case=True,
    ascii_folding=True,
    remove_stop_words=True,
)


@dataclass(frozen=True)
class WriteResult:
    strategy: str  # "create", "merge" or "overwrite"
    version: int
    rows: int
    fts: bool
    versions_removed: int
    temp_files_removed: int


@contextlib.contextmanager
def locked(db: Path) -> Iterator[None]:
    """Hold the database's lock file; raise LockedError when another indexer holds it."""
    try:
        db.mkdir(parents=True, exist_ok=True)
        handle = (db / LOCK_FILE).open("a+b")
    except OSError as exc:
        raise DatabaseError(f"Cannot create the database folder {db}: {exc.strerror}.") from exc
    with handle:
        try:
            _lock(handle)
        except OSError as exc:
            raise LockedError(f"Another lancelot-index is writing to {db}; wait for it to finish.") from exc
        yield


def _lock(handle: Any) -> None:
    if sys.platform == "win32":
        import msvcrt

        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def open_table(db: Path, name: str) -> lancedb.table.Table | None:
    """The current table, or None when there is none (for reuse of stored values before a write)."""
    try:
        return lancedb.connect(str(db)).open_table(name)
    except ValueError:
        # lancedb's way of saying "no such table".
        return None


def replace_table(
    db: Path,
    name: str,
    data: pa.Table,
    metadata: Mapping[str, str],
    *,
    fts: bool = True,
    keep_versions: timedelta = DEFAULT_KEEP_VERSIONS,
) -> WriteResult:
    """Make table `name` hold exactly `data`, stamped with `metadata`. Call it under `locked(db)`."""
    data = data.replace_schema_metadata(dict(metadata))
    connection = lancedb.connect(str(db))
    temp_removed = remove_temp_files(db / f"{name}.lance")
    table = open_table(db, name)
    if table is None:
        table = connection.create_table(name, data)
        strategy = "create"
    elif _mergeable(table.schema):
        _evolve(table, data.schema)
        _merge(table, data)
        lance.dataset(_uri(db, name)).update_schema_metadata(dict(metadata), replace=True)
        table = connection.open_table(name)
        strategy = "merge"
    else:
        table = connection.create_table(name, data, mode="overwrite")
        strategy = "overwrite"
    has_fts = _update_fts(table, fts)
    removed = remove_old_versions(_uri(db, name), keep_versions)
    return WriteResult(strategy, table.version, table.count_rows(), has_fts, removed, temp_removed)


def _uri(db: Path, name: str) -> str:
    return str(db / f"{name}.lance")


def _mergeable(schema: pa.Schema) -> bool:
    names = set(schema.names)
    return all(column in names and pa.types.is_string(schema.field(column).type) for column in (layout.ID, layout.TEXT))


def _evolve(table: lancedb.table.Table, target: pa.Schema) -> None:
    """Bring the table's columns to `target`: drop vanished or retyped columns, add missing ones as nulls."""
    current = table.schema
    stale = [
        name
        for name in current.names
        if name not in target.names or current.field(name).type != target.field(name).type
    ]
    if stale:
        table.drop_columns(stale)
    missing = [field for field in target if field.name not in current.names or field.name in stale]
    if missing:
        table.add_columns(pa.schema(missing))


def _merge(table: lancedb.table.Table, data: pa.Table) -> None:
    # Unchanged rows are left alone, so an unchanged folder rewrites nothing. Columns just added hold nulls.
    changed = " OR ".join(
        f"(target.{column} IS NULL OR target.{column} != source.{column})"
        for column in data.schema.names
        if column != layout.ID and pa.types.is_string(data.schema.field(column).type)
    )
    (
        table.merge_insert(layout.ID)
        .when_matched_update_all(where=changed or None)
        .when_not_matched_insert_all()
        .when_not_matched_by_source_delete()
        .execute(data)
    )


def _text_index(table: lancedb.table.Table) -> Any:
    return next((index for index in table.list_indices() if index.columns == [layout.TEXT]), None)


def _update_fts(table: lancedb.table.Table, fts: bool) -> bool:
    index = _text_index(table)
    if not fts:
        if index is not None:
            table.drop_index(index.name)
        table.optimize(cleanup_older_than=timedelta(days=7))
        return False
    if index is None or index.index_type != "FTS" or not index.index_details.get("with_position"):
        table.create_index(layout.TEXT, config=FTS_CONFIG, replace=True)
    # Compacts fragments left sparse by the merge and folds new rows into the index.
    table.optimize(cleanup_older_than=timedelta(days=7))
    return True


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
