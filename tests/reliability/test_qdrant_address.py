"""Untrusted inputs, round 3: a ``qdrant://`` address answered by something that is not Qdrant.

A typo in a port can land on any HTTP service (a web app, a proxy's error page, a
health check answering 200 with nothing). ``index`` and ``ask`` then end in one
clear line naming the address, never a traceback from inside the client.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.cli import run_main
from support.fakes import write_tiny_docs

pytest.importorskip("qdrant_client")

BODIES = {
    "empty": b"",
    "html": b"<!DOCTYPE html><html><body>Welcome to nginx!</body></html>",
    "json": b'{"status": "ok", "items": []}',
}


@pytest.fixture(params=sorted(BODIES))
def not_qdrant(request) -> Iterator[str]:
    """An HTTP service on 127.0.0.1 answering every request 200 with one body."""
    body = BODIES[request.param]

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

        def log_message(self, *_args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"qdrant://127.0.0.1:{server.server_address[1]}/notes"
    finally:
        server.shutdown()
        server.server_close()


def test_an_address_answered_by_another_service_is_one_clear_line(capsys, tmp_path, not_qdrant):
    docs = write_tiny_docs(tmp_path / "docs")
    for argv in (
        ["index", str(docs), "--index", not_qdrant, "--embedder", "none"],
        ["ask", "Who designed the Lumen Lamp?", "--index", not_qdrant, "--db", str(tmp_path / "r")],
    ):
        code, _, err = run_main(capsys, *argv)
        assert code != 0
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("sealgraph: error:"), err
        assert not_qdrant in err and "not a Qdrant server" in err
    assert not (tmp_path / "r").exists()
