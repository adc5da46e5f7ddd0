"""The SearchIndex protocol: the real index satisfies it, anything else is refused early.

A search index is a chunk store too (ChunkStore, the reads its hits come from).
"""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from sealgraph import build_graph
from sealgraph.errors import InputError
from sealgraph.graph.context import SealContext
from sealgraph.index import ChunkStore, Index, SearchIndex, load_index
from sealgraph.index.protocol import require_search_index
from sealgraph.runs.threads import _UnusableIndex, reader_graph

QUESTION = "In which province is the town where Northwind Studio was founded?"

MEMBERS = [
    name for protocol in (ChunkStore, SearchIndex) for name in vars(protocol) if name[0] != "_"
]
METHODS = [name for name in MEMBERS if callable(getattr(SearchIndex, name))]


def _vector_store():
    embeddings = pytest.importorskip("langchain_core.embeddings")
    vectorstores = pytest.importorskip("langchain_core.vectorstores")
    store = vectorstores.InMemoryVectorStore(embeddings.DeterministicFakeEmbedding(size=8))
    store.add_texts(["Northwind Studio was founded in Port Ellis."])
    return store


def test_a_loaded_index_is_a_search_index_over_a_chunk_store(tiny_index):
    assert isinstance(tiny_index, SearchIndex) and isinstance(tiny_index, ChunkStore)
    assert isinstance(tiny_index.chunks, ChunkStore) and not isinstance(
        tiny_index.chunks, SearchIndex
    )
    chunk_id = next(tiny_index.iter_chunks()).chunk_id
    assert tiny_index.get_chunk(chunk_id) == tiny_index.chunks.get_chunk(chunk_id)
    assert require_search_index(tiny_index, where="test", expected="an index") is tiny_index


def test_the_index_class_implements_every_member_of_the_protocol():
    assert len(MEMBERS) > 15
    for name in MEMBERS:
        assert hasattr(Index, name), name
        assert callable(getattr(Index, name)) == (name in METHODS), name


@pytest.mark.parametrize(
    "value", [object(), {"chunks": []}, None, 42], ids=["object", "dict", "none", "int"]
)
def test_build_graph_refuses_what_is_not_an_index(value):
    with pytest.raises(InputError, match=r"^build_graph needs a sealgraph index \(a directory"):
        build_graph(value)


def test_build_graph_names_a_langchain_vector_store_and_what_it_lacks():
    store = _vector_store()
    with pytest.raises(InputError) as caught:
        build_graph(store)
    message = str(caught.value)
    assert "sealgraph.index.load_index(...)" in message
    assert "got langchain_core.vectorstores.in_memory.InMemoryVectorStore" in message
    assert message.endswith(
        "index the documents with sealgraph.index.build_index(paths, index_dir)"
    )
    with pytest.raises(InputError, match=r"got langchain_core\..*VectorStoreRetriever"):
        build_graph(store.as_retriever())


def test_the_missing_members_are_named(tiny_index):
    class Partial:
        def __getattr__(self, name):
            if name in {"doc_chunks", "neighbors"}:
                raise AttributeError(name)
            return getattr(tiny_index, name)

    with pytest.raises(InputError, match=r"got .*Partial, which has no doc_chunks, neighbors$"):
        build_graph(Partial())

    class Blocked(Partial):
        search_hybrid = None  # a method set to None does not count (as in the protocol check)

    with pytest.raises(InputError, match=r"which has no doc_chunks, neighbors, search_hybrid$"):
        build_graph(Blocked())


def test_a_per_run_index_that_is_not_an_index_is_refused(tiny_index):
    graph = build_graph(tiny_index, config={"k": 2})
    with pytest.raises(InputError, match=r"^the run context \(SealContext.index\) needs"):
        graph.invoke({"question": QUESTION}, context=SealContext(index=_vector_store()))
    with pytest.raises(InputError, match=r"a served client cannot send one\); got str"):
        graph.invoke({"question": QUESTION}, context={"index": str(tiny_index.path)})


def test_a_per_run_loaded_index_is_used(tiny_index):
    graph = build_graph(tiny_index, config={"k": 2})
    expected = graph.invoke({"question": QUESTION})
    other = load_index(tiny_index.path, warn=lambda _: None)
    out = graph.invoke({"question": QUESTION}, context=SealContext(index=other))
    assert out["evidence"] == expected["evidence"]
    assert out["answer"] == expected["answer"]


def test_the_reader_graph_stand_in_is_a_search_index_that_refuses_to_run():
    stand_in = _UnusableIndex()
    assert isinstance(stand_in, SearchIndex)
    for name in METHODS:
        with pytest.raises(InputError, match="only reads stored runs"):
            getattr(stand_in, name)("x")
    graph = reader_graph(InMemorySaver())
    with pytest.raises(InputError, match="only reads stored runs"):
        graph.invoke({"question": QUESTION}, {"configurable": {"thread_id": "t"}})
