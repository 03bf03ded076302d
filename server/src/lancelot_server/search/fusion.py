"""Relative score fusion: one ranking from several (BM25 hits and vector hits, for `mode: "hybrid"`).

Each ranking's scores are scaled to 0..1 within it (its best item 1, its worst 0: min-max), and an
item's fused score is the weighted sum of its scaled scores over the rankings that hold it. Unlike
reciprocal rank fusion, how far ahead an item is counts, not only its rank: a BM25 hit that scores far
above the rest (a query that names a page's title) stays ahead of a vector list whose distances barely
differ (a model that does not read the query's language), and a close call is settled by both lists.
Measured on the quality sets against reciprocal rank fusion (k = 60): docs/decisions.md, "Hybrid fusion".

    fused_ranking(text_hits, vector_hits, per_document, limit)   # hybrid search's ranking of hits
    fused(rankings, weights, per_document, limit)                 # any rankings of scaled hits (`phrasings.py`)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from lancelot_server.replies import Hit
from lancelot_server.search import core

T = TypeVar("T")

# Hybrid search fuses this many hits (at least) from each of its two lists: deeper than `limit`, so that
# a passage both lists rank moderately high can overtake one that only a single list ranks first; the
# per-document cap applies to the fused list. Measured against 10 and 50 (docs/decisions.md, "Ranking"):
# deeper lists let pages both lists rank middling outvote one list's clear first (a PEP by its number).
HYBRID_DEPTH = 20
# The text list's share of a hybrid score (the vector list's is the rest), chosen by measurement on the quality
# sets: hybrid beats hybrid before issue 13 on every set, Japanese and Chinese ones included, where the
# reciprocal rank fusion it replaced fell behind; 0.65 since text search weighs document evidence, which made
# its list the stronger (docs/decisions.md, "Hybrid fusion").
TEXT_WEIGHT = 0.65


def _itself(item: Hashable) -> Hashable:
    return item


def scaled(scores: Sequence[float], *, lower_is_better: bool = False, floor: float | None = None) -> list[float]:
    """`scores` (best first) scaled to 0..1: the best 1, the worst 0, or `floor` 0 when given (the score of
    what the list leaves out, when it is known: a BM25 list that holds every match leaves out only rows that
    score 0, so its last hit keeps the share of the first's score it has). All equal (or one) are all 1."""
    if not scores:
        return []
    best = min(scores) if lower_is_better else max(scores)
    worst = floor if floor is not None else max(scores) if lower_is_better else min(scores)
    if best == worst:
        return [1.0] * len(scores)
    return [(score - worst) / (best - worst) for score in scores]


def relative_score_fusion(
    rankings: Sequence[Sequence[tuple[T, float]]],
    weights: Sequence[float],
    *,
    key: Callable[[T], Hashable] = _itself,
    limit: int | None = None,
) -> list[tuple[T, float]]:
    """`(item, fused score)` pairs, best first, from rankings of `(item, scaled score)` (best first, see
    `scaled`); items are told apart by `key(item)` (e.g. a hit's id).

    An item keeps its first appearance (the earlier ranking wins), and a repeat within one ranking counts
    once, at its first (best) place. Equal scores go to the item with the better single rank, then to the
    earlier ranking, so the order is deterministic.
    """
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    items: dict[Hashable, T] = {}
    scores: dict[Hashable, float] = {}
    best: dict[Hashable, tuple[int, int]] = {}  # (best rank, ranking it came from) for tie-breaks
    for which, (ranking, weight) in enumerate(zip(rankings, weights, strict=True)):
        seen: set[Hashable] = set()
        for rank, (item, score) in enumerate(ranking, start=1):
            ident = key(item)
            if ident in seen:
                continue
            seen = seen | {ident}
            items.setdefault(ident, item)
            scores[ident] = scores.get(ident, 0.0) + weight * score
            best[ident] = min(best.get(ident, (rank, which)), (rank, which))
    order = sorted(scores, key=lambda ident: (-scores[ident], best[ident]))
    if limit is not None:
        order = order[: max(0, limit)]
    return [(items[ident], scores[ident]) for ident in order]


def _source_of_hit(hit: Hit) -> str | None:
    return hit["source"]


def fused_ranking(
    matched: list[Hit],
    nearest: list[Hit],
    per_document: int | None,
    limit: int,
    *,
    every_match: bool = False,
    document: Callable[[Hit], str | None] = _source_of_hit,
) -> list[tuple[Hit, float]]:
    """Text and vector hits fused by relative score, at most `per_document` per document, best first.

    With one passage per document, documents are ranked: each list keeps its best passage of a page and a
    page's entries in both lists fuse (it is shown by its text-search passage when it has one), so its many
    middling passages cannot outvote another page's best one. With a higher cap, passages are fused and the
    fused ranking is capped. Text scores count `TEXT_WEIGHT`, vector scores the rest. `every_match`: the text
    list holds every passage text search matches (its scores are then scaled from 0, what the others score).
    `document(hit)` names a hit's document (by default its source; a hit without one is a document of its own).
    """
    lists = [matched, nearest]
    if per_document == 1:
        lists = [core.capped(hits, 1, len(hits), document) for hits in lists]
    # BM25 and substring scores: higher is better, and 0 for what does not match; distances: lower is better.
    text = scored_list(lists[0], floor=0.0 if every_match else None)
    vector = scored_list(lists[1], lower_is_better=True)
    return fused([text, vector], (TEXT_WEIGHT, 1 - TEXT_WEIGHT), per_document, limit, document)


def fused(
    rankings: Sequence[Sequence[tuple[Hit, float]]],
    weights: Sequence[float],
    per_document: int | None,
    limit: int,
    document: Callable[[Hit], str | None] = _source_of_hit,
) -> list[tuple[Hit, float]]:
    """Rankings of `(hit, scaled score)` fused by relative score, at most `per_document` per document, best first:
    with one passage per document, a document's entries fuse (`same(per_document, document)`)."""
    ranked = relative_score_fusion(rankings, weights, key=same(per_document, document))
    return core.capped(ranked, per_document, limit, lambda fused: document(fused[0]))


def same(per_document: int | None, document: Callable[[Hit], str | None]) -> Callable[[Hit], Hashable]:
    """What fusion counts as one item: the document, with one passage per document; else the passage."""
    return functools.partial(_page, document) if per_document == 1 else _identity


def scored_list(
    hits: list[Hit], *, lower_is_better: bool = False, floor: float | None = None
) -> list[tuple[Hit, float]]:
    """`hits` (best first) with their scores `scaled`."""
    scores = scaled([hit["score"] for hit in hits], lower_is_better=lower_is_better, floor=floor)
    return list(zip(hits, scores, strict=True))


def _page(document: Callable[[Hit], str | None], hit: Hit) -> tuple[Any, ...]:
    """What makes two hits the same document (a hit without one is a document of its own)."""
    named = document(hit)
    return (named,) if named is not None else _identity(hit)


def _identity(hit: Hit) -> tuple[Any, ...]:
    """What makes two hits the same row: its id, or (tables without one) its source, heading and text."""
    return (hit["id"],) if hit["id"] is not None else (hit["source"], hit["heading"], hit["text"])
