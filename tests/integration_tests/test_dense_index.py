"""Dense retrieval with the real bundled all-MiniLM-L6-v2 model (slow: loads torch)."""

from __future__ import annotations

import numpy as np
import pytest

from sealgraph.index import build_index, load_index
from sealgraph.index.embedders import LOCAL_MODEL_NAME

pytestmark = pytest.mark.slow


class Counting:
    """Wraps an embedder and counts the document texts it embeds."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.embedded = 0

    def embed_documents(self, texts):
        self.embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def dense_dir(tmp_path_factory, local_embedder):
    from support.fakes import write_tiny_docs

    root = tmp_path_factory.mktemp("dense")
    docs = write_tiny_docs(root / "docs")
    build_index(docs, root / "idx", embedder=local_embedder, warn=lambda _: None)
    return root


def test_local_embedder_vectors_are_unit_float32(local_embedder):
    vectors = local_embedder.embed_documents(["a brass lamp", "a harbour town"])
    assert vectors.dtype == np.float32 and vectors.shape == (2, 384)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    query = local_embedder.embed_query("a brass lamp")
    assert float(query @ vectors[0]) == pytest.approx(1.0, abs=1e-4)


def test_dense_search_finds_paraphrases(dense_dir, local_embedder):
    index = load_index(dense_dir / "idx", embedder=local_embedder)
    assert index.has_dense and index.embedder_name == LOCAL_MODEL_NAME
    # No shared stem with any page ("light" would meet the designer's "lighting"): only
    # dense retrieval can find the lamp.
    query = "a metal luminaire for a writing table"
    hits = index.search_dense(query, 3)
    assert hits[0].chunk_id == "products/lumen_lamp.md#0"
    assert index.search_lexical(query, 3) == []
    hybrid = index.search_hybrid(query, 3)
    assert hybrid[0].chunk_id == "products/lumen_lamp.md#0"


def test_reload_resolves_the_local_embedder_from_the_manifest(dense_dir):
    index = load_index(dense_dir / "idx")
    assert index.has_dense
    vectors = index.chunk_vectors(["port_ellis.md#0"])
    query = index.embed_query("a seaside town with a lighthouse")
    assert query.shape == (384,)
    assert (
        index.search_dense("a seaside town with a lighthouse", 1)[0].chunk_id == "port_ellis.md#0"
    )
    assert float(vectors[0] @ query) > 0.3


def test_rebuild_reuses_every_vector(dense_dir, local_embedder):
    counting = Counting(local_embedder)
    index = build_index(dense_dir / "docs", dense_dir / "idx", embedder=counting)
    assert counting.embedded == 0
    assert index.manifest["counts"]["vectors_reused"] == index.n_chunks
