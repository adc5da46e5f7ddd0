"""Relevant segment extraction: maximum-sum contiguous segments of unit values.

Every unit (sentence) gets a value = fused relevance − threshold, so weakly relevant
units are negative and a segment only extends through them when the relevant units
on the far side pay for it. The best segment is the maximum-sum contiguous subarray
(Kadane) whose length is at most ``max_length``; several segments per document are
found by taking the best one and searching the pieces left and right of it again.

Choices (the seed's loop only skips over-long candidates, which can miss the best
capped segment): the capped maximum is exact, computed over prefix sums with a
monotone deque of candidate starts in O(n). Ties go to the segment that ends first,
then to the shorter one, so results are deterministic.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Segment", "max_sum_segment", "max_sum_segments"]


@dataclass(frozen=True, slots=True, order=True)
class Segment:
    """A half-open range ``[start, end)`` of units and the sum of their values."""

    start: int
    """Index of the first unit."""
    end: int
    """Index one past the last unit."""
    value: float
    """Sum of the unit values in the range."""

    def __len__(self) -> int:
        return self.end - self.start


def max_sum_segment(
    values: Sequence[float],
    max_length: int | None = None,
    *,
    lo: int = 0,
    hi: int | None = None,
    min_value: float = 0.0,
) -> Segment | None:
    """Return the maximum-sum contiguous segment of ``values[lo:hi]``.

    Args:
        values: Unit values (relevance minus threshold).
        max_length: Most units in the segment; None for no cap.
        lo: First index searched.
        hi: One past the last index searched (default ``len(values)``).
        min_value: The segment's sum must be strictly greater than this.

    Returns:
        The best segment (indices refer to ``values``), or None when no segment has a
        sum above ``min_value`` (for example when every value is negative).

    """
    hi = len(values) if hi is None else hi
    if max_length is not None and max_length < 1:
        raise ValueError(f"max_length must be >= 1, got {max_length}")
    cap = (hi - lo) if max_length is None else max_length
    best: Segment | None = None
    best_value = min_value
    # prefix[i] = sum(values[lo:lo + i]); a segment [s, e) sums to prefix[e] - prefix[s].
    prefix = [0.0]
    for v in values[lo:hi]:
        prefix.append(prefix[-1] + v)
    starts: deque[int] = deque()  # candidate starts, prefix values increasing
    for e in range(1, len(prefix)):
        s_new = e - 1
        # Drop starts whose prefix is not lower than the new one: the new start is
        # at least as good and yields a shorter segment.
        while starts and prefix[starts[-1]] >= prefix[s_new]:
            starts.pop()
        starts.append(s_new)
        while starts[0] < e - cap:
            starts.popleft()
        total = prefix[e] - prefix[starts[0]]
        if total > best_value:
            best_value = total
            best = Segment(lo + starts[0], lo + e, total)
    if best is None:
        return None
    # Report the sum of the values themselves, free of prefix-sum rounding.
    value = math.fsum(values[best.start : best.end])
    return Segment(best.start, best.end, value) if value > min_value else None


def max_sum_segments(
    values: Sequence[float],
    *,
    max_length: int | None = None,
    max_segments: int | None = None,
    breaks: Sequence[int] = (),
    min_value: float = 0.0,
) -> list[Segment]:
    """Return several non-overlapping maximum-sum segments, best first.

    The best segment is taken, then the pieces to its left and right are searched
    again, and so on, until ``max_segments`` are found or no piece has a segment
    with a sum above ``min_value``.

    Args:
        values: Unit values (relevance minus threshold).
        max_length: Most units in one segment; None for no cap.
        max_segments: Most segments returned; None for no limit.
        breaks: Indices where a new piece starts: no segment crosses them (used for
            gaps between non-adjacent chunks and section changes).
        min_value: A segment's sum must be strictly greater than this.

    Returns:
        Segments sorted by decreasing value (ties: earlier start first).

    """
    limit = len(values) if max_segments is None else max_segments
    bounds = sorted({0, len(values), *(b for b in breaks if 0 < b < len(values))})
    # Heap of (-value, start, segment, piece_lo, piece_hi): the best segment of each piece.
    heap: list[tuple[float, int, Segment, int, int]] = []

    def push(lo: int, hi: int) -> None:
        if hi > lo:
            seg = max_sum_segment(values, max_length, lo=lo, hi=hi, min_value=min_value)
            if seg is not None:
                heapq.heappush(heap, (-seg.value, seg.start, seg, lo, hi))

    for lo, hi in itertools.pairwise(bounds):
        push(lo, hi)
    found: list[Segment] = []
    while heap and len(found) < limit:
        _, _, seg, lo, hi = heapq.heappop(heap)
        found.append(seg)
        push(lo, seg.start)
        push(seg.end, hi)
    return found
