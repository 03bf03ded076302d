"""Reciprocal rank fusion: one ranking from several (BM25 hits and vector hits, for `mode: "hybrid"`).

An item's fused score is the sum over the rankings that hold it of weight / (k + rank), rank counted
from 1. Only ranks matter, so BM25 scores (higher is better) and vector distances (lower is better)
need no common scale. k = 60 is the constant of Cormack, Clarke and Büttcher (SIGIR 2009): it keeps
the head of one list from drowning what both lists agree on.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")

DEFAULT_K = 60


def _identity(item: Hashable) -> Hashable:
    return item


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[T]],
    *,
    key: Callable[[T], Hashable] = _identity,
    k: float = DEFAULT_K,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
) -> list[tuple[T, float]]:
    """`(item, fused score)` pairs, best first; items are told apart by `key(item)` (e.g. a hit's id).

    An item keeps its first appearance (the earlier ranking wins), and a repeat within one ranking
    counts once, at its best rank. Equal scores go to the item with the better single rank, then to
    the earlier ranking, so the order is deterministic.
    """
    if k <= 0:
        raise ValueError("k must be positive")
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    items: dict[Hashable, T] = {}
    scores: dict[Hashable, float] = {}
    best: dict[Hashable, tuple[int, int]] = {}  # (best rank, ranking it came from) for tie-breaks
    for which, (ranking, weight) in enumerate(zip(rankings, weights, strict=True)):
        seen: set[Hashable] = set()
        for rank, item in enumerate(ranking, start=1):
            ident = key(item)
            if ident in seen:
                continue
            seen.add(ident)
            items.setdefault(ident, item)
            scores[ident] = scores.get(ident, 0.0) + weight / (k + rank)
            best[ident] = min(best.get(ident, (rank, which)), (rank, which))
    order = sorted(scores, key=lambda ident: (-scores[ident], best[ident]))
    if limit is not None:
        order = order[: max(0, limit)]
    return [(items[ident], scores[ident]) for ident in order]
