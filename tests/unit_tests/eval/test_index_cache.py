"""The eval cache keys an index by the embedder a spec resolves to, not by the spec."""

from __future__ import annotations

import sealgraph.index.embedders as embedders
from sealgraph.eval.index_cache import open_index
from sealgraph.types import Document

DOCS = [
    Document("a", "Alpha", "Alpha is a small harbour town on the north coast."),
    Document("b", "Beta", "Beta is a river that runs past the town of Alpha."),
]


def test_auto_without_the_local_model_reuses_the_lexical_index(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(embedders, "local_embedder_available", lambda: False)
    lexical = open_index(DOCS, embedder="none")
    auto = open_index(DOCS, embedder="auto")
    # "auto" means no dense model here: the same index, not a second one under another key.
    assert auto.reused and auto.path == lexical.path
    assert not auto.index.has_dense
