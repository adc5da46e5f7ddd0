"""The inverted file of large indexes: deterministic lists, exact within the probed lists."""

from __future__ import annotations

import numpy as np
import pytest

import sealgraph.index._build as build_module
from sealgraph.index import build_index, load_index, remove_documents
from sealgraph.index._dense import DenseIndex
from sealgraph.index._ivf import (
    DEFAULT_PROBE,
    IVF_FILES,
    InvertedFile,
    calibrate_probe,
    calibrated_probe,
    calibration_texts,
    train_ivf,
)
from sealgraph.types import Document


def clustered(n: int, dim: int = 16, centers: int = 12, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    middles = rng.standard_normal((centers, dim))
    rows = middles[rng.integers(0, centers, n)] + 0.3 * rng.standard_normal((n, dim))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_the_same_vectors_give_the_same_lists():
    vectors = clustered(3000)
    a, b = InvertedFile.build(vectors), InvertedFile.build(vectors.copy())
    np.testing.assert_array_equal(a.centroids, b.centroids)
    np.testing.assert_array_equal(a.rows, b.rows)
    assert sorted(a.rows.tolist()) == list(range(3000))  # every row in one list
    assert np.all(np.diff(a.offsets) >= 0) and a.offsets[-1] == 3000


def test_probing_every_list_is_exact_and_a_few_lists_find_most_of_the_top():
    vectors = clustered(4000)
    exact = DenseIndex(vectors)
    ann = DenseIndex(vectors, InvertedFile.build(vectors, train_ivf(vectors, 40)))
    queries = clustered(50, seed=1)
    ann.probe = 40
    for q in queries[:10]:
        assert ann.search(q, 10) == exact.search(q, 10)
    ann.probe = 8
    found = [
        len({r for r, _ in ann.search(q, 20)} & {r for r, _ in exact.search(q, 20)}) / 20
        for q in queries
    ]
    assert np.mean(found) >= 0.9


def measured_recall(vectors, index, queries, k):
    exact = DenseIndex(vectors)
    return np.mean(
        [
            len({r for r, _ in index.search(q, k)} & {r for r, _ in exact.search(q, k)}) / k
            for q in queries
        ]
    )


def test_the_calibrated_probe_is_the_fewest_lists_that_reach_the_target_recall():
    vectors = clustered(3000, seed=2)
    ivf = InvertedFile.build(vectors, train_ivf(vectors, 30))
    probe, recall = calibrate_probe(vectors, ivf, target=0.95, k=20, n_queries=64)
    assert recall >= 0.95 and 1 <= probe <= 30
    assert calibrate_probe(vectors, ivf, target=0.95, k=20, n_queries=64) == (probe, recall)
    # The recall it reports is what a search at that probe finds for the same queries.
    rows = np.sort(np.random.default_rng(20_260_612).choice(3000, size=64, replace=False))
    index = DenseIndex(vectors, ivf)
    index.probe = probe
    assert measured_recall(vectors, index, vectors[rows], 20) == pytest.approx(recall, abs=0.01)
    if probe > 1:  # and one list fewer does not reach the target
        index.probe = probe - 1
        assert measured_recall(vectors, index, vectors[rows], 20) < 0.95
    assert calibrate_probe(vectors, ivf, target=1.0, k=20, n_queries=64)[1] == 1.0


def test_calibration_asks_a_sentence_of_seeded_chunks():
    texts = [
        f"Title {i}\nShort head\nThe {i}th chunk says what it is about. More." for i in range(9)
    ]
    asked = calibration_texts(texts, 4)
    assert len(asked) == 4 and asked == calibration_texts(texts, 4)
    assert all(t.startswith("The ") and t.endswith("about.") for t in asked)
    assert calibration_texts(["Tiny"], 4) == ["Tiny"] and calibration_texts([], 4) == []


def test_an_inverted_file_that_must_read_most_lists_is_not_kept(
    tmp_path, hash_embedder, monkeypatch
):
    monkeypatch.setattr(build_module, "ANN_MIN_VECTORS", 5)
    monkeypatch.setattr(build_module, "ANN_MAX_SHARE", 0.0)
    docs = [Document(f"d{i}.md", f"Note {i}", f"Note {i} is about topic {i}.") for i in range(12)]
    warnings: list[str] = []
    index = build_index(docs, tmp_path / "idx", embedder=hash_embedder, warn=warnings.append)
    assert "ann" not in index.manifest and not any(n in index.manifest["files"] for n in IVF_FILES)
    assert any("dense search stays exact" in w for w in warnings)


def test_a_probe_the_manifest_records_is_used_only_when_it_fits():
    assert calibrated_probe({"kind": "ivf", "lists": 64, "probe": 12}, 64) == 12
    assert calibrated_probe({"probe": 0}, 64) == DEFAULT_PROBE
    assert calibrated_probe({"probe": 65}, 64) == DEFAULT_PROBE
    assert calibrated_probe({"probe": "12"}, 64) == DEFAULT_PROBE
    assert calibrated_probe({"probe": True}, 64) == DEFAULT_PROBE
    assert calibrated_probe(True, 64) == DEFAULT_PROBE  # an index built before calibration
    assert calibrated_probe(None, 16) == 16


def test_deleted_rows_stay_out_and_extending_equals_building_with_the_same_centroids():
    vectors = clustered(1000)
    ivf = InvertedFile.build(vectors[:800])
    grown = ivf.extended(vectors[800:])
    whole = InvertedFile.build(vectors, np.asarray(ivf.centroids))
    np.testing.assert_array_equal(grown.rows, whole.rows)
    np.testing.assert_array_equal(grown.offsets, whole.offsets)
    index = DenseIndex(vectors, whole)
    index.probe = len(whole.centroids)
    live = np.ones(1000, dtype=bool)
    live[[3, 5]] = False
    assert {r for r, _ in index.search(vectors[3], 5, live)}.isdisjoint({3, 5})


def test_a_large_index_gets_an_inverted_file_that_adds_and_removals_keep(
    tmp_path, hash_embedder, monkeypatch
):
    monkeypatch.setattr(build_module, "ANN_MIN_VECTORS", 5)  # "large" for a test
    monkeypatch.setattr(build_module, "ANN_MAX_SHARE", 1.0)  # kept however many lists it reads
    docs = [
        Document(f"d{i}.md", f"Note {i}", f"Note {i} is about topic {i % 4}.") for i in range(12)
    ]
    path = tmp_path / "idx"
    index = build_index(docs, path, embedder=hash_embedder, warn=lambda m: None)
    assert index.manifest["ann"]["kind"] == "ivf"
    assert all(name in index.manifest["files"] for name in IVF_FILES)
    entry = index.manifest["ann"]
    assert 1 <= entry["probe"] <= entry["lists"] and entry["recall"] >= 0.98
    loaded = load_index(path, embedder=hash_embedder)
    assert loaded._dense.probe == entry["probe"]
    assert loaded.search_dense("Note 3 is about topic 3.", 3)
    more = Document("d99.md", "Note 99", "Note 99 is about topic 1.")
    build_index([more], path, embedder=hash_embedder, warn=lambda m: None)
    grown = load_index(path, embedder=hash_embedder)
    assert grown.search_dense("Note 99 is about topic 1.", 1)[0].chunk_id == "d99.md#0"
    removed = remove_documents(path, ["d99.md"], embedder=hash_embedder, warn=lambda m: None)
    assert removed.n_chunks == 12 and removed.manifest["ann"]["kind"] == "ivf"
    assert removed.search_dense("Note 3 is about topic 3.", 1)


def test_an_inverted_file_naming_rows_it_does_not_hold_is_refused(tmp_path):
    vectors = clustered(200)
    InvertedFile.build(vectors).save(tmp_path)
    rows = np.load(tmp_path / "ivf" / "rows.npy")
    rows[0] = 5_000
    np.save(tmp_path / "ivf" / "rows.npy", rows, allow_pickle=False)
    with pytest.raises(ValueError, match="rows the vectors do not hold"):
        InvertedFile.load(tmp_path)
