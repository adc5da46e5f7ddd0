"""Dense vectors: memory-mapped, searched by FAISS exactly, deleted rows left out, ties by row."""

from __future__ import annotations

import numpy as np

import sealgraph.index.folder._dense as dense_module
from sealgraph.index.folder._dense import DenseIndex, exact_scores, exact_search


def unit(rows):
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def brute_force(vectors, query, k, live=None):
    scores = vectors.astype(np.float64) @ query.astype(np.float64)
    rows = [r for r in range(len(vectors)) if live is None or live[r]]
    return sorted(rows, key=lambda r: (-scores[r], r))[:k]


def test_a_saved_index_is_memory_mapped_and_searched_exactly(tmp_path):
    vectors = unit(np.random.default_rng(0).standard_normal((500, 16)))
    DenseIndex(vectors).save(tmp_path)
    loaded = DenseIndex.load(tmp_path)
    assert isinstance(loaded.vectors, np.memmap) and not loaded.vectors.flags.writeable
    query = vectors[7]
    assert [row for row, _ in loaded.search(query, 10)] == brute_force(vectors, query, 10)
    assert loaded.search(query, 1)[0][0] == 7


def test_faiss_reads_the_mapped_file_itself(tmp_path, monkeypatch):
    # No copy of the vectors is made for FAISS: it is handed the mapped pages.
    vectors = unit(np.random.default_rng(4).standard_normal((300, 8)))
    DenseIndex(vectors).save(tmp_path)
    loaded = DenseIndex.load(tmp_path)
    seen = []
    real = dense_module._knn_slice

    def spy(part_of, *args):
        seen.append(part_of)
        return real(part_of, *args)

    monkeypatch.setattr(dense_module, "_knn_slice", spy)
    loaded.search(vectors[0], 3)
    assert seen and all(np.shares_memory(part, loaded.vectors) for part in seen)


def test_searching_in_slices_finds_what_one_search_finds(monkeypatch):
    vectors = unit(np.random.default_rng(1).standard_normal((1000, 8)))
    queries = unit(np.random.default_rng(2).standard_normal((6, 8)))
    whole = [DenseIndex(vectors).search(q, 20) for q in queries]
    monkeypatch.setattr(dense_module, "_MIN_SLICE_ROWS", 64)  # a lone query: 7 slices
    monkeypatch.setattr(dense_module, "_pool_size", lambda: 7)
    assert [DenseIndex(vectors).search(q, 20) for q in queries] == whole


def test_a_batch_of_queries_finds_what_each_query_finds():
    vectors = unit(np.random.default_rng(3).standard_normal((2000, 16)))
    queries = unit(np.random.default_rng(5).standard_normal((25, 16)))  # FAISS's BLAS path
    index = DenseIndex(vectors)
    live = np.ones(2000, dtype=bool)
    live[::7] = False
    for mask in (None, live):
        batch = index.search_many(queries, 10, mask)
        assert batch == [index.search(q, 10, mask) for q in queries]
        assert [[r for r, _ in hits] for hits in batch] == [
            brute_force(vectors, q, 10, mask) for q in queries
        ]


def test_a_rows_score_does_not_depend_on_the_rows_scored_with_it():
    vectors = unit(np.random.default_rng(6).standard_normal((200, 384)))
    query = vectors[3]
    every = exact_scores(vectors, np.arange(200), query)
    some = exact_scores(vectors, np.array([150, 3, 77]), query)
    assert some.tolist() == [every[150], every[3], every[77]]


def test_deleted_rows_are_left_out_and_ties_go_to_the_lower_row():
    vectors = unit([[1, 0], [1, 0], [0, 1], [1, 0]])
    index = DenseIndex(vectors)
    assert [r for r, _ in index.search(np.array([1, 0]), 3)] == [0, 1, 3]
    live = np.array([False, True, True, True])
    assert [r for r, _ in index.search(np.array([1, 0]), 2, live)] == [1, 3]
    assert [r for r, _ in index.search(np.array([1, 0]), 9, live)] == [1, 3, 2]


def test_rows_tied_at_the_cut_are_all_weighed():
    # 100 equal vectors: FAISS's heap keeps any of them; the lowest rows are returned.
    vectors = unit(np.vstack([np.tile([1.0, 0.0], (100, 1)), [[0.0, 1.0]] * 20]))
    order = np.random.default_rng(7).permutation(120)
    shuffled = np.ascontiguousarray(vectors[order])
    tied = sorted(int(r) for r in np.flatnonzero(order < 100))
    found = exact_search(shuffled, unit([[1.0, 0.0]]), 5)[0]
    assert [r for r, _ in found] == tied[:5]


def test_an_empty_request_finds_nothing():
    vectors = unit(np.random.default_rng(8).standard_normal((10, 4)))
    index = DenseIndex(vectors)
    assert index.search(vectors[0], 0) == []
    assert index.search_many(vectors[:3], 0) == [[], [], []]
    assert DenseIndex(np.zeros((0, 4), dtype=np.float32)).search(vectors[0], 3) == []
    assert [r for r, _ in index.search(vectors[0], 50)] == brute_force(vectors, vectors[0], 50)
