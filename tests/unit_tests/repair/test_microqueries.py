"""Micro-queries: one atomic, entity-anchored query per gap, never repeated, limited."""

from __future__ import annotations

from sealgraph.ledger.gaps import Gap
from sealgraph.repair.microqueries import MicroQuery, micro_queries

TITLES = {"castellan": "Mira Castellan", "farrow": "Owen Farrow", "lit": "Lost in Fogland (film)"}


def gap(kind, entity, relation="", qualifier=None, targets=()):
    return Gap(kind, entity, relation, qualifier, f"{kind} for {entity}", tuple(targets))


def texts(queries: list[MicroQuery]) -> list[str]:
    return [q.text for q in queries]


def test_missing_entity_query_is_the_entity_name_with_title_targets():
    (q,) = micro_queries(
        [gap("missing_entity", "Lost in Fogland", targets=["lit"])], [], doc_titles=TITLES
    )
    assert q == MicroQuery("Lost in Fogland", "Lost in Fogland", "missing_entity", ("lit",))


def test_missing_qualifier_query_is_entity_plus_value_type():
    (q,) = micro_queries(
        [gap("missing_qualifier", "Mira Castellan", qualifier="date", targets=["castellan"])],
        [],
        doc_titles=TITLES,
    )
    assert q.text == "Mira Castellan date year"
    assert (q.entity, q.gap_kind, q.title_targets) == (
        "Mira Castellan",
        "missing_qualifier",
        ("castellan",),
    )


def test_missing_qualifier_query_uses_the_relation_words_when_known():
    (q,) = micro_queries(
        [gap("missing_qualifier", "Mira Castellan", "born", "date")], [], doc_titles=TITLES
    )
    assert q.text == "Mira Castellan born"


def test_missing_relation_queries_anchor_on_each_linked_document_then_the_subject():
    g = gap("missing_relation", "Lost in Fogland", "director born", "date", ["castellan", "farrow"])
    queries = micro_queries([g], [], doc_titles=TITLES)
    assert texts(queries) == [
        "Mira Castellan director born",
        "Owen Farrow director born",
        "Lost in Fogland director born",
    ]
    assert [q.title_targets for q in queries] == [("castellan",), ("farrow",), ()]
    assert [q.entity for q in queries] == ["Mira Castellan", "Owen Farrow", "Lost in Fogland"]


def test_unanchored_relation_gap_queries_the_relation_alone():
    g = gap("missing_relation", "the question's subject", "servers location")
    (q,) = micro_queries([g], [], doc_titles=TITLES)
    assert (q.text, q.entity) == ("servers location", "")


def test_every_query_names_its_entity():
    gaps = [
        gap("missing_entity", "Owen Farrow"),
        gap("missing_qualifier", "Mira Castellan", qualifier="date"),
        gap("missing_relation", "Lost in Fogland", "director", None, ["castellan"]),
    ]
    for q in micro_queries(gaps, [], doc_titles=TITLES):
        assert q.entity and q.text.startswith(q.entity)


def test_one_query_per_gap_in_priority_order():
    gaps = [
        gap("missing_entity", "Owen Farrow"),
        gap("missing_qualifier", "Mira Castellan", qualifier="date"),
    ]
    assert texts(micro_queries(gaps, [], doc_titles=TITLES)) == [
        "Owen Farrow",
        "Mira Castellan date year",
    ]


def test_issued_queries_are_never_repeated_after_normalisation():
    gaps = [
        gap("missing_entity", "Owen Farrow"),
        gap("missing_qualifier", "Mira Castellan", qualifier="date"),
    ]
    issued = ["the owen farrow", "MIRA CASTELLAN date year!"]
    assert micro_queries(gaps, issued, doc_titles=TITLES) == []


def test_duplicate_gaps_yield_one_query():
    gaps = [gap("missing_entity", "Owen Farrow"), gap("missing_entity", "Owen Farrow's")]
    assert texts(micro_queries(gaps, [], doc_titles=TITLES)) == ["Owen Farrow"]


def test_limit_is_respected():
    gaps = [gap("missing_entity", name) for name in ("A One", "B Two", "C Three", "D Four")]
    assert texts(micro_queries(gaps, [], doc_titles=TITLES, limit=2)) == ["A One", "B Two"]
    # The limit counts new queries only: issued ones do not use it up.
    assert texts(micro_queries(gaps, ["a one"], doc_titles=TITLES, limit=2)) == ["B Two", "C Three"]


def test_no_gaps_no_queries():
    assert micro_queries([], [], doc_titles=TITLES) == []


def test_micro_query_to_dict_is_json_safe():
    q = MicroQuery("Mira Castellan born", "Mira Castellan", "missing_relation", ("castellan",))
    assert q.to_dict() == {
        "text": "Mira Castellan born",
        "entity": "Mira Castellan",
        "gap_kind": "missing_relation",
        "title_targets": ["castellan"],
    }
