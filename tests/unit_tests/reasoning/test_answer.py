"""The offline answer composer: one cited sentence per hop, the short span marked,
decline only when nothing answers, answer kinds that make sense, yes/no with negation."""

from __future__ import annotations

import pytest

from sealgraph.ledger.gaps import Gap
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import QuestionNeeds, question_needs
from sealgraph.reasoning.answer import (
    DECLINED,
    SpanText,
    answer_kind,
    asked_terms,
    compose_answer,
)

GAZETTEER = Gazetteer(
    [
        ("ledgerline", "Ledgerline Billing Service"),
        ("beacon", "Beacon Search Gateway"),
        ("ppt", "Payments Platform Team"),
        ("set", "Search Experience Team"),
        ("lisbon", "Lisbon Office"),
        ("toronto", "Toronto Office"),
        ("tidepool", "Tidepool Event Stream"),
    ],
    aliases=[
        ("ledgerline", "Ledgerline"),
        ("beacon", "Beacon"),
        ("ppt", "PPT"),
        ("set", "SET"),
        ("tidepool", "Tidepool"),
    ],
)

LEDGERLINE = SpanText(
    1,
    "ledgerline",
    "Ledgerline Billing Service",
    "Ledgerline is Corvane's billing engine. Ledgerline is owned by the Payments Platform "
    "Team (PPT). It consumes order events from the Tidepool Event Stream.",
)
PPT = SpanText(
    2,
    "ppt",
    "Payments Platform Team",
    "Dana Whitcombe has led the Payments Platform Team since 2019. PPT has 9 engineers, all "
    "based in the Toronto Office.",
)
SET = SpanText(
    3,
    "set",
    "Search Experience Team",
    "Tomás Ferreira leads the Search Experience Team. SET is based in the Lisbon Office and "
    "has 6 engineers.",
)
LISBON = SpanText(
    4,
    "lisbon",
    "Lisbon Office",
    "The Lisbon Office opened in September 2019. Inês Carvalho is the site lead of the Lisbon "
    "Office.",
)
BEACON = SpanText(
    5,
    "beacon",
    "Beacon Search Gateway",
    "Beacon is owned by the Search Experience Team. Beacon consumes catalog change events from "
    "Tidepool. It keeps no database of its own.",
)
ALL = [LEDGERLINE, PPT, SET, LISBON, BEACON]


def needs(question: str) -> QuestionNeeds:
    return question_needs(question, GAZETTEER)


def compose(question: str, spans=ALL, gaps=()):
    return compose_answer(needs(question), spans, gaps)


# --- one sentence per hop, short span marked ----------------------------------------------


def test_bridge_answer_is_one_sentence_per_hop_with_the_short_span_marked():
    got = compose("Who leads the team that owns the Ledgerline Billing Service?")
    assert got.short == "Dana Whitcombe"
    assert got.support == (
        (1, "Ledgerline is owned by the Payments Platform Team (PPT)."),
        (2, "Dana Whitcombe has led the Payments Platform Team since 2019."),
    )
    assert got.cited == (1, 2)
    assert got.answer == (
        "Dana Whitcombe — Ledgerline is owned by the Payments Platform Team (PPT). [1] "
        "Dana Whitcombe has led the Payments Platform Team since 2019. [2]"
    )
    assert not got.insufficient and got.missing == ""


def test_single_hop_answer_is_one_sentence():
    got = compose("How many engineers does the Search Experience Team have?", [SET, PPT])
    assert got.short == "6 engineers"
    assert got.support == ((3, "SET is based in the Lisbon Office and has 6 engineers."),)


def test_no_short_span_when_the_kind_is_not_recognised():
    # "What does X consume?" asks for a description: the sentence is the answer.
    got = compose("What does Beacon consume?", [BEACON])
    assert got.kind == "other"
    assert got.short == ""
    assert got.answer == "Beacon consumes catalog change events from Tidepool. [5]"


# --- decline only when nothing answers -----------------------------------------------------


def test_open_gaps_do_not_make_it_decline_when_the_context_answers():
    gap = Gap("missing_relation", "Ledgerline Billing Service", "leads", None, "gate unsure")
    got = compose("Who leads the team that owns the Ledgerline Billing Service?", gaps=[gap])
    assert not got.insufficient
    assert got.short == "Dana Whitcombe"


def test_a_missing_hop_is_said_and_the_found_hop_given():
    gap = Gap(
        "missing_relation",
        "Ledgerline Billing Service",
        "leads team",
        None,
        "no passage linked to 'Ledgerline Billing Service' answers 'leads team'",
    )
    got = compose(
        "Who leads the team that owns the Ledgerline Billing Service?", [LEDGERLINE], [gap]
    )
    assert not got.insufficient
    assert got.short == ""
    assert got.cited == (1,)
    assert got.missing == gap.reason
    # What is missing is its own field, never part of the text a person reads.
    assert got.answer == "Ledgerline is owned by the Payments Platform Team (PPT). [1]"


def test_declines_when_nothing_answers_and_says_what_is_missing():
    gap = Gap("missing_entity", "Heron", "", None, "no passage about 'Heron'")
    got = compose("What budget does Project Heron have?", [LISBON], [gap])
    assert got.insufficient
    assert got.cited == () and got.support == () and got.short == ""
    assert got.answer == DECLINED
    assert got.missing == "no passage about 'Heron'"


def test_declines_on_an_empty_context():
    got = compose("Who leads the Payments Platform Team?", [])
    assert got.insufficient and got.answer.startswith("Insufficient evidence")


# --- answer kinds -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Who leads the team that owns the Ledgerline Billing Service?", "agent"),
        # "where" opens a relative clause: the question asks "who".
        ("Who is the site lead of the office where the Search Experience Team is based?", "agent"),
        ("Which group is chaired by Dana Whitcombe?", "organization"),
        ("Which actor starred in the film?", "person"),
        ("In which office is the team that owns Beacon based?", "entity"),
        ("In which city is the Lisbon Office?", "place"),
        ("Where is the Search Experience Team based?", "place"),
        ("When did Ledgerline go live?", "date"),
        ("In what month and year did Ledgerline go live?", "date"),
        ("How many engineers does PPT have?", "number"),
        ("What weekly on-call stipend does an engineer on PPT receive?", "amount"),
        # "what does X return" asks for a description, never a date.
        ("What does the billing endpoint return?", "other"),
        ("How does Tidepool deliver events?", "other"),
        ("The Search Experience Team is led by who?", "agent"),
        ("Is Beacon owned by the Search Experience Team?", "yes_no"),
        ("Which opened first, the Lisbon Office or the Toronto Office?", "choice"),
    ],
)
def test_answer_kind(question, kind):
    assert answer_kind(needs(question)) == kind


def test_who_is_never_answered_by_a_place():
    got = compose(
        "Who is the site lead of the office where the Search Experience Team is based?",
        [SET, LISBON],
    )
    assert got.short == "Inês Carvalho"
    assert got.support[-1] == (4, "Inês Carvalho is the site lead of the Lisbon Office.")


def test_which_office_grows_a_place_to_the_named_office():
    spans = [
        BEACON,
        SpanText(4, "lisbon", "Lisbon Office", "The Search Experience Team is based in Lisbon."),
    ]
    got = compose("In which office is the team that owns the Beacon Search Gateway based?", spans)
    assert got.short == "Lisbon Office"


def test_asked_terms_are_the_directly_asked_relation():
    assert asked_terms("Who leads the team that owns the Ledgerline Billing Service?") == {"lead"}
    # The head noun names the answer's kind, not a relation the sentence must state.
    assert asked_terms("In which office is the team that owns Beacon based?") == frozenset()


# --- yes/no -----------------------------------------------------------------------------------


def test_yes_when_a_sentence_supports_it():
    got = compose("Does Beacon consume events from Tidepool?", [BEACON])
    assert got.short == "yes"
    assert got.answer.startswith("Yes — Beacon consumes catalog change events from Tidepool. [5]")


def test_a_negation_in_the_supporting_sentence_flips_it():
    got = compose("Does Beacon keep a database of its own?", [BEACON])
    assert got.short == "no"
    assert got.support == ((5, "It keeps no database of its own."),)


def test_no_verdict_without_a_supporting_sentence():
    got = compose("Does Beacon issue invoices?", [BEACON])
    assert got.short == ""
    assert not got.insufficient or got.support == ()


def test_both_needs_a_sentence_for_each():
    got = compose("Do the Ledgerline Billing Service and Beacon both consume events from Tidepool?")
    assert got.short == "yes"
    assert {n for n, _ in got.support} == {1, 5}


def test_same_compares_the_stated_values():
    got = compose(
        "Are the Ledgerline Billing Service and the Beacon Search Gateway owned by the same team?"
    )
    assert got.short == "no"
    assert {n for n, _ in got.support} == {1, 5}


# --- choice -----------------------------------------------------------------------------------


def test_choice_between_described_options_answers_the_entity_filling_the_role():
    spans = [
        SpanText(
            2,
            "ppt",
            "Payments Platform Team",
            "Dana Whitcombe has led the Payments Platform Team since 2019. Dana Whitcombe "
            "joined Corvane in April 2016.",
        ),
        SpanText(
            3,
            "set",
            "Search Experience Team",
            "Tomás Ferreira leads the Search Experience Team. Tomás Ferreira joined Corvane in "
            "February 2020.",
        ),
    ]
    got = compose(
        "Who joined Corvane earlier, the lead of the Payments Platform Team or the lead of the "
        "Search Experience Team?",
        spans,
    )
    assert got.short == "Dana Whitcombe"
    assert got.cited == (2, 3)


# --- a role's current holder over a former one -----------------------------------------------

HANDOVER = SpanText(
    7,
    "ppt",
    "Payments Platform Team",
    "The Payments Platform Team formed in 2017. Its first lead, Martin Okonkwo, left Corvane "
    "in 2019, and Dana Whitcombe took over the Payments Platform Team that year.",
)


def test_a_present_tense_question_is_answered_by_the_current_holder():
    got = compose("Who leads the Payments Platform Team?", [HANDOVER])
    assert got.short == "Dana Whitcombe"


def test_a_past_tense_question_may_be_answered_by_the_former_holder():
    got = compose("Who was the first lead of the Payments Platform Team?", [HANDOVER])
    assert got.short == "Martin Okonkwo"


# --- table rows: the row the question names, the column it asks -----------------------------

PLANS = SpanText(
    8,
    "plans.csv",
    "plans",
    "Plan: Sparrow; Monthly price: EUR 9; Seats: 1; Support: Email\n"
    "Plan: Falcon; Monthly price: EUR 29; Seats: 5; Support: Email and chat\n"
    "Plan: Condor; Monthly price: EUR 99; Seats: 25; Support: Phone and chat\n",
)


@pytest.mark.parametrize(
    ("question", "short"),
    [
        ("What is the monthly price of the Falcon plan?", "EUR 29"),
        ("How many seats does the Condor plan include?", "25"),
        ("Which support does the Sparrow plan come with?", "Email"),
    ],
)
def test_a_table_row_answers_with_the_cell_the_question_asks(question, short):
    got = compose(question, [PLANS])
    assert got.short == short
    assert len(got.support) == 1 and got.cited == (8,)
    key = question.split(" the ")[-1].split()[0]  # Falcon, Condor, Sparrow
    assert f"Plan: {key};" in got.answer  # the row itself is the cited sentence


def test_rows_are_not_read_into_prose():
    from sealgraph.reasoning.answer._rows import row_cells

    assert row_cells("Plan: Falcon; Seats: 5") == [("Plan", "Falcon"), ("Seats", "5")]
    assert row_cells("Sophie (born: 1444; died: 1473) was a regent.") is None
    assert row_cells("Note: this is one sentence.") is None
