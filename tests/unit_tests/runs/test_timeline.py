"""Rendering a run's audit trail: summaries, timeline, answer, state view (hand-made events)."""

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from sealgraph.graph.events import make_event
from sealgraph.runs.timeline import (
    duplicate_events,
    event_key,
    group_calls,
    node_summary,
    progress_line,
    render_answer,
    render_timeline,
    snippet,
    state_json,
    state_view,
    step_lines,
)

SCORE_A = {
    "chunk_id": "orbit.md#0",
    "gap_coverage": 0.5,
    "corroboration": 0.525,
    "novelty": 0.5,
    "redundancy": 0.105,
    "total": 0.86,
}
SCORE_V = {
    "chunk_id": "zephyr.md#0",
    "gap_coverage": 0.0,
    "corroboration": 0.531,
    "novelty": 0.0,
    "redundancy": 0.5,
    "total": 0.015,
}

RUN = [
    make_event("search", "needs", "answer type person, bridge question", step=1),
    make_event(
        "search",
        "retrieved",
        "initial top-2: zephyr.md#1, zephyr.md#0",
        {"hits": [{"chunk_id": "zephyr.md#1", "score": 1.6, "rank": 0}]},
        step=1,
    ),
    make_event(
        "extract",
        "ledger",
        "read 2 new passage(s); +2 entities",
        {"added_entities": ["Zephyr Gateway", "Orbit Team"], "dropped_passages": []},
        step=2,
    ),
    make_event(
        "assess",
        "gap",
        "missing_relation: nothing says who leads Orbit Team",
        {"targets": ["orbit.md"]},
        step=3,
    ),
    make_event("assess", "assess", "1 gap(s) open", step=3),
    make_event(
        "micro_query",
        "micro_query",
        "'Orbit Team leads' (missing_relation) -> 2 candidate(s)",
        {"text": "Orbit Team leads", "candidates": ["orbit.md#0", "harbor.md#0"]},
        step=4,
        loop=1,
    ),
    make_event(
        "replace",
        "candidates",
        "2 candidate(s) scored; best orbit.md#0 S=0.860",
        {"scores": [SCORE_A], "incumbents": [SCORE_V]},
        step=5,
        loop=1,
    ),
    make_event(
        "replace",
        "swap",
        "swap zephyr.md#0 -> orbit.md#0: S(c*)=0.860 > S(victim)=0.015 + ε=0.02",
        {
            "candidate": "orbit.md#0",
            "victim": "zephyr.md#0",
            "reason": "clearly better",
            "candidate_score": SCORE_A,
            "victim_score": SCORE_V,
        },
        step=5,
        loop=1,
    ),
    make_event(
        "replace",
        "refuse",
        "refuse zephyr.md#1 -> harbor.md#0: S(c*)=0.472 <= S(victim)=1.497 + ε=0.02",
        {"candidate": "harbor.md#0", "victim": "zephyr.md#1"},
        step=5,
        loop=1,
    ),
    make_event("assess", "assess", "sufficient", step=7, loop=1),
    make_event(
        "assess", "stop", "sufficient: every need of the question is covered", step=7, loop=1
    ),
    make_event(
        "pack",
        "pack",
        "2 of 3 span(s) packed, 120/800 tokens (auto)",
        {
            "decisions": [
                {
                    "span_id": "orbit.md#0:0-3",
                    "decision": "selected",
                    "tokens": 44,
                    "reason": "admitted",
                },
                {
                    "span_id": "harbor.md#0:0-1",
                    "decision": "budget_exceeded",
                    "tokens": 900,
                    "reason": "would exceed the budget",
                },
            ]
        },
        step=8,
        loop=1,
    ),
    make_event("generate", "answer", "Mara Quill", {"cited": [1, 2]}, step=9, loop=1),
]


def test_group_calls_splits_on_step_and_node_changes():
    calls = group_calls(RUN)
    assert [(c.step, c.node) for c in calls] == [
        (1, "search"),
        (2, "extract"),
        (3, "assess"),
        (4, "micro_query"),
        (5, "replace"),
        (7, "assess"),
        (8, "pack"),
        (9, "generate"),
    ]
    assert len(calls[4].events) == 3
    assert calls[4].loop == 1


@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from(["search", "extract", "assess"])),
        max_size=30,
    )
)
def test_group_calls_keeps_every_event_in_order(pairs):
    events = [make_event(node, "k", f"m{i}", step=step) for i, (step, node) in enumerate(pairs)]
    calls = group_calls(events)
    flattened = [e for call in calls for e in call.events]
    assert flattened == events
    for call in calls:
        assert all((e["step"], e["node"]) == (call.step, call.node) for e in call.events)
    for before, after in itertools.pairwise(calls):
        assert (before.step, before.node) != (after.step, after.node)


def test_node_summaries_use_the_main_event_of_each_node():
    calls = {(c.step, c.node): list(c.events) for c in group_calls(RUN)}
    assert node_summary("search", calls[(1, "search")]) == "initial top-2: zephyr.md#1, zephyr.md#0"
    assert node_summary("extract", calls[(2, "extract")]).startswith("read 2 new passage(s)")
    assert node_summary("assess", calls[(3, "assess")]) == "1 gap(s) open"
    assert (
        node_summary("assess", calls[(7, "assess")])
        == "sufficient | stop: sufficient: every need of the question is covered"
    )
    micro = node_summary("micro_query", calls[(4, "micro_query")])
    assert micro == "1 micro-query, 2 candidate(s): 'Orbit Team leads'"
    replace = node_summary("replace", calls[(5, "replace")])
    assert replace.startswith("1 swap, 1 refusal: swap zephyr.md#0 -> orbit.md#0")
    assert "refuse zephyr.md#1" not in replace  # refusals are counted, not spelled out
    assert node_summary("generate", calls[(9, "generate")]) == "Mara Quill"
    assert node_summary("pack", []) == "(no events)"


def test_progress_line_and_step_lines_carry_step_and_node():
    assert progress_line("generate", [RUN[-1]]) == "[9] generate: Mara Quill"
    lines = step_lines(RUN)
    assert len(lines) == 8
    assert lines[0] == "[1] search: initial top-2: zephyr.md#1, zephyr.md#0"
    assert lines[-1] == "[9] generate: Mara Quill"


def test_llm_fallbacks_are_flagged_in_the_summary():
    events = [
        make_event("extract", "llm_fallback", "extract: unparsable reply, offline used", step=2),
        make_event("extract", "ledger", "read 1 new passage(s)", step=2),
    ]
    assert node_summary("extract", events) == "read 1 new passage(s) [1 LLM fallback]"


def test_timeline_shows_scores_swaps_refusals_and_packing_decisions():
    text = render_timeline(
        RUN, question="Who leads the team?", answer="Mara Quill", title="thread t"
    )
    assert text.splitlines()[0] == "thread t"
    assert "question: Who leads the team?" in text
    assert "step 5 · replace (loop 1" in text
    # S(c) components of candidates and incumbents
    assert "orbit.md#0  S=+0.860 (gap 0.500, corr 0.525, nov 0.500, red 0.105)" in text
    assert "in E_t: zephyr.md#0  S=+0.015" in text
    # swaps and refusals with their reasons
    assert "SWAP       swap zephyr.md#0 -> orbit.md#0: S(c*)=0.860 > S(victim)=0.015" in text
    assert "REFUSE     refuse zephyr.md#1 -> harbor.md#0" in text
    assert "victim    zephyr.md#0  S=+0.015" in text
    # ledger changes, gaps, micro-queries, stop, packing, answer
    assert "+ entities: Zephyr Gateway, Orbit Team" in text
    assert (
        "gap        missing_relation: nothing says who leads Orbit Team (targets: orbit.md)" in text
    )
    assert "candidates: orbit.md#0, harbor.md#0" in text
    assert "STOP       sufficient" in text
    assert "budget_exceeded harbor.md#0:0-1 900 tok  would exceed the budget" in text
    assert "answer     Mara Quill  (cites [1], [2])" in text
    assert text.splitlines()[-1] == "final answer: Mara Quill"


def test_timeline_of_no_events_says_so():
    assert render_timeline([]) == "(no events)"


def test_duplicate_events_are_found_by_step_node_kind_message():
    assert duplicate_events(RUN) == []
    doubled = [*RUN, dict(RUN[3], ms=99.0)]  # same key, different timing: still a duplicate
    assert duplicate_events(doubled) == [event_key(RUN[3])]


def test_render_answer_numbers_citations_with_title_chunk_and_snippet():
    result = {
        "answer": "Mara Quill",
        "citations": [
            {
                "n": 1,
                "chunk_id": "orbit.md#0",
                "title": "Orbit Team",
                "text": "# Orbit Team\n\nMara  Quill leads it.",
            },
            {"n": 3, "chunk_id": "zephyr.md#1", "title": "Zephyr Gateway", "text": "x" * 400},
        ],
    }
    lines = render_answer(result, snippet_width=40).splitlines()
    assert lines[0] == "Mara Quill"
    assert "  [1] Orbit Team (orbit.md#0)" in lines
    assert "      Orbit Team Mara Quill leads it." in lines
    assert "  [3] Zephyr Gateway (zephyr.md#1)" in lines
    assert any(line.strip() == "x" * 39 + "…" for line in lines)
    assert render_answer({"answer": " "}) == "(no answer)"


def test_snippet_collapses_whitespace_and_cuts():
    assert snippet("## Title\n\n  some   text") == "Title some text"
    assert snippet("abcdef", 4) == "abc…"
    assert snippet("abc", 4) == "abc"


def test_state_view_shows_what_the_next_node_reads():
    values = {
        "question": "Who leads the team?",
        "config": {"k": 2},
        "slots": [{"chunk_id": "zephyr.md#1", "inserted_loop": 0}],
        "ledger": {"entities": {"a": {}, "b": {}}, "relations": [1]},
        "gaps": [{"kind": "missing_relation", "reason": "who leads Orbit Team"}],
        "issued": ["q1"],
        "candidates": {"q1": ["orbit.md#0", "harbor.md#0"], "q2": ["orbit.md#0"]},
        "blocklist": ["old.md#0"],
        "packed": [{"n": 1, "title": "Orbit Team"}],
        "context_tokens": 44,
        "loop": 1,
    }
    assert 'config overrides: {"k": 2}' in state_view(values, "search")
    assert "ledger: 2 entities, 1 relations" in state_view(values, "assess")
    micro = state_view(values, "micro_query")
    assert "open gaps: 1" in micro
    assert "missing_relation: who leads Orbit Team" in micro
    replace = state_view(values, "replace")
    assert "candidates: orbit.md#0, harbor.md#0" in replace
    assert "blocklist: old.md#0" in replace
    assert "[1] Orbit Team" in state_view(values, "generate")
    assert all(line.startswith("  ") for line in state_view(values, "pack").splitlines())


def test_state_json_is_sorted_valid_json_even_with_non_json_values():
    from pathlib import Path

    data = json.loads(state_json({"b": 1, "a": Path("/x/y"), "c": "é"}))
    assert list(data) == ["a", "b", "c"]
    assert data == {"a": "/x/y", "b": 1, "c": "é"}
