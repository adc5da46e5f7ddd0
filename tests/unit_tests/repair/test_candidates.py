"""Ranking a named document's chunks, and a loop's candidates gathered in one batch."""

from __future__ import annotations

import numpy as np
import pytest
from support.fakes import HashEmbedder

from sealgraph.config import RetrievalConfig, SealConfig
from sealgraph.index import build_index
from sealgraph.model import MicroQuery
from sealgraph.repair.candidates import (
    DOC_CHUNKS,
    gather_candidates,
    rank_doc_chunks,
    relation_text,
)
from sealgraph.types import Document


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


class _CountingEmbedder(HashEmbedder):
    """A hash embedder that counts its model calls (a batch or a lone query: one call each)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def embed_documents(self, texts):
        self.calls += 1
        return super().embed_documents(texts)

    def embed_query(self, text):
        self.calls += 1
        return super().embed_query(text)


_LIGHTHOUSE = [
    f"The Harwick lighthouse {fact}. It has stood on the northern cape since 1852. "
    for fact in (
        "was designed by Ada Morrow",
        "keeps a keeper's cottage of grey stone",
        "was painted red in 1901",
        "shines a white light every ten seconds",
        "was automated in 1978",
        "is owned by the Northern Trust",
    )
]


@pytest.fixture(scope="module")
def repair_index(tmp_path_factory):
    """A dense index where one document has more chunks than a micro-query takes of it."""
    docs = [
        Document("harwick", "Harwick Lighthouse", "".join(_LIGHTHOUSE)),
        Document("morrow", "Ada Morrow", "Ada Morrow was an engineer born in Leith in 1811."),
        Document("trust", "Northern Trust", "The Northern Trust keeps lighthouses in repair."),
        Document("leith", "Leith", "Leith is a port on the Firth of Forth."),
    ]
    embedder = _CountingEmbedder()
    root = tmp_path_factory.mktemp("repair")
    index = build_index(docs, root / "index", embedder=embedder, max_chunk_tokens=24)
    assert len(index.doc_chunks("harwick")) > DOC_CHUNKS
    return index, embedder


_QUERIES = [
    MicroQuery("Harwick Lighthouse designer", "Harwick Lighthouse", "relation", ("harwick",)),
    MicroQuery("Ada Morrow birthplace", "Ada Morrow", "relation"),
    MicroQuery("lighthouse owner automated", "", "relation"),
]


def _one_by_one(index, queries, config, exclude):
    """The candidates as a loop found them one query at a time (before batching)."""
    out = {}
    for q in queries:
        ids = []
        for doc in q.title_targets:
            chunks = [c for c in index.doc_chunks(doc) if c.chunk_id not in exclude]
            if len(chunks) > DOC_CHUNKS:
                ids_ = [c.chunk_id for c in chunks]
                order = rank_doc_chunks(index, relation_text(q), ids_, config.retrieval)
                chunks = [chunks[i] for i in order[:DOC_CHUNKS]]
            ids.extend(c.chunk_id for c in chunks)
        if q.entity and not q.title_targets:
            ids.extend(index.lookup_title(q.entity)[:2])
        ids.extend(h.chunk_id for h in index.search_hybrid(q.text, config.micro_query_k))
        out[q.text] = [c for c in dict.fromkeys(ids) if c not in exclude]
    return out


def test_a_loops_queries_are_embedded_in_one_call_with_the_candidates_of_one_by_one(repair_index):
    index, embedder = repair_index
    config = SealConfig(micro_query_k=4)
    exclude = {"harwick#0"}
    index.clear_query_cache()
    embedder.calls = 0
    found = gather_candidates(index, _QUERIES, config, exclude)
    # The queries and the relation words that rank Harwick's chunks: one model call.
    assert embedder.calls == 1
    assert embedder.documents_embedded >= len(_QUERIES) + 1
    index.clear_query_cache()
    assert found == _one_by_one(index, _QUERIES, config, exclude)
    assert len(found["Harwick Lighthouse designer"]) >= DOC_CHUNKS
    assert not any("harwick#0" in ids for ids in found.values())


def test_no_queries_no_model_call(repair_index):
    index, embedder = repair_index
    embedder.calls = 0
    assert gather_candidates(index, [], SealConfig(), set()) == {}
    assert embedder.calls == 0
