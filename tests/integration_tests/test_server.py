"""The LangGraph server entry point: langgraph.json and the module-level graph of sealgraph.server."""

import importlib
import json
import sys
from pathlib import Path

import pytest

from sealgraph.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
QUESTION = "In which province is the town where Northwind Studio was founded?"


def fresh_server_module():
    sys.modules.pop("sealgraph.server", None)
    return importlib.import_module("sealgraph.server")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for name in ("SEALGRAPH_INDEX", "SEALGRAPH_LLM", "SEALGRAPH_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    yield
    sys.modules.pop("sealgraph.server", None)


def test_langgraph_json_points_at_the_module_graph():
    config = json.loads((REPO / "langgraph.json").read_text(encoding="utf-8"))
    assert config["dependencies"] == ["."]
    target = config["graphs"]["sealgraph"]
    path, attribute = target.split(":")
    assert (REPO / path).resolve() == (REPO / "sealgraph" / "server.py").resolve()
    assert attribute == "graph"
    assert isinstance(config["env"], dict)


def test_server_graph_loads_from_sealgraph_index_and_answers(tiny_index, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_INDEX", str(tiny_index.path))
    monkeypatch.setenv("SEALGRAPH_CONFIG", '{"k": 2}')
    server = fresh_server_module()
    assert server.graph.checkpointer is None  # the server brings its own persistence
    result = server.graph.invoke({"question": QUESTION})
    assert result["answer"]
    assert len(result["evidence"]) == 2
    assert result["seal_log"][-1]["kind"] == "answer"
    chunks = list(server.graph.stream({"question": QUESTION}, stream_mode="updates"))
    assert next(iter(chunks[0])) == "search"


def test_server_without_index_serves_the_example_corpus(monkeypatch, tmp_path):
    from sealgraph.examples import demo

    built = []
    real = demo.ensure_demo_index

    def lexical_demo_index(index_dir=None, *, embedder="auto"):
        built.append(embedder)
        return real(index_dir, embedder="none")  # keep the test free of model loads

    monkeypatch.setattr(demo, "ensure_demo_index", lexical_demo_index)
    server = fresh_server_module()
    assert built == ["auto"]
    assert (tmp_path / "cache" / "demo-index" / "manifest.json").is_file()
    result = server.graph.invoke(
        {"question": "Who leads the team that owns the Ledgerline Billing Service?"}
    )
    assert result["evidence"]


def test_bad_server_config_is_a_config_error(tiny_index, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_INDEX", str(tiny_index.path))
    monkeypatch.setenv("SEALGRAPH_CONFIG", "{not json")
    with pytest.raises(ConfigError, match="SEALGRAPH_CONFIG"):
        fresh_server_module()
