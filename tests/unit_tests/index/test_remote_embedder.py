"""OpenAI-compatible embedders: requests in flight, retries, wall-clock bounds, the base URL.

Everything runs against :class:`FakeEmbeddings`, an OpenAI-compatible embeddings
server on 127.0.0.1 (``POST /v1/embeddings``) whose vectors are a function of the
text, with a delay per request and a count of the requests in flight at once.
Wall-clock asserts are generous: the cores may be busy.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.fakes import write_tiny_docs

import sealgraph.index._embed as embed_module
import sealgraph.index._remote as remote
from sealgraph.cli import main
from sealgraph.errors import ConfigError, SealgraphError
from sealgraph.index import build_index, load_index
from sealgraph.index.embedders import (
    BASE_URL_ENV,
    OpenAIEmbedder,
    embedder_for_build,
    recorded_embedder,
    resolve_embedder,
)

DIM = 16
KEY = "sk-test-secret-key"


def fake_vector(text: str, dim: int = DIM) -> np.ndarray:
    """The raw (not normalised) vector the fake server gives ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32) + 0.5


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


class FakeEmbeddings:
    """An OpenAI-compatible embeddings server on 127.0.0.1 for one ``with`` block.

    Args:
        delay_s: Seconds each request waits before it is answered.
        fail: ``fail(n)`` for the n-th request (1-based): an HTTP status to answer
            with instead, or None to answer normally.
        trickle_s: Answer with headers, then the body one byte every ``trickle_s``.
        retry_after: ``Retry-After`` header of a failure.

    It counts requests (``requests``), the most in flight at once (``max_in_flight``),
    and keeps each request's texts (``inputs``) and ``Authorization`` header (``auth``).
    Replies list the items in reverse order, each with its ``index``, as a server may.
    """

    def __init__(
        self,
        *,
        delay_s: float = 0.0,
        fail: Callable[[int], int | None] | None = None,
        trickle_s: float | None = None,
        retry_after: str | None = None,
    ) -> None:
        self.delay_s = delay_s
        self.fail = fail
        self.trickle_s = trickle_s
        self.retry_after = retry_after
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.inputs: list[list[str]] = []
        self.auth: list[str | None] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeEmbeddings:
        server = _QuietServer(("127.0.0.1", 0), _handler(self))
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()  # releases held requests
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def handle(self, body: dict[str, Any], auth: str | None) -> tuple[int, bytes]:
        with self._lock:
            self.requests += 1
            number = self.requests
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.inputs.append(list(body["input"]))
            self.auth.append(auth)
        try:
            self._stop.wait(self.delay_s)
            status = self.fail(number) if self.fail is not None else None
            if status is not None:
                return status, json.dumps({"error": {"message": f"fake failure {status}"}}).encode()
            items = [
                {"object": "embedding", "index": i, "embedding": fake_vector(t).tolist()}
                for i, t in enumerate(body["input"])
            ]
            return 200, json.dumps({"object": "list", "data": items[::-1]}).encode()
        finally:
            with self._lock:
                self.in_flight -= 1


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = False  # server_close joins every request thread

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up (a test of the timeout) is expected


def _handler(fake: FakeEmbeddings) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert self.path == "/v1/embeddings", self.path
            status, payload = fake.handle(body, self.headers.get("Authorization"))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            if fake.retry_after is not None and status != 200:
                self.send_header("Retry-After", fake.retry_after)
            self.end_headers()
            if fake.trickle_s is None:
                self.wfile.write(payload)
                return
            for byte in payload:
                if fake._stop.wait(fake.trickle_s):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (BASE_URL_ENV, "OPENAI_BASE_URL", "HTTP_PROXY", "http_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(remote, "_BACKOFF_S", 0.01)  # retries without the real waits


def quiet(_: str) -> None:
    pass


def texts_of(n: int) -> list[str]:
    return [f"passage {i} about harbour lamps number {i * 7}" for i in range(n)]


def write_docs(directory: Path, n: int) -> Path:
    """``n`` one-chunk Markdown documents."""
    directory.mkdir(parents=True)
    for i in range(n):
        (directory / f"doc{i:03d}.md").write_text(
            f"# Document {i}\n\nThe lamp number {i} was made in workshop {i % 7}.\n",
            encoding="utf-8",
        )
    return directory


# --- concurrency and order -----------------------------------------------------------------


def test_requests_are_in_flight_at_once_and_vectors_keep_input_order():
    texts = texts_of(64)
    with FakeEmbeddings(delay_s=0.3) as server:
        embedder = OpenAIEmbedder("fake", base_url=server.url, batch_size=8)
        vectors = embedder.embed_documents(texts)
    assert embedder.concurrency == 4  # the default
    assert server.requests == 8 and server.max_in_flight >= 4
    assert vectors.shape == (64, DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, unit(np.stack([fake_vector(t) for t in texts])), atol=1e-6)
    assert sorted(t for batch in server.inputs for t in batch) == sorted(texts)
    assert server.auth == [f"Bearer {KEY}"] * 8  # the key goes to the URL the user gave


def test_a_block_smaller_than_the_requests_is_split_to_keep_them_in_flight():
    assert remote.split_batches(256, 64, 4) == [(0, 64), (64, 128), (128, 192), (192, 256)]
    assert remote.split_batches(256, 256, 4) == [(0, 64), (64, 128), (128, 192), (192, 256)]
    assert remote.split_batches(10, 64, 4) == [(0, 10)]  # at least 8 texts a request
    assert remote.split_batches(20, 4, 2) == [(i, i + 4) for i in range(0, 20, 4)]
    assert remote.split_batches(0, 4, 2) == []
    spans = remote.split_batches(1000, 64, 16)
    assert spans[0][0] == 0 and spans[-1][1] == 1000 and len(spans) == 16


def test_concurrency_one_sends_one_request_at_a_time():
    with FakeEmbeddings(delay_s=0.05) as server:
        embedder = OpenAIEmbedder("fake", base_url=server.url, batch_size=4, concurrency=1)
        embedder.embed_documents(texts_of(20))
    assert server.requests == 5 and server.max_in_flight == 1


def test_a_build_through_a_slow_server_keeps_requests_in_flight_and_equals_one_at_a_time(
    tmp_path,
):
    # How much faster that makes a build is measured by benchmarks/remote_embedding.py.
    docs = write_docs(tmp_path / "docs", 128)
    with FakeEmbeddings(delay_s=0.2) as server:
        embedder = OpenAIEmbedder("fake", base_url=server.url, batch_size=8, concurrency=4)
        index = build_index(docs, tmp_path / "idx", embedder=embedder, warn=quiet)
    assert server.requests == 16 and server.max_in_flight >= 4
    ids = [c.chunk_id for c in index.iter_chunks()]
    clean = build_index(docs, tmp_path / "clean", embedder=LocalFake(), warn=quiet)
    assert [c.chunk_id for c in clean.iter_chunks()] == ids
    np.testing.assert_allclose(index.chunk_vectors(ids), clean.chunk_vectors(ids), atol=1e-6)
    assert index.manifest["embedder"] == {"name": "openai:fake", "dim": DIM, "base_url": server.url}


class LocalFake:
    """The fake server's vectors computed in-process, one text at a time."""

    name = "test:fake-vectors"
    dim = DIM

    def embed_documents(self, texts):
        return unit(np.stack([fake_vector(t) for t in texts]))

    def embed_query(self, text):
        return unit(fake_vector(text))


# --- retries, timeouts, errors --------------------------------------------------------------


def test_a_failing_then_succeeding_request_is_retried():
    with FakeEmbeddings(fail=lambda n: 503 if n <= 2 else None) as server:
        embedder = OpenAIEmbedder("fake", base_url=server.url)
        vector = embedder.embed_query("the brass lamp")
    assert server.requests == 3  # two 503s, then the answer
    np.testing.assert_allclose(vector, unit(fake_vector("the brass lamp")), atol=1e-6)


def test_a_retry_after_and_429_are_honoured():
    with FakeEmbeddings(fail=lambda n: 429 if n == 1 else None, retry_after="0.2") as server:
        started = time.perf_counter()
        OpenAIEmbedder("fake", base_url=server.url).embed_documents(["a", "b"])
        elapsed = time.perf_counter() - started
    assert server.requests == 2 and elapsed >= 0.2


def test_the_last_failure_is_a_clear_error_and_never_names_the_key():
    with FakeEmbeddings(fail=lambda n: 503) as server:
        embedder = OpenAIEmbedder("fake", base_url=server.url, retries=2)
        with pytest.raises(SealgraphError) as caught:
            embedder.embed_documents(texts_of(3))
    assert server.requests == 3  # bounded: 1 + 2 retries
    message = str(caught.value)
    assert "failed after 3 attempts: HTTP 503: fake failure 503" in message
    assert server.url in message and KEY not in message and "\n" not in message


def test_a_client_error_is_not_retried():
    with FakeEmbeddings(fail=lambda n: 401) as server:
        with pytest.raises(SealgraphError, match=r"HTTP 401.*check the API key"):
            OpenAIEmbedder("fake", base_url=server.url).embed_query("q")
        assert server.requests == 1


def test_a_failure_in_one_concurrent_request_stops_the_call():
    with FakeEmbeddings(delay_s=0.05, fail=lambda n: 400 if n == 3 else None) as server:
        embedder = OpenAIEmbedder("fake", base_url=server.url, batch_size=8)
        with pytest.raises(SealgraphError, match="HTTP 400"):
            embedder.embed_documents(texts_of(64))
    assert server.requests <= 8


@pytest.mark.parametrize("mode", ["silent", "trickle"])
def test_a_request_is_bounded_by_its_wall_clock_timeout(mode):
    kwargs = {"delay_s": 30.0} if mode == "silent" else {"trickle_s": 0.05}
    with FakeEmbeddings(**kwargs) as server:
        embedder = OpenAIEmbedder("fake", base_url=server.url, timeout_s=0.5, retries=1)
        started = time.perf_counter()
        with pytest.raises(
            SealgraphError, match=r"after 2 attempts: no complete reply within 0.5 s"
        ):
            embedder.embed_documents(texts_of(40))  # a body of ~15 KB: trickled, 12 min
        elapsed = time.perf_counter() - started
    assert server.requests == 2
    assert elapsed < 5.0, elapsed  # 2 x 0.5 s and a short backoff, with room for load


def test_a_reply_that_is_not_embeddings_is_a_clear_error():
    with pytest.raises(remote.RequestFailed, match="3 embeddings for 2 texts"):
        remote._vectors_of(json.dumps({"data": [{"embedding": [1.0]}] * 3}).encode(), 2)
    with pytest.raises(remote.RequestFailed, match="not an embeddings reply"):
        remote._vectors_of(b"<html>busy</html>", 1)
    rows = remote._vectors_of(
        json.dumps(
            {"data": [{"index": 1, "embedding": [0.0, 2.0]}, {"index": 0, "embedding": [1.0, 0]}]}
        ).encode(),
        2,
    )
    assert rows.tolist() == [[1.0, 0.0], [0.0, 2.0]]


def test_bad_settings_are_clear_errors():
    for bad in ("ftp://host/v1", "localhost:8080", "http://"):
        with pytest.raises(ConfigError, match="http:// or https:// URL"):
            OpenAIEmbedder("m", base_url=bad)
    with pytest.raises(ConfigError, match="concurrency"):
        OpenAIEmbedder("m", concurrency=0)
    with pytest.raises(ConfigError, match="--embed-concurrency"):
        resolve_embedder("none", concurrency=4)


# --- the base URL: recorded, and refused when the index names it ----------------------------


def test_the_base_url_comes_from_the_argument_then_the_environment(monkeypatch):
    assert OpenAIEmbedder("m").base_url is None  # the OpenAI API, which needs the key
    monkeypatch.setenv("OPENAI_BASE_URL", "http://b:2/v1")
    assert OpenAIEmbedder("m").base_url == "http://b:2/v1"
    monkeypatch.setenv(BASE_URL_ENV, "http://a:1/v1/")
    assert OpenAIEmbedder("m").base_url == "http://a:1/v1"
    assert OpenAIEmbedder("m", base_url="http://c:3/v1").base_url == "http://c:3/v1"
    embedder = OpenAIEmbedder("m", base_url="http://user:pw@c:3/v1?x=1")
    assert embedder.manifest_fields == {"base_url": "http://c:3/v1"}  # no user or password


def test_a_server_of_your_own_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIEmbedder("m").check_credentials()
    with FakeEmbeddings() as server:
        embedder = OpenAIEmbedder("fake", base_url=server.url)
        embedder.check_credentials()
        embedder.embed_query("q")
    assert server.auth == [None]


def test_an_index_records_the_base_url_and_loading_it_needs_the_url_given_again(
    tmp_path, monkeypatch
):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    with FakeEmbeddings() as server:
        build_index(docs, idx, embedder=OpenAIEmbedder("fake", base_url=server.url), warn=quiet)
        manifest_text = (idx / "manifest.json").read_text()
        assert json.loads(manifest_text)["embedder"]["base_url"] == server.url
        assert KEY not in manifest_text and "OPENAI_API_KEY" not in manifest_text
        built = server.requests
        # The index names the URL; the user did not: refused, nothing sent.
        with pytest.raises(ConfigError) as caught:
            load_index(idx, warn=quiet)
        message = str(caught.value)
        assert f"--embedder-base-url {server.url}" in message and BASE_URL_ENV in message
        assert server.requests == built
        # Given by the user (here the environment): used, with the key.
        monkeypatch.setenv(BASE_URL_ENV, server.url)
        index = load_index(idx, warn=quiet)
        assert index.search_dense("Who designed the Lumen Lamp?", 2)
        assert server.requests == built + 1 and server.auth[-1] == f"Bearer {KEY}"


def test_a_manifest_cannot_send_the_key_to_an_address_of_its_choosing(tmp_path):
    with FakeEmbeddings() as attacker:
        info = {"name": "openai:text-embedding-3-small", "dim": DIM, "base_url": attacker.url}
        with pytest.raises(ConfigError, match="does not send your API key"):
            recorded_embedder(info)
        # Adding to such an index without a URL is refused the same way.
        with pytest.raises(ConfigError, match="--embedder-base-url"):
            embedder_for_build("auto", info)
        with pytest.raises(ConfigError, match="--embedder-base-url"):
            embedder_for_build("openai:text-embedding-3-small", info)
        assert attacker.requests == 0
    mine = embedder_for_build("auto", info, base_url="http://127.0.0.1:9/v1")
    assert isinstance(mine, OpenAIEmbedder) and mine.base_url == "http://127.0.0.1:9/v1"
    assert embedder_for_build("auto", {"name": "openai:m", "dim": 3}) == "auto"  # as before


def test_cli_flags_build_through_the_server_and_adding_needs_the_url(tmp_path, capsys):
    docs = write_tiny_docs(tmp_path / "docs")
    more = tmp_path / "more"
    more.mkdir()
    (more / "note.md").write_text("# Note\n\nThe lighthouse of Port Ellis is white.\n")
    idx = str(tmp_path / "idx")
    with FakeEmbeddings(delay_s=0.05) as server:
        flags = ["--embedder-base-url", server.url, "--embed-concurrency", "6"]
        code = main(["index", str(docs), "--index", idx, "--embedder", "openai:fake", *flags])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "(openai:fake)" in out
        assert json.loads(Path(idx, "manifest.json").read_text())["embedder"]["base_url"] == (
            server.url
        )
        code = main(["index", str(more), "--index", idx])
        _, err = capsys.readouterr()
        assert code != 0 and "--embedder-base-url" in err and "Traceback" not in err
        assert err.count("\n") == 1
        code = main(["index", str(more), "--index", idx, "--embedder-base-url", server.url])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "1 new" in out
        code = main(["index", str(more), "--index", idx, "--embedder", "none", "--device", "cpu"])
        _, err = capsys.readouterr()
        assert code != 0 and "--device" in err


def test_a_killed_build_through_the_server_resumes_from_its_kept_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(embed_module, "_EMBED_BLOCK", 16)
    monkeypatch.setattr(embed_module, "_KEEP_EVERY_S", 0.0)  # keep every block
    docs = write_docs(tmp_path / "docs", 64)
    idx = tmp_path / "idx"
    broken = [False]
    with FakeEmbeddings(fail=lambda n: 400 if broken[0] else None) as server:
        embedder = OpenAIEmbedder("fake", base_url=server.url, batch_size=4, concurrency=4)
        first = embedder.embed_documents  # blocks 1 and 2 go through, then the server breaks

        def breaking(texts):
            out = first(texts)
            if server.requests >= 8:
                broken[0] = True
            return out

        monkeypatch.setattr(embedder, "embed_documents", breaking)
        with pytest.raises(SealgraphError, match="HTTP 400"):
            build_index(docs, idx, embedder=embedder, warn=quiet)
        assert not idx.exists()
        broken[0] = False
        warnings: list[str] = []
        again = OpenAIEmbedder("fake", base_url=server.url, batch_size=4, concurrency=4)
        index = build_index(docs, idx, embedder=again, warn=warnings.append)
    counts = index.manifest["counts"]
    assert counts["vectors_resumed"] == 32 and counts["vectors_new"] == 64
    assert any("resuming an interrupted build: 32 of the 64" in w for w in warnings)
    ids = [c.chunk_id for c in index.iter_chunks()]
    clean = build_index(docs, tmp_path / "clean", embedder=LocalFake(), warn=quiet)
    np.testing.assert_allclose(index.chunk_vectors(ids), clean.chunk_vectors(ids), atol=1e-6)
