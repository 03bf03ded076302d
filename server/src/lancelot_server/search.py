"""The three searches over one table: BM25 (full-text index), substring, and vector.

The query and the `path` prefix are data, never SQL: BM25 gets the query as a `MatchQuery` (no query
syntax is parsed), substring matching and the path filter run in Arrow on literal strings. No `where`
clause is ever built from what a client sent.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterator
from typing import Any, cast

from lancelot_server.rows import Hit, source_of, to_hit
from lancelot_server.store import Layout

# A 2,000-character query can hold hundreds of words; each one is a pass over the text column, so the
# substring match uses the first ones. Assistants send a few words; the cap only bounds a hostile query.
MAX_SUBSTRING_WORDS = 64
SCAN_BATCH_ROWS = 8192


def has_fts_index(table: Any, text_column: str) -> bool:
    return any(index.index_type == "FTS" and list(index.columns) == [text_column] for index in table.list_indices())


def query_words(query: str) -> list[str]:
    """The distinct lower-case words of `query`, without surrounding punctuation unless that is all there is."""
    words: list[str] = []
    for raw in query.split():
        word = raw.strip(string.punctuation).lower() or raw.lower()
        if word not in words:
            words.append(word)
    return words[:MAX_SUBSTRING_WORDS]


def _under(prefix: str | None, table_layout: Layout) -> Callable[[dict[str, Any]], bool]:
    def keep(row: dict[str, Any]) -> bool:
        if prefix is None:
            return True
        source = source_of(row, table_layout)
        return source is not None and source.startswith(prefix)

    return keep


def _ranked(
    fetch: Callable[[int], Any], score_column: str, limit: int, prefix: str | None, table_layout: Layout
) -> list[Hit]:
    """Hits from a ranked LanceDB query, filtered by path prefix in Python.

    With a prefix, more than `limit` rows are fetched, doubling until enough pass or the ranking runs out.
    """
    keep = _under(prefix, table_layout)
    want = limit if prefix is None else max(limit * 4, 50)
    while True:
        rows = fetch(want).to_pylist()
        kept = [row for row in rows if keep(row)]
        if len(kept) >= limit or len(rows) < want:
            return [to_hit(row, table_layout, row[score_column]) for row in kept[:limit]]
        want *= 4


def bm25(table: Any, table_layout: Layout, query: str, limit: int, prefix: str | None) -> list[Hit]:
    """Full-text search with the table's inverted index; score is BM25, higher is better."""
    from lancedb.query import MatchQuery

    def fetch(count: int) -> Any:
        # A match query: the text is tokenized as data, no query syntax (AND, quotes, field:) is parsed.
        match = cast(Any, MatchQuery)(query, table_layout.text)
        columns = [*table_layout.readable, "_score"]
        return table.search(match, query_type="fts").select(columns).limit(count).to_arrow()

    return _ranked(fetch, "_score", limit, prefix, table_layout)


def vector(table: Any, table_layout: Layout, embedding: list[float], limit: int, prefix: str | None) -> list[Hit]:
    """Nearest rows by cosine distance; score is the distance, lower is closer."""

    def fetch(count: int) -> Any:
        return (
            table.search(embedding, vector_column_name=table_layout.vector, query_type="vector")
            .distance_type("cosine")
            .select([*table_layout.readable, "_distance"])
            .limit(count)
            .to_arrow()
        )

    return _ranked(fetch, "_distance", limit, prefix, table_layout)


def source_array(batch: Any, table_layout: Layout) -> Any:
    """Per row, the first non-blank source column, as `rows.source_of` picks it (null when none)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    result = pa.nulls(batch.num_rows, pa.string())
    for name in reversed(table_layout.sources):
        column = pc.utf8_trim_whitespace(batch.column(name).cast(pa.string()))
        blank = pc.fill_null(pc.equal(column, ""), True)
        result = pc.if_else(blank, result, column)
    return result


def batches(table: Any, columns: list[str]) -> Iterator[Any]:
    reader = table.search().select(columns).limit(None).to_batches(batch_size=SCAN_BATCH_ROWS)
    yield from reader


def substring(table: Any, table_layout: Layout, query: str, limit: int, prefix: str | None) -> list[Hit]:
    """Case-insensitive literal match of each query word; score is the share of words found, higher is better.

    Scans the table batch by batch in Arrow, keeping only each batch's best `limit` rows; ties keep table order.
    """
    import pyarrow as pa

    words = query_words(query)
    if not words:
        return []
    best: list[Any] = []
    offset = 0
    for batch in batches(table, table_layout.readable):
        chosen = _best_in_batch(batch, table_layout, words, limit, prefix, offset)
        if chosen is not None:
            best.append(chosen)
        offset += batch.num_rows
    if not best:
        return []
    top = _top(pa.concat_tables(best), limit)
    return [to_hit(row, table_layout, row["_found"] / len(words)) for row in top.to_pylist()]


def _best_in_batch(
    batch: Any, table_layout: Layout, words: list[str], limit: int, prefix: str | None, offset: int
) -> Any:
    """The batch's best `limit` matching rows with `_found` (words found) and `_position` (row in the table)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = batch.column(table_layout.text)
    found: Any = None
    for word in words:
        # A literal pattern: Arrow quotes it for its regex engine when ignoring case.
        hit = pc.cast(pc.match_substring(text, word, ignore_case=True), pa.int32())
        found = hit if found is None else pc.add(found, hit)
    found = pc.fill_null(found, 0)
    keep = pc.greater(found, 0)
    if prefix is not None:
        keep = pc.and_(keep, pc.fill_null(pc.starts_with(source_array(batch, table_layout), prefix), False))
    rows = pc.indices_nonzero(keep)
    if len(rows) == 0:
        return None
    scored = pa.Table.from_batches([batch.take(rows)])
    scored = scored.append_column("_found", pc.take(found, rows))
    scored = scored.append_column("_position", pc.add(pc.cast(rows, pa.int64()), offset))
    return _top(scored, limit)


def _top(scored: Any, limit: int) -> Any:
    import pyarrow.compute as pc

    order = pc.sort_indices(scored, sort_keys=[("_found", "descending"), ("_position", "ascending")])
    return scored.take(order[:limit])
