"""build_index with LangChain ``Embeddings`` and ``Document`` objects; load_index with the same."""

from __future__ import annotations

import json

import numpy as np
import pytest
from langchain_core.documents import Document as LangChainDocument
from langchain_core.embeddings import Embeddings
from langchain_core.embeddings.fake import DeterministicFakeEmbedding
from support.fakes import TINY_DOCS

from sealgraph import build_graph, build_index, load_index
from sealgraph.errors import EmbedderMismatchError, IngestError, InputError
from sealgraph.index.embedders import LangChainEmbedder, as_embedder
from sealgraph.integrations.langchain import SealRetriever, documents_from_langchain
from sealgraph.types import Document

QUESTION = "Who designed the Lumen Lamp?"


def quiet(_: str) -> None:
    pass


class ModelEmbeddings(Embeddings):
    """A LangChain Embeddings with a ``model`` attribute (raw, unnormalised vectors)."""

    def __init__(self, model: str = "toy-1", size: int = 6) -> None:
        self.model = model
        self.size = size
        self.calls = 0
        self.queries = 0

    def _vector(self, text: str) -> list[float]:
        return [float(len(text) % (i + 3)) + 1.0 for i in range(self.size)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self._vector(text)


def langchain_docs() -> list[LangChainDocument]:
    return [
        LangChainDocument(page_content=text, metadata={"source": f"docs/{name}"})
        for name, text in TINY_DOCS.items()
    ]


# -- embeddings --------------------------------------------------------------------


def test_build_with_langchain_fake_embeddings(tiny_docs_dir, tmp_path):
    embeddings = DeterministicFakeEmbedding(size=16)
    index = build_index(tiny_docs_dir, tmp_path / "idx", embedder=embeddings, warn=quiet)
    assert index.manifest["embedder"] == {"name": "langchain:DeterministicFakeEmbedding", "dim": 16}
    assert index.has_dense
    hits = index.search_dense("Lumen Lamp designer", 3)
    assert len(hits) == 3 and all(h.source == "dense" for h in hits)
    vectors = index.chunk_vectors([c.chunk_id for c in index.iter_chunks()])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    answer = build_graph(index).invoke({"question": QUESTION})["answer"]
    assert "Ada Brightwater" in answer


def test_loading_needs_the_same_embeddings(tiny_docs_dir, tmp_path):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder=DeterministicFakeEmbedding(size=16), warn=quiet)
    same = load_index(path, embedder=DeterministicFakeEmbedding(size=16), warn=quiet)
    assert same.has_dense and same.search_dense("harbour town", 2)
    with pytest.raises(EmbedderMismatchError, match="built with embedder langchain:Determ"):
        load_index(path, embedder=ModelEmbeddings(), warn=quiet)
    other_size = load_index(path, embedder=DeterministicFakeEmbedding(size=8), warn=quiet)
    with pytest.raises(EmbedderMismatchError, match=r"vectors of size 8.*size 16"):
        other_size.search_dense("harbour town", 2)
    warnings: list[str] = []
    lexical = load_index(path, warn=warnings.append)
    assert not lexical.has_dense
    assert any("pass the LangChain embeddings" in w for w in warnings)


def test_the_name_comes_from_class_and_model_and_can_be_chosen(tiny_docs_dir, tmp_path):
    embeddings = ModelEmbeddings("toy-1")
    index = build_index(tiny_docs_dir, tmp_path / "a", embedder=embeddings, warn=quiet)
    assert index.embedder_name == "langchain:ModelEmbeddings:toy-1"
    named = LangChainEmbedder(ModelEmbeddings("toy-1"), name="my-toy")
    index = build_index(tiny_docs_dir, tmp_path / "b", embedder=named, warn=quiet)
    assert index.embedder_name == "my-toy"
    assert load_index(tmp_path / "b", embedder=named, warn=quiet).has_dense
    with pytest.raises(EmbedderMismatchError):
        load_index(tmp_path / "b", embedder=ModelEmbeddings("toy-1"), warn=quiet)
    with pytest.raises(EmbedderMismatchError):  # another model: other vectors, refused
        build_index(tiny_docs_dir, tmp_path / "a", embedder=ModelEmbeddings("toy-2"), warn=quiet)


def test_adding_with_the_same_embeddings_reuses_vectors(tiny_docs_dir, tmp_path):
    first = ModelEmbeddings()
    build_index(tiny_docs_dir, tmp_path / "idx", embedder=first, warn=quiet)
    (tiny_docs_dir / "extra.md").write_text("# Extra\n\nA new page about Kestrel Bay.\n")
    again = ModelEmbeddings()
    index = build_index(tiny_docs_dir, tmp_path / "idx", embedder=again, warn=quiet)
    counts = index.manifest["counts"]
    assert counts["vectors_new"] == again.calls == 1
    assert counts["vectors_reused"] == counts["chunks"] - 1


def test_what_cannot_embed_is_refused(tiny_docs_dir, tmp_path):
    with pytest.raises(InputError, match="LangChain Embeddings; got object"):
        build_index(tiny_docs_dir, tmp_path / "idx", embedder=object(), warn=quiet)
    with pytest.raises(InputError, match="non-empty"):
        LangChainEmbedder(ModelEmbeddings(), name=" ")
    assert not (tmp_path / "idx").exists()
    sealgraph_embedder = LangChainEmbedder(ModelEmbeddings())
    assert as_embedder(sealgraph_embedder) is sealgraph_embedder
    assert as_embedder("none") is None


def test_building_and_loading_never_probe_the_embeddings(tiny_docs_dir, tmp_path):
    embeddings = ModelEmbeddings()
    wrapped = LangChainEmbedder(embeddings)
    assert as_embedder(wrapped) is wrapped
    index = build_index(tiny_docs_dir, tmp_path / "idx", embedder=wrapped, warn=quiet)
    load_index(tmp_path / "idx", embedder=embeddings, warn=quiet)
    assert embeddings.queries == 0  # no "dimension probe" request
    index.search_dense("harbour", 1)
    assert embeddings.queries == 1


def test_the_dimension_is_learnt_or_probed():
    embedder = LangChainEmbedder(DeterministicFakeEmbedding(size=12))
    assert embedder.dim == 12
    assert embedder.embed_documents([]).shape == (0, 12)
    assert embedder.embed_documents(["a", "b"]).shape == (2, 12)


# -- documents ---------------------------------------------------------------------


def test_build_from_langchain_documents(tmp_path):
    index = build_index(langchain_docs(), tmp_path / "idx", embedder="none", warn=quiet)
    titles = dict(index.titles())
    assert titles["docs/handbook.md"] == "Handbook"  # the first # heading
    assert titles["docs/ada_brightwater.txt"] == "ada_brightwater"  # the source's file name
    assert titles["docs/products/lumen_lamp.md"] == "Lumen Lamp"
    assert index.n_docs == len(TINY_DOCS)
    docs = SealRetriever(index=index).invoke(QUESTION)
    assert any(d.metadata["doc_id"] == "docs/products/lumen_lamp.md" for d in docs)


def test_ids_and_titles_of_converted_documents():
    docs = documents_from_langchain(
        [
            LangChainDocument(page_content="one", id="explicit", metadata={"title": "T"}),
            LangChainDocument(page_content="two", metadata={"id": 7, "source": "x.md"}),
            LangChainDocument(page_content="page 1", metadata={"source": "a/b.pdf", "page": 0}),
            LangChainDocument(page_content="page 2", metadata={"source": "a/b.pdf", "page": 1}),
            LangChainDocument(page_content="no id\r\nat all"),
            LangChainDocument(
                page_content="web", metadata={"source": "https://ex.org/p/q.html?x=1"}
            ),
        ]
    )
    assert [d.doc_id for d in docs[:4]] == ["explicit", "7", "a/b.pdf:1", "a/b.pdf:2"]
    assert docs[4].doc_id.startswith("sha256:") and len(docs[4].doc_id) == len("sha256:") + 16
    assert [d.title for d in docs] == ["T", "x", "b", "b", docs[4].doc_id, "q"]
    assert docs[4].text == "no id\nat all"
    assert docs[2].source == "a/b.pdf"
    assert docs[2].metadata == {"langchain": {"source": "a/b.pdf", "page": 0}}


def test_one_document_a_generator_and_a_mix_with_sealgraph_documents(tmp_path):
    one = LangChainDocument(page_content="Port Ellis is a harbour town.", metadata={"title": "PE"})
    index = build_index(one, tmp_path / "one", embedder="none", warn=quiet)
    assert [title for _, title in index.titles()] == ["PE"]
    index = build_index(
        (d for d in langchain_docs()[:2]), tmp_path / "gen", embedder="none", warn=quiet
    )
    assert index.n_docs == 2
    native = Document(doc_id="native", title="Native", text="Native text here.")
    index = build_index([native, one], tmp_path / "mix", embedder="none", warn=quiet)
    assert index.titles()[0][0] == "native" and index.n_docs == 2
    manifest = json.loads((tmp_path / "mix" / "manifest.json").read_text())
    assert manifest["counts"]["documents"] == 2


def test_explicit_duplicate_ids_and_non_documents_are_errors(tmp_path):
    twice = [LangChainDocument(page_content=t, id="same") for t in ("a", "b")]
    with pytest.raises(IngestError, match="duplicate document id 'same'"):
        build_index(twice, tmp_path / "idx", embedder="none", warn=quiet)
    with pytest.raises(InputError, match="not a LangChain Document"):
        documents_from_langchain([LangChainDocument(page_content="a"), "b"])  # type: ignore[list-item]
    with pytest.raises(InputError, match="either paths or Document"):
        build_index(
            [LangChainDocument(page_content="a"), str(tmp_path)],
            tmp_path / "idx",
            embedder="none",
            warn=quiet,
        )
