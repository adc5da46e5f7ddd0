"""Packing keeps answer-bearing sentences and demotes boilerplate."""

from __future__ import annotations

import pytest

from sealgraph.packing import DECISIONS, PackConfig, collect_units, pack, score_units
from sealgraph.packing.scoring import (
    boilerplate_reason,
    has_answer_value,
    line_key,
    repeated_lines,
    terms,
)
from sealgraph.text.tokens import token_counter
from sealgraph.types import Chunk

COUNTER = token_counter()


def chunk(doc_id, title, sentences, *, order=0, section=(), start=0):
    text = "".join(sentences)
    spans, at = [], 0
    for s in sentences:
        spans.append((at, at + len(s)))
        at += len(s)
    return Chunk(
        chunk_id=f"{doc_id}#{order}",
        doc_id=doc_id,
        title=title,
        section=tuple(section),
        order=order,
        start=start,
        end=start + len(text),
        text=text,
        n_tokens=COUNTER.count(text),
        sentences=tuple(spans),
    )


ORG_CHART = chunk(
    "org",
    "Engineering Org Chart",
    [
        "Platform Engineering builds the shared services that product teams run on. ",
        "It contains two teams.\n\n",
        "- Data Infrastructure Team (DIT), led by Priya Raghunathan, 11 engineers. ",
        "Owns the Tidepool Event Stream.\n",
        "- Payments Platform Team (PPT), led by Dana Whitcombe, 9 engineers. ",
        "Owns the Ledgerline Billing Service.\n",
    ],
    section=("Platform Engineering",),
)
PPT_OWNERSHIP = chunk(
    "ppt",
    "Payments Platform Team",
    [
        "PPT owns the Ledgerline Billing Service, which generates every invoice Corvane sends. ",
        "The team also owns the adapters that connect Ledgerline to the card processors.",
    ],
    section=("Ownership",),
)
QUESTION = "Who leads the team that owns the Ledgerline Billing Service?"


def test_an_answer_bearing_sentence_is_never_dropped_while_budget_remains():
    evidence = [PPT_OWNERSHIP, ORG_CHART]
    focus = ["Ledgerline Billing Service"]
    # A strict threshold leaves most sentences out of every segment...
    strict = {"rse_threshold": 0.9, "fill": False}
    off = pack(
        QUESTION,
        evidence,
        budget=800,
        counter=COUNTER,
        config=PackConfig(keep_answer_bearing=False, **strict),
        focus_terms=focus,
        answer_type="agent",
    )
    on = pack(
        QUESTION,
        evidence,
        budget=800,
        counter=COUNTER,
        config=PackConfig(**strict),
        focus_terms=focus,
        answer_type="agent",
    )
    answer = "Payments Platform Team (PPT), led by Dana Whitcombe, 9 engineers."
    # Without the guarantee the lead's sentence is left to a low_relevance gap.
    assert answer not in off.context
    assert answer in on.context
    kept = next(d for d in on.trace if answer in _span_text(on, d.span_id))
    assert kept.decision == "selected" and "answer-bearing" in kept.reason
    assert on.tokens == COUNTER.count(on.context) <= 800
    assert all(d.decision in DECISIONS for d in on.trace)


def test_answer_bearing_needs_question_terms_and_the_expected_kind():
    units = [u for d in collect_units([ORG_CHART]) for u in d.units]
    scores = score_units(
        QUESTION,
        units,
        None,
        PackConfig(),
        focus_terms=["Ledgerline Billing Service"],
        answer_type="agent",
    )
    bearing = {u.text.strip() for u, b in zip(units, scores.bearing, strict=True) if b}
    # "led" meets "leads", "team" is a question term, a person's name is an agent.
    assert "- Payments Platform Team (PPT), led by Dana Whitcombe, 9 engineers." in bearing
    # No question term beyond the focus entity: not answer-bearing.
    assert "Owns the Ledgerline Billing Service." not in bearing
    # The same question asking for a date: no sentence here holds one.
    dates = score_units(QUESTION, units, None, PackConfig(), answer_type="date")
    assert not any(dates.bearing)


def test_answer_bearing_spans_are_admitted_first_under_a_tight_budget():
    evidence = [PPT_OWNERSHIP, ORG_CHART]
    result = pack(
        QUESTION,
        evidence,
        budget=100,
        counter=COUNTER,
        focus_terms=["Ledgerline Billing Service"],
        answer_type="agent",
    )
    assert COUNTER.count(result.context) == result.tokens <= 100
    assert "led by Dana Whitcombe" in result.context
    # Whatever else was selected came after every answer-bearing span had its turn.
    order = [d for d in result.trace if d.decision in ("selected", "budget_exceeded")]
    kinds = ["answer-bearing" in d.reason for d in order]
    assert kinds == sorted(kinds, reverse=True)


def _span_text(result, span_id):
    for s in result.spans:
        if s.span_id == span_id:
            return s.text
    return ""


# --- boilerplate -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\ntitle: Install\nsidebar_position: 2\n---\n", "front matter"),
        ("[Home](/) > [Docs](/docs) > [Install](/docs/install)", "links"),
        ("See the [configuration guide](../config.md).", "links"),
        ("See the Configuration guide for details.", "pointer"),
        ("Next: Configuration", "pointer"),
        ("Edit this page", "pointer"),
        ("On this page", "fragment"),
        ("Ledgerline is owned by PPT.", ""),
        ("Python 3.10", ""),
        ("| flag | default |", ""),
    ],
)
def test_boilerplate_is_recognised_by_structure(text, reason):
    assert boilerplate_reason(text) == reason


def test_lines_many_documents_repeat_are_boilerplate():
    docs = [
        chunk(f"d{i}", f"Page {i}", [f"Page {i} explains topic {i}.\n", "Was this page helpful?\n"])
        for i in range(5)
    ]
    common = repeated_lines(docs)
    assert line_key("Was this page helpful?") in common
    assert line_key("Page 1 explains topic 1.") not in common
    assert boilerplate_reason("Was this page helpful?", common) == "repeated"


def test_boilerplate_is_demoted_and_content_kept():
    page = chunk(
        "install",
        "Install",
        [
            "[Home](/) > [Docs](/docs) > [Install the CLI](/docs/install)\n",
            "See the [install guide](/docs/install) for the CLI.\n",
            "The CLI installs with pip install ledger-cli and needs Python 3.10.\n",
            "Edit this page\n",
        ],
    )
    question = "How do I install the CLI?"
    on = pack(question, [page], budget=400, counter=COUNTER)
    assert "[Home](/)" not in on.context  # it shares every question word, all the same
    assert "install guide" not in on.context
    assert "pip install ledger-cli" in on.context
    units = [u for d in collect_units([page]) for u in d.units]
    scores = score_units(question, units, None, PackConfig())
    assert scores.boilerplate == (True, True, False, True)
    # The lead prior goes to the first content sentence, not to the navigation line.
    assert scores.prior[2] >= PackConfig().lead_prior
    # The demoted lines are in the trace, decided low_relevance.
    left = [d for d in on.trace if d.decision == "low_relevance"]
    assert {d.span_id for d in left} == {"install#0:0-1", "install#0:3"}


def test_has_answer_value_by_kind():
    q = terms(QUESTION)
    assert has_answer_value("Led by Dana Whitcombe since 2019.", "agent", q)
    assert not has_answer_value("Owns the Ledgerline Billing Service.", "agent", q)
    assert has_answer_value("PPT has 9 engineers.", "number")
    assert not has_answer_value("It opened in 2019.", "number")
    assert has_answer_value("It opened in May 2019.", "date")
    assert not has_answer_value("It may open soon.", "date")
    assert has_answer_value("The team is based in Lisbon.", "place")
    assert not has_answer_value("The team is based here.", "place")
