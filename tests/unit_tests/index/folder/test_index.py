"""The folder index opened for search: lexical, dense and hybrid search, one query or many."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import sealgraph.index.embedders as embedders
from sealgraph.config import RetrievalConfig
from sealgraph.errors import InputError
from sealgraph.index import build_index, reciprocal_rank_fusion
from sealgraph.index._bm25 import lexical_tokens
from sealgraph.index.embedders import (
    LOCAL_MODEL_NAME,
    LocalEmbedder,
    OpenAIEmbedder,
    normalize_rows,
    resolve_embedder,
)
from sealgraph.index.folder._lexical import top_k
from sealgraph.types import Document


@pytest.fixture(scope="module")
def twin_index(tmp_path_factory):
    """Documents with identical texts (equal scores) plus distractors."""
    docs = [
        Document("z", "Zeta", "Quartz clocks keep time."),
        Document("a", "Alpha", "Quartz clocks keep time."),
        Document("m", "Mu", "Pendulum clocks swing."),
        Document("p", "Harbourlight (album)", "An album by Tidewater."),
    ]
    return build_index(docs, tmp_path_factory.mktemp("twin") / "idx", embedder="none")


@pytest.fixture
def dense_index(tmp_path, tiny_docs_dir, hash_embedder):
    return build_index(tiny_docs_dir, tmp_path / "idx", embedder=hash_embedder)


def test_stem_and_tokens():
    # BM25 uses the lexicon's Snowball stemmer: inflections and possessives meet.
    from sealgraph.text.lexicon import stem

    for inflected, base in [
        ("albums", "album"),
        ("stories", "story"),
        ("horses", "horse"),
        ("harbourlight's", "harbourlight"),
        ("tidewater’s", "tidewater"),
    ]:
        assert stem(inflected) == stem(base)
    assert stem("class") == "class" and stem("bus") == "bus"
    assert lexical_tokens("The Albums of Tidewater's band") == [
        stem("album"),
        stem("tidewater"),
        "band",
    ]


def test_top_k_breaks_ties_by_row_and_drops_zero_scores():
    scores = np.array([0.5, 2.0, 0.5, 0.0, 2.0, 0.5], dtype=np.float32)
    assert top_k(scores, 4) == [(1, 2.0), (4, 2.0), (0, 0.5), (2, 0.5)]
    assert top_k(scores, 10) == [(1, 2.0), (4, 2.0), (0, 0.5), (2, 0.5), (5, 0.5)]
    assert top_k(np.zeros(3, dtype=np.float32), 2) == []


def test_lexical_ties_follow_row_order(twin_index):
    hits = twin_index.search_lexical("quartz", 5)
    assert [h.chunk_id for h in hits] == ["z#0", "a#0"]  # equal scores: row order
    assert hits[0].score == pytest.approx(hits[1].score)
    assert [h.rank for h in hits] == [0, 1] and {h.source for h in hits} == {"lexical"}


def test_lexical_search_ranks_and_limits(tiny_index):
    hits = tiny_index.search_lexical("Who founded Northwind Studio?", 3)
    assert len(hits) == 3
    assert hits[0].chunk_id == "northwind_studio.md#0"
    assert hits[0].score >= hits[1].score >= hits[2].score > 0
    assert tiny_index.search_lexical("zzzz unknownword", 5) == []
    assert tiny_index.search_lexical("the of and", 5) == []  # only stopwords


def test_title_and_headings_are_indexed(tiny_index):
    # "Materials" appears only in the heading; "lumen" only in the title for that chunk.
    hits = tiny_index.search_lexical("lumen materials", 1)
    assert hits[0].chunk_id == "products/lumen_lamp.md#1"


def test_score_lexical_matches_search(tiny_index):
    hits = tiny_index.search_lexical("harbour town lighthouse", 4)
    ids = [h.chunk_id for h in hits] + ["handbook.md#4"]
    scores = tiny_index.score_lexical("harbour town lighthouse", ids)
    assert len(hits) == 2  # the Port Ellis page and the lamp's "Harbour Design Prize"
    assert scores.shape == (3,)
    assert scores[:2] == pytest.approx([h.score for h in hits])
    assert scores[2] == 0.0
    assert tiny_index.score_lexical("anything", []).shape == (0,)


def test_lexical_only_index_has_no_dense(tiny_index):
    assert not tiny_index.has_dense and tiny_index.embedder_name is None
    assert tiny_index.search_dense("lamp", 3) == []
    assert tiny_index.embed_query("lamp") is None
    assert tiny_index.embed_texts(["lamp"]) is None
    assert tiny_index.embed_queries(["lamp"]) is None
    assert tiny_index.chunk_vectors(["handbook.md#0"]) is None
    assert tiny_index.search_hybrid("brass lamp", 3) == tiny_index.search_lexical("brass lamp", 3)


def test_chunk_access(tiny_index):
    chunk = tiny_index.get_chunk("handbook.md#2")
    assert chunk.section == ("Handbook", "Expenses", "Travel")
    assert tiny_index.chunk_by_row(tiny_index.chunk_row("handbook.md#2")) == chunk
    ids = ["port_ellis.md#0", "handbook.md#1"]
    assert [c.chunk_id for c in tiny_index.get_chunks(ids)] == ids
    assert [c.order for c in tiny_index.doc_chunks("handbook.md")] == [0, 1, 2, 3, 4]
    assert tiny_index.doc_chunks("nope") == []
    with pytest.raises(KeyError):
        tiny_index.get_chunk("nope#0")
    with pytest.raises(IndexError):
        tiny_index.chunk_by_row(tiny_index.n_chunks)
    assert tiny_index.n_docs == 5 and tiny_index.n_chunks == 10
    assert tiny_index.encoding == "o200k_base"


def test_neighbors_stay_in_the_document(tiny_index):
    ids = [c.chunk_id for c in tiny_index.neighbors("handbook.md#2")]
    assert ids == ["handbook.md#1", "handbook.md#2", "handbook.md#3"]
    ids = [c.chunk_id for c in tiny_index.neighbors("handbook.md#0", before=2, after=0)]
    assert ids == ["handbook.md#0"]
    ids = [c.chunk_id for c in tiny_index.neighbors("port_ellis.md#0", before=3, after=3)]
    assert ids == ["port_ellis.md#0"]


def test_titles_and_headings(tiny_index):
    assert ("products/lumen_lamp.md", "Lumen Lamp") in tiny_index.titles()
    assert [t[0] for t in tiny_index.titles()] == sorted(t[0] for t in tiny_index.titles())
    assert ("handbook.md#3", "Meals") in tiny_index.headings()
    assert all(cid != "ada_brightwater.txt#0" for cid, _ in tiny_index.headings())


def test_lookup_title_normalises_names(twin_index, tiny_index):
    for name in ["Harbourlight (album)", "the Harbourlight", "harbourlight", "HARBOURLIGHT"]:
        assert twin_index.lookup_title(name) == ["p#0"]
    assert twin_index.lookup_title("Tidewater") == []
    assert twin_index.lookup_title("") == []
    # Title match first (all chunks of the document, in order), then heading matches.
    assert tiny_index.lookup_title("the Lumen Lamp") == [
        "products/lumen_lamp.md#0",
        "products/lumen_lamp.md#1",
    ]
    assert tiny_index.lookup_title("travel") == ["handbook.md#2"]


def test_reciprocal_rank_fusion_by_hand():
    fused = reciprocal_rank_fusion([[3, 1, 2], [1, 4]], [1.0, 2.0], rrf_k=10)
    expected = {
        1: 1 / 12 + 2 / 11,
        3: 1 / 11,
        4: 2 / 12,
        2: 1 / 13,
    }
    assert [item for item, _ in fused] == [1, 4, 3, 2]
    assert dict(fused) == pytest.approx(expected)
    # Ties go to the smaller item; k truncates; zero weights are ignored.
    tie = reciprocal_rank_fusion([[5, 2], [2, 5]])
    assert [item for item, _ in tie] == [2, 5]
    assert reciprocal_rank_fusion([[5, 2], [2, 5]], k=1) == tie[:1]
    assert reciprocal_rank_fusion([[1], [2]], [0.0, 1.0]) == [(2, pytest.approx(1 / 61))]
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([[1]], [1.0, 2.0])


def test_hybrid_fuses_lexical_and_dense(dense_index):
    assert dense_index.has_dense and dense_index.embedder_name == "test:hash-64"
    query = "brass desk lamp designer"
    retrieval = RetrievalConfig(pool=5, rrf_k=60, lexical_weight=1.0, dense_weight=0.5)
    hits = dense_index.search_hybrid(query, 4, retrieval)
    lexical = [h.chunk_id for h in dense_index.search_lexical(query, 5)]
    dense = [h.chunk_id for h in dense_index.search_dense(query, 5)]
    expected = reciprocal_rank_fusion([lexical, dense], [1.0, 0.5], rrf_k=60)
    expected.sort(key=lambda p: (-p[1], dense_index.chunk_row(p[0])))
    assert [h.chunk_id for h in hits] == [cid for cid, _ in expected[:4]]
    assert [h.score for h in hits] == pytest.approx([s for _, s in expected[:4]])
    assert {h.source for h in hits} == {"hybrid"}
    # A zero dense weight falls back to plain lexical search.
    lexical_only = dense_index.search_hybrid(query, 4, RetrievalConfig(dense_weight=0))
    assert lexical_only == dense_index.search_lexical(query, 4)


def test_dense_search_and_vectors(dense_index, hash_embedder):
    hits = dense_index.search_dense("harbour town lighthouse", 2)
    assert hits[0].chunk_id == "port_ellis.md#0" and hits[0].source == "dense"
    vectors = dense_index.chunk_vectors(["port_ellis.md#0", "handbook.md#0"])
    assert vectors.shape == (2, 64)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    query = dense_index.embed_query("harbour town lighthouse")
    assert float(vectors[0] @ query) == pytest.approx(hits[0].score, abs=1e-5)
    assert dense_index.embed_texts(["a lamp", "a town"]).shape == (2, 64)


def test_query_embeddings_are_cached(dense_index, hash_embedder):
    before = hash_embedder.queries_embedded
    first = dense_index.embed_query("repeat me please")
    second = dense_index.embed_query("repeat me please")
    dense_index.search_hybrid("repeat me please", 3)
    assert hash_embedder.queries_embedded == before + 1
    assert first is second and not first.flags.writeable


def test_embed_queries_batches_uncached_queries_into_the_cache(dense_index, hash_embedder):
    texts = ["lamp designer", "harbour town", "lamp designer"]
    docs_before = hash_embedder.documents_embedded
    vectors = dense_index.embed_queries(texts)
    assert vectors.shape == (3, 64) and np.array_equal(vectors[0], vectors[2])
    assert hash_embedder.documents_embedded == docs_before + 2  # one batch, deduplicated
    queries_before = hash_embedder.queries_embedded
    for text in texts:
        assert np.array_equal(dense_index.embed_query(text), vectors[texts.index(text)])
        dense_index.search_hybrid(text, 3)
    assert hash_embedder.queries_embedded == queries_before  # all served from the cache
    assert dense_index.embed_queries([]).shape == (0, 64)


def test_concurrent_searches_match_sequential(dense_index):
    queries = [f"{w} studio lamp town" for w in ["brass", "harbour", "trains", "leave", "meals"]]
    expected = [dense_index.search_hybrid(q, 5) for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda q: dense_index.search_hybrid(q, 5), queries * 8))
    assert results == expected * 8


class FakeLangChainEmbeddings:
    """Stands in for langchain_openai.OpenAIEmbeddings: records batches, returns raw vectors."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed_documents(self, texts):
        self.batches.append(list(texts))
        return [[3.0, 4.0, 0.0] for _ in texts]

    def embed_query(self, text):
        return [0.0, 0.0, 2.0]


def test_openai_embedder_batches_and_normalises_without_network():
    client = FakeLangChainEmbeddings()
    embedder = OpenAIEmbedder("my-model", dim=3, client=client, batch_size=2)
    assert embedder.name == "openai:my-model" and embedder.dim == 3
    vectors = embedder.embed_documents(["a", "b", "c"])
    assert client.batches == [["a", "b"], ["c"]]
    assert vectors.dtype == np.float32
    assert vectors == pytest.approx(np.array([[0.6, 0.8, 0.0]] * 3))
    assert embedder.embed_query("q").tolist() == [0.0, 0.0, 1.0]
    assert OpenAIEmbedder("text-embedding-3-small").dim == 1536  # known: no request


def test_resolve_embedder_specs(monkeypatch):
    assert resolve_embedder("none") is None
    openai = resolve_embedder("openai:text-embedding-3-large")
    assert isinstance(openai, OpenAIEmbedder) and openai.dim == 3072
    monkeypatch.setattr(embedders, "local_embedder_available", lambda: True)
    assert isinstance(resolve_embedder("auto"), LocalEmbedder)
    assert isinstance(resolve_embedder(LOCAL_MODEL_NAME), LocalEmbedder)
    monkeypatch.setattr(embedders, "local_embedder_available", lambda: False)
    assert resolve_embedder("auto") is None
    for bad in ["local", "openai:", "word2vec"]:
        with pytest.raises(InputError):
            resolve_embedder(bad)


def test_normalize_rows_keeps_zero_rows():
    rows = normalize_rows([[0.0, 0.0], [0.0, 5.0]])
    assert rows.tolist() == [[0.0, 0.0], [0.0, 1.0]]


QUERIES = [
    "Who founded Northwind Studio?",
    "Where is Port Ellis?",
    "lamp designer",
    "Who founded Northwind Studio?",
]


def test_searching_many_queries_finds_what_each_search_finds(dense_index, hash_embedder):
    config = RetrievalConfig()
    one_by_one_dense = [dense_index.search_dense(q, 3) for q in QUERIES]
    one_by_one_hybrid = [dense_index.search_hybrid(q, 3, config) for q in QUERIES]
    dense_index.clear_query_cache()
    embedded = hash_embedder.documents_embedded, hash_embedder.queries_embedded
    assert dense_index.search_dense_many(QUERIES, 3) == one_by_one_dense
    assert dense_index.search_hybrid_many(QUERIES, 3, config) == one_by_one_hybrid
    # One batch for the three distinct queries; the hybrid search found them cached.
    assert hash_embedder.documents_embedded == embedded[0] + 3
    assert hash_embedder.queries_embedded == embedded[1]
    lexical_only = RetrievalConfig(dense_weight=0.0)
    assert dense_index.search_hybrid_many(QUERIES, 2, lexical_only) == [
        dense_index.search_lexical(q, 2) for q in QUERIES
    ]
    assert dense_index.search_hybrid_many(QUERIES, 0) == [[], [], [], []]
    assert dense_index.search_dense_many([], 3) == []


def test_a_lexical_index_searches_many_queries_lexically(tiny_index):
    assert tiny_index.search_dense_many(QUERIES[:2], 3) == [[], []]
    assert tiny_index.search_hybrid_many(QUERIES[:2], 3) == [
        tiny_index.search_lexical(q, 3) for q in QUERIES[:2]
    ]


def test_a_batch_of_hybrid_searches_is_one_call_where_the_index_offers_it(dense_index):
    from sealgraph.index import BatchSearch, hybrid_search_batch

    expected = [dense_index.search_hybrid(q, 3) for q in QUERIES]
    assert isinstance(dense_index, BatchSearch)
    assert hybrid_search_batch(dense_index, QUERIES, 3) == expected

    class OneByOne:  # an index without BatchSearch is asked one query at a time
        def search_hybrid(self, query, k, retrieval=None):
            return dense_index.search_hybrid(query, k, retrieval)

    assert hybrid_search_batch(OneByOne(), QUERIES, 3) == expected
