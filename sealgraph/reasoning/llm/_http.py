"""Wall-clock and size bounds on the HTTP exchange of each LLM attempt.

The OpenAI SDK's timeout acts per socket operation: a server that answers and then
trickles its body (a byte every 0.2 s) never trips it, and nothing bounds the size
of a body. So every ``ChatOpenAI`` the LLM reasoner uses gets HTTP clients of its
own whose transports are guarded (:func:`guarded_clients`, :func:`guard_client`):

* **Wall clock.** While an attempt runs, its limits (:class:`AttemptLimits`) sit in
  a context variable (:func:`attempt_limits`). Every socket operation of the
  connection (connect, TLS, each write, each read of the headers and of the body)
  gets a timeout no longer than what is left of the attempt, and fails once the
  attempt's deadline has passed; the response body is also checked against the
  deadline after each chunk. So an attempt ends by its deadline, whatever the
  server does, and raises :class:`AttemptTimedOut`.
* **Size.** The body is counted as it is read (decoded, when a server compresses
  it although ``Accept-Encoding: identity`` was asked for) and reading stops with
  :class:`ReplyTooLarge` past the attempt's byte bound (:func:`reply_byte_bound`),
  before the rest arrives: a 50 MB reply is never held. A ``Content-Length`` over
  the bound is refused before any of the body is read.

Outside an attempt (no limits in the context) the guarded transports pass every
request through unchanged, so a client shared with other code behaves as before.
"""

from __future__ import annotations

import sys
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any, TypeVar

__all__ = [
    "BYTES_PER_TOKEN",
    "ENVELOPE_BYTES",
    "REPLY_CEILING_BYTES",
    "AttemptCut",
    "AttemptLimits",
    "AttemptTimedOut",
    "ReplyTooLarge",
    "attempt_limits",
    "guard_client",
    "guarded_clients",
    "reply_byte_bound",
]

BYTES_PER_TOKEN = 1024
"""Bytes of HTTP body allowed per token of ``llm.max_tokens``.

Generous on purpose: a token is a few bytes of text, at most about 6 bytes per
character once JSON-escaped (``\\uXXXX``), and a streamed reply wraps each token
in a chunk envelope of a few hundred bytes (id, model, choices, ``data:`` line)."""
ENVELOPE_BYTES = 64 * 1024
"""Fixed allowance per reply for the JSON envelope, tool-call wrapping and usage."""
REPLY_CEILING_BYTES = 8 * 1024 * 1024
"""Hard ceiling of one reply's body, also the bound of a step without ``max_tokens``."""

T = TypeVar("T")


def reply_byte_bound(max_tokens: int | None) -> int:
    """Most bytes one reply's HTTP body may hold.

    ``min(ENVELOPE_BYTES + BYTES_PER_TOKEN × max_tokens, REPLY_CEILING_BYTES)``,
    that is 64 KiB + 1 KiB per token, at most 8 MiB; a step with no token bound
    gets the 8 MiB ceiling.
    """
    if max_tokens is None:
        return REPLY_CEILING_BYTES
    return min(ENVELOPE_BYTES + BYTES_PER_TOKEN * max(int(max_tokens), 0), REPLY_CEILING_BYTES)


class AttemptCut(Exception):
    """An attempt's HTTP exchange was stopped by sealgraph (its message says why)."""


class AttemptTimedOut(AttemptCut, TimeoutError):
    """The attempt's wall-clock deadline passed before its reply was complete."""


class ReplyTooLarge(AttemptCut):
    """The reply's body grew past its byte bound (or was not readable within it)."""


@dataclass
class AttemptLimits:
    """What one attempt may spend: a wall-clock deadline and a body size."""

    deadline: float
    """``time.monotonic()`` by which the attempt must be over."""
    seconds: float
    """The attempt's wall-clock allowance (for messages)."""
    max_bytes: int
    """Most body bytes its replies may hold (:func:`reply_byte_bound`)."""
    step: str = ""
    """The LLM step (``llm.max_tokens.<step>``), for messages."""
    max_tokens: int | None = None
    """The step's token bound the byte bound derives from, for messages."""
    received: int = 0
    """Body bytes read so far."""

    def left(self) -> float:
        """Seconds left before the deadline (negative once it passed)."""
        return self.deadline - time.monotonic()

    def timed_out(self) -> AttemptTimedOut:
        return AttemptTimedOut(
            f"timed out: the attempt's wall-clock bound ({self.seconds:.3g} s, what the "
            "step and the run had left) passed before the reply was complete"
        )

    def check_time(self) -> None:
        if self.left() <= 0:
            raise self.timed_out()

    def clamp(self, timeout: float | None) -> float:
        """``timeout`` cut to the time left (raise when none is left)."""
        left = self.left()
        if left <= 0:
            raise self.timed_out()
        return left if timeout is None else min(timeout, left)

    def room(self) -> int:
        return self.max_bytes - self.received

    def too_large(self, what: str = "") -> ReplyTooLarge:
        step = f"llm.max_tokens.{self.step or 'STEP'}"
        if self.max_tokens is None:
            bound = f"the ceiling of a reply ({step} not set)"
        else:
            bound = f"the bound of {step}={self.max_tokens} (64 KiB + 1 KiB per token)"
        size = what or f"over {self.max_bytes:,} bytes"
        return ReplyTooLarge(f"reply too large: {size}, {bound}; the rest was not read")

    def count(self, n: int) -> None:
        self.received += n
        if self.received > self.max_bytes:
            raise self.too_large()


_ATTEMPT: ContextVar[AttemptLimits | None] = ContextVar("sealgraph_llm_attempt", default=None)


@contextmanager
def attempt_limits(
    seconds: float, max_bytes: int, *, step: str = "", max_tokens: int | None = None
) -> Iterator[AttemptLimits]:
    """Bound the HTTP exchanges made in this context (thread or task) by these limits."""
    limits = AttemptLimits(time.monotonic() + seconds, seconds, max_bytes, step, max_tokens)
    token = _ATTEMPT.set(limits)
    try:
        yield limits
    finally:
        _ATTEMPT.reset(token)


# --- socket operations (httpcore's network backend) -----------------------------------------


def _guarded(call: Callable[[float | None], T], timeout: float | None) -> T:
    limits = _ATTEMPT.get()
    if limits is None:
        return call(timeout)
    try:
        return call(limits.clamp(timeout))
    except AttemptCut:
        raise
    except Exception as exc:
        if limits.left() <= 0:  # the clamped timeout fired: the attempt's time is spent
            raise limits.timed_out() from exc
        raise


async def _aguarded(call: Callable[[float | None], Awaitable[T]], timeout: float | None) -> T:
    limits = _ATTEMPT.get()
    if limits is None:
        return await call(timeout)
    try:
        return await call(limits.clamp(timeout))
    except AttemptCut:
        raise
    except Exception as exc:
        if limits.left() <= 0:
            raise limits.timed_out() from exc
        raise


class _Stream:
    """A network stream whose every operation ends by the attempt's deadline."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return _guarded(lambda t: self._stream.read(max_bytes, t), timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _guarded(lambda t: self._stream.write(buffer, t), timeout)

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: Any = None, timeout: Any = None) -> Any:
        return _Stream(
            _guarded(lambda t: self._stream.start_tls(ssl_context, server_hostname, t), timeout)
        )

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _AsyncStream:
    """:class:`_Stream` for asyncio (anyio) network streams."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await _aguarded(lambda t: self._stream.read(max_bytes, t), timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await _aguarded(lambda t: self._stream.write(buffer, t), timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self, ssl_context: Any, server_hostname: Any = None, timeout: Any = None
    ) -> Any:
        stream = await _aguarded(
            lambda t: self._stream.start_tls(ssl_context, server_hostname, t), timeout
        )
        return _AsyncStream(stream)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Backend:
    """httpcore network backend whose connections are :class:`_Stream`."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend

    def connect_tcp(self, host: str, port: int, timeout: Any = None, **kwargs: Any) -> Any:
        call = lambda t: self._backend.connect_tcp(host, port, t, **kwargs)  # noqa: E731
        return _Stream(_guarded(call, timeout))

    def connect_unix_socket(self, path: str, timeout: Any = None, **kwargs: Any) -> Any:
        call = lambda t: self._backend.connect_unix_socket(path, t, **kwargs)  # noqa: E731
        return _Stream(_guarded(call, timeout))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


class _AsyncBackend:
    """:class:`_Backend` for asyncio."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend

    async def connect_tcp(self, host: str, port: int, timeout: Any = None, **kwargs: Any) -> Any:
        call = lambda t: self._backend.connect_tcp(host, port, t, **kwargs)  # noqa: E731
        return _AsyncStream(await _aguarded(call, timeout))

    async def connect_unix_socket(self, path: str, timeout: Any = None, **kwargs: Any) -> Any:
        call = lambda t: self._backend.connect_unix_socket(path, t, **kwargs)  # noqa: E731
        return _AsyncStream(await _aguarded(call, timeout))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def _guard_pool(transport: Any, asynchronous: bool) -> bool:
    """Put the deadline on every socket operation of an httpx transport's connection pool.

    httpx builds its httpcore pool without a way to pass a network backend, so the
    pool's backend is wrapped where it is kept. Returns False when the transport
    has no such pool (then only the request timeouts and the body checks apply).
    """
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None:
        return False
    if not isinstance(backend, (_Backend, _AsyncBackend)):
        pool._network_backend = _AsyncBackend(backend) if asynchronous else _Backend(backend)
    return True


# --- requests and response bodies (httpx's transport) -------------------------------------


def _prepare(request: Any, limits: AttemptLimits) -> None:
    """Cut the request's timeouts to the time left; ask for an uncompressed body."""
    timeouts = dict(request.extensions.get("timeout") or {})
    for phase in ("connect", "read", "write", "pool"):
        timeouts[phase] = limits.clamp(timeouts.get(phase))
    request.extensions["timeout"] = timeouts
    request.headers["Accept-Encoding"] = "identity"


class _Decoder:
    """Decode a compressed body while counting it, never past the attempt's byte bound."""

    def __init__(self, encoding: str, limits: AttemptLimits) -> None:
        self.encoding = encoding
        self.limits = limits
        # 32 + MAX_WBITS reads a gzip or a zlib header (deflate as servers send it).
        self._zlib = zlib.decompressobj(32 + zlib.MAX_WBITS)

    def _checked(self, produce: Callable[[int], bytes]) -> bytes:
        room = self.limits.room() + 1
        try:
            out = produce(room)
        except zlib.error as exc:
            raise ReplyTooLarge(
                f"the reply's {self.encoding} body cannot be decoded ({exc})"
            ) from None
        if len(out) >= room or self._zlib.unconsumed_tail:
            raise self.limits.too_large(f"over {self.limits.max_bytes:,} bytes decoded")
        self.limits.count(len(out))
        return out

    def decode(self, chunk: bytes) -> bytes:
        return self._checked(lambda room: self._zlib.decompress(chunk, room))

    def flush(self) -> bytes:
        return self._checked(lambda room: self._zlib.flush(room))


def _bounded_body(response: Any, limits: AttemptLimits) -> _Decoder | None:
    """Check the response's headers against the limits; return its decoder, if any."""
    limits.check_time()
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        del response.headers["content-encoding"]  # decoded here, counted as it is
        if "content-length" in response.headers:
            del response.headers["content-length"]
        return _Decoder(encoding, limits)
    if encoding not in ("", "identity"):
        raise ReplyTooLarge(
            f"the reply came in the {encoding!r} content encoding, which was not asked for "
            "(Accept-Encoding: identity), so its size cannot be bounded as it is read"
        )
    declared = response.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > limits.room():
        raise limits.too_large(f"{int(declared):,} bytes announced (Content-Length)")
    return None


def _lib_of(client: Any) -> ModuleType | None:
    """Return the httpx library (``httpx`` or ``httpx2``) ``client`` is an instance of."""
    for cls in type(client).__mro__:
        root = cls.__module__.partition(".")[0]
        if cls.__name__ in ("Client", "AsyncClient") and root.startswith("httpx"):
            return sys.modules.get(root)
    return None


@cache
def _classes(lib: ModuleType) -> tuple[type, type]:
    """Return the guarded sync and async transports for one httpx library."""

    class BoundedBody(lib.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, stream: Any, limits: AttemptLimits, decoder: _Decoder | None) -> None:
            self._stream = stream
            self._limits = limits
            self._decoder = decoder

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._stream:
                self._limits.check_time()
                if self._decoder is not None:
                    chunk = self._decoder.decode(chunk)
                else:
                    self._limits.count(len(chunk))
                if chunk:
                    yield chunk
            if self._decoder is not None and (tail := self._decoder.flush()):
                yield tail

        def close(self) -> None:
            self._stream.close()

    class AsyncBoundedBody(lib.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, stream: Any, limits: AttemptLimits, decoder: _Decoder | None) -> None:
            self._stream = stream
            self._limits = limits
            self._decoder = decoder

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._stream:
                self._limits.check_time()
                if self._decoder is not None:
                    chunk = self._decoder.decode(chunk)
                else:
                    self._limits.count(len(chunk))
                if chunk:
                    yield chunk
            if self._decoder is not None and (tail := self._decoder.flush()):
                yield tail

        async def aclose(self) -> None:
            await self._stream.aclose()

    class GuardedTransport(lib.BaseTransport):  # type: ignore[name-defined,misc]
        """Passes requests to ``inner``; bounds them while an attempt's limits are set."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner
            _guard_pool(inner, asynchronous=False)

        def handle_request(self, request: Any) -> Any:
            limits = _ATTEMPT.get()
            if limits is None:
                return self.inner.handle_request(request)
            _prepare(request, limits)
            response = self.inner.handle_request(request)
            try:
                decoder = _bounded_body(response, limits)
            except BaseException:
                response.close()
                raise
            response.stream = BoundedBody(response.stream, limits, decoder)
            return response

        def close(self) -> None:
            self.inner.close()

    class AsyncGuardedTransport(lib.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        """:class:`GuardedTransport` for ``AsyncClient``."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner
            _guard_pool(inner, asynchronous=True)

        async def handle_async_request(self, request: Any) -> Any:
            limits = _ATTEMPT.get()
            if limits is None:
                return await self.inner.handle_async_request(request)
            _prepare(request, limits)
            response = await self.inner.handle_async_request(request)
            try:
                decoder = _bounded_body(response, limits)
            except BaseException:
                await response.aclose()
                raise
            response.stream = AsyncBoundedBody(response.stream, limits, decoder)
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    return GuardedTransport, AsyncGuardedTransport


def guard_client(client: Any) -> bool:
    """Guard an httpx ``Client`` / ``AsyncClient`` in place (idempotent).

    Its transport and mounted transports (proxies) are wrapped; requests made
    outside an attempt pass through unchanged. Returns False when ``client`` is not
    an httpx client whose transports can be reached (then it is left as it is).
    """
    lib = _lib_of(client)
    transport = getattr(client, "_transport", None)
    mounts = getattr(client, "_mounts", None)
    if lib is None or transport is None or not isinstance(mounts, dict):
        return False
    sync_cls, async_cls = _classes(lib)
    wrapper = async_cls if isinstance(client, lib.AsyncClient) else sync_cls
    if not isinstance(transport, wrapper):
        client._transport = wrapper(transport)
    for pattern, mounted in list(mounts.items()):
        if mounted is not None and not isinstance(mounted, wrapper):
            mounts[pattern] = wrapper(mounted)
    return True


def is_guarded(client: Any) -> bool:
    """Whether ``client``'s transport is a guarded one."""
    lib = _lib_of(client)
    return lib is not None and isinstance(getattr(client, "_transport", None), _classes(lib))


def guarded_clients(*, proxy: str | None = None) -> tuple[Any, Any]:
    """Return new (sync, async) HTTP clients for the OpenAI SDK, guarded by :func:`guard_client`.

    Built with the SDK's own defaults (``openai.DefaultHttpxClient``: its library,
    connection limits and redirects; proxies from the environment, or ``proxy``).
    """
    import openai

    kwargs: dict[str, Any] = {"proxy": proxy} if proxy else {}
    sync_client = openai.DefaultHttpxClient(**kwargs)
    async_client = openai.DefaultAsyncHttpxClient(**kwargs)
    guard_client(sync_client)
    guard_client(async_client)
    return sync_client, async_client
