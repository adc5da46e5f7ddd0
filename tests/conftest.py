"""Shared fixtures: a tiny original corpus, a lexical index over it, the local embedder.

The tiny corpus is a fictional company handbook plus three linked entity pages,
written for these tests, so that multi-hop questions have a known chain:
*Lumen Lamp* → designed at *Northwind Studio* → founded in *Port Ellis* → in the
province of *Valmora*; *Ada Brightwater* (the lamp's designer) has a plain-text note.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# tiktoken cannot download on this offline machine; use the shared cache beside the repo.
_TIKTOKEN_CACHE = Path(__file__).resolve().parents[2] / "shared" / "tiktoken_cache"
if _TIKTOKEN_CACHE.is_dir() and not os.environ.get("TIKTOKEN_CACHE_DIR"):
    os.environ["TIKTOKEN_CACHE_DIR"] = str(_TIKTOKEN_CACHE)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TINY_DOCS: dict[str, str] = {
    "handbook.md": """# Handbook

Welcome to Northwind Studio. This handbook explains how we work.

## Expenses

Keep every receipt. Claims are paid at the end of each month.

### Travel

Book trains when the journey takes under five hours. Flights need approval from a studio director.
Hotel stays are capped at 140 euros per night in Port Ellis and 180 euros elsewhere.

### Meals

Meals on the road are covered up to 40 euros per day. Alcohol is never reimbursed.

## Leave

Everyone gets 28 days of paid leave per year. Unused days expire at the end of March.
""",
    "products/lumen_lamp.md": """# Lumen Lamp

The Lumen Lamp is a brass desk lamp designed by Ada Brightwater at Northwind Studio.
It was first sold in 2011 and won the Harbour Design Prize in 2013.

## Materials

The shade is spun brass. The base is recycled cast iron from the Kestrel foundry.
""",
    "northwind_studio.md": """# Northwind Studio

Northwind Studio is an industrial design studio founded by Tomas Greyhill in 1998.
It was founded in Port Ellis, where it still has its workshop.
The studio employs about forty designers.
""",
    "port_ellis.md": """# Port Ellis

Port Ellis is a harbour town in the province of Valmora. It has about 52,000 inhabitants.
The town is known for its lighthouse and its annual boat fair.
""",
    "ada_brightwater.txt": """Ada Brightwater is a lighting designer born in Kestrel Bay in 1979.
She joined Northwind Studio in 2006. She designed the Lumen Lamp.
""",
}
"""File name → content of the tiny corpus (one plain-text file, the rest Markdown)."""


def write_tiny_docs(directory: Path) -> Path:
    """Write :data:`TINY_DOCS` under ``directory`` and return it."""
    for name, text in TINY_DOCS.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return directory


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


class HashEmbedder:
    """A fast deterministic fake embedder: hashed bag of content words, L2-normalised.

    Texts sharing words get similar vectors, so dense search behaves sensibly in
    tests without loading a model. It counts what it embeds.
    """

    def __init__(self, dim: int = 64, name: str = "test:hash-64") -> None:
        self.name = name
        self.dim = dim
        self.documents_embedded = 0
        self.queries_embedded = 0

    def _vector(self, text: str):
        import hashlib

        import numpy as np

        from sealgraph.text.names import content_words

        vector = np.zeros(self.dim, dtype=np.float32)
        for word in content_words(text):
            slot = int(hashlib.sha1(word.encode()).hexdigest()[:8], 16) % self.dim
            vector[slot] += 1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def embed_documents(self, texts):
        import numpy as np

        self.documents_embedded += len(texts)
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim))

    def embed_query(self, text):
        self.queries_embedded += 1
        return self._vector(text)


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
