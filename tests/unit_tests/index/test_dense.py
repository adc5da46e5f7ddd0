"""Dense vectors: memory-mapped, searched exactly, deleted rows left out, ties by row."""

from __future__ import annotations

import numpy as np

import sealgraph.index._dense as dense_module
from sealgraph.index._dense import DenseIndex, top_rows


def unit(rows):
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_saved_index_is_memory_mapped_and_searched_exactly(tmp_path):
    vectors = unit(np.random.default_rng(0).standard_normal((500, 16)))
    DenseIndex(vectors).save(tmp_path)
    loaded = DenseIndex.load(tmp_path)
    assert isinstance(loaded.vectors, np.memmap) and not loaded.vectors.flags.writeable
    query = vectors[7]
    expected = sorted(range(500), key=lambda r: (-float(vectors[r] @ query), r))[:10]
    assert [row for row, _ in loaded.search(query, 10)] == expected
    assert loaded.search(query, 1)[0][0] == 7


def test_scores_do_not_depend_on_the_block_size(tmp_path, monkeypatch):
    vectors = unit(np.random.default_rng(1).standard_normal((300, 8)))
    whole = DenseIndex(vectors).scores(vectors[0])
    monkeypatch.setattr(dense_module, "_BLOCK_ROWS", 7)
    np.testing.assert_array_equal(DenseIndex(vectors).scores(vectors[0]), whole)


def test_deleted_rows_are_left_out_and_ties_go_to_the_lower_row():
    vectors = unit([[1, 0], [1, 0], [0, 1], [1, 0]])
    index = DenseIndex(vectors)
    assert [r for r, _ in index.search(np.array([1, 0]), 3)] == [0, 1, 3]
    live = np.array([False, True, True, True])
    assert [r for r, _ in index.search(np.array([1, 0]), 2, live)] == [1, 3]
    assert top_rows(np.array([0.5, -np.inf, 0.5]), 5) == [(0, 0.5), (2, 0.5)]
