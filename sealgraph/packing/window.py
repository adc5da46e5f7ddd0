"""Dynamic semantic window: grow a seed left and right while neighbours cohere.

A seed (one unit, or a segment of units) grows one unit at a time towards the left
and towards the right while the similarity between the current edge unit and its
neighbour stays at or above a threshold, up to ``max_expand`` units per side, and
never across a piece boundary (a gap between non-adjacent chunks or a section
change). Overlapping or touching windows are then merged.

Similarities are those of consecutive units, ``adjacent[i] = sim(unit i, unit i+1)``:
the cosine of their embeddings when there are any, else the lexical cohesion of
:func:`sealgraph.packing.scoring.cohesion`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["grow_window", "merge_windows"]


def grow_window(
    start: int,
    end: int,
    adjacent: Sequence[float],
    *,
    threshold: float,
    max_expand: int,
    lo: int = 0,
    hi: int | None = None,
) -> tuple[int, int]:
    """Grow the half-open window ``[start, end)`` over coherent neighbours.

    Args:
        start: First unit of the seed.
        end: One past the last unit of the seed.
        adjacent: ``adjacent[i]`` is the similarity of units ``i`` and ``i + 1``
            (length = number of units − 1).
        threshold: Growth continues while the edge similarity is ≥ this.
        max_expand: Most units added on each side.
        lo: The window never starts before this unit.
        hi: The window never ends after this unit (exclusive; default: all units).

    Returns:
        The grown window ``(start, end)``.

    """
    hi = len(adjacent) + 1 if hi is None else hi
    if not lo <= start < end <= hi:
        raise ValueError(f"seed [{start}, {end}) is not inside [{lo}, {hi})")
    added = 0
    while added < max_expand and start > lo and adjacent[start - 1] >= threshold:
        start -= 1
        added += 1
    added = 0
    while added < max_expand and end < hi and adjacent[end - 1] >= threshold:
        end += 1
        added += 1
    return start, end


def merge_windows(
    windows: Iterable[tuple[int, int]], *, breaks: Sequence[int] = ()
) -> list[tuple[int, int]]:
    """Merge overlapping or touching half-open windows, sorted by start.

    Args:
        windows: ``(start, end)`` pairs.
        breaks: Indices that separate pieces: windows that only touch across a break
            are not merged (a window never crosses one by construction).

    Returns:
        Disjoint windows in increasing order.

    """
    cut = set(breaks)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(windows):
        if merged and (start < merged[-1][1] or (start == merged[-1][1] and start not in cut)):
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
