"""A small fake OpenAI-compatible chat server on 127.0.0.1, for LLM failure tests.

It serves ``POST /v1/chat/completions`` in one of a few failure modes (or with a
caller's reply function), counts the requests and keeps their JSON bodies. Use it
as a context manager: it listens on a free port while the block runs, and on exit
it releases any request it is holding, stops, and joins every thread it started,
so no test leaves a server or a thread behind::

    with FakeOpenAI("hang") as server:
        ChatOpenAI(base_url=server.url, api_key="x", timeout=1).invoke("hi")  # times out
    assert server.requests == 1
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = (
    "garbage",
    "http_500",
    "invalid_tool_call",
    "invalid_json",
    "hang",
    "reply",
    "trickle",
    "oversize",
)
"""``garbage``: HTTP 200 whose body is not JSON; ``http_500``: a server error;
``invalid_tool_call``: a well-formed completion calling the requested tool with
schema-invalid arguments; ``invalid_json``: a completion whose content is
schema-invalid JSON (for ``json_mode``/``json_schema``); ``hang``: never answers
(until the server stops); ``reply``: ``respond(body)`` builds the message, or
returns an :class:`HTTPError` to answer with that status instead; ``trickle``:
answers HTTP 200 and then sends its body (or, with ``trickle_headers=True``, its
headers) one byte every ``trickle_s``, never finishing (until ``hang_s`` or the
server stops); ``oversize``: a well-formed completion whose message (from
``respond``, else content :data:`FILL`) has :data:`FILL` replaced by
``oversize_bytes`` bytes, streamed without being built in memory
(:attr:`FakeOpenAI.bytes_sent` counts what the client took)."""

FILL = "@@FILL@@"
"""Stands in an ``oversize`` message for its filler (``"x" * oversize_bytes``)."""

INVALID_ARGS = {"totally": "wrong", "sufficient": "maybe"}
"""The schema-invalid object the ``invalid_*`` modes return."""


@dataclass(frozen=True)
class HTTPError:
    """What ``respond`` returns to answer a request with an HTTP error body."""

    status: int
    message: str
    type: str = "server_error"

    def body(self) -> bytes:
        error = {"code": self.status, "message": self.message, "type": self.type}
        return json.dumps({"error": error}).encode()


def completion(message: dict[str, Any], model: str = "fake-model") -> dict[str, Any]:
    """Wrap an assistant ``message`` dict in a chat-completion response body."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def tool_call_message(name: str, args: dict[str, Any] | str) -> dict[str, Any]:
    """An assistant message calling tool ``name`` with ``args`` (a dict or raw JSON text)."""
    arguments = args if isinstance(args, str) else json.dumps(args)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_fake",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ],
    }


def requested_tool(body: dict[str, Any]) -> str:
    """The name of the tool a request forces (``tool_choice``), else its first tool, else ''."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return str(choice.get("function", {}).get("name", ""))
    tools = body.get("tools") or []
    return str(tools[0]["function"]["name"]) if tools else ""


class FakeOpenAI:
    """A fake OpenAI-compatible server in one failure ``mode`` (see :data:`MODES`).

    Args:
        mode: One of :data:`MODES`.
        respond: For ``mode="reply"`` (required) and ``"oversize"``: builds the
            assistant message from a request body (or an :class:`HTTPError` to send
            instead).
        hang_s: Longest time a ``hang`` or ``trickle`` request is held (it is released
            earlier when the server stops), so a forgotten server cannot hold a thread
            for long.
        trickle_s: Seconds between two bytes in ``trickle`` mode.
        trickle_headers: ``trickle`` the header block instead of the body.
        oversize_bytes: Size of the filler of an ``oversize`` reply.
        oversize_length: Announce an ``oversize`` reply's length (``Content-Length``);
            False sends it without one, delimited by the end of the connection.

    """

    def __init__(
        self,
        mode: str,
        *,
        respond: Callable[[dict[str, Any]], dict[str, Any] | HTTPError] | None = None,
        hang_s: float = 30.0,
        trickle_s: float = 0.2,
        trickle_headers: bool = False,
        oversize_bytes: int = 50_000_000,
        oversize_length: bool = True,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
        if mode == "reply" and respond is None:
            raise ValueError("respond is required with mode='reply'")
        if respond is not None and mode not in ("reply", "oversize"):
            raise ValueError("respond is only used with mode='reply' or 'oversize'")
        self.mode = mode
        self.respond = respond
        self.hang_s = hang_s
        self.trickle_s = trickle_s
        self.trickle_headers = trickle_headers
        self.oversize_bytes = oversize_bytes
        self.oversize_length = oversize_length
        self.sent = 0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def requests(self) -> int:
        """Chat-completion requests received so far."""
        with self._lock:
            return len(self.bodies)

    @property
    def bytes_sent(self) -> int:
        """Bytes of ``trickle`` and ``oversize`` replies the clients took (headers included)."""
        with self._lock:
            return self.sent

    def _count(self, n: int) -> None:
        with self._lock:
            self.sent += n

    @property
    def url(self) -> str:
        """The ``base_url`` to give a client (``http://127.0.0.1:PORT/v1``)."""
        assert self._server is not None, "the server is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        # Handler threads are joined on close (not daemons), so none outlives the test.
        server.daemon_threads = False
        server.block_on_close = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai"
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release held requests, stop serving and join every thread."""
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()  # joins the handler threads
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def _reply(self, body: dict[str, Any]) -> tuple[int, bytes, str]:
        """Return (status, body bytes, content type) for one request."""
        if self.mode == "garbage":
            return 200, b"<html>this is not JSON {", "application/json"
        if self.mode == "http_500":
            error = {"error": {"message": "fake internal error", "type": "server_error"}}
            return 500, json.dumps(error).encode(), "application/json"
        if self.mode == "invalid_tool_call":
            message = tool_call_message(requested_tool(body) or "unknown", INVALID_ARGS)
        elif self.mode == "invalid_json":
            message = {"role": "assistant", "content": json.dumps(INVALID_ARGS)}
        elif self.mode == "oversize" and self.respond is None:
            message = {"role": "assistant", "content": FILL}
        else:
            assert self.respond is not None
            message = self.respond(body)
            if isinstance(message, HTTPError):
                return message.status, message.body(), "application/json"
        return 200, json.dumps(completion(message)).encode(), "application/json"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # One request per connection (a kept-alive connection would keep its
            # handler thread waiting, and closing the server joins those threads),
            # and a socket timeout so that a silent client cannot hold one either.
            timeout = 10

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

            def do_POST(self) -> None:
                self.close_connection = True
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, b'{"error": {"message": "not found"}}', "application/json")
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                with fake._lock:
                    fake.bodies.append(body)
                if fake.mode == "hang":
                    fake._release.wait(fake.hang_s)
                    self.close_connection = True
                    return  # never answer: the client times out
                if fake.mode == "trickle":
                    self._trickle()
                    return
                status, payload, content_type = fake._reply(body)
                marker = json.dumps(FILL)[1:-1].encode()
                if fake.mode == "oversize" and status == 200 and marker in payload:
                    self._send_oversize(*payload.split(marker, 1))
                    return
                self._send(status, payload, content_type)

            def _trickle(self) -> None:
                """Answer, then send one byte every ``trickle_s``, never finishing."""
                if fake.trickle_headers:
                    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: "
                    drip = b"a"
                else:
                    head = (
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 4096\r\nConnection: close\r\n\r\n{"
                    )
                    drip = b" "
                end = time.monotonic() + fake.hang_s
                try:
                    self.wfile.write(head)
                    self.wfile.flush()
                    fake._count(len(head))
                    while time.monotonic() < end and not fake._release.wait(fake.trickle_s):
                        self.wfile.write(drip)
                        self.wfile.flush()
                        fake._count(1)
                except OSError:
                    pass  # the client gave up
                self.close_connection = True

            def _send_oversize(self, head: bytes, tail: bytes) -> None:
                """Send ``head``, the filler and ``tail``, chunk by chunk."""
                size = len(head) + fake.oversize_bytes + len(tail)
                chunk = b"x" * 65536
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if fake.oversize_length:
                        self.send_header("Content-Length", str(size))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(head)
                    fake._count(len(head))
                    left = fake.oversize_bytes
                    while left > 0 and not fake._release.is_set():
                        part = chunk[: min(left, len(chunk))]
                        self.wfile.write(part)
                        fake._count(len(part))
                        left -= len(part)
                    self.wfile.write(tail)
                    fake._count(len(tail))
                except OSError:
                    pass  # the client stopped reading
                self.close_connection = True

            def _send(self, status: int, payload: bytes, content_type: str) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    self.close_connection = True  # the client gave up

        return Handler
