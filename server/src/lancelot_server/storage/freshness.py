"""How current a table is, for lancedb_status: when and from what it was built, what it holds, and how much
of it the full-text index covers.

    freshness(handle, table_layout) -> Freshness

Everything here is read from the table's manifest, its stamp and its index statistics, never by a scan:
the documents are counted as the rows of their first passage (`passage = 0`, a B-tree lookup), so the
status stays as cheap on 100,000 passages as on ten. Rows added since the index was last built (an
incremental rebuild's delta that has not been folded in, or a table another tool appended to) are
searched without the index, by a scan of those rows: `fullText.unindexedRows` says how many.
"""

from __future__ import annotations

from typing import Any

from lancelot_server.replies import Coverage, Freshness
from lancelot_server.storage.store import Damage, Layout


def freshness(handle: Any, table_layout: Layout, rows: int, found: Damage) -> Freshness:
    """`handle`: the open table; `rows`: its row count (already counted by the caller); `found`: its damage,
    if any (a lost index on the passage numbers leaves the documents uncounted rather than the status failing)."""
    stamped = table_layout.stamped
    # Only the indexer's own tables (stamped) are sure to number passages from 0 in an integer column.
    numbered = table_layout.passage if stamped.get("layout_version") else None
    if numbered is not None and found.index_broken(numbered):
        numbered = None
    return Freshness(
        builtAt=stamped.get("indexed_at") or None,
        source=stamped.get("source") or None,
        version=int(handle.version),
        documents=handle.count_rows(f"{numbered} = 0") if numbered else None,
        passages=rows,
        fullText=coverage(handle, table_layout.text),
    )


def coverage(handle: Any, text_column: str) -> Coverage | None:
    """What the full-text index on `text_column` covers, or None when there is none."""
    for index in handle.list_indices():
        if index.index_type == "FTS" and list(index.columns) == [text_column]:
            indexed, unindexed = index.num_indexed_rows, index.num_unindexed_rows
            if indexed is None or unindexed is None:  # statistics Lance could not read: say nothing rather than 0
                return None
            return Coverage(indexedRows=int(indexed), unindexedRows=int(unindexed))
    return None
