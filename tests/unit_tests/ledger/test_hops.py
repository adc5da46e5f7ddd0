"""Hop counts read from the question's form, and the needs of single-hop questions."""

from __future__ import annotations

import pytest

from sealgraph.ledger.extract import passage_features
from sealgraph.ledger.gaps import gap_spec, need_items
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import (
    asked_clause,
    focus_text,
    question_hops,
    question_needs,
    scope_clauses,
)
from sealgraph.types import Chunk

GAZETTEER = Gazetteer(
    [
        ("ppt", "Payments Platform Team"),
        ("ledgerline", "Ledgerline Billing Service"),
        ("northwind", "Northwind Studio"),
        ("port", "Port Ellis"),
        ("fog", "Lost in Fogland (film)"),
        ("dana", "Dana Whitcombe"),
        ("alpha", "Alpha Notes"),
        ("outage", "Ledgerline Outage of March 2025"),
        ("nda", "Acme_NDA-and-Bolt-Partners_2017"),
        ("valmora", "Valmora"),
    ],
    aliases=[("ppt", "PPT"), ("ledgerline", "Ledgerline")],
)


def hops(question: str) -> int:
    return question_needs(question, GAZETTEER).hops


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # Nothing described: one hop, however many words.
        ("Who founded Northwind Studio?", 1),
        ("Which team owns Ledgerline?", 1),
        ('Consider "Alpha Notes"\'s privacy policy; who can see which messages i send?', 1),
        ("Does the document indicate that the Agreement grants the Receiving Party rights?", 1),
        ("Does the Agreement state that the Receiving Party may keep copies?", 1),
        ("Does the Agreement specify which party may keep copies?", 1),
        ("Does the document state when copies are destroyed?", 1),
        ("How did the changes contribute to the enhancement of PPT's market competitiveness?", 1),
        ("Dana Whitcombe had a meeting with which team of engineers?", 1),
        # Asking for the described entity itself is one hop too.
        ("Who is the director of Lost in Fogland?", 1),
        ("Who was the first lead of PPT?", 1),
        # A role or attribute of something described rather than named: two hops.
        ("What year was the director of Lost in Fogland born?", 2),
        ("When was Dana Whitcombe's husband born?", 2),
        ("Where was the husband of Dana Whitcombe born?", 2),
        ("Who leads the team that owns Ledgerline?", 2),
        ("In which province is the town where Northwind Studio was founded?", 2),
        # A word that takes a clause ("state that") heads a description before "where".
        ("When did the state where Port Ellis lies abolish tolls?", 2),
        ("Who is the father of the director of Lost in Fogland?", 2),
        ("Who is Dana Whitcombe's paternal grandfather?", 2),
        ("What other team is based in the same office as PPT?", 2),
        ("Port Ellis is located on an island with a population of what?", 2),
        (
            "Within how many minutes must a page be acknowledged at the severity level the "
            "Ledgerline Outage of March 2025 was classified as?",
            2,
        ),
        # Nestings add up.
        ("Who leads the team that owns the service whose outage hit PPT?", 3),
    ],
)
def test_hops_count_the_nested_relations(question, expected):
    assert hops(question) == expected


def test_structure_follows_the_hop_count():
    n = question_needs("Who founded Northwind Studio?", GAZETTEER)
    assert (n.structure, n.hops) == ("single", 1)
    n = question_needs("Who leads the team that owns Ledgerline?", GAZETTEER)
    assert (n.structure, n.hops) == ("bridge", 2)
    n = question_needs("Which opened first, Port Ellis or Northwind Studio?", GAZETTEER)
    assert n.structure == "comparison"


def test_names_in_an_entity_are_no_nesting():
    # "of" inside a title is part of the name, not "the <role> of".
    assert question_hops("Who founded the Bank of Valmora?", [(12, 28)]) == 1
    assert question_hops("Who founded the Bank of Valmora?") == 2


def test_the_scope_clause_adds_no_hop_and_no_relation_words():
    q = 'Consider "Alpha Notes"\'s privacy policy; who can see which messages i send?'
    assert q[slice(*asked_clause(q))] == "who can see which messages i send?"
    assert [q[a:b] for a, b in scope_clauses(q)] == ['Consider "Alpha Notes"\'s privacy policy']
    assert focus_text(q) == "who can see which messages i send?"
    n = question_needs(q, GAZETTEER)
    assert [e.targets for e in n.entities] == [("alpha",)]
    assert n.relation_terms == ("see", "messages", "send")
    # A question whose question words run across clauses is asked whole.
    q2 = "Where do buses leave from in the city of Scene: Portrait of Port Ellis?"
    assert asked_clause(q2) == (0, len(q2))


def test_single_hop_needs_invent_no_bridge():
    n = question_needs("Who founded Northwind Studio?", GAZETTEER)
    items = [i for i in need_items(n) if i.kind != "terms"]
    assert [(i.kind, i.key, i.targets) for i in items] == [
        ("entity", "northwind studio", ("northwind",)),
        ("relation", "found", ("northwind",)),
    ]


def _passage(chunk_id: str, doc_id: str, title: str, text: str):
    chunk = Chunk(chunk_id, doc_id, title, (), 0, 0, len(text), text, 10, ((0, len(text)),))
    return passage_features(chunk, GAZETTEER)


def test_one_passage_of_the_entity_stating_the_relation_is_sufficient():
    n = question_needs("Who founded Northwind Studio?", GAZETTEER)
    items = need_items(n)
    studio = _passage(
        "northwind#0", "northwind", "Northwind Studio", "It was founded by Tomas Greyhill."
    )
    assert gap_spec(n, items, [studio]) == []
    silent = _passage("northwind#1", "northwind", "Northwind Studio", "It employs forty people.")
    gaps = gap_spec(n, items, [silent])
    assert [(g.kind, g.relation, g.targets) for g in gaps] == [
        ("missing_relation", "founded", ("northwind",))
    ]


def test_a_linked_document_states_what_the_entity_leaves_unstated():
    n = question_needs("Which Valmoran harbour town hosts Northwind Studio?", GAZETTEER)
    items = need_items(n)
    studio = _passage(
        "northwind#0", "northwind", "Northwind Studio", "Northwind Studio is hosted by Port Ellis."
    )
    town = _passage("port#0", "port", "Port Ellis", "Port Ellis is a Valmoran harbour town.")
    other = _passage("x#0", "x", "Elsewhere", "Kestrel Bay is a Valmoran harbour town.")
    assert gap_spec(n, items, [studio]) != []
    assert gap_spec(n, items, [studio, town]) == []
    # A passage nothing links to the named entity states nothing for it.
    assert gap_spec(n, items, [studio, other]) != []


def test_names_describing_the_answer_anchor_nothing():
    n = question_needs("Which Valmora designer founded Northwind Studio?", GAZETTEER)
    assert n.answer_modifiers == ("valmora",)
    items = need_items(n)
    assert [i.key for i in items if i.kind == "entity"] == ["northwind studio"]
    relation = next(i for i in items if i.kind == "relation")
    assert "valmora" in relation.key.split() and relation.targets == ("northwind",)


def test_names_inside_file_name_titles_resolve_to_their_document():
    q = "Consider the Non-Disclosure Agreement between Acme and Bolt Partners; Does it expire?"
    n = question_needs(q, GAZETTEER)
    by_name = {e.name: e.targets for e in n.entities}
    assert by_name["Acme and Bolt Partners"] == ("nda",)
    assert n.answer_type == "yes_no" and n.structure == "single"


def test_month_names_and_lower_case_common_words_are_no_entities():
    n = question_needs("What race is held in Port Ellis every May?", GAZETTEER)
    assert [e.name for e in n.entities] == ["Port Ellis"]
    gaz = Gazetteer([("keep", "Keep"), ("alpha", "Alpha Notes")])
    n = question_needs('Consider "Alpha Notes"\'s policy; do they keep my location?', gaz)
    assert [e.targets for e in n.entities] == [("alpha",)]


def test_single_hop_question_is_answered_over_the_tiny_corpus(tiny_index):
    from sealgraph.graph.builder import build_graph

    result = build_graph(index=tiny_index, config={"k": 3}).invoke(
        {"question": "Who founded Northwind Studio?"}
    )
    assert "Tomas Greyhill" in result["answer"]
    assert not result["answer"].startswith("Insufficient evidence")
