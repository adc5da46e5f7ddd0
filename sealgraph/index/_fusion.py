"""Weighted reciprocal-rank fusion of ranked lists."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

Item = TypeVar("Item", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Item]],
    weights: Sequence[float] | None = None,
    *,
    rrf_k: int = 60,
    k: int | None = None,
) -> list[tuple[Item, float]]:
    """Fuse ranked lists: ``score(x) = Σ_lists w / (rrf_k + rank(x))`` with 1-based ranks.

    Args:
        rankings: Ranked lists, best first; an item appears at most once per list.
        weights: One weight per list (default 1.0 each).
        rrf_k: The RRF constant; larger values flatten the rank differences.
        k: Keep the best ``k`` items (all when None).

    Returns:
        ``(item, fused score)`` pairs by score descending; ties go to the smaller item
        (items must be mutually comparable, e.g. row numbers) so results are stable.

    """
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(rankings)} rankings but {len(weights)} weights")
    fused: dict[Item, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if weight <= 0:
            continue
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (rrf_k + rank)
    ordered = sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))
    return ordered if k is None else ordered[:k]
