"""Micro-queries: one atomic, entity-anchored query per gap, never repeated, limited."""

from __future__ import annotations

from sealgraph.ledger.gaps import Gap
from sealgraph.ledger.microqueries import MicroQuery, micro_queries

TITLES = {"coppola": "Sofia Coppola", "murray": "Bill Murray", "lit": "Lost in Translation (film)"}


def gap(kind, entity, relation="", qualifier=None, targets=()):
    return Gap(kind, entity, relation, qualifier, f"{kind} for {entity}", tuple(targets))


def texts(queries: list[MicroQuery]) -> list[str]:
    return [q.text for q in queries]


def test_missing_entity_query_is_the_entity_name_with_title_targets():
    (q,) = micro_queries(
        [gap("missing_entity", "Lost in Translation", targets=["lit"])], [], doc_titles=TITLES
    )
    assert q == MicroQuery("Lost in Translation", "Lost in Translation", "missing_entity", ("lit",))


def test_missing_qualifier_query_is_entity_plus_value_type():
    (q,) = micro_queries(
        [gap("missing_qualifier", "Sofia Coppola", qualifier="date", targets=["coppola"])],
        [],
        doc_titles=TITLES,
    )
    assert q.text == "Sofia Coppola date year"
    assert (q.entity, q.gap_kind, q.title_targets) == (
        "Sofia Coppola",
        "missing_qualifier",
        ("coppola",),
    )


def test_missing_qualifier_query_uses_the_relation_words_when_known():
    (q,) = micro_queries(
        [gap("missing_qualifier", "Sofia Coppola", "born", "date")], [], doc_titles=TITLES
    )
    assert q.text == "Sofia Coppola born"


def test_missing_relation_queries_anchor_on_each_linked_document_then_the_subject():
    g = gap(
        "missing_relation", "Lost in Translation", "director born", "date", ["coppola", "murray"]
    )
    queries = micro_queries([g], [], doc_titles=TITLES)
    assert texts(queries) == [
        "Sofia Coppola director born",
        "Bill Murray director born",
        "Lost in Translation director born",
    ]
    assert [q.title_targets for q in queries] == [("coppola",), ("murray",), ()]
    assert [q.entity for q in queries] == ["Sofia Coppola", "Bill Murray", "Lost in Translation"]


def test_unanchored_relation_gap_queries_the_relation_alone():
    g = gap("missing_relation", "the question's subject", "servers location")
    (q,) = micro_queries([g], [], doc_titles=TITLES)
    assert (q.text, q.entity) == ("servers location", "")


def test_every_query_names_its_entity():
    gaps = [
        gap("missing_entity", "Bill Murray"),
        gap("missing_qualifier", "Sofia Coppola", qualifier="date"),
        gap("missing_relation", "Lost in Translation", "director", None, ["coppola"]),
    ]
    for q in micro_queries(gaps, [], doc_titles=TITLES):
        assert q.entity and q.text.startswith(q.entity)


def test_one_query_per_gap_in_priority_order():
    gaps = [
        gap("missing_entity", "Bill Murray"),
        gap("missing_qualifier", "Sofia Coppola", qualifier="date"),
    ]
    assert texts(micro_queries(gaps, [], doc_titles=TITLES)) == [
        "Bill Murray",
        "Sofia Coppola date year",
    ]


def test_issued_queries_are_never_repeated_after_normalisation():
    gaps = [
        gap("missing_entity", "Bill Murray"),
        gap("missing_qualifier", "Sofia Coppola", qualifier="date"),
    ]
    issued = ["the bill murray", "SOFIA COPPOLA date year!"]
    assert micro_queries(gaps, issued, doc_titles=TITLES) == []


def test_duplicate_gaps_yield_one_query():
    gaps = [gap("missing_entity", "Bill Murray"), gap("missing_entity", "Bill Murray's")]
    assert texts(micro_queries(gaps, [], doc_titles=TITLES)) == ["Bill Murray"]


def test_limit_is_respected():
    gaps = [gap("missing_entity", name) for name in ("A One", "B Two", "C Three", "D Four")]
    assert texts(micro_queries(gaps, [], doc_titles=TITLES, limit=2)) == ["A One", "B Two"]
    # The limit counts new queries only: issued ones do not use it up.
    assert texts(micro_queries(gaps, ["a one"], doc_titles=TITLES, limit=2)) == ["B Two", "C Three"]


def test_no_gaps_no_queries():
    assert micro_queries([], [], doc_titles=TITLES) == []


def test_micro_query_to_dict_is_json_safe():
    q = MicroQuery("Sofia Coppola born", "Sofia Coppola", "missing_relation", ("coppola",))
    assert q.to_dict() == {
        "text": "Sofia Coppola born",
        "entity": "Sofia Coppola",
        "gap_kind": "missing_relation",
        "title_targets": ["coppola"],
    }
