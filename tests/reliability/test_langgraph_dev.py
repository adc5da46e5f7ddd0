"""``langgraph dev`` serves sealgraph: a real server on 127.0.0.1, runs posted over HTTP.

The server passes ``context={}`` (or whatever the client sends) to the graph; a
context with required fields made every run fail before.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support.cli import REPO
from support.fakes import write_tiny_docs

from sealgraph.config import SealConfig

pytestmark = pytest.mark.slow

QUESTION = "In which province is the town where Northwind Studio was founded?"
START_TIMEOUT_S = 90.0
_SERVER_LOG: list[Path] = []


def server_log_path() -> Path:
    """The log of the running server (its stdout and stderr)."""
    return _SERVER_LOG[-1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A ``langgraph dev`` server over a tiny lexical index; yields its base URL."""
    cli = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which(
        "langgraph"
    )
    if cli is None:
        pytest.skip("langgraph-cli[inmem] is not installed (pip install -e '.[dev]')")
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("lgdev")
    build_index(write_tiny_docs(root / "docs"), root / "idx", embedder="none", warn=print)
    # The server writes its own state under the working folder: keep it out of the repo.
    work = root / "server"
    work.mkdir()
    config = json.loads((REPO / "langgraph.json").read_text(encoding="utf-8"))
    config["dependencies"] = [str(REPO)]
    config["graphs"] = {
        name: str(REPO / target.removeprefix("./")) for name, target in config["graphs"].items()
    }
    (work / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    port = _free_port()
    env = {**os.environ, "SEALGRAPH_INDEX": str(root / "idx"), "LANGSMITH_TRACING": "false"}
    _SERVER_LOG.append(work / "server.log")
    log = (work / "server.log").open("wb")
    proc = subprocess.Popen(
        [cli, "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload"],
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{base}/ok", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    "langgraph dev did not start:\n"
                    + (work / "server.log").read_text(errors="replace")[-3000:]
                )
            time.sleep(0.5)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)
        log.close()


def test_langgraph_dev_serves_a_run_with_an_empty_context(server):
    out = _post(
        f"{server}/runs/wait",
        {"assistant_id": "sealgraph", "input": {"question": QUESTION}, "context": {}},
    )
    assert "__error__" not in out, out
    assert out["answer"]
    assert len(out["evidence"]) == SealConfig().k  # the default k
    assert out["seal_log"][-1]["kind"] == "answer"


def test_langgraph_dev_serves_a_run_without_context(server):
    out = _post(
        f"{server}/runs/wait", {"assistant_id": "sealgraph", "input": {"question": QUESTION}}
    )
    assert "__error__" not in out, out
    assert out["answer"]


def test_langgraph_dev_takes_config_overrides_in_the_context(server):
    out = _post(
        f"{server}/runs/wait",
        {
            "assistant_id": "sealgraph",
            "input": {"question": QUESTION},
            "context": {"config": {"k": 2}},
        },
    )
    assert "__error__" not in out, out
    assert len(out["evidence"]) == 2


def test_langgraph_dev_clients_order_bounded_work_and_import_nothing(server):
    # ``this`` prints the Zen of Python when imported: the server log tells if it was.
    log = Path(server_log_path())
    for body in (
        {"input": {"question": QUESTION}, "context": {"config": {"lexicon": "this:x"}}},
        {"input": {"question": QUESTION}, "context": {"config": {"llm": {"base_url": "x"}}}},
        {"input": {"question": QUESTION}, "context": {"config": {"max_loops": 10_000}}},
    ):
        out = _post(f"{server}/runs/wait", {"assistant_id": "sealgraph", **body})
        # The server hides the message from the client; its log has it.
        assert out.get("__error__", {}).get("error") == "ConfigError", out
    # The input's own config is honoured within the same bounds.
    out = _post(
        f"{server}/runs/wait",
        {"assistant_id": "sealgraph", "input": {"question": QUESTION, "config": {"k": 1}}},
    )
    assert "__error__" not in out, out
    assert len(out["evidence"]) == 1
    out = _post(
        f"{server}/runs/wait",
        {"assistant_id": "sealgraph", "input": {"question": QUESTION, "config": {"k": 500}}},
    )
    assert out.get("__error__", {}).get("error") == "ConfigError", out
    text = log.read_text(errors="replace")
    assert "a run may not change 'lexicon'" in text
    assert "The Zen of Python" not in text


@pytest.mark.parametrize(
    "context",
    [{"reasoner": "llm"}, {"index": "/etc"}, {"indx": 1}, {"config": "k=2"}],
    ids=["reasoner", "index", "unknown-field", "config-text"],
)
def test_a_context_a_client_cannot_send_is_refused_before_any_node_runs(server, context):
    out = _post(
        f"{server}/runs/wait",
        {"assistant_id": "sealgraph", "input": {"question": QUESTION}, "context": context},
    )
    error = out.get("__error__", {})
    # A client error of sealgraph's own, not a crash inside a node (AttributeError...).
    assert error.get("error") in ("InputError", "ConfigError"), out
    assert "Traceback" not in json.dumps(out)
    log = server_log_path().read_text(errors="replace")
    assert "AttributeError" not in log
