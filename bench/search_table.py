"""bench-search's table: Debian's Python 3.11 and PostgreSQL 15 HTML manuals, copied as often as needed, indexed by
the real `lancelot-index`, then cut to exactly `rows` passages and written by the indexer's own writer as two
tables: `bench` (the full-text indexes, the n-gram index on the text that the substring match looks words up in,
and the B-tree indexes on `path` and `passage` that reads look rows up by) and `bench_plain` (no full-text index
and no n-gram index, so text search is the substring match, by a scan). Built once under bench-work/search
(`location`); a build of an older layout is cut again, or indexed again when its manuals are too. bench-filters,
bench/lookup.py and bench/before.py read the 100,000-passage one.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from bench import common
from bench.common import PYTHON_AND_POSTGRES_QUERIES

# Searches sent first and not timed: Lance imported, the tables open, their pages and index parts cached.
WARM_UP = PYTHON_AND_POSTGRES_QUERIES[:3]
WORK = common.WORK / "search"
MANUALS = {"python": common.PYTHON_MANUAL, "postgres": common.POSTGRES_MANUAL}
SKIP = shutil.ignore_patterns("_sources", "_static", "_images", "_downloads", "*.txt", "*.js", "*.css", "*.png")


def location(rows: int, work: Path = WORK) -> Path:
    """The database of the tables of `rows` passages."""
    return work / f"db-{rows}"


def build(rows: int, work: Path = WORK) -> Path:
    """The database with `bench` and `bench_plain`, exactly `rows` passages each; reused when present."""
    import lancedb

    db = location(rows, work)
    if db.exists():
        connection = lancedb.connect(str(db))
        tables = set(connection.list_tables().tables)
        if {"bench", "bench_plain"} <= tables and _current(connection, "bench") and _ngram(connection, rows):
            return db
        # A `bench` cut by an older version of this script only needs cutting again when the indexed manuals
        # are of the current layout; manuals indexed by an older indexer are indexed again.
        if "documents" in tables and _current(connection, "documents"):
            print(f"{db}: `bench` lacks the current layout's columns or indexes; cutting it again", file=sys.stderr)
            _cut(db, rows)
            return db
        shutil.rmtree(db)
    docs = common.copies_for(rows, MANUALS, work / "docs", SKIP)
    seconds, _ = common.index(docs, db, "--quiet")
    print(f"indexed {docs} in {seconds:.1f} s", file=sys.stderr)
    _cut(db, rows)
    return db


def _current(connection: Any, table: str) -> bool:
    """Whether `table` has every column the indexer writes and every index it builds (B-tree and full text)."""
    from lancelot_schema import layout

    handle = connection.open_table(table)
    indexed = {tuple(index.columns) for index in handle.list_indices()}
    wanted = (*layout.SCALAR_INDEXED_COLUMNS, *layout.FULL_TEXT_COLUMNS)
    return all((column,) in indexed for column in wanted) and set(layout.INDEXER_COLUMNS) <= set(handle.schema.names)


def _ngram(connection: Any, rows: int) -> bool:
    """Whether `bench` has the n-gram index the indexer builds on a table of `rows` rows (bench_plain has none)."""
    from lancelot_indexer.writing import write

    indexed = {(index.index_type, *index.columns) for index in connection.open_table("bench").list_indices()}
    return rows < write.NGRAM_MIN_ROWS or ("NGram", "text") in indexed


def _cut(db: Path, rows: int) -> None:
    """`bench` and `bench_plain`: the first `rows` passages, written by the indexer's writer (with and without FTS)."""
    from datetime import timedelta

    import pyarrow as pa

    from lancelot_indexer.writing import database, write
    from lancelot_schema import layout

    documents = write.open_table(db, "documents")
    assert documents is not None, db
    data = documents.to_table().slice(0, rows)
    assert data.num_rows == rows, data.num_rows
    metadata = {key.decode(): value.decode() for key, value in (data.schema.metadata or {}).items()}
    # The cut ends inside a document: its rows count only the passages kept, as an index run over them would.
    paths = data.column(layout.PATH).to_pylist()
    last, kept = paths[-1], paths.count(paths[-1])
    totals = data.column(layout.PASSAGES).to_pylist()
    counts = pa.array([kept if path == last else total for path, total in zip(paths, totals, strict=True)], pa.int32())
    data = data.set_column(data.schema.get_field_index(layout.PASSAGES), layout.PASSAGES, counts)
    with database.locked(db):
        for name, fts in (("bench", True), ("bench_plain", False)):
            # Written afresh, so that the writer creates the table and its indexes as on a first index run.
            shutil.rmtree(db / f"{name}.lance", ignore_errors=True)
            write.replace_table(db, name, data, metadata, fts=fts, keep_versions=timedelta(0))


def stdio_server(db: Path, table: str) -> Any:
    """`lancelot` over stdio serving `table` by default, and `bench_plain` beside it (the worst cases search both)."""
    env = {"LANCEDB_PATH": str(db), "LANCEDB_TABLE": table, "LANCELOT_TABLES": "bench_plain"}
    return common.stdio_server(env)
