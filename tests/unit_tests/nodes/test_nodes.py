"""Each node called alone, as ``node(state, Runtime(context=...))``, on the tiny corpus."""

from __future__ import annotations

import pytest
from support.runs import run_nodes, runtime_for

from sealgraph.errors import InputError
from sealgraph.nodes.assess import assess
from sealgraph.nodes.extract import extract
from sealgraph.nodes.generate import generate
from sealgraph.nodes.micro_query import micro_query
from sealgraph.nodes.pack import pack
from sealgraph.nodes.replace import replace
from sealgraph.nodes.search import search

BRIDGE = "In which province is the town where Northwind Studio was founded?"
SINGLE = "Who designed the Lumen Lamp?"


def kinds(update) -> list[str]:
    return [e["kind"] for e in update["seal_log"]]


def test_search_reads_the_needs_and_takes_the_initial_top_k(tiny_index):
    runtime = runtime_for(tiny_index, k=2)
    update = search({"question": f"  {SINGLE} "}, runtime)
    assert update["question"] == SINGLE  # normalised once, here
    assert update["needs"]["question"] == SINGLE
    assert [s["inserted_loop"] for s in update["slots"]] == [0, 0]
    assert update["loop"] == 0 and update["ledger"] == {} and update["blocklist"] == []
    assert kinds(update) == ["needs", "retrieved"]
    assert update["seal_log"][-1]["message"].startswith("initial top-2: ")


def test_search_refuses_an_empty_question(tiny_index):
    with pytest.raises(InputError, match="the question is empty"):
        search({"question": "  "}, runtime_for(tiny_index))


def test_extract_reads_new_passages_and_drops_the_facts_of_evicted_ones(tiny_index):
    runtime = runtime_for(tiny_index, k=2)
    state = run_nodes([search, extract], {"question": SINGLE}, runtime)
    read = state["seal_log"][-1]["data"]["read"]
    assert read == [s["chunk_id"] for s in state["slots"]]
    assert state["ledger"]["entities"]
    # The first passage leaves the set: its facts leave the ledger; nothing new is read.
    gone = state["slots"][0]["chunk_id"]
    update = extract({**state, "slots": state["slots"][1:]}, runtime)
    data = update["seal_log"][-1]["data"]
    assert data["dropped_passages"] == [gone] and data["read"] == []


def test_assess_stops_at_the_loop_budget_with_gaps_open(tiny_index):
    runtime = runtime_for(tiny_index, k=1, max_loops=0)
    state = run_nodes([search, extract], {"question": BRIDGE}, runtime)
    update = assess(state, runtime)
    assert update["gaps"] and update["sufficient"] is False
    assert update["stop_reason"] == "loop budget spent (L=0)"
    assert kinds(update)[-2:] == ["assess", "stop"]


def test_a_repair_loop_keeps_k_passages_and_logs_every_decision(tiny_index):
    runtime = runtime_for(tiny_index, k=2)
    state = run_nodes([search, extract, assess], {"question": BRIDGE}, runtime)
    assert not state["stop_reason"], "the bridge question needs a second hop"
    state = run_nodes([micro_query], state, runtime)
    assert state["loop"] == 1
    assert {q["text"] for q in state["queries"]} == set(state["candidates"])
    assert set(state["issued"]) >= {q["text"] for q in state["queries"]}
    before = [s["chunk_id"] for s in state["slots"]]
    update = replace(state, runtime)
    after = [s["chunk_id"] for s in update["slots"]]
    assert len(after) == 2  # fixed k
    swapped = set(before) - set(after)
    assert set(update["blocklist"]) == swapped  # an evicted passage never comes back
    assert {"replace"} <= {e["node"] for e in update["seal_log"]}


def test_pack_fits_the_budget_and_generate_cites_what_it_packed(tiny_index):
    runtime = runtime_for(tiny_index, k=2, budget=120)
    state = run_nodes([search, extract, assess], {"question": SINGLE}, runtime)
    state = run_nodes([pack], {**state, "stop_reason": "sufficient"}, runtime)
    assert 0 < state["context_tokens"] <= 120
    assert [e["chunk_id"] for e in state["evidence"]] == [s["chunk_id"] for s in state["slots"]]
    assert all(p["n"] == i for i, p in enumerate(state["packed"], start=1))
    update = generate(state, runtime)
    assert "Ada Brightwater" in update["answer"] and update["declined"] is False
    packed = {p["n"]: p for p in state["packed"]}
    for citation in update["citations"]:
        assert citation["chunk_id"] in packed[citation["n"]]["chunk_ids"]
    assert kinds(update) == ["answer"]
