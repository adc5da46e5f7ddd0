"""Query embedding with a cache: what every index implementation shares for dense search."""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from sealgraph.errors import EmbedderMismatchError
from sealgraph.index.embedders import Embedder, normalize_rows
from sealgraph.text.lexicon import Lexicon

__all__ = ["IndexBasics", "QueryEmbeddings"]

_QUERY_CACHE_SIZE = 2048


class QueryEmbeddings:
    """Embeds queries and texts with an index's query embedder, checking the vector size.

    ``where`` names the index in the error about an embedder of another size;
    ``dim`` is the size of the stored vectors.
    """

    def __init__(self, embedder: Embedder | None, dim: int | None, where: Any) -> None:
        self.embedder = embedder
        self.dim = dim
        self._where = where
        # Micro-queries repeat across loops and questions: keep their vectors.
        self._cache = _LRUCache(_QUERY_CACHE_SIZE)

    @property
    def enabled(self) -> bool:
        """Whether queries can be embedded (an embedder and stored vectors)."""
        return self.embedder is not None and self.dim is not None

    def query(self, text: str) -> np.ndarray | None:
        """Return the unit query vector (cached, read-only), or None without dense search."""
        if not self.enabled:
            return None
        vector = self._cache.get(text)
        if vector is None:
            vector = _read_only(self.checked(self.embedder.embed_query(text)))
            self._cache.put(text, vector)
        return vector

    def queries(self, texts: Sequence[str]) -> np.ndarray | None:
        """Embed several queries at once (one batch for the uncached ones), or None."""
        if not self.enabled:
            return None
        found = {t: v for t in dict.fromkeys(texts) if (v := self._cache.get(t)) is not None}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            for text, row in zip(
                missing, self.checked(self.embedder.embed_documents(missing)), strict=True
            ):
                found[text] = _read_only(row)
                self._cache.put(text, found[text])
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def texts(self, texts: Sequence[str]) -> np.ndarray | None:
        """Embed arbitrary texts (one unit row each, not cached), or None."""
        if not self.enabled:
            return None
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.checked(self.embedder.embed_documents(list(texts)))

    def clear(self) -> None:
        """Forget cached query embeddings."""
        self._cache.clear()

    def checked(self, vectors: Any) -> np.ndarray:
        """Return unit rows of the stored vectors' size, else raise EmbedderMismatchError.

        An embedder that shares the manifest's name but makes vectors of another size
        (another configuration) is refused here, with a clear error instead of a
        search engine's assertion.
        """
        array = normalize_rows(vectors)
        if self.dim is not None and array.shape[-1:] != (self.dim,):
            raise EmbedderMismatchError(
                f"the embedder {self.embedder.name} made vectors of size "
                f"{array.shape[-1] if array.ndim else 0}, but the index at {self._where} holds "
                f"vectors of size {self.dim}; query with the embedder it was built with"
            )
        return array


class IndexBasics:
    """What every index implementation answers the same way from its manifest and embedder.

    A subclass sets ``_manifest``, ``_n_chunks``, ``_n_docs``, ``_lexicon`` and
    ``_queries`` (a :class:`QueryEmbeddings`).
    """

    _manifest: dict[str, Any]
    _n_chunks: int
    _n_docs: int
    _lexicon: Lexicon
    _queries: QueryEmbeddings

    @property
    def manifest(self) -> dict[str, Any]:
        """A copy of the manifest."""
        return copy.deepcopy(self._manifest)

    @property
    def n_chunks(self) -> int:
        """Number of chunks."""
        return self._n_chunks

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return self._n_docs

    @property
    def has_dense(self) -> bool:
        """True when dense search works: vectors are stored and queries can be embedded."""
        return self._queries.enabled

    @property
    def embedder_name(self) -> str | None:
        """Name of the embedder the stored vectors come from (None if there are none)."""
        info = self._manifest.get("embedder")
        return info.get("name") if info else None

    @property
    def lexicon(self) -> Lexicon:
        """The lexicon the index was built with; runs over the index read with it."""
        return self._lexicon

    @property
    def encoding(self) -> str:
        """Tiktoken encoding that counted ``Chunk.n_tokens``."""
        return self._manifest["tokenizer"]["encoding"]

    def embed_query(self, text: str) -> np.ndarray | None:
        """Return the unit query vector (cached, read-only), or None without dense search."""
        return self._queries.query(text)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray | None:
        """Embed several queries at once (one batch for the uncached ones), or None.

        The vectors land in the query cache, so calling this with a loop's
        micro-queries before searching them one by one saves a model call each.
        """
        return self._queries.queries(texts)

    def clear_query_cache(self) -> None:
        """Forget cached query embeddings (for cold-start latency measurements)."""
        self._queries.clear()

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray | None:
        """Embed arbitrary texts (one unit row each) with the query embedder, or None.

        Not cached: meant for one batch of passage pieces (e.g. sentences to pack).
        """
        return self._queries.texts(texts)


def _read_only(vector: np.ndarray) -> np.ndarray:
    vector = np.array(vector, dtype=np.float32, copy=True)
    vector.setflags(write=False)
    return vector


class _LRUCache:
    """A small thread-safe least-recently-used map."""

    def __init__(self, maxsize: int) -> None:
        self._maxsize = maxsize
        self._data: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> np.ndarray | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: str, value: np.ndarray) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._maxsize:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
