"""Relative score fusion: one ranking from several (BM25 hits and vector hits, for `mode: "hybrid"`).

Each ranking's scores are scaled to 0..1 within it (its best item 1, its worst 0: min-max), and an
item's fused score is the weighted sum of its scaled scores over the rankings that hold it. Unlike
reciprocal rank fusion, how far ahead an item is counts, not only its rank: a BM25 hit that scores far
above the rest (a query that names a page's title) stays ahead of a vector list whose distances barely
differ (a model that does not read the query's language), and a close call is settled by both lists.
Measured on the quality sets against reciprocal rank fusion (k = 60): docs/decisions.md, "Hybrid fusion".
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")


def _identity(item: Hashable) -> Hashable:
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
    key: Callable[[T], Hashable] = _identity,
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
