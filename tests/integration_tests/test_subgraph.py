"""sealgraph as a subgraph (examples/subgraph_example.py): events under seal_log, inherited checkpointer."""

import importlib.util
import sys
from pathlib import Path

import pytest

from sealgraph import build_graph

QUESTION = "In which province is the town where Northwind Studio was founded?"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subgraph_example.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("subgraph_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # typing.get_type_hints looks the module up by name
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def event_keys(events):
    return [(e["node"], e["kind"], e["message"]) for e in events]


def test_parent_log_is_its_own_and_sealgraph_events_arrive_once_under_seal_log(example, tiny_index):
    result = example.run(str(tiny_index.path), QUESTION, thread_id="sub-1")
    state = result["state"]
    # the parent's log holds exactly its own two entries, nothing from sealgraph, no repeats
    assert len(state["log"]) == 2
    assert state["log"][0].startswith("plan: ask sealgraph")
    assert state["log"][1].startswith("report: answer ")
    # sealgraph's events arrived under seal_log, once each, identical to a standalone run
    standalone = build_graph(tiny_index).invoke({"question": QUESTION})
    assert event_keys(state["seal_log"]) == event_keys(standalone["seal_log"])
    keys = [
        (e["step"], *k)
        for e, k in zip(state["seal_log"], event_keys(state["seal_log"]), strict=True)
    ]
    assert len(keys) == len(set(keys))
    assert state["answer"] == standalone["answer"]
    assert [c["chunk_id"] for c in state["citations"]] == [
        c["chunk_id"] for c in standalone["citations"]
    ]


def test_child_inherits_the_parent_checkpointer(example, tiny_index):
    result = example.run(str(tiny_index.path), QUESTION, thread_id="sub-2")
    # sealgraph itself was compiled without a checkpointer ...
    assert build_graph(tiny_index).checkpointer is None
    # ... yet its state was readable through the parent while it ran
    assert result["child_snapshots"], "parent.get_state(config, subgraphs=True) showed the child"
    counts = [n for _, n in result["child_snapshots"]]
    assert counts == sorted(counts) and counts[-1] > 0  # the child's log grew as it ran
    # streaming through the parent yields sealgraph's nodes under the child's namespace
    child_nodes = [node for namespace, node in result["updates"] if namespace]
    assert child_nodes[0] == "search" and child_nodes[-1] == "generate"
    assert all(ns[0].startswith("sealgraph:") for ns, _ in result["updates"] if ns)
    parent_nodes = [node for namespace, node in result["updates"] if not namespace]
    assert parent_nodes == ["plan", "sealgraph", "report"]


def test_example_runs_as_a_script(example, tiny_index, capsys):
    assert example.main([str(tiny_index.path), QUESTION]) == 0
    out = capsys.readouterr().out
    assert "parent log (no sealgraph events, no duplicates):" in out
    assert "seal_log: " in out
