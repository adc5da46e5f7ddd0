"""Dynamic semantic window: growth over coherent neighbours, and merging."""

from __future__ import annotations

import pytest

from sealgraph.packing.window import grow_window, merge_windows


def test_grows_both_ways_while_similarity_holds():
    # units:       0    1    2    3    4    5
    adjacent = [0.2, 0.9, 0.8, 0.9, 0.1]  # sim(i, i+1)
    assert grow_window(2, 3, adjacent, threshold=0.5, max_expand=5) == (1, 5)


def test_threshold_is_inclusive_and_stops_at_the_first_weak_link():
    adjacent = [0.9, 0.5, 0.49, 0.9]
    assert grow_window(2, 3, adjacent, threshold=0.5, max_expand=5) == (0, 3)


def test_growth_uses_the_current_edge_not_the_seed():
    # Unit 0 is far from the seed (2) but close to unit 1, which joined first.
    adjacent = [0.95, 0.9, 0.0]
    assert grow_window(2, 3, adjacent, threshold=0.8, max_expand=3) == (0, 3)


def test_max_expand_limits_each_side():
    adjacent = [1.0] * 9
    assert grow_window(5, 6, adjacent, threshold=0.5, max_expand=2) == (3, 8)
    assert grow_window(5, 6, adjacent, threshold=0.5, max_expand=0) == (5, 6)


def test_a_multi_unit_seed_grows_from_its_edges():
    adjacent = [0.9, 0.0, 0.0, 0.9]
    # Seed [1, 4): left edge 1 joins 0 (0.9); right edge 3 joins 4 (0.9).
    assert grow_window(1, 4, adjacent, threshold=0.5, max_expand=1) == (0, 5)


def test_growth_stays_inside_its_piece():
    adjacent = [1.0] * 5
    assert grow_window(3, 4, adjacent, threshold=0.5, max_expand=5, lo=2, hi=5) == (2, 5)


def test_seed_outside_bounds_is_rejected():
    with pytest.raises(ValueError):
        grow_window(3, 3, [1.0] * 5, threshold=0.5, max_expand=1)
    with pytest.raises(ValueError):
        grow_window(1, 2, [1.0] * 5, threshold=0.5, max_expand=1, lo=2)


def test_merge_overlapping_and_touching_windows():
    assert merge_windows([(4, 6), (0, 2), (1, 3), (3, 4), (8, 9)]) == [(0, 6), (8, 9)]


def test_merge_keeps_disjoint_windows_apart():
    assert merge_windows([(5, 7), (0, 2)]) == [(0, 2), (5, 7)]


def test_merge_does_not_join_windows_that_only_touch_across_a_break():
    assert merge_windows([(0, 2), (2, 4)], breaks=[2]) == [(0, 2), (2, 4)]
    assert merge_windows([(0, 3), (2, 4)], breaks=[2]) == [(0, 4)]
