"""Benchmark: a build through an OpenAI-compatible embedding server that takes 2 s a request.

Starts a fake ``POST /v1/embeddings`` server on 127.0.0.1 whose every reply waits
``--delay`` seconds (deterministic vectors from a hash of each text), builds an
index of ``--docs`` small documents through it with ``--embedder openai:fake``
at ``--concurrency`` 1 and 4 (or the values given), and prints, for each, the
wall time of the whole build, the number of requests, the most requests seen in
flight at once, and the build's time over its requests' time one after another
(``requests x delay``). The issue's target: at least 4 in flight and at most 0.75x.

Usage::

    export TIKTOKEN_CACHE_DIR=../shared/tiktoken_cache
    python benchmarks/remote_embedding.py                 # 2 s a request, 16 requests
    python benchmarks/remote_embedding.py --concurrency 1 4 8 --delay 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

DIM = 32


def fake_vector(text: str) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32).tolist()


class Server:
    """A threaded fake embeddings server counting requests and the most in flight."""

    def __init__(self, delay: float) -> None:
        self.delay, self.requests, self.in_flight, self.max_in_flight = delay, 0, 0, 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.requests += 1
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                time.sleep(outer.delay)
                data = [
                    {"object": "embedding", "index": i, "embedding": fake_vector(t)}
                    for i, t in enumerate(body["input"])
                ]
                reply = json.dumps({"object": "list", "data": data, "model": body["model"]})
                with outer.lock:
                    outer.in_flight -= 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply.encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--delay", type=float, default=2.0, help="seconds a request takes")
    parser.add_argument("--docs", type=int, default=128, help="documents (one chunk each)")
    parser.add_argument("--batch-size", type=int, default=8, help="texts a request")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()

    from sealgraph.index import build_index
    from sealgraph.index.embedders import OpenAIEmbedder

    with tempfile.TemporaryDirectory() as work:
        docs = Path(work) / "docs"
        docs.mkdir()
        for i in range(args.docs):
            (docs / f"doc{i:04d}.md").write_text(
                f"# Note {i}\n\nNote {i} records reference code R{i:05d} for batch {i % 7}.\n",
                encoding="utf-8",
            )
        print(
            "| in flight (asked) | requests | most in flight | build s | one after another s | ratio |"
        )
        print("|---|---|---|---|---|---|")
        for concurrency in args.concurrency:
            server = Server(args.delay)
            try:
                embedder = OpenAIEmbedder(
                    "fake", base_url=server.url, batch_size=args.batch_size, concurrency=concurrency
                )
                started = time.perf_counter()
                build_index(
                    docs, Path(work) / f"idx{concurrency}", embedder=embedder, warn=lambda m: None
                )
                elapsed = time.perf_counter() - started
            finally:
                server.close()
            sequential = server.requests * args.delay
            print(
                f"| {concurrency} | {server.requests} | {server.max_in_flight} | {elapsed:.1f} | "
                f"{sequential:.1f} | {elapsed / sequential:.2f}x |"
            )


if __name__ == "__main__":
    main()
