"""Relevant segment extraction: capped maximum-sum segments (Kadane) on hand-made values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sealgraph.packing.segments import Segment, max_sum_segment, max_sum_segments


def brute_force(values, max_length=None, min_value=0.0):
    """Best (sum, end, length) by exhaustive search, same tie rule: earliest end, then shortest."""
    best = None
    for end in range(1, len(values) + 1):
        for start in range(end - 1, -1, -1):
            if max_length is not None and end - start > max_length:
                break
            total = sum(values[start:end])
            if total > min_value and (best is None or total > best[0]):
                best = (total, start, end)
    return best


def test_seed_example_finds_the_whole_relevant_run():
    values = [-0.1, 0.4, 0.5, 0.3, -0.2, 0.1, 0.6, 0.4, -0.3]
    seg = max_sum_segment(values)
    assert (seg.start, seg.end) == (1, 8)
    assert seg.value == pytest.approx(2.1)


def test_all_negative_values_give_no_segment():
    assert max_sum_segment([-0.5, -0.1, -2.0]) is None
    assert max_sum_segments([-0.5, -0.1, -2.0]) == []


def test_zero_sum_is_not_a_segment():
    assert max_sum_segment([0.0, 0.0]) is None
    assert max_sum_segment([1.0, -1.0], min_value=1.0) is None


def test_empty_values_give_no_segment():
    assert max_sum_segment([]) is None
    assert max_sum_segments([]) == []


def test_max_length_caps_the_segment_and_finds_the_best_capped_one():
    values = [1.0, 1.0, 1.0, -5.0, 2.5]
    assert max_sum_segment(values) == Segment(0, 3, 3.0)
    # With at most 2 units, [0, 2) sums to 2.0 but the lone 2.5 beats it.
    assert max_sum_segment(values, max_length=2) == Segment(4, 5, 2.5)
    # A cap of 1 keeps the single best unit.
    assert max_sum_segment([1.0, 3.0, 2.0], max_length=1) == Segment(1, 2, 3.0)


def test_max_length_slides_the_window_instead_of_skipping_it():
    # A naive "skip when too long" loop never reports [3, 5): its running sum
    # started at 0 and is always longer than the cap by the time it peaks.
    values = [1.0, 1.0, 1.0, 4.0, 4.0]
    assert max_sum_segment(values, max_length=2) == Segment(3, 5, 8.0)


def test_ties_go_to_the_earliest_end_then_the_shortest():
    assert max_sum_segment([2.0, -1.0, 1.0, 0.0, 2.0]) == Segment(0, 5, 4.0)
    assert max_sum_segment([3.0, -3.0, 3.0]) == Segment(0, 1, 3.0)
    assert max_sum_segment([0.0, 2.0]) == Segment(1, 2, 2.0)


def test_invalid_max_length_is_rejected():
    with pytest.raises(ValueError):
        max_sum_segment([1.0], max_length=0)


def test_several_segments_per_document_best_first():
    values = [0.5, 0.5, -2.0, 1.5, -3.0, 0.2]
    segs = max_sum_segments(values)
    assert segs == [Segment(3, 4, 1.5), Segment(0, 2, 1.0), Segment(5, 6, 0.2)]
    assert max_sum_segments(values, max_segments=2) == segs[:2]


def test_segments_never_cross_breaks():
    values = [1.0, 1.0, 1.0, 1.0]
    segs = max_sum_segments(values, breaks=[2])
    assert sorted((s.start, s.end) for s in segs) == [(0, 2), (2, 4)]


def test_a_long_positive_run_is_cut_into_capped_segments():
    segs = max_sum_segments([1.0] * 5, max_length=2)
    assert sorted((s.start, s.end) for s in segs) == [(0, 2), (2, 4), (4, 5)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-5, 5), max_size=14),
    st.one_of(st.none(), st.integers(1, 6)),
)
def test_max_sum_segment_matches_brute_force(ints, max_length):
    values = [float(v) for v in ints]
    seg = max_sum_segment(values, max_length)
    expected = brute_force(values, max_length)
    if expected is None:
        assert seg is None
    else:
        assert (seg.value, seg.start, seg.end) == expected
        assert seg.value == sum(values[seg.start : seg.end])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-4, 4), max_size=16), st.integers(1, 5))
def test_max_sum_segments_are_disjoint_positive_and_capped(ints, max_length):
    values = [float(v) for v in ints]
    segs = max_sum_segments(values, max_length=max_length)
    covered = set()
    for seg in segs:
        assert seg.value > 0
        assert 1 <= len(seg) <= max_length
        assert seg.value == sum(values[seg.start : seg.end])
        units = set(range(seg.start, seg.end))
        assert not units & covered
        covered |= units
    assert [s.value for s in segs] == sorted((s.value for s in segs), reverse=True)
    # Every positive unit ends up in some segment: nothing positive is left behind.
    assert all(i in covered for i, v in enumerate(values) if v > 0)
