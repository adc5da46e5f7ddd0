"""The answer step on the run page and in the timeline: candidates, scores, why one won."""

from __future__ import annotations

from sealgraph.graph.events import make_event
from sealgraph.runs.answer_step import answer_step_lines, answer_step_of, answer_step_section
from sealgraph.runs.page import render_run_page
from sealgraph.runs.timeline import render_timeline

STEP = {
    "route": "reader",
    "why": "[2] scores 1.90, the chain's best sentence 0.80",
    "held": 0.72,
    "parts": [
        {
            "part": "What is the default value of the --retries option?",
            "asks": "literal",
            "relation": ["default"],
            "candidates": [
                {
                    "n": 2,
                    "kind": "sentence",
                    "heading": "--retries",
                    "text": "Default: 5",
                    "score": 1.9,
                    "features": {"lexical": 0.7, "type": 1.0, "structure": 1.0},
                    "value": "5",
                },
                {
                    "n": 1,
                    "kind": "sentence",
                    "heading": "--jobs",
                    "text": "Default: <2>",
                    "score": 0.8,
                    "features": {"lexical": 0.2, "type": 1.0, "structure": 1.0},
                    "value": "2",
                },
            ],
        }
    ],
}


def _events(step=STEP):
    return [
        make_event(
            "generate",
            "answer",
            "5 — Default: 5 [2]",
            {"cited": [2], "answer_step": step, "missing": ""},
        )
    ]


def test_the_section_shows_each_candidate_its_features_and_why_the_first_won():
    html_text = answer_step_section(_events(), {"missing": "nothing"}, cite_href=lambda n: f"#c{n}")
    assert "<h2>Answer step</h2>" in html_text
    assert "answered by: <b>reader</b>" in html_text
    assert "the chain&#x27;s best sentence 0.80" in html_text
    assert '<a class="cite" href="#c2">[2]</a>' in html_text
    assert html_text.index("Default: 5") < html_text.index("Default: &lt;2&gt;")  # escaped
    assert "missing: nothing" in html_text


def test_no_step_no_section():
    assert answer_step_section([], {}) == ""
    assert answer_step_of([make_event("generate", "answer", "x", {})]) is None


def test_the_run_page_and_the_timeline_show_the_step():
    state = {
        "question": "What is the default value of the --retries option?",
        "answer": "5 — Default: 5 [2]",
        "seal_log": _events(),
    }
    page = render_run_page(state)
    assert "<h2>Answer step</h2>" in page
    text = render_timeline(state["seal_log"])
    assert "answered by reader: [2] scores 1.90" in text
    assert "[2] 1.90 value '5'  Default: 5" in text
    assert answer_step_lines(None) == []
