"""Ranked searches over one table: BM25 (full-text index) and vector; the query's words, the per-document cap.

The query, the `path` prefix and the metadata filters are data, never SQL: BM25 gets the query as a
`MatchQuery` (no query syntax is parsed), the path filter runs in Arrow, and the prefix and filters reach
Lance as pyarrow expressions holding their values as literals (`filters.py`). No `where` clause is ever
built from what a client sent. The substring match, the fallback of text search, is `substring.py`.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, cast

from lancelot_schema import layout
from lancelot_server.replies import Hit
from lancelot_server.search.rows import document_of, hit_columns, source_of, to_hit
from lancelot_server.storage.store import Layout

SCAN_BATCH_ROWS = 8192
ROW_ID = "_rowid"


@dataclass(frozen=True)
class Wanted:
    """What a reply holds: `limit` hits, only from sources under `prefix`, at most `per_document` per document,
    only rows where `where` (a pyarrow expression: `filters.Filters.condition`) holds, which Lance checks before
    it ranks."""

    limit: int
    prefix: str | None = None
    per_document: int | None = None
    where: Any = None

    def pool(self, depth: int) -> Wanted:
        """A deeper candidate list for fusion: at least `depth` hits, the per-document cap left to the fused list."""
        return replace(self, limit=max(self.limit, depth), per_document=None)


def capped(rows: list[Any], per_document: int | None, limit: int, source: Callable[[Any], Any]) -> list[Any]:
    """The first `limit` of `rows` (best first), skipping a row once its document already has `per_document`.

    A row without a source is a document of its own.
    """
    if per_document is None:
        return rows[:limit]
    counts: dict[Any, int] = {}
    chosen = []
    for row in rows:
        document = source(row)
        if document is None or counts.get(document, 0) < per_document:
            counts[document] = counts.get(document, 0) + 1
            chosen.append(row)
            if len(chosen) == limit:
                break
    return chosen


# How much a match in the document's title and in the passage's heading trail adds to a match in its text
# (BM25 scores summed), chosen by measurement: docs/decisions.md, "Ranking".
FIELD_BOOSTS: dict[str, float] = {layout.TITLE: 0.1, layout.HEADING: 0.1}
# How much of the BM25 of the other passages of its document (among the best POOL) adds to a passage's own,
# chosen by measurement: docs/decisions.md, "Ranking".
DOCUMENT_EVIDENCE = 0.03
# At least this many rows are ranked when a reply is capped, filtered or scored with document evidence.
POOL = 50


def fts_columns(table: Any) -> set[str]:
    """The columns the table has a full-text index on."""
    return {index.columns[0] for index in table.list_indices() if index.index_type == "FTS" and len(index.columns) == 1}


def has_fts_index(table: Any, text_column: str) -> bool:
    return text_column in fts_columns(table)


# The words the English full-text index leaves out: NLTK's list, matched after stemming, as measured on a
# real index (tests/server/search/test_stop_words.py checks each against one).
# fmt: off
STOP_WORDS = frozenset((
    "a", "about", "after", "again", "against", "ain", "all", "am", "an", "and", "are", "aren", "as", "at", "be",
    "been", "being", "below", "between", "both", "but", "by", "can", "couldn", "d", "did", "didn", "do", "doesn",
    "doing", "don", "down", "each", "few", "for", "from", "further", "had", "hadn", "has", "hasn", "have", "haven",
    "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is",
    "isn", "it", "its", "itself", "just", "ll", "m", "ma", "me", "mightn", "more", "most", "mostly", "mustn", "my",
    "myself", "needn", "no", "nor", "not", "now", "o", "of", "off", "on", "or", "other", "others", "our", "ours",
    "out", "over", "own", "re", "s", "same", "shan", "she", "should", "shouldn", "so", "some", "such", "t", "than",
    "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to",
    "too", "under", "until", "up", "ve", "was", "wasn", "we", "were", "weren", "what", "when", "where", "which",
    "while", "who", "whom", "will", "with", "won", "wouldn", "y", "you", "your", "yours", "yourself",
))
# fmt: on


def only_stop_words(query: str) -> list[str] | None:
    """The query's words when every one is a stop word (BM25 sees nothing to match), else None."""
    words = query_words(query)
    return words if words and all(word in STOP_WORDS for word in words) else None


def query_words(query: str) -> list[str]:
    """The distinct lower-case words of `query`, without surrounding punctuation unless that is all there is."""
    words: list[str] = []
    for raw in query.split():
        word = raw.strip(string.punctuation).lower() or raw.lower()
        if word not in words:
            words.append(word)
    return words


def _under(prefix: str | None, table_layout: Layout) -> Callable[[dict[str, Any]], bool]:
    def keep(row: dict[str, Any]) -> bool:
        if prefix is None:
            return True
        source = source_of(row, table_layout)
        return source is not None and source.startswith(prefix)

    return keep


def _ranked(
    table: Any,
    fetch: Callable[[int, list[str]], Any],
    score_column: str,
    wanted: Wanted,
    table_layout: Layout,
    *,
    lower_is_better: bool,
    evidence: float = 0.0,
) -> list[Hit]:
    """Hits from a ranked Lance query, filtered by path prefix and capped per document in Python.

    `fetch(count, columns)` runs the query for its best `count` rows, with their row ids. It reads only what ranks
    them (score, source, id); the chosen rows alone are then read whole, which costs less than reading every
    column of the whole pool (docs/decisions.md, "Cold start"). On object storage it also reads the columns a hit
    shows but its text (`short_columns`), and only the chosen rows' texts are read after: a round trip fewer
    (docs/decisions.md, "Object storage: Lance's session"); where the table holds those columns in memory
    (`LanceTable.held`), the ranking reads only its index and takes them from there (docs/decisions.md, "Object
    storage: the pool's columns held"). The table is pinned to one version (`LanceTable.pinned`), so the ids
    found are the ids read.
    With a prefix, a cap or `evidence`, more than `limit` rows are fetched, four times more each round, until
    enough pass or the ranking runs out: the cap never shortens a reply while other documents still match.
    `evidence` > 0 adds to each row's score that share of the scores of its document's other rows among those
    fetched (`with_document_evidence`). Equal scores are ordered by id, so the same query gives the same order.
    """
    keep = _under(wanted.prefix, table_layout)
    filtered = wanted.prefix is not None or wanted.per_document is not None or evidence > 0
    want = max(wanted.limit * 4, POOL) if filtered else wanted.limit
    sign = 1 if lower_is_better else -1
    named = [*table_layout.documents, *table_layout.sources, *([table_layout.id] if table_layout.id else [])]
    # On object storage the rows' other columns come with the ranking, in its requests: a round trip fewer.
    known = short_columns(table_layout) if table.remote else []
    keys = list(dict.fromkeys([*named, *known, score_column]))
    held = table.held([key for key in keys if key != score_column], table_layout.text) if table.remote else None
    while True:
        rows = _pool(fetch, want, keys, score_column, held)
        if evidence:
            with_document_evidence(rows, score_column, evidence, _document(table_layout))
        rows.sort(key=lambda row: (sign * row[score_column], str(row.get(table_layout.id or "", ""))))
        kept = capped([row for row in rows if keep(row)], wanted.per_document, wanted.limit, _document(table_layout))
        if len(kept) >= wanted.limit or len(rows) < want:
            ranked = [(row[ROW_ID], row[score_column]) for row in kept]
            return read_hits(table, table_layout, ranked, kept if known else None)
        want *= 4


def _pool(fetch: Callable[[int, list[str]], Any], count: int, keys: list[str], score: str, held: Any) -> list[Any]:
    """The ranking's best `count` rows with `keys`: from memory by row id where `held` (`Columns`) has them."""
    if held is not None:
        ranked = fetch(count, [score]).select([ROW_ID, score])
        rows = held.rows(ranked.column(ROW_ID).to_pylist())
        if rows is not None:
            for row, value in zip(rows, ranked.column(score).to_pylist(), strict=True):
                row[score] = value
            return cast(list[Any], rows)
    return cast(list[Any], fetch(count, keys).to_pylist())


def short_columns(table_layout: Layout) -> list[str]:
    """The columns a hit shows but its text: read for the whole ranked pool, which the texts would make long."""
    return [name for name in hit_columns(table_layout) if name != table_layout.text]


def read_hits(
    table: Any, table_layout: Layout, ranked: list[tuple[int, float]], known: list[dict[str, Any]] | None = None
) -> list[Hit]:
    """The hits of the rows ranked as `(row id, score)`, in that order; a row the table no longer holds is left out.
    Rows read whole, or only their text where `known` holds the rest (`short_columns`, with their row ids), or not
    at all where `known` holds their texts too (`LanceTable.held`)."""
    if not ranked:
        return []
    if known is not None and all(table_layout.text in row for row in known):
        return [to_hit(row, table_layout, score) for row, (_, score) in zip(known, ranked, strict=True)]
    columns = [table_layout.text] if known is not None else hit_columns(table_layout)
    taken = table.take_row_ids([row_id for row_id, _ in ranked]).select(columns).with_row_id()
    whole = {row[ROW_ID]: row for row in taken.to_arrow().to_pylist()}
    for row in known or ():
        if row[ROW_ID] in whole:
            whole[row[ROW_ID]] = {**row, **whole[row[ROW_ID]]}
    return [to_hit(whole[row_id], table_layout, score) for row_id, score in ranked if row_id in whole]


def with_document_evidence(
    rows: list[dict[str, Any]], score_column: str, share: float, source: Callable[[Any], Any]
) -> None:
    """Add to each row's score `share` times the scores of the other rows of its document (in place).

    A page that matches in many passages is more likely the page about the words than one that matches
    in one passage a little better; a row without a source is a document of its own.
    """
    documents = [source(row) for row in rows]
    totals: dict[Any, float] = {}
    for row, document in zip(rows, documents, strict=True):
        if document is not None:
            totals[document] = totals.get(document, 0.0) + row[score_column]
    for row, document in zip(rows, documents, strict=True):
        if document is not None:
            row[score_column] += share * (totals[document] - row[score_column])


def _document(table_layout: Layout) -> Callable[[dict[str, Any]], str | None]:
    return lambda row: document_of(row, table_layout)


def _narrowed(query: Any, wanted: Wanted, table_layout: Layout) -> Any:
    """`query` limited to the rows `wanted.where` keeps, and to sources under `wanted.prefix` where the source is
    the `path` column alone (tables lancelot-index wrote; its B-tree answers the range), before it ranks: a
    prefix that few passages have no longer makes the ranking deepen through every match (docs/decisions.md,
    "Search cost"). Rows are still checked against the prefix afterwards, as for other tables."""
    where = wanted.where
    if wanted.prefix is not None and table_layout.sources == (layout.PATH,):
        import pyarrow.compute as pc

        under = starting_with(pc.field(layout.PATH), wanted.prefix)
        where = under if where is None else under & where
    return query if where is None else query.where(where, prefilter=True)


def starting_with(column: Any, prefix: str) -> Any:
    """`column` (a pyarrow field expression) starts with `prefix`, as a range: UTF-8 text sorts by code point, so
    it is at least `prefix` and less than `prefix` with its last code point that can grow grown by one."""
    import pyarrow.compute as pc

    where = column >= pc.scalar(prefix)
    for end in range(len(prefix) - 1, -1, -1):
        code = ord(prefix[end]) + 1
        code = 0xE000 if code == 0xD800 else code  # surrogates are not text
        if code <= 0x10FFFF:
            return where & (column < pc.scalar(prefix[:end] + chr(code)))
    return where


def bm25(table: Any, table_layout: Layout, query: str, wanted: Wanted, indexed: set[str]) -> list[Hit]:
    """Full-text search with the table's inverted indexes; score is BM25, higher is better.

    `indexed`: the columns with a full-text index (`fts_columns`, which the caller has already asked for).
    Where the title and heading have one too (layout 2), a passage scores the sum of its text's BM25 and its
    title's and heading's, each weighted by `FIELD_BOOSTS`, among the best rows by their text alone (the pool
    `_ranked` asks for: `with_field_scores`), or among every row any of them matches when fewer rows than that
    match the text; then `DOCUMENT_EVIDENCE` of its document's other passages' scores among the best `POOL` (at
    least) is added to it.
    """
    from lance.query import BooleanQuery, MatchQuery, Occur

    # Match queries: the text is tokenized as data, no query syntax (AND, quotes, field:) is parsed.
    text: Any = cast(Any, MatchQuery)(query, table_layout.text)
    fields = [
        cast(Any, MatchQuery)(query, column, boost=boost)
        for column, boost in FIELD_BOOSTS.items()
        if column in indexed and boost > 0
    ]
    every = BooleanQuery([(Occur.SHOULD, clause) for clause in [text, *fields]])

    def ranking(match: Any, count: int, columns: list[str]) -> Any:
        searched = _narrowed(table.search(match, query_type="fts"), wanted, table_layout)
        return searched.select(columns).limit(count).with_row_id().to_arrow()

    def fetch(count: int, columns: list[str]) -> Any:
        pool = ranking(text, count, columns)
        if not fields or pool.num_rows < count:
            # The text's matches ran out: the rows that match in a title or heading alone count too, and the
            # summing query costs little when the words are this rare.
            return ranking(every, count, columns) if fields else pool
        return with_field_scores(table, pool, fields)

    return _ranked(table, fetch, "_score", wanted, table_layout, lower_is_better=False, evidence=DOCUMENT_EVIDENCE)


def with_field_scores(table: Any, pool: Any, fields: list[Any]) -> Any:
    """`pool` (the best rows by their text's BM25) with each field query's score for them added to `_score`: the
    sums one `BooleanQuery` of the text and the fields gives these rows. That query scores every row any field
    matches, so its cost grows with the table (10 times the rows, 7 times the time), where a field ranked among
    the pool's rows alone does not (docs/decisions.md, "A million passages")."""
    import pyarrow as pa

    ids = pool.column(ROW_ID).to_pylist()
    scores = dict(zip(ids, pool.column("_score").to_pylist(), strict=True))
    for match in fields:
        found = table.search(match, query_type="fts").among(ids).select(["_score"]).limit(len(ids))
        for row_id, score in zip(*found.with_row_id().to_arrow().select([ROW_ID, "_score"]).columns, strict=True):
            scores[row_id.as_py()] += score.as_py()
    summed = pa.array([scores[row_id] for row_id in ids], pool.schema.field("_score").type)
    return pool.set_column(pool.schema.get_field_index("_score"), "_score", summed)


def vector(table: Any, table_layout: Layout, embedding: list[float], wanted: Wanted) -> list[Hit]:
    """Nearest rows by cosine distance; score is the distance, lower is closer."""

    def fetch(count: int, columns: list[str]) -> Any:
        searched = table.search(embedding, vector_column_name=table_layout.vector, query_type="vector")
        searched = _narrowed(searched.distance_type("cosine"), wanted, table_layout)
        return searched.select(columns).limit(count).with_row_id().to_arrow()

    return _ranked(table, fetch, "_distance", wanted, table_layout, lower_is_better=True)


def source_array(batch: Any, table_layout: Layout) -> Any:
    """Per row, the first non-blank source column, as `rows.source_of` picks it (null when none)."""
    return _first_present(batch, table_layout.sources)


def document_array(batch: Any, table_layout: Layout) -> Any:
    """Per row, what names its document, as `rows.document_of` picks it (null when nothing does)."""
    return _first_present(batch, table_layout.documents)


def _first_present(batch: Any, columns: tuple[str, ...]) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    result = pa.nulls(batch.num_rows, pa.string())
    for name in reversed(columns):
        column = pc.utf8_trim_whitespace(batch.column(name).cast(pa.string()))
        blank = pc.fill_null(pc.equal(column, ""), True)
        result = pc.if_else(blank, result, column)
    return result


def batches(table: Any, columns: list[str]) -> Iterator[Any]:
    reader = table.search().select(columns).limit(None).to_batches(batch_size=SCAN_BATCH_ROWS)
    yield from reader
