"""The index in a real Qdrant server: ``sealgraph index`` and ``ask`` with a ``qdrant://`` address.

Skipped unless ``SEALGRAPH_QDRANT_URL`` names a server: ``qdrant://HOST:PORT`` (or
``qdrants://HOST:PORT`` for TLS; the API key, if the server wants one, in
``SEALGRAPH_QDRANT_API_KEY``). For example, with Docker::

    docker run -p 6333:6333 qdrant/qdrant
    SEALGRAPH_QDRANT_URL=qdrant://localhost:6333 pytest tests/integration_tests/test_qdrant_server.py

Each test works in a collection of its own (``sealgraph-test-...``), deleted at the
end; nothing else on the server is touched. The commands run as separate
processes, as a user runs them: a server index is shared between processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from support.fakes import write_tiny_docs

from sealgraph.index import build_index, load_index, remove_documents
from sealgraph.types import Document

pytestmark = pytest.mark.slow

SERVER = os.environ.get("SEALGRAPH_QDRANT_URL", "").strip().rstrip("/")
SEALGRAPH = (sys.executable, "-m", "sealgraph")

if not SERVER:
    pytest.skip("set SEALGRAPH_QDRANT_URL=qdrant://HOST:PORT to run", allow_module_level=True)
pytest.importorskip("qdrant_client")


@pytest.fixture
def address():
    """A fresh collection address on the server, deleted after the test."""
    from sealgraph.index._registry import parse_index_address
    from sealgraph.index.qdrant._store import connect

    value = f"{SERVER}/sealgraph-test-{uuid.uuid4().hex[:12]}"
    yield value
    parsed = parse_index_address(value)
    client = connect(parsed)
    if client.collection_exists(parsed.collection):
        client.delete_collection(parsed.collection)


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SEALGRAPH, *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_index_then_ask_through_the_cli(address, tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    env = {**os.environ, "SEALGRAPH_DATA_DIR": str(tmp_path / "data")}
    built = _run("index", str(docs), "--index", address, "--embedder", "none", env=env)
    assert built.returncode == 0, built.stderr
    assert f"into {address} " in built.stdout
    asked = _run(
        "ask",
        "Who designed the Lumen Lamp?",
        "--index",
        address,
        "--k",
        "2",
        "--db",
        str(tmp_path / "runs.sqlite"),
        "--json",
        env=env,
    )
    assert asked.returncode == 0, asked.stderr
    out = json.loads(asked.stdout)
    assert out["answer"] and len(out["evidence"]) == 2
    verified = _run("index", "--verify", "--index", address, env=env)
    assert verified.returncode == 0, verified.stderr


def test_add_remove_and_the_folder_index_agree(address, tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    folder = build_index(docs, tmp_path / "index", embedder="none", warn=lambda _: None)
    qdrant = build_index(docs, address, embedder="none", warn=lambda _: None)
    extra = [Document("shop", "Lamp shop", "A lamp shop opened in Port Ellis in 1990. " * 12)]
    folder = build_index(extra, tmp_path / "index", embedder="none", warn=lambda _: None)
    qdrant = build_index(extra, address, embedder="none", warn=lambda _: None)
    qdrant = remove_documents(address, [str(Path(docs) / "handbook.md")])
    folder = remove_documents(tmp_path / "index", [str(Path(docs) / "handbook.md")])
    for query in ("lamp designed studio", "Port Ellis lamp shop", "Northwind founded"):
        expected = [(h.chunk_id, round(h.score, 3)) for h in folder.search_lexical(query, 6)]
        assert [(h.chunk_id, round(h.score, 3)) for h in qdrant.search_lexical(query, 6)] == (
            expected
        )
    assert sorted(load_index(address).titles()) == sorted(folder.titles())
