"""Shared fixtures: the tiny corpus (:mod:`support.fakes`), a lexical index over it, embedders.

The fakes and helpers themselves live in ``tests/support`` (on the test path through
``pythonpath`` in pyproject.toml): import them from there, never from a conftest.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.fakes import HashEmbedder, write_tiny_docs

# The tiktoken encodings the tests count with ship inside the package: no cache folder needed.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def tiny_docs_dir(tmp_path: Path) -> Path:
    """A fresh folder with the tiny corpus (4 Markdown files, one in a subfolder, + 1 .txt)."""
    return write_tiny_docs(tmp_path / "docs")


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory: pytest.TempPathFactory):
    """A lexical-only index (``embedder="none"``) of the tiny corpus, shared per module."""
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("tiny")
    docs = write_tiny_docs(root / "docs")
    return build_index(docs, root / "index", embedder="none", warn=lambda _: None)


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    """A fresh :class:`HashEmbedder` (fake dense embedder that counts its calls)."""
    return HashEmbedder()


@pytest.fixture(scope="session")
def local_embedder():
    """The bundled all-MiniLM-L6-v2, loaded once per test session (slow tests only)."""
    from sealgraph.index.embedders import LocalEmbedder, local_embedder_available

    if not local_embedder_available():
        pytest.skip(
            "sentence-transformers or the bundled model is not installed "
            "(pip install 'sealgraph[local]')"
        )
    embedder = LocalEmbedder()
    embedder.embed_query("warm up")  # load the model once, here
    return embedder
