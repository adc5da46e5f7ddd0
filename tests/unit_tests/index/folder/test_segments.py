"""Memory-mapped BM25 segments: scores are Lucene BM25 over the live rows, however split."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sealgraph.index.folder._segments import DELETED_FILE, Segments, SegmentWriter, merge_segments

K1, B = 1.5, 0.75
SENTENCES = [
    "the lamp was designed by ada brightwater",
    "brightwater founded the lamp works in 1921",
    "the river port ships grain and salt",
    "salt and iron is a novel about the river",
    "ada wrote salt and iron",
    "grain grain grain prices rose",
]
DOCS = [s.split() for s in SENTENCES]


def reference_scores(docs: list[list[str]], query: list[str]) -> np.ndarray:
    """Lucene BM25 (bm25s's variant) computed the plain way."""
    n = len(docs)
    avg = sum(len(d) for d in docs) / n
    out = np.zeros(n)
    for term in dict.fromkeys(query):
        df = sum(term in d for d in docs)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, d in enumerate(docs):
            tf = d.count(term)
            if tf:
                out[i] += idf * tf / (tf + K1 * (1 - B + B * len(d) / avg))
    return out


def write(directory, docs, splits):
    """Write ``docs`` as segments cut at the row numbers ``splits``; return their infos."""
    infos, start = [], 0
    for number, stop in enumerate([*splits, len(docs)], start=1):
        writer = SegmentWriter(start)
        for tokens in docs[start:stop]:
            writer.add(tokens)
        infos.append(writer.write(directory, f"seg-{number:06d}"))
        start = stop
    return infos


QUERIES = [["lamp", "ada"], ["salt", "river", "grain"], ["grain"], ["unknown"], ["the", "iron"]]


@pytest.mark.parametrize("splits", [[], [3], [1, 2, 5]])
def test_scores_are_lucene_bm25_however_the_rows_are_split(tmp_path, splits):
    segments = Segments(tmp_path, write(tmp_path, DOCS, splits), K1, B)
    assert segments.n_rows == len(DOCS) and segments.n_live == len(DOCS)
    for query in QUERIES:
        np.testing.assert_allclose(
            segments.scores(query), reference_scores(DOCS, query), rtol=1e-5, atol=1e-6
        )


def test_deleted_rows_score_zero_and_leave_the_statistics(tmp_path):
    infos = write(tmp_path, DOCS, [3])
    np.save(tmp_path / DELETED_FILE, np.array([1, 4], dtype=np.int64), allow_pickle=False)
    segments = Segments(tmp_path, infos, K1, B)
    live = [d for i, d in enumerate(DOCS) if i not in {1, 4}]
    keep = [i for i in range(len(DOCS)) if i not in {1, 4}]
    assert segments.n_live == 4
    for query in QUERIES:
        scores = segments.scores(query)
        assert scores[1] == 0 and scores[4] == 0
        np.testing.assert_allclose(scores[keep], reference_scores(live, query), rtol=1e-5)


def test_a_merge_keeps_row_numbers_and_scores_and_drops_deleted_postings(tmp_path):
    infos = write(tmp_path, DOCS, [2, 4])
    np.save(tmp_path / DELETED_FILE, np.array([3], dtype=np.int64), allow_pickle=False)
    before = Segments(tmp_path, infos, K1, B)
    expected = [before.scores(q) for q in QUERIES]
    merged = merge_segments(tmp_path, infos, "seg-000004")
    assert merged.first_row == 0 and merged.n_rows == len(DOCS)
    assert merged.n_postings < sum(i.n_postings for i in infos)
    after = Segments(tmp_path, [merged], K1, B)  # the deletion list still names row 3
    for query, scores in zip(QUERIES, expected, strict=True):
        np.testing.assert_allclose(after.scores(query), scores, rtol=1e-6)


def test_terms_are_found_in_sorted_order_and_unknown_terms_are_absent(tmp_path):
    (info,) = write(tmp_path, DOCS, [])
    segments = Segments(tmp_path, [info], K1, B)
    segment = segments.segments[0]
    assert segment.term_id("grain") >= 0 and segment.term_id("zzz") == -1
    rows, tfs = segment.postings(segment.term_id("grain"))
    assert rows.tolist() == [2, 5] and tfs.tolist() == [1, 3]


def test_a_crafted_deletion_list_or_posting_is_refused_not_a_crash(tmp_path):
    from sealgraph.errors import IndexCorruptError

    infos = write(tmp_path, DOCS, [3])
    np.save(tmp_path / DELETED_FILE, np.array([99], dtype=np.int64), allow_pickle=False)
    with pytest.raises(ValueError, match="names rows"):
        Segments(tmp_path, infos, K1, B)
    (tmp_path / DELETED_FILE).unlink()
    rows = tmp_path / infos[0].name / "rows.npy"
    crafted = np.load(rows)
    crafted[-1] = 10_000  # a row far outside the segment
    np.save(rows, crafted, allow_pickle=False)
    segments = Segments(tmp_path, infos, K1, B)
    with pytest.raises(IndexCorruptError, match="outside its range"):
        for tokens in DOCS:
            segments.scores(tokens)
