"""The table's indexes after a write: full text (BM25) on text, title and heading; B-trees on path and
passage; a bitmap on file_type; an n-gram index on the text of a large table. Called by `write.py` only.

After a merge the rows it added are not in the indexes yet (LanceDB scans them meanwhile, so search works
at every moment). When they are a small share of the table, each index gets a delta segment of its own
(`optimize_indices(num_indices_to_merge=0)`), which never costs more than merging them in. Deltas pile
up, and the rows they replaced stay in the older segments (filtered out at search time, but counted in
BM25's statistics), so a large change, or the `MAX_DELTAS`-th delta, folds everything into one segment per
index and compacts the data files (docs/decisions.md, "Incremental rebuilds").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import lance

from lancelot_indexer import memory
from lancelot_schema import layout

# A merge that changed at most this share of the table's rows (inserted, updated and deleted) is folded
# into the indexes as delta segments.
SMALL_SHARE = 0.10
# Segments an index may have before the next merge folds them into one.
MAX_DELTAS = 8
NGRAM_INDEX = "text_ngram_idx"
# The most rows a data file holds, as written (`write.apply`) and as compacted (Lance's default: 1,048,576). Each
# object of a table on a bucket then stays a few tens of MB (about 18 MB of the PostgreSQL manual's passages),
# which an S3-compatible server that reads a whole object to answer a ranged GET (moto) serves at speed, at no cost
# measured from a folder (docs/decisions.md, "Data files of at most 32,768 rows").
ROWS_PER_FILE = 32_768


def _full_text_index(dataset: lance.LanceDataset, column: str) -> Any:
    """The index on `column` other than an n-gram one (which `update_scalar_indexes` keeps), if any."""
    return next(
        (
            index
            for index in dataset.describe_indices()
            if index.field_names == [column] and not index.type_url.endswith("NGramIndexDetails")
        ),
        None,
    )


def segments(dataset: lance.LanceDataset) -> int:
    """The most segments any index of the table has (1 when it was made whole or folded)."""
    return max((len(index.segments) for index in dataset.describe_indices()), default=0)


def small_change(dataset: lance.LanceDataset, changed_rows: int) -> bool:
    """Whether a merge that changed `changed_rows` rows is folded into the indexes as deltas."""
    return changed_rows <= SMALL_SHARE * dataset.count_rows() and segments(dataset) < MAX_DELTAS


def update_fts(dataset: lance.LanceDataset, params: Mapping[str, Any] | None, *, compact: bool) -> bool:
    """The full-text indexes on text, title and heading, with the tokenizer options `params` (made again
    when an index was built with others: another language); none when `params` is None. `compact` first
    folds every index into one segment and rewrites the fragments the merges left sparse."""
    indexes = {column: _full_text_index(dataset, column) for column in layout.FULL_TEXT_COLUMNS}
    if params is None:
        for index in indexes.values():
            if index is not None and index.type_url.endswith("InvertedIndexDetails"):
                dataset.drop_index(index.name)
    if compact:
        deltas = segments(dataset)
        if deltas > 1:
            # Fragments covered by different segments are never compacted together: one segment first.
            dataset.optimize.optimize_indices(num_indices_to_merge=deltas)
        # Rewrites fragments left sparse by the merges (what keeps repeated rebuilds small).
        dataset.optimize.compact_files(target_rows_per_fragment=ROWS_PER_FILE)
    if params is None:
        return False
    for column, index in indexes.items():
        details = index.details if index is not None and index.type_url.endswith("InvertedIndexDetails") else {}
        if any(details.get(key) != value for key, value in params.items()):
            # Named as lancedb names them (`text_idx`), so that `table.index_stats("text_idx")` finds them.
            name = index.name if index is not None else f"{column}_idx"
            dataset.create_scalar_index(column, "INVERTED", name=name, replace=True, **params)
            memory.trim()  # each build's peak, given back before the next
    return True


def update_ngram(dataset: lance.LanceDataset, *, wanted: bool, min_rows: int) -> None:
    """With `wanted` (the table has full-text indexes), a table of `min_rows` rows or more gets the n-gram
    index on its text, kept once made; without, it is dropped with them. Made before the full-text
    indexes: its build is the largest peak of memory of a run, and before them it does not stack on what
    their builds leave held (docs/decisions.md, "Incremental rebuilds and bounded memory")."""
    substrings = [index for index in dataset.describe_indices() if index.type_url.endswith("NGramIndexDetails")]
    if not wanted:
        for index in substrings:
            dataset.drop_index(index.name)
    elif not substrings and dataset.count_rows() >= min_rows:
        dataset.create_scalar_index(layout.TEXT, "NGRAM", name=NGRAM_INDEX)
        memory.trim()


def update_scalar_indexes(dataset: lance.LanceDataset, *, fold: str | None) -> None:
    """B-tree indexes on the columns a document read filters on (`path`, `passage`), so that reading one
    document or one passage's neighbours looks rows up instead of scanning the table, and a bitmap index on
    `file_type`, which a search filtered by file type looks rows up in (at a million passages, 76 ms a search
    without it, 9–15 ms with it: docs/decisions.md, "A million passages"). An overwrite drops
    them (made again here: cheap, docs/decisions.md). `fold`: after a merge, how the rows it
    added join every index, the text index too: "delta" (a segment of their own) or "merge" (into the
    existing segment)."""
    indexed = {tuple(index.field_names) for index in dataset.describe_indices()}
    kinds: dict[str, Literal["BTREE", "BITMAP"]] = {column: "BTREE" for column in layout.SCALAR_INDEXED_COLUMNS}
    kinds |= {column: "BITMAP" for column in layout.BITMAP_INDEXED_COLUMNS}
    for column, kind in kinds.items():
        if (column,) not in indexed and column in dataset.schema.names:
            dataset.create_scalar_index(column, kind, name=f"{column}_idx")
    if fold == "delta":
        dataset.optimize.optimize_indices(num_indices_to_merge=0)
    elif fold == "merge":
        dataset.optimize.optimize_indices()
