"""The graph fans out with Send when a set outnumbers k, and packs the merged set once."""

from __future__ import annotations

import pytest
from support.filings import filings_index

from sealgraph.config import SealConfig
from sealgraph.graph.builder import build_graph
from sealgraph.runs.page import render_run_page
from sealgraph.runs.timeline import step_lines

OVER_TIME = "How have the net sales of Northwind, Brightside and Quilltower changed over time?"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    index = filings_index(tmp_path_factory.mktemp("fanout-graph"))
    return index, build_graph(index, config=SealConfig(k=5, budget=300))


def test_twelve_members_fan_out_into_three_branches_of_fixed_k(graph):
    _, g = graph
    out = g.invoke({"question": OVER_TIME})
    branches = [e for e in out["seal_log"] if e["node"] == "branch" and e["kind"] == "branch"]
    assert sorted(e["data"]["branch"] for e in branches) == [0, 1, 2]
    for e in branches:
        assert len(e["data"]["slots"]) <= 5  # each branch keeps its own k
    docs = {e["doc_id"] for e in out["evidence"]}
    assert len({d for d in docs if d.endswith((".md",))}) == 12  # every member is in
    assert len(out["evidence"]) <= 3 * 5
    assert out["context_tokens"] <= 300  # packed once, under the budget
    assert not [gap for gap in out["gaps"] if gap["kind"] == "missing_entity"]


def test_the_trace_and_the_page_show_the_branches(graph):
    _, g = graph
    out = g.invoke({"question": OVER_TIME})
    lines = "\n".join(step_lines(out["seal_log"]))
    assert "3 repair branches" in lines
    assert "branch 2 (Quilltower" in lines
    assert "3 branches merged" in lines
    page = render_run_page(out)
    assert "Fan-out: one repair branch per group of set members" in page
    assert "Brightside" in page


def test_a_set_that_fits_in_k_takes_the_loop_without_fanning_out(graph):
    _, g = graph
    out = g.invoke({"question": "How have Northwind's net sales changed over time?"})
    assert not [e for e in out["seal_log"] if e["node"] == "branch"]
    docs = {e["doc_id"] for e in out["evidence"]}
    assert {d for d in docs if "NWLP" in d} == {
        "2022 Q3 NWLP.md",
        "2023 Q1 NWLP.md",
        "2023 Q2 NWLP.md",
        "2023 Q3 NWLP.md",
    }
