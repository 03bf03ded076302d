"""Several phrasings of one search (`queries`: keywords, a question, a name), searched one by one and fused.

    phrasings.run(modes, handle, table_layout, Query.several(texts, embedder), mode, wanted) -> Outcome

Each phrasing is searched as one query is (`Modes.run`: the mode asked or the next one down, the path prefix,
filters and per-document cap), at least `HYBRID_DEPTH` hits deep when there are several, and the lists are
fused by relative score with equal weights (`fusion.fused`, the fusion hybrid search uses): each list's scores
scaled to 0..1 within it, so a BM25 list and a distance list compare. Each hit's `queries` names the phrasings
whose lists held it (its document, with one passage per document), by position; its score is the fused
relevance (0..1, higher is better).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from lancelot_server.replies import Hit
from lancelot_server.search.core import Wanted
from lancelot_server.search.fusion import HYBRID_DEPTH, fused, same, scored_list
from lancelot_server.search.modes import Modes, Outcome, Query, joined
from lancelot_server.search.rows import hit_document
from lancelot_server.storage.store import Layout


def run(modes: Modes, handle: Any, table_layout: Layout, queries: list[Query], mode: str, wanted: Wanted) -> Outcome:
    """The fused hits of every phrasing; the search type and text match of the first phrasing, and a note naming
    each phrasing that needed one (or the note once, when all did alike)."""
    # One phrasing has nothing to fuse with: searched as `query` is, so its order is the same (docs/decisions.md).
    deeper = wanted if len(queries) == 1 else replace(wanted, limit=max(wanted.limit, HYBRID_DEPTH))
    outcomes = [modes.run(handle, table_layout, query, mode, deeper) for query in queries]
    # Distances are lower for closer; every other score (BM25, substring share, hybrid relevance) is 0 or more,
    # higher for better, and 0 for what a list leaves out: a hit keeps the share of its list's best score it has.
    rankings = [
        scored_list(hits, lower_is_better=True) if search_type == "vector" else scored_list(hits, floor=0.0)
        for hits, search_type, _, _ in outcomes
    ]
    document = functools.partial(hit_document, table_layout=table_layout)
    chosen = fused(rankings, [1 / len(queries)] * len(queries), wanted.per_document, wanted.limit, document)
    key = same(wanted.per_document, document)
    found = [{key(hit) for hit, _ in ranking} for ranking in rankings]
    hits: list[Hit] = []
    for hit, score in chosen:
        hit = hit.copy()
        hit["score"] = round(score, 6)
        hit["queries"] = [position for position, keys in enumerate(found) if key(hit) in keys]
        hits.append(hit)
    _, search_type, text_match, _ = outcomes[0]
    return hits, search_type, text_match, _note([outcome[3] for outcome in outcomes])


def _note(notes: list[str | None]) -> str | None:
    if len(set(notes)) == 1:
        return notes[0]
    return joined(*(f"Phrasing {position}: {note}" for position, note in enumerate(notes) if note))
