"""``sealgraph.integrations.langchain.SealRetriever``: the repaired evidence as LangChain documents."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document as LangChainDocument
from langchain_core.embeddings.fake import DeterministicFakeEmbedding
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore

from sealgraph import build_graph
from sealgraph.errors import InputError
from sealgraph.integrations.langchain import SealRetriever, result_documents

BRIDGE = "In which province is the town where Northwind Studio was founded?"
SIMPLE = "Who designed the Lumen Lamp?"
METADATA_KEYS = {
    "chunk_id",
    "chunk_ids",
    "doc_id",
    "title",
    "section",
    "score",
    "score_kind",
    "loop",
    "rank",
    "n_tokens",
    "cited",
}


@pytest.fixture(scope="module")
def retriever(tiny_index):
    return SealRetriever(index=tiny_index)


@pytest.fixture(scope="module")
def graph(tiny_index):
    return build_graph(tiny_index)


def test_it_is_a_langchain_retriever_returning_the_final_evidence(retriever, graph):
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke(BRIDGE)
    direct = graph.invoke({"question": BRIDGE})
    assert all(isinstance(d, LangChainDocument) for d in docs)
    assert [d.metadata["chunk_id"] for d in docs] == [e["chunk_id"] for e in direct["evidence"]]
    assert [d.page_content for d in docs] == [e["text"] for e in direct["evidence"]]
    assert [d.id for d in docs] == [d.metadata["chunk_id"] for d in docs]


def test_metadata_keys_and_values(retriever, graph):
    docs = retriever.invoke(BRIDGE)
    direct = graph.invoke({"question": BRIDGE})
    assert docs
    for rank, (doc, item) in enumerate(zip(docs, direct["evidence"], strict=True)):
        meta = doc.metadata
        assert set(meta) == METADATA_KEYS
        assert meta["rank"] == rank
        assert meta["chunk_ids"] == [item["chunk_id"]]
        assert meta["doc_id"] == item["doc_id"] and meta["title"] == item["title"]
        assert meta["section"] == item["section"]
        assert meta["loop"] == item["inserted_loop"]
        assert meta["n_tokens"] == item["n_tokens"]
        assert meta["score_kind"] in {"retrieval", "utility"}
        assert isinstance(meta["score"], float)
    cited = {c["chunk_id"]: c["n"] for c in direct["citations"]}
    for doc in docs:
        expected = [cited[doc.metadata["chunk_id"]]] if doc.metadata["chunk_id"] in cited else []
        assert doc.metadata["cited"] == expected


def test_scores_are_the_initial_retrieval_scores(retriever, graph):
    direct = graph.invoke({"question": SIMPLE})
    hits = next(e for e in direct["seal_log"] if e["kind"] == "retrieved")["data"]["hits"]
    by_id = {h["chunk_id"]: h["score"] for h in hits}
    for doc in retriever.invoke(SIMPLE):
        if doc.metadata["loop"] == 0:
            assert doc.metadata["score_kind"] == "retrieval"
            assert doc.metadata["score"] == pytest.approx(by_id[doc.metadata["chunk_id"]])


def test_a_chunk_swapped_in_by_a_loop_carries_its_utility():
    evidence = [
        {
            "chunk_id": "a#0",
            "doc_id": "a",
            "title": "A",
            "section": [],
            "text": "x",
            "n_tokens": 1,
            "inserted_loop": 0,
        },
        {
            "chunk_id": "b#0",
            "doc_id": "b",
            "title": "B",
            "section": ["B"],
            "text": "y",
            "n_tokens": 1,
            "inserted_loop": 1,
        },
    ]
    log = [
        {"kind": "retrieved", "data": {"hits": [{"chunk_id": "a#0", "score": 2.5, "rank": 0}]}},
        {"kind": "swap", "data": {"candidate": "b#0", "candidate_score": {"total": 0.75}}},
    ]
    docs = result_documents({"evidence": evidence, "seal_log": log, "citations": []})
    assert [(d.metadata["score"], d.metadata["score_kind"]) for d in docs] == [
        (2.5, "retrieval"),
        (0.75, "utility"),
    ]
    assert [d.metadata["loop"] for d in docs] == [0, 1]
    bare = result_documents({"evidence": evidence})
    assert [(d.metadata["score"], d.metadata["score_kind"]) for d in bare] == [(None, None)] * 2


def test_deterministic_and_async_equals_sync(retriever):
    first = retriever.invoke(BRIDGE)
    second = retriever.invoke(BRIDGE)
    async_docs = asyncio.run(retriever.ainvoke(BRIDGE))
    as_tuples = [[(d.page_content, d.metadata) for d in docs] for docs in (first, second)]
    assert as_tuples[0] == as_tuples[1]
    assert [(d.page_content, d.metadata) for d in async_docs] == as_tuples[0]


def test_packed_mode_returns_the_spans_of_the_context(tiny_index, graph):
    docs = SealRetriever(index=tiny_index, mode="packed").invoke(BRIDGE)
    state = graph.invoke({"question": BRIDGE}, output_keys=["packed", "citations", "context"])
    assert [d.page_content for d in docs] == [p["text"] for p in state["packed"]]
    assert [d.metadata["n"] for d in docs] == [p["n"] for p in state["packed"]]
    assert [d.metadata["chunk_ids"] for d in docs] == [p["chunk_ids"] for p in state["packed"]]
    cited = {c["n"] for c in state["citations"]}
    for doc in docs:
        assert set(doc.metadata) == METADATA_KEYS | {"n"}
        assert doc.metadata["cited"] == ([doc.metadata["n"]] if doc.metadata["n"] in cited else [])
        assert doc.metadata["score_kind"] == "pack" and doc.metadata["score"] > 0
        assert doc.page_content.strip() in state["context"]


def test_unknown_mode_is_refused(tiny_index):
    with pytest.raises(ValueError, match="mode"):
        SealRetriever(index=tiny_index, mode="chunks")
    with pytest.raises(InputError, match="mode"):
        result_documents({"evidence": []}, "chunks")  # type: ignore[arg-type]


def test_k_and_overrides_reach_the_run(tiny_index):
    assert len(SealRetriever(index=tiny_index, k=1).invoke(BRIDGE)) == 1
    loopless = SealRetriever(index=tiny_index, overrides={"max_loops": 0}, k=2).invoke(BRIDGE)
    assert len(loopless) == 2 and all(d.metadata["loop"] == 0 for d in loopless)


def test_config_and_a_given_graph(tiny_index, graph):
    assert len(SealRetriever(index=tiny_index, config={"k": 2}).invoke(BRIDGE)) == 2
    from_graph = SealRetriever(index=graph)
    assert from_graph.graph is graph
    assert [d.metadata for d in from_graph.invoke(SIMPLE)] == [
        d.metadata for d in SealRetriever(index=tiny_index).invoke(SIMPLE)
    ]
    with pytest.raises(InputError, match="build_graph"):
        SealRetriever(index=graph, config={"k": 2})


def test_an_index_directory_works(tiny_index):
    docs = SealRetriever(index=str(tiny_index.path)).invoke(SIMPLE)
    assert docs and docs[0].metadata["chunk_id"]


@pytest.mark.parametrize("kind", ["vectorstore", "retriever"])
def test_a_langchain_store_or_retriever_is_refused_at_construction(kind):
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=8))
    value = store if kind == "vectorstore" else store.as_retriever()
    with pytest.raises(InputError, match=r"needs a sealgraph index .*got langchain_core\."):
        SealRetriever(index=value)


def test_callbacks_see_the_retriever_and_the_graph(retriever):
    class Recorder(BaseCallbackHandler):
        def __init__(self) -> None:
            self.chains: list[str] = []
            self.retrieved: list[int] = []

        def on_chain_start(self, serialized, inputs, **kwargs):
            self.chains.append(kwargs.get("name") or "")

        def on_retriever_end(self, documents, **kwargs):
            self.retrieved.append(len(documents))

    recorder = Recorder()
    docs = retriever.invoke(SIMPLE, config={"callbacks": [recorder]})
    assert recorder.retrieved == [len(docs)]
    assert "search" in recorder.chains and "generate" in recorder.chains
