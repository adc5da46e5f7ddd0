"""Query embedding with a cache: what every index backend shares for dense search.

:func:`query_embedder` settles the embedder an index is queried with (the one its
manifest records, or the caller's, which must be the same); :class:`QueryEmbeddings`
embeds queries with it, one at a time or in a batch, and keeps their vectors.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from sealgraph.errors import EmbedderMismatchError, InputError
from sealgraph.index.embedders import (
    ENABLE_DENSE_HINT,
    LANGCHAIN_PREFIX,
    Embedder,
    as_embedder,
    check_embedder_ready,
    normalize_rows,
    recorded_embedder,
)
from sealgraph.ingest import WarnFn

__all__ = ["QueryEmbeddings", "query_embedder", "warn_once"]

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


_warned_once: set[str] = set()


def warn_once(warn: WarnFn, message: str) -> None:
    """Give ``message`` to ``warn`` the first time in this process only."""
    if message not in _warned_once:
        _warned_once.add(message)
        warn(message)


def query_embedder(
    info: dict[str, Any], embedder: str | Embedder | Any | None, where: object, warn: WarnFn
) -> Embedder | None:
    """Return the embedder an index whose manifest records ``info`` is queried with.

    ``embedder`` None: the recorded one, when it can be made here (else None, with a
    warning: retrieval is lexical); ``"none"``/``"off"``: None; anything else must be
    an embedder of the recorded name.

    Raises:
        EmbedderMismatchError: ``embedder`` is another embedder.
        ConfigError: The embedder cannot work here (an OpenAI model without an API key).

    """
    name = info.get("name")
    if isinstance(embedder, str) and embedder.strip().lower() in {"none", "off"}:
        return None
    if embedder is None:
        try:
            # A base URL the manifest records is refused unless the user gives one.
            resolved = recorded_embedder(info, where=f"the index at {where}")
        except InputError:  # unknown name or missing optional dependency
            resolved = None
        if resolved is None:
            warn_once(warn, _unavailable(name, where))
        # Available but not usable (no API key): say so now, not inside a graph node.
        check_embedder_ready(resolved)
        return resolved
    resolved = as_embedder(embedder)
    if resolved is None or resolved.name != name:
        got = resolved.name if resolved is not None else "none"
        raise EmbedderMismatchError(
            f"the index at {where} was built with embedder {name}, not {got}; "
            f"query with the same embedder or rebuild the index"
        )
    check_embedder_ready(resolved)
    return resolved


def _unavailable(name: str | None, where: object) -> str:
    message = (
        f"dense retrieval disabled: the index at {where} has {name} vectors but that "
        f"embedder is not available here; retrieval will be lexical (BM25) only"
    )
    if name and name.startswith("sentence-transformers/"):
        message += f"; enable it with {ENABLE_DENSE_HINT}"
    elif name and name.startswith(LANGCHAIN_PREFIX):
        message += (
            "; pass the LangChain embeddings it was built with: "
            "load_index(path, embedder=embeddings)"
        )
    return message
