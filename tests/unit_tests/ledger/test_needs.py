"""Question needs N(q): answer type, structure, entities, relation terms, choice options."""

from __future__ import annotations

import pytest

from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import ANSWER_TYPES, QuestionNeeds, answer_type_of, question_needs

GAZETTEER = Gazetteer(
    [
        ("ppt", "Payments Platform Team"),
        ("ledgerline", "Ledgerline Billing Service"),
        ("castellan", "Mira Castellan"),
        ("lit", "Lost in Fogland (film)"),
        ("toronto", "Toronto Office"),
        ("lisbon", "Lisbon Office"),
        ("kestrel", "Project Kestrel"),
        ("dana", "Dana Whitcombe"),
    ],
    aliases=[("ppt", "PPT"), ("ledgerline", "Ledgerline")],
)


def needs(question: str) -> QuestionNeeds:
    return question_needs(question, GAZETTEER)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who leads the Payments Platform Team?", "person"),
        ("Which director made Lost in Fogland?", "person"),
        ("Whose team owns Ledgerline?", "person"),
        ("When did Dana Whitcombe join Corvane?", "date"),
        ("What year was the director of Lost in Fogland born?", "date"),
        ("How many engineers does PPT have?", "number"),
        ("What percentage of invoices failed?", "number"),
        ("How old is the Lisbon Office?", "number"),
        ("Where is the team that owns Ledgerline based?", "place"),
        ("In what city is the Lisbon Office?", "place"),
        ("Which country hosts the Toronto Office?", "place"),
        ("Is Mira Castellan older than Dana Whitcombe?", "yes_no"),
        ("Did PPT and the Search Experience Team both move offices?", "yes_no"),
        ("Are the Toronto Office and the Lisbon Office the same size?", "yes_no"),
        ("Which opened first, the Toronto Office or the Lisbon Office?", "choice"),
        ("Who is older, Mira Castellan or Dana Whitcombe?", "choice"),
        ("Who was born first, Mira Castellan or Dana Whitcombe?", "choice"),
        ("Which director was born in Tokyo, Mira Castellan or Dana Whitcombe?", "choice"),
        ("Is Ledgerline owned by PPT or by the Search Experience Team?", "choice"),
        ("What does the acronym PPT stand for?", "other"),
        ("Which team owns Ledgerline?", "other"),
        # "when" asks a date only as the asking word; elsewhere it opens a clause.
        ("Until when did the Toronto Office stay open?", "date"),
        ("The civil war ended when?", "date"),
        ("The office moved in 2019. When did Dana join?", "date"),
        ("Where did the founder live when he died?", "place"),
        ("What status code is sent back when a Host header does not validate?", "other"),
        ("For how many seconds is a response cached when using CORS?", "number"),
    ],
)
def test_answer_type(question, expected):
    assert answer_type_of(question) == expected
    assert needs(question).answer_type == expected


def test_answer_types_are_declared():
    assert set(ANSWER_TYPES) == {"person", "date", "number", "place", "yes_no", "choice", "other"}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who leads the team that owns Ledgerline?", "bridge"),
        ("What year was the director of Lost in Fogland born?", "bridge"),
        ("Is Mira Castellan older than Dana Whitcombe?", "comparison"),
        ("Which opened first, the Toronto Office or the Lisbon Office?", "comparison"),
        ("How many more engineers does PPT have than Project Kestrel?", "comparison"),
        # A comparative word with a single named entity is no comparison, and asking
        # for the described entity itself ("the first lead of PPT") is one hop.
        ("Who was the first lead of PPT?", "single"),
        ("Which team owns Ledgerline?", "single"),
        ("Who leads the team that owns the service whose lead left PPT?", "multi_step"),
    ],
)
def test_structure(question, expected):
    assert needs(question).structure == expected


def test_entities_from_gazetteer_capitalised_spans_and_quotes():
    n = needs('Did Dana Whitcombe at Corvane Labs ever watch "Lost in Fogland"?')
    assert [(e.name, e.source) for e in n.entities] == [
        ("Dana Whitcombe", "gazetteer"),
        ("Corvane Labs", "capitalized"),
        ("Lost in Fogland", "quoted"),
    ]
    by_name = {e.name: e for e in n.entities}
    assert by_name["Dana Whitcombe"].targets == ("dana",)
    assert by_name["Corvane Labs"].targets == ()
    assert by_name["Lost in Fogland"].targets == ("lit",)  # quoted titles are looked up
    assert by_name["Lost in Fogland"].key == "lost in fogland"


def test_entities_resolve_aliases_and_possessives():
    n = needs("Who is PPT's manager and who runs the Payments Platform Team's on-call?")
    # Two names of one document stay two need entities (keys differ) but share targets.
    assert [(e.key, e.targets) for e in n.entities] == [
        ("ppt", ("ppt",)),
        ("payments platform team", ("ppt",)),
    ]


def test_question_words_are_not_entities():
    n = needs("When did the team ship Ledgerline?")
    assert [e.name for e in n.entities] == ["Ledgerline"]
    n = needs("What is the capital of France?")
    assert [e.name for e in n.entities] == ["France"]
    assert n.entities[0].source == "capitalized"


def test_relation_terms_exclude_entities_and_question_words():
    n = needs("What year was the director of Lost in Fogland born?")
    assert n.relation_terms == ("year", "director", "born")
    n = needs("Which team owns the Ledgerline Billing Service?")
    assert n.relation_terms == ("team", "owns")


def test_choice_options_are_the_named_alternatives():
    n = needs("Which opened first, the Toronto Office or the Lisbon Office?")
    assert n.options == ("Toronto Office", "Lisbon Office")
    n = needs("Is Ledgerline owned by PPT or by the Search Experience Team?")
    assert n.options == ("PPT", "Search Experience Team")
    n = needs("Who is older, Mira Castellan or Dana Whitcombe?")
    assert n.options == ("Mira Castellan", "Dana Whitcombe")


def test_options_only_for_choice_questions():
    assert needs("Who leads the Payments Platform Team?").options == ()
    assert needs("Is Mira Castellan older than Dana Whitcombe?").options == ()


def test_needs_from_an_older_state_read_hops_from_the_structure():
    data = needs("What year was the director of Lost in Fogland born?").to_dict()
    del data["hops"], data["answer_modifiers"]
    assert QuestionNeeds.from_dict(data).hops == 2


def test_needs_round_trip():
    n = needs('Which opened first, the Toronto Office or "Project Kestrel"?')
    assert QuestionNeeds.from_dict(n.to_dict()) == n


def test_needs_are_deterministic():
    q = "Who leads the team that owns Ledgerline, PPT or the Search Experience Team?"
    assert needs(q) == needs(q)
