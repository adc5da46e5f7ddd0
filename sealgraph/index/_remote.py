"""Requests to an OpenAI-compatible embeddings endpoint: several in flight, bounded, retried.

:class:`EmbeddingsEndpoint` posts ``{"model": ..., "input": [...]}`` to
``BASE_URL/embeddings`` (OpenAI, or a server with the same API: Hugging Face TEI,
vLLM, Infinity, Ollama) and returns the vectors in input order. Each request

* has a **wall-clock bound**: connecting waits at most ``timeout_s``, and every later
  socket operation (sending the body, each read of the status line, the headers and
  the body) at most what is left of ``timeout_s`` since the request started, none
  after it, so a server that never answers, or trickles its reply, cannot hold it
  longer;
* is **retried** on what may pass (no connection, a timeout, HTTP 408, 409, 425, 429
  and 5xx), ``retries`` times, after 0.5 s, 1 s, 2 s, ... (at most 8 s, or the
  server's ``Retry-After`` up to 30 s); the last failure is a one-line
  :class:`~sealgraph.errors.SealgraphError`. Other HTTP errors (a bad key, an unknown
  model, a batch too large) are not retried;
* sends the API key (read from the environment variable the caller names, at
  request time) only to the URL it was built with, and never names the key in a
  message; a reply's body is read up to a bound (1 MiB + 256 KiB per text).

:func:`run_in_order` runs the batches of one call on up to ``concurrency`` threads
and returns their results in input order; :func:`split_batches` cuts a call into
batches so that a block of texts keeps that many requests in flight.

Only the standard library is used (``http.client``), whose reads can be bounded
one by one. ``$HTTPS_PROXY``/``$HTTP_PROXY`` (and ``$NO_PROXY``) are honoured.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import math
import os
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import SplitResult, urlsplit, urlunsplit

import numpy as np

from sealgraph.errors import ConfigError, SealgraphError

DEFAULT_CONCURRENCY = 4
"""Requests an :class:`~sealgraph.index.embedders.OpenAIEmbedder` keeps in flight."""
DEFAULT_BATCH_SIZE = 64
"""Most texts per request."""
DEFAULT_RETRIES = 3
"""Retries of a request that failed in a way that may pass (4 attempts in all)."""
DEFAULT_TIMEOUT_S = 60.0
"""Wall-clock bound of one request."""
OPENAI_BASE_URL = "https://api.openai.com/v1"
"""Where requests go when no base URL is given."""

_MIN_SPLIT = 8  # fewest texts per request when a call is split only to keep requests in flight
_BACKOFF_S = 0.5
_BACKOFF_CAP_S = 8.0
_RETRY_AFTER_CAP_S = 30.0
_RETRY_STATUS = frozenset({408, 409, 425, 429})
_BODY_BASE = 1 << 20
_BODY_PER_TEXT = 256 << 10
_T = TypeVar("_T")
_R = TypeVar("_R")


class RequestFailed(Exception):
    """One attempt failed; ``retry`` says whether another may succeed."""

    def __init__(self, message: str, *, retry: bool, wait_s: float | None = None) -> None:
        super().__init__(message)
        self.retry = retry
        self.wait_s = wait_s


def clean_base_url(url: str, *, what: str = "the embedder base URL") -> str:
    """Return ``url`` without a trailing slash, checked to be an http(s) URL with a host.

    Raises:
        ConfigError: Not an http or https URL with a host.

    """
    value = str(url).strip().rstrip("/")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ConfigError(f"{what} must be an http:// or https:// URL with a host, got {url!r}")
    return value


def public_url(url: str) -> str:
    """``url`` as it may be shown or recorded: no user, password, query or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def same_url(a: str, b: str) -> bool:
    """Whether two base URLs name the same endpoint (case of scheme and host, trailing slash)."""

    def key(url: str) -> tuple[str, str, int | None, str]:
        parts = urlsplit(public_url(url))
        return (parts.scheme.lower(), (parts.hostname or "").lower(), parts.port, parts.path)

    try:
        return key(a) == key(b)
    except ValueError:
        return False


def split_batches(n: int, batch_size: int, concurrency: int) -> list[tuple[int, int]]:
    """Cut ``n`` texts into ``(start, stop)`` batches of at most ``batch_size``.

    A call of fewer than ``concurrency`` full batches is still cut into up to
    ``concurrency`` even parts (of at least 8 texts each), so that one block of
    texts keeps that many requests in flight.
    """
    if n <= 0:
        return []
    parts = max(math.ceil(n / batch_size), min(concurrency, n // _MIN_SPLIT), 1)
    size, extra = divmod(n, parts)
    bounds, start = [], 0
    for i in range(parts):
        stop = start + size + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def run_in_order(
    items: Sequence[_T],
    work: Callable[[_T, threading.Event], _R],
    concurrency: int,
) -> list[_R]:
    """Return ``[work(item, stop) for item in items]``, up to ``concurrency`` at a time.

    The first failure is raised once the call is over: ``stop`` is set so that the
    others give up their retries, and what has not started is cancelled.
    """
    stop = threading.Event()
    if concurrency <= 1 or len(items) <= 1:
        return [work(item, stop) for item in items]
    pool = ThreadPoolExecutor(min(concurrency, len(items)), thread_name_prefix="sealgraph-embed")
    futures = [pool.submit(work, item, stop) for item in items]
    try:
        return [future.result() for future in futures]
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=not stop.is_set(), cancel_futures=True)


@dataclass(frozen=True)
class _Target:
    """Where a request's connection goes: the server itself, or a proxy to it."""

    host: str
    port: int
    tls: bool
    path: str
    tunnel: tuple[str, int] | None = None
    proxy_auth: str | None = None


class EmbeddingsEndpoint:
    """``POST {base_url}/embeddings`` with a wall-clock bound, retries and a byte bound.

    Args:
        base_url: The server's base URL (``.../v1``), checked by :func:`clean_base_url`.
        model: The ``model`` of every request.
        api_key_env: Environment variable holding the API key, read at each request;
            unset or empty sends no ``Authorization`` header (a local server).
        timeout_s: Wall-clock bound of one request.
        retries: Retries of a request that failed in a way that may pass.
        label: What messages call the embedder (``openai:MODEL``).

    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
        label: str = "",
    ) -> None:
        self.base_url = clean_base_url(base_url)
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.retries = int(retries)
        self.label = label or model
        self._target = _target_of(urlsplit(self.base_url))

    def __repr__(self) -> str:
        return f"EmbeddingsEndpoint({public_url(self.base_url)!r}, model={self.model!r})"

    def embed(self, texts: Sequence[str], stop: threading.Event | None = None) -> np.ndarray:
        """Return the ``(len(texts), dim)`` float32 vectors of ``texts``, retrying as documented.

        Raises:
            SealgraphError: The last attempt failed, or a failure that retrying cannot fix.

        """
        stop = stop or threading.Event()
        attempts = self.retries + 1
        for attempt in range(attempts):
            try:
                return self._attempt(list(texts))
            except RequestFailed as exc:
                if not exc.retry or attempt + 1 == attempts:
                    raise self._failed(exc, attempt + 1) from None
                wait = exc.wait_s
                if wait is None:
                    wait = min(_BACKOFF_S * 2**attempt, _BACKOFF_CAP_S)
                if stop.wait(wait):
                    raise self._failed(exc, attempt + 1) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _failed(self, exc: RequestFailed, attempts: int) -> SealgraphError:
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return SealgraphError(
            f"embedding with {self.label} at {public_url(self.base_url)} failed{tries}: {exc}"
        )

    def _attempt(self, texts: list[str]) -> np.ndarray:
        payload = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        status, headers, body = self._post(payload, _BODY_BASE + _BODY_PER_TEXT * len(texts))
        if status != 200:
            raise _http_failure(status, headers, body)
        return _vectors_of(body, len(texts))

    def _headers(self, length: int) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Content-Length": str(length),
            "Accept": "application/json",
            "Accept-Encoding": "identity",
            "Connection": "close",
            "User-Agent": "sealgraph",
        }
        key = os.environ.get(self.api_key_env, "").strip()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if self._target.proxy_auth and self._target.tunnel is None:
            headers["Proxy-Authorization"] = self._target.proxy_auth
        return headers

    def _post(self, payload: bytes, limit: int) -> tuple[int, Any, bytes]:
        """One exchange within ``timeout_s`` of wall clock: status, headers, body."""
        deadline = time.monotonic() + self.timeout_s
        conn = self._connection()
        conn.response_class = _BoundedResponse
        _DEADLINE.value = deadline
        try:
            conn.connect()
            conn.sock.settimeout(_time_left(deadline))  # sendall: the whole body within it
            conn.request(
                "POST", self._target.path, body=payload, headers=self._headers(len(payload))
            )
            response = conn.getresponse()
            if response.length is not None and response.length > limit:
                raise RequestFailed(f"the reply is larger than {limit:,} bytes", retry=False)
            body = response.read(limit + 1)
            if response.length:  # fewer bytes than its Content-Length: the server hung up
                raise http.client.IncompleteRead(body, response.length)
            if len(body) > limit:
                raise RequestFailed(f"the reply is larger than {limit:,} bytes", retry=False)
            return response.status, response.headers, body
        except TimeoutError:
            raise RequestFailed(
                f"no complete reply within {self.timeout_s:g} s", retry=True
            ) from None
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise RequestFailed(f"{type(exc).__name__}: {exc}", retry=True) from None
        finally:
            conn.close()

    def _connection(self) -> http.client.HTTPConnection:
        target = self._target
        if target.tls and target.tunnel is None:
            return http.client.HTTPSConnection(
                target.host, target.port, timeout=self.timeout_s, context=_ssl_context()
            )
        if target.tunnel is not None:  # https through a proxy: CONNECT, then TLS
            conn = http.client.HTTPSConnection(
                target.host, target.port, timeout=self.timeout_s, context=_ssl_context()
            )
            auth = {"Proxy-Authorization": target.proxy_auth} if target.proxy_auth else None
            conn.set_tunnel(*target.tunnel, headers=auth)
            return conn
        return http.client.HTTPConnection(target.host, target.port, timeout=self.timeout_s)


_DEADLINE = threading.local()  # the monotonic deadline of the request this thread sends


def _time_left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


class _DeadlineReader(io.RawIOBase):
    """A socket's reads (its ``SocketIO``), each waiting at most until ``deadline``, none after."""

    def __init__(self, raw: Any, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._raw = raw
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self._sock.settimeout(_time_left(self._deadline))
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()  # lets the socket close (it counts its open readers)
        super().close()


class _BoundedResponse(http.client.HTTPResponse):
    """An ``HTTPResponse`` whose status line, headers and body are read by the deadline.

    A timeout per socket operation alone does not bound a server that trickles its
    reply (a byte just before each timeout): every read here waits at most what
    is left of the request's wall-clock bound.
    """

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        raw = self.fp.detach()  # nothing is buffered yet
        self.fp = io.BufferedReader(_DeadlineReader(raw, sock, _DEADLINE.value))


def _target_of(parts: SplitResult) -> _Target:
    tls = parts.scheme == "https"
    host = parts.hostname or ""
    port = parts.port or (443 if tls else 80)
    path = (parts.path.rstrip("/") or "") + "/embeddings"
    proxy = _proxy_for(parts.scheme, host)
    if proxy is None:
        return _Target(host, port, tls, path)
    auth = None
    if proxy.username:
        token = base64.b64encode(f"{proxy.username}:{proxy.password or ''}".encode()).decode()
        auth = f"Basic {token}"
    proxy_port = proxy.port or 8080
    if tls:
        return _Target(proxy.hostname or "", proxy_port, True, path, (host, port), auth)
    absolute = urlunsplit(("http", parts.netloc.rpartition("@")[2], path, "", ""))
    return _Target(proxy.hostname or "", proxy_port, False, absolute, None, auth)


def _proxy_for(scheme: str, host: str) -> SplitResult | None:
    """Return the proxy ``$HTTPS_PROXY``/``$HTTP_PROXY`` names for ``host`` (None: ``$NO_PROXY``)."""
    proxy = urllib.request.getproxies().get(scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return parts if parts.hostname else None


def _ssl_context() -> ssl.SSLContext:
    """Trust the system's certificates when ``$SSL_CERT_FILE``/``$SSL_CERT_DIR`` are set, else certifi's."""
    if not (os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR")):
        try:
            import certifi

            return ssl.create_default_context(cafile=certifi.where())
        except ImportError:
            pass
    return ssl.create_default_context()


def _http_failure(status: int, headers: Any, body: bytes) -> RequestFailed:
    message = _server_message(body)
    retry = status in _RETRY_STATUS or status >= 500
    wait = _retry_after(headers.get("Retry-After")) if retry else None
    hint = ""
    if status in {401, 403}:
        hint = " (check the API key, or the URL)"
    elif status == 413:
        hint = " (too many texts per request for this server: lower --embed-batch-size)"
    return RequestFailed(f"HTTP {status}: {message}{hint}", retry=retry, wait_s=wait)


def _server_message(body: bytes) -> str:
    text = body[:2000].decode("utf-8", "replace")
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data.get("message", data.get("detail")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            text = str(error)
    text = " ".join(text.split())
    return (text[:200] + "...") if len(text) > 200 else (text or "(no message)")


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, _RETRY_AFTER_CAP_S)


def _vectors_of(body: bytes, n: int) -> np.ndarray:
    """Return the ``(n, dim)`` vectors of an embeddings reply, ordered by each item's ``index``."""
    try:
        items = json.loads(body)["data"]
        if not isinstance(items, list) or len(items) != n:
            got = len(items) if isinstance(items, list) else "no list"
            raise ValueError(f"{got} embeddings for {n} texts")
        order = [item.get("index", i) for i, item in enumerate(items)]
        if sorted(order) != list(range(n)):
            raise ValueError("the items' indexes are not 0 to n-1")
        rows = [items[i]["embedding"] for i in np.argsort(order, kind="stable")]
        vectors = np.asarray(rows, dtype=np.float32)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise RequestFailed(f"not an embeddings reply ({exc})", retry=False) from None
    if vectors.ndim != 2 or vectors.shape[1] == 0 or not np.isfinite(vectors).all():
        raise RequestFailed(
            f"not an embeddings reply (vectors of shape {vectors.shape}, or not finite)",
            retry=False,
        )
    return vectors
