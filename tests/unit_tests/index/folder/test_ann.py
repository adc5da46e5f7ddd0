"""The FAISS inverted file of large indexes: deterministic lists, memory-mapped, calibrated."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import sealgraph.index.folder._build as build_module
from sealgraph.index import build_index, load_index, remove_documents
from sealgraph.index.folder._ann import (
    ANN_FILE,
    ANN_KIND,
    DEFAULT_PROBE,
    build_ann,
    calibrated_probe,
    calibration_texts,
    list_labels,
    load_ann,
    read_share,
    renumbered,
    save_ann,
)
from sealgraph.index.folder._dense import DenseIndex, calibrate_probe
from sealgraph.types import Document


def clustered(n: int, dim: int = 16, centers: int = 12, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    middles = rng.standard_normal((centers, dim))
    rows = middles[rng.integers(0, centers, n)] + 0.3 * rng.standard_normal((n, dim))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_the_same_vectors_give_the_same_file(tmp_path):
    vectors = clustered(3000)
    save_ann(build_ann(vectors, 40), tmp_path / "a.ivf")
    save_ann(build_ann(vectors.copy(), 40), tmp_path / "b.ivf")
    assert (tmp_path / "a.ivf").read_bytes() == (tmp_path / "b.ivf").read_bytes()
    labels = list_labels(load_ann(tmp_path / "a.ivf", 3000, 16))
    assert labels.min() >= 0 and labels.max() < 40  # every row in one list


DETERMINISM = """
import hashlib, sys
import faiss, numpy as np
sys.path.insert(0, {root!r})
from sealgraph.index.folder._ann import build_ann, save_ann
faiss.omp_set_num_threads(int(sys.argv[1]))
rng = np.random.default_rng(0)
x = rng.standard_normal((20000, 32)).astype(np.float32)
x /= np.linalg.norm(x, axis=1, keepdims=True)
save_ann(build_ann(x, 64), sys.argv[2])
print(hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest())
"""


def test_the_lists_do_not_depend_on_the_number_of_threads(tmp_path):
    import sealgraph

    root = str(__import__("pathlib").Path(sealgraph.__file__).parents[1])
    script = DETERMINISM.format(root=root)
    digests = {
        subprocess.run(
            [sys.executable, "-c", script, str(threads), str(tmp_path / f"{threads}.ivf")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for threads in (1, 3)
    }
    assert len(digests) == 1


def test_an_opened_file_is_memory_mapped_and_probing_every_list_is_exact(tmp_path):
    import faiss

    vectors = clustered(4000)
    save_ann(build_ann(vectors, 40, sq8=False), tmp_path / ANN_FILE)
    lists = load_ann(tmp_path / ANN_FILE, 4000, 16)
    assert isinstance(faiss.downcast_InvertedLists(lists.invlists), faiss.OnDiskInvertedLists)
    exact = DenseIndex(vectors)
    ann = DenseIndex(vectors, lists)
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


def test_a_file_of_other_vectors_is_refused(tmp_path):
    save_ann(build_ann(clustered(200), 8), tmp_path / ANN_FILE)
    with pytest.raises(ValueError, match="does not fit"):
        load_ann(tmp_path / ANN_FILE, 201, 16)
    (tmp_path / "junk.ivf").write_bytes(b"not an index at all")
    with pytest.raises(RuntimeError):
        load_ann(tmp_path / "junk.ivf", 200, 16)


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
    lists = build_ann(vectors, 30, sq8=False)
    probe, recall = calibrate_probe(vectors, lists, target=0.95, k=20, n_queries=64)
    assert recall >= 0.95 and 1 <= probe <= 30
    assert calibrate_probe(vectors, lists, target=0.95, k=20, n_queries=64) == (probe, recall)
    # The recall it reports is what a search at that probe finds for the same queries.
    rows = np.sort(np.random.default_rng(20_260_612).choice(3000, size=64, replace=False))
    index = DenseIndex(vectors, lists)
    index.probe = probe
    assert measured_recall(vectors, index, vectors[rows], 20) == pytest.approx(recall, abs=0.01)
    if probe > 1:  # and one list fewer does not reach the target
        index.probe = probe - 1
        assert measured_recall(vectors, index, vectors[rows], 20) < 0.95
    assert calibrate_probe(vectors, lists, target=1.0, k=20, n_queries=64)[1] == 1.0


def test_eight_bit_codes_scored_again_find_what_float32_lists_find():
    vectors = clustered(4000, seed=4)
    queries = clustered(40, seed=5)
    flat, codes = (
        DenseIndex(vectors, build_ann(vectors, 40, sq8=False)),
        DenseIndex(vectors, build_ann(vectors, 40)),
    )
    assert read_share(codes.ann, 40) == pytest.approx(0.25)
    for probe in (4, 40):
        flat.probe = codes.probe = probe
        same = [flat.search(q, 20) == codes.search(q, 20) for q in queries]
        assert sum(same) >= 38  # a few near-ties may fall outside the 8-bit candidates


def test_eight_bit_codes_are_calibrated_by_searching_them():
    vectors = clustered(3000, seed=3)
    lists = build_ann(vectors, 30, sq8=True)
    probe, recall = calibrate_probe(vectors, lists, target=0.95, k=20, n_queries=64)
    assert recall >= 0.95
    rows = np.sort(np.random.default_rng(20_260_612).choice(3000, size=64, replace=False))
    index = DenseIndex(vectors, lists)
    index.probe = probe
    assert measured_recall(vectors, index, vectors[rows], 20) == pytest.approx(recall, abs=1e-9)
    # The best candidates are scored again exactly: the scores are exact search's.
    exact = dict(DenseIndex(vectors).search(vectors[5], 100))
    assert all(exact.get(r, s) == s for r, s in index.search(vectors[5], 10))


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
    assert "ann" not in index.manifest and ANN_FILE not in index.manifest["files"]
    assert any("dense search stays exact" in w for w in warnings)


def test_a_probe_the_manifest_records_is_used_only_when_it_fits():
    assert calibrated_probe({"kind": ANN_KIND, "lists": 64, "probe": 12}, 64) == 12
    assert calibrated_probe({"probe": 0}, 64) == DEFAULT_PROBE
    assert calibrated_probe({"probe": 65}, 64) == DEFAULT_PROBE
    assert calibrated_probe({"probe": "12"}, 64) == DEFAULT_PROBE
    assert calibrated_probe({"probe": True}, 64) == DEFAULT_PROBE
    assert calibrated_probe(True, 64) == DEFAULT_PROBE
    assert calibrated_probe(None, 16) == 16


def test_deleted_rows_stay_out_and_renumbering_keeps_the_lists(tmp_path):
    vectors = clustered(1000)
    save_ann(build_ann(vectors, 20), tmp_path / ANN_FILE)
    lists = load_ann(tmp_path / ANN_FILE, 1000, 16)
    index = DenseIndex(vectors, lists)
    index.probe = 20
    live = np.ones(1000, dtype=bool)
    live[[3, 5]] = False
    assert {r for r, _ in index.search(vectors[3], 5, live)}.isdisjoint({3, 5})
    kept = renumbered(tmp_path / ANN_FILE, vectors[500:])
    assert kept.ntotal == 500
    assert list_labels(kept).tolist() == list_labels(lists)[500:].tolist()


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
    entry = index.manifest["ann"]
    assert entry["kind"] == ANN_KIND and entry["codes"] == "sq8"
    assert ANN_FILE in index.manifest["files"]
    assert 1 <= entry["probe"] <= entry["lists"] and entry["recall"] >= 0.98
    loaded = load_index(path, embedder=hash_embedder)
    assert loaded._dense.probe == entry["probe"] and loaded._dense.ann is not None
    assert loaded.search_dense("Note 3 is about topic 3.", 3)
    more = Document("d99.md", "Note 99", "Note 99 is about topic 1.")
    build_index([more], path, embedder=hash_embedder, warn=lambda m: None)
    grown = load_index(path, embedder=hash_embedder)
    assert grown._dense.ann.ntotal == 13
    assert grown.search_dense("Note 99 is about topic 1.", 1)[0].chunk_id == "d99.md#0"
    removed = remove_documents(path, ["d99.md"], embedder=hash_embedder, warn=lambda m: None)
    assert removed.n_chunks == 12 and removed.manifest["ann"]["kind"] == ANN_KIND
    assert removed._dense.ann.ntotal == 12
    assert removed.search_dense("Note 3 is about topic 3.", 1)


def test_an_index_with_an_earlier_inverted_file_opens_with_exact_search(tmp_path, hash_embedder):
    from support.old_index import with_numpy_inverted_file

    docs = [Document(f"d{i}.md", f"Note {i}", f"Note {i} is about topic {i}.") for i in range(6)]
    path = tmp_path / "idx"
    fresh = build_index(docs, path, embedder=hash_embedder, warn=lambda m: None)
    expected = fresh.search_dense("Note 3 is about topic 3.", 4)
    with_numpy_inverted_file(path)
    warnings: list[str] = []
    old = load_index(path, embedder=hash_embedder, warn=warnings.append)
    assert old._dense.ann is None and old.search_dense("Note 3 is about topic 3.", 4) == expected
    assert any("earlier sealgraph" in w and "--replace" in w for w in warnings)
    # An add leaves the old lists out: the index is an exact one again, warning no more.
    more = Document("d9.md", "Note 9", "Note 9 is about topic 9.")
    grown = build_index([more], path, embedder=hash_embedder, warn=lambda m: None)
    assert "ann" not in grown.manifest and not (path / "ivf").exists()
    assert not any(name.startswith("ivf/") for name in grown.manifest["files"])
    with_numpy_inverted_file(path)
    removed = remove_documents(path, ["d9.md"], embedder=hash_embedder, warn=lambda m: None)
    assert "ann" not in removed.manifest and not (path / "ivf").exists()
    assert removed.search_dense("Note 3 is about topic 3.", 4) == expected
