"""The topology, its routers and the node wrapper, on tiny graphs built inline."""

from __future__ import annotations

from sealgraph import build_graph
from sealgraph.graph.builder import (
    NODE_FUNCTIONS,
    _after_assess,
    _after_micro_query,
    _after_replace,
    seal_state_graph,
)

QUESTION = "Who designed the Lumen Lamp?"


def test_the_routers_leave_the_loop_when_a_stop_reason_is_set():
    assert _after_assess({"stop_reason": ""}) == "micro_query"
    assert _after_assess({"stop_reason": "sufficient"}) == "pack"
    assert _after_micro_query({}) == "replace"
    assert _after_micro_query({"stop_reason": "no new micro-queries"}) == "pack"
    assert _after_replace({}) == "extract"
    assert _after_replace({"stop_reason": "no swap improves"}) == "pack"


def test_the_topology_is_search_extract_assess_loop_pack_generate():
    edges = {
        (e.source, e.target) for e in seal_state_graph(lambda fn: fn).compile().get_graph().edges
    }
    assert {
        ("__start__", "search"),
        ("search", "extract"),
        ("extract", "assess"),
        ("assess", "micro_query"),
        ("assess", "pack"),
        ("micro_query", "replace"),
        ("replace", "extract"),
        ("pack", "generate"),
        ("generate", "__end__"),
        # A set larger than k fans out: search sends branches, merged before pack.
        ("search", "branch"),
        ("branch", "merge"),
        ("merge", "pack"),
    } <= edges
    assert list(NODE_FUNCTIONS)[:7] == [
        "search",
        "extract",
        "assess",
        "micro_query",
        "replace",
        "pack",
        "generate",
    ]
    assert set(NODE_FUNCTIONS) - {"branch", "merge"} == set(list(NODE_FUNCTIONS)[:7])


def test_every_node_logs_under_its_own_name(tiny_index):
    out = build_graph(tiny_index, config={"k": 2}).invoke({"question": QUESTION})
    nodes = [e["node"] for e in out["seal_log"]]
    assert nodes[0] == "search" and nodes[-1] == "generate"
    assert set(nodes) <= set(NODE_FUNCTIONS)
    # Steps are numbered in run order.
    steps = [e["step"] for e in out["seal_log"]]
    assert steps == sorted(steps)
