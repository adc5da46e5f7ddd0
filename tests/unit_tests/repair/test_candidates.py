"""Ranking a named document's chunks: the one fusion of hybrid search, as configured."""

from __future__ import annotations

import numpy as np

from sealgraph.config import RetrievalConfig
from sealgraph.repair.candidates import rank_doc_chunks


class _TwoOrders:
    """An index whose lexical and dense orders of four chunks disagree.

    Chunk ``a`` is first lexically and fourth by vector (``c`` the other way round);
    ``b`` is second in both.
    With RRF's usual constant ``b`` wins (2/62 > 1/61 + 1/64); with a small constant
    the first place counts for more and ``a`` wins (1/2 + 1/5 > 2/3).
    """

    has_dense = True

    def score_lexical(self, query, chunk_ids):
        return np.array([4.0, 3.0, 1.0, 2.0])[: len(chunk_ids)]

    def chunk_vectors(self, chunk_ids):
        cos = [0.1, 0.8, 0.9, 0.5]  # dense order: c, b, d, a
        return np.array([[c] for c in cos][: len(chunk_ids)])

    def embed_query(self, query):
        return np.array([1.0])


IDS = ["a", "b", "c", "d"]


def test_the_configured_rrf_constant_decides_between_one_first_place_and_two_seconds():
    index = _TwoOrders()
    assert rank_doc_chunks(index, "q", IDS, RetrievalConfig(rrf_k=60))[0] == 1
    assert rank_doc_chunks(index, "q", IDS, RetrievalConfig(rrf_k=1))[0] == 0


def test_a_zero_weight_leaves_its_ranking_out():
    index = _TwoOrders()
    assert rank_doc_chunks(index, "q", IDS, RetrievalConfig(dense_weight=0)) == [0, 1, 3, 2]
    assert rank_doc_chunks(index, "q", IDS, RetrievalConfig(lexical_weight=0)) == [2, 1, 3, 0]


def test_every_position_is_ranked_once_even_with_both_weights_zero():
    index = _TwoOrders()
    cfg = RetrievalConfig(lexical_weight=0, dense_weight=0)
    assert rank_doc_chunks(index, "q", IDS, cfg) == [0, 1, 2, 3]
    assert rank_doc_chunks(index, "q", [], cfg) == []
