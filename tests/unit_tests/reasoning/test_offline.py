"""Offline short answers: yes/no, choice by dates and numbers, typed spans, citations.

The composed answer (sentences per hop, declines) is tested in test_answer_composer.py.
"""

from __future__ import annotations

import pytest

from sealgraph.ledger.gaps import Gap
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import QuestionNeeds, question_needs
from sealgraph.reasoning.answer import DECLINED, SpanText, extractive_answer
from sealgraph.reasoning.offline import OfflineReasoner

GAZETTEER = Gazetteer(
    [
        ("toronto", "Toronto Office"),
        ("lisbon", "Lisbon Office"),
        ("ppt", "Payments Platform Team"),
        ("ledgerline", "Ledgerline Billing Service"),
        ("lit", "Quiet Harbour (film)"),
        ("lindqvist", "Mara Lindqvist"),
    ],
    aliases=[("ppt", "PPT"), ("ledgerline", "Ledgerline")],
)

TORONTO = SpanText(
    1, "toronto", "Toronto Office", "The Toronto Office opened in 2014 and hosts 120 people."
)
LISBON = SpanText(2, "lisbon", "Lisbon Office", "The Lisbon Office opened in 2021 with 35 people.")
PPT = SpanText(
    3,
    "ppt",
    "Payments Platform Team",
    "Dana Whitcombe has led the Payments Platform Team since 2019. "
    "PPT has 9 engineers, all based in Toronto.",
)
LEDGERLINE = SpanText(
    4,
    "ledgerline",
    "Ledgerline Billing Service",
    "Ledgerline is owned by the Payments Platform Team. It shipped in October 2018.",
)
LIT = SpanText(
    5,
    "lit",
    "Quiet Harbour (film)",
    "Quiet Harbour is a 2003 film written and directed by Mara Lindqvist.",
)
LINDQVIST = SpanText(6, "lindqvist", "Mara Lindqvist", "Mara Lindqvist was born on May 14, 1971.")
ALL = [TORONTO, LISBON, PPT, LEDGERLINE, LIT, LINDQVIST]


def needs(question: str) -> QuestionNeeds:
    return question_needs(question, GAZETTEER)


def answer(question: str, spans=ALL):
    return extractive_answer(needs(question), spans)


# --- choice ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which opened first, the Toronto Office or the Lisbon Office?", "Toronto Office"),
        ("Which opened earlier, the Lisbon Office or the Toronto Office?", "Toronto Office"),
        ("Which opened later, the Toronto Office or the Lisbon Office?", "Lisbon Office"),
        ("Which is older, the Lisbon Office or the Toronto Office?", "Toronto Office"),
    ],
)
def test_choice_by_dates(question, expected):
    got = answer(question, [TORONTO, LISBON])
    assert got.answer == expected
    assert got.cited == (1, 2)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which has more people, the Toronto Office or the Lisbon Office?", "Toronto Office"),
        ("Which has fewer people, the Toronto Office or the Lisbon Office?", "Lisbon Office"),
    ],
)
def test_choice_by_numbers_ignores_years(question, expected):
    # Both passages state a year before the head count; years are not quantities.
    assert answer(question, [TORONTO, LISBON]).answer == expected


def test_choice_is_one_of_the_options():
    got = answer("Is Ledgerline owned by PPT or by the Search Experience Team?")
    assert (
        got.answer in needs("Is Ledgerline owned by PPT or by the Search Experience Team?").options
    )
    assert got.answer == "PPT"


# --- yes / no ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Is the Toronto Office older than the Lisbon Office?", "yes"),
        ("Is the Lisbon Office older than the Toronto Office?", "no"),
        ("Did the Lisbon Office open before the Toronto Office?", "no"),
        ("Did the Lisbon Office open after the Toronto Office?", "yes"),
        ("Does the Toronto Office have more people than the Lisbon Office?", "yes"),
    ],
)
def test_yes_no_comparison_by_values(question, expected):
    got = answer(question, [TORONTO, LISBON])
    assert got.answer == expected
    assert got.cited == (1, 2)


def test_yes_no_by_relation_words():
    # "both opened": each office has a sentence stating it.
    assert answer("Were the Toronto Office and the Lisbon Office both opened?").answer == "yes"
    # Nothing states a closing: no verdict is given (the composed answer gives the sentences).
    assert answer("Were the Toronto Office and the Lisbon Office both closed?").answer == ""


def test_yes_no_unknown_entity_has_no_verdict():
    # No sentence supports yes or no about an office the context does not know.
    assert answer("Was the Berlin Office opened before Ledgerline shipped?").answer == ""


# --- typed spans -------------------------------------------------------------------------


def test_person_span_from_the_sentence_sharing_the_relation_words():
    got = answer("Who has led the Payments Platform Team?")
    assert got.answer == "Dana Whitcombe"
    assert got.cited == (3,)


def test_ties_go_to_the_earliest_sentence_and_articles_are_dropped():
    # No sentence shares a relation word: the first capitalised span that is not a
    # question entity wins, without its article.
    got = answer("Which office hosts the most people?", [TORONTO, LISBON])
    assert got.answer == "Toronto Office"
    assert got.cited == (1,)


def test_person_span_of_a_bridge():
    got = answer("Who directed Quiet Harbour?", [LIT, LINDQVIST])
    assert got.answer == "Mara Lindqvist"
    assert got.cited == (5,)


def test_date_span_of_a_bridge_question():
    got = answer("What year was the director of Quiet Harbour born?", [LIT, LINDQVIST])
    assert got.answer == "May 14, 1971"
    assert got.cited == (6,)


def test_date_span_from_the_sentence_sharing_the_relation_words():
    assert answer("When was the Lisbon Office opened?", [LIT, LISBON]).answer == "2021"
    got = answer("When was Ledgerline shipped?")
    assert (got.answer, got.cited) == ("October 2018", (4,))


def test_number_span_skips_years():
    # The counted noun the question asks about goes with the number.
    got = answer("How many engineers does PPT have?")
    assert got.answer == "9 engineers"
    assert got.cited == (3,)


def test_place_span():
    got = answer("Where are the engineers of the Payments Platform Team based?")
    assert got.answer == "Toronto"
    assert got.cited == (3,)


def test_answer_is_not_a_question_entity():
    got = answer("Who owns Ledgerline?", [LEDGERLINE])
    assert got.answer == "Payments Platform Team"


def test_no_spans_no_answer():
    got = extractive_answer(needs("Who leads the Payments Platform Team?"), [])
    assert (got.answer, got.cited, got.confidence) == ("", (), 0.0)


def test_no_span_of_the_expected_type():
    got = answer("How many engineers does PPT have?", [LIT])
    assert got.answer == ""


# --- the offline reasoner's generate step ---------------------------------------------


def test_offline_generate_cites_one_sentence_per_hop_and_marks_the_short_answer():
    n = needs("What year was the director of Quiet Harbour born?")
    out = OfflineReasoner().generate(n, [LIT, LINDQVIST, TORONTO], [])
    got = out.value
    assert got.short == "May 14, 1971"
    assert got.cited == (5, 6)  # the chain: the film's sentence, then the director's
    assert got.answer == (
        "May 14, 1971 — Quiet Harbour is a 2003 film written and directed by "
        "Mara Lindqvist. [5] Mara Lindqvist was born on May 14, 1971. [6]"
    )
    assert [n for n, _ in got.support] == [5, 6]
    assert not got.insufficient and got.missing == ""
    assert out.llm_calls == 0 and not out.fallback


def test_offline_generate_answers_what_it_can_while_gaps_remain():
    n = needs("What year was the director of Quiet Harbour born?")
    gap = Gap(
        "missing_relation",
        "Quiet Harbour",
        "director born",
        "date",
        "no passage answers 'director born'",
    )
    out = OfflineReasoner().generate(n, [LIT], [gap])
    got = out.value
    # The first hop is there: it is given, with what is missing; no short answer.
    assert not got.insufficient
    assert got.short == ""
    assert got.cited == (5,)
    assert "no passage answers" not in got.answer and got.answer.endswith("[5]")
    assert got.missing == "no passage answers 'director born'"


def test_offline_generate_declines_when_nothing_answers():
    gap = Gap("missing_entity", "PPT", "", None, "no passage about 'PPT'")
    out = OfflineReasoner().generate(needs("How many engineers does PPT have?"), [LIT], [gap])
    got = out.value
    assert got.insufficient and got.cited == () and got.short == ""
    assert got.answer == DECLINED and got.missing == "no passage about 'PPT'"
