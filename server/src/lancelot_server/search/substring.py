"""The substring match: text search's fallback when a table has no full-text index or BM25 finds nothing
(an identifier the tokenizer splits, part of a word, a word of another script).

The words are data, never SQL: lookups filter with pyarrow expressions holding them as literal values, and
scans match in Arrow on literal strings; the path filter is such an expression or runs in Arrow, and the
metadata filters (`Wanted.where`) are such an expression, run by Lance in lookups and scans alike.
"""

from __future__ import annotations

import itertools
import operator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lancelot_schema import layout
from lancelot_server.replies import Hit
from lancelot_server.search.core import (
    SCAN_BATCH_ROWS,
    Wanted,
    capped,
    document_array,
    query_words,
    read_hits,
    source_array,
    starting_with,
)
from lancelot_server.search.filters import balanced
from lancelot_server.storage.store import Layout, damage

# The substring match runs when BM25 finds nothing: an identifier, part of a word, a word of another script.
# A 2,000-character query can hold hundreds of words and each costs a lookup or a pass over the text, so it
# uses the first few; and each word counts in at most its first MAX_WORD_PASSAGES passages, so a fragment found
# nearly everywhere is never scored in every passage. Chosen by measurement: docs/decisions.md, "Search cost".
MAX_SUBSTRING_WORDS = 8
MAX_WORD_PASSAGES = 1000
# Substring matches at once; more wait their turn while every other search goes on.
MAX_MATCHING = 2
# Trigrams of a word asked of the n-gram index, spread over it (each in its 8 spellings): the rows found are
# checked for the word itself, so a few narrow enough, and every term costs pyarrow's Substrait encoding and
# Lance's recheck of each row found (docs/decisions.md, "Search cost", measured with bench/lookup.py).
LOOKUP_TRIGRAMS = 3
# Rows a lookup reads at a time: Lance rechecks a whole batch of the rows the index found before handing it over,
# and most words need only their first thousand (docs/decisions.md, "Search cost").
LOOKUP_BATCH_ROWS = 1024
ROW_ID, SCORE, ORDER = "_rowid", "_score", "_order"

_matching = ThreadPoolExecutor(MAX_MATCHING, thread_name_prefix="lancelot-substring")


def search(table: Any, table_layout: Layout, query: str, wanted: Wanted) -> list[Hit]:
    """Case-insensitive literal match of the query's first `MAX_SUBSTRING_WORDS` words; higher scores are better.

    Score: the share of those words found, times n/(n+1) for their n occurrences in all (0.5 for one word found
    once, 0.75 three times; never 1). Equal scores come in the order of their ids.

    The rows scored are, for each word, the first `MAX_WORD_PASSAGES` (in table order, under `prefix`) that hold
    it, each scored on all the words: so a fragment found nearly everywhere is not scored in every passage, and
    every passage a rarer word finds is ranked. A word is looked up in the table's n-gram index when it has one and the
    word has three ASCII letters or digits in a row; the other words are found by one scan of the text column.
    Only the best `limit` rows are read whole.
    """
    words = query_words(query)[:MAX_SUBSTRING_WORDS]
    if not words:
        return []
    return _read(table, table_layout, _matching.submit(_best, table, table_layout, words, wanted).result())


def _best(table: Any, table_layout: Layout, words: list[str], wanted: Wanted) -> Any:
    found = _matches(table, table_layout, words, wanted)
    return _top(_scored(found, table_layout, words), wanted, table_layout)


def _matches(table: Any, table_layout: Layout, words: list[str], wanted: Wanted) -> Any:
    """The rows to score (text, id, sources and row id), each once."""
    import pyarrow as pa
    import pyarrow.compute as pc

    prefix = wanted.prefix

    named = (table_layout.text, table_layout.id, *table_layout.documents, *table_layout.sources)
    columns = list(dict.fromkeys(name for name in named if name))
    if wanted.where is not None:
        columns += [name for name in layout.FILTER_COLUMNS if name not in columns]  # for `_looked_up`'s filter
    looked_up = [word for word in words if _trigrams(word)] if _ngram_indexed(table, table_layout, prefix) else []
    try:
        found = [_looked_up(table, table_layout, columns, word, wanted) for word in looked_up]
    except Exception:
        # The index's files are gone (a partial copy): scan, as text search does when BM25's index is lost.
        if not damage(table).index_broken(table_layout.text):
            raise
        looked_up, found = [], []
    scanned = [word for word in words if word not in looked_up]
    if scanned:
        found.append(_scanned(table, table_layout, columns, scanned, wanted))
    rows = pa.concat_tables(found)
    ids = rows.column(ROW_ID)
    return rows.take(pc.index_in(pc.unique(ids), value_set=ids))


def _ngram_indexed(table: Any, table_layout: Layout, prefix: str | None) -> bool:
    """Whether the table has an n-gram index on its text (and a `prefix` applies to `path`, its only source)."""
    if prefix is not None and table_layout.sources != (layout.PATH,):
        return False
    return any(index.index_type == "NGram" and index.columns == [table_layout.text] for index in table.list_indices())


def _trigrams(word: str) -> list[str]:
    """The distinct runs of three ASCII letters or digits in `word`: all the n-gram index holds (lower-cased)."""
    grams: list[str] = []
    for start in range(len(word) - 2):
        gram = word[start : start + 3]
        if gram.isascii() and gram.isalnum() and gram not in grams:
            grams.append(gram)
    return grams


def _spread(grams: list[str], count: int) -> list[str]:
    """At most `count` of `grams`: the first, the last, the others evenly between."""
    if len(grams) <= count:
        return grams
    if count == 1:
        return grams[:1]
    return [grams[round(index * (len(grams) - 1) / (count - 1))] for index in range(count)]


def _looked_up(table: Any, table_layout: Layout, columns: list[str], word: str, wanted: Wanted) -> Any:
    """The first `MAX_WORD_PASSAGES` rows whose text contains `word` in any case, through the n-gram index."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.field(table_layout.text)
    # The index answers `contains` for each trigram in any case (it lower-cases; `contains` is then checked as
    # written, so every spelling is asked for): only rows holding the `LOOKUP_TRIGRAMS` asked are read, then
    # checked here for the word itself (Substrait, which carries the condition to Lance, has no lower-casing).
    held = []
    for gram in _spread(_trigrams(word), LOOKUP_TRIGRAMS):
        spellings = itertools.product(*((char, char.upper()) if char.isalpha() else (char,) for char in gram))
        held.append(balanced([pc.match_substring(text, "".join(s)) for s in spellings], operator.or_))
    where = balanced(held, operator.and_)
    if wanted.prefix is not None:
        where = where & starting_with(pc.field(layout.PATH), wanted.prefix)
    kept: list[Any] = []
    left = MAX_WORD_PASSAGES
    reader = table.search().where(where).select(columns).with_row_id(True).limit(None).to_batches(LOOKUP_BATCH_ROWS)
    try:
        for batch in reader:
            if wanted.where is not None:
                # Here, not in the lookup's condition: joined to the index's, it made the lookup up to twice as slow.
                batch = batch.filter(wanted.where)
            holds = pc.fill_null(pc.match_substring(batch.column(table_layout.text), word, ignore_case=True), False)
            kept.append(batch.filter(holds).slice(0, left))
            left -= kept[-1].num_rows
            if not left:
                break
    finally:
        reader.close()
    return pa.Table.from_batches(kept, schema=reader.schema)


def _scanned(table: Any, table_layout: Layout, columns: list[str], words: list[str], wanted: Wanted) -> Any:
    """Each word's first `MAX_WORD_PASSAGES` rows (under `prefix`, where `where` holds), by one pass over the text
    that stops once every word has them: per batch, one case-insensitive regex of all the words finds the rows
    holding any."""
    import pyarrow as pa
    import pyarrow.compute as pc

    prefix = wanted.prefix
    left = dict.fromkeys(words, MAX_WORD_PASSAGES)
    kept: list[Any] = []
    query = table.search() if wanted.where is None else table.search().where(wanted.where)
    reader = query.select(columns).with_row_id(True).limit(None).to_batches(batch_size=SCAN_BATCH_ROWS)
    try:
        for batch in reader:
            live = [word for word, count in left.items() if count]
            if not live:
                break
            if prefix is not None:
                batch = batch.filter(pc.fill_null(pc.starts_with(source_array(batch, table_layout), prefix), False))
            pattern = "|".join("".join(map(_literal, word)) for word in live)
            batch = batch.filter(pc.match_substring_regex(batch.column(table_layout.text), pattern, ignore_case=True))
            firsts = []
            for word in live:
                holds = pc.match_substring(batch.column(table_layout.text), word, ignore_case=True)
                firsts.append(pc.indices_nonzero(pc.fill_null(holds, False))[: left[word]])
                left[word] -= len(firsts[-1])
            kept.append(batch.take(pc.unique(pa.concat_arrays(firsts))))
    finally:
        reader.close()
    return pa.Table.from_batches(kept, schema=reader.schema)


def _literal(char: str) -> str:
    """`char` as RE2 reads it literally (as RE2's QuoteMeta writes it, which Arrow's `ignore_case` matching uses)."""
    if char == "\x00":
        return "\\x00"
    return char if not char.isascii() or char.isalnum() or char == "_" else "\\" + char


def _scored(found: Any, table_layout: Layout, words: list[str]) -> Any:
    """`found` with `_score`, less the rows that hold none of `words` as Arrow matches them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = found.column(table_layout.text)
    share: Any = pa.nulls(found.num_rows, pa.float64()).fill_null(0.0)
    times: Any = share
    for word in words:
        count = pc.cast(pc.fill_null(pc.count_substring(text, word, ignore_case=True), 0), pa.float64())
        share = pc.add(share, pc.cast(pc.greater(count, 0), pa.float64()))
        times = pc.add(times, count)
    # The share of the query's words found, scaled by how often they occur: n occurrences keep n/(n+1) of it,
    # so more words found always ranks higher, and among equals the passage that says them more often.
    score = pc.multiply(pc.divide(share, float(len(words))), pc.divide(times, pc.add(times, 1.0)))
    return found.append_column(SCORE, score).filter(pc.greater(share, 0))


def _top(scored: Any, wanted: Wanted, table_layout: Layout) -> Any:
    """The best `limit` rows of `scored`, at most `per_document` of each document; equal scores by id."""
    import pyarrow as pa
    import pyarrow.compute as pc

    keys = [(SCORE, "descending")]
    if table_layout.id is not None:
        scored = scored.append_column(ORDER, pc.cast(scored.column(table_layout.id), pa.string()))
        keys.append((ORDER, "ascending"))
    order = pc.sort_indices(scored, sort_keys=[*keys, (ROW_ID, "ascending")])
    if wanted.per_document is None:
        return scored.take(order[: wanted.limit])
    documents = document_array(scored, table_layout).take(order).to_pylist()
    chosen = capped(list(zip(order.to_pylist(), documents, strict=True)), wanted.per_document, wanted.limit, _second)
    return scored.take(pa.array([index for index, _ in chosen], pa.int64()))


def _second(pair: tuple[Any, Any]) -> Any:
    return pair[1]


def _read(table: Any, table_layout: Layout, top: Any) -> list[Hit]:
    """The hits of the rows in `top`, read whole, in order (the table is pinned to the version they were
    scored in: `LanceTable.pinned`)."""
    ranked = zip(top.column(ROW_ID).to_pylist(), top.column(SCORE).to_pylist(), strict=True)
    return read_hits(table, table_layout, list(ranked))
