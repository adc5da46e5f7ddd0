"""Periods and sets: a company's filings found from their content, by period, as a set."""

from __future__ import annotations

import pytest
from support.filings import filings_index

from sealgraph.config import SealConfig
from sealgraph.ledger.content_links import opening_names
from sealgraph.ledger.corpus_needs import needs_in_corpus
from sealgraph.ledger.gaps import gap_spec, need_items
from sealgraph.ledger.knowledge import CorpusKnowledge
from sealgraph.ledger.needs import question_needs
from sealgraph.ledger.periods import (
    DocPeriod,
    asked_month_years,
    asked_periods,
    document_period,
    month_years,
)
from sealgraph.repair.candidates import initial_hits
from sealgraph.repair.microqueries import micro_queries

NWLP = ("2022 Q3 NWLP.md", "2023 Q1 NWLP.md", "2023 Q2 NWLP.md", "2023 Q3 NWLP.md")


@pytest.fixture(scope="module")
def filings(tmp_path_factory):
    index = filings_index(tmp_path_factory.mktemp("filings"))
    return index, CorpusKnowledge(index)


def needs_of(filings, question):
    _, kn = filings
    return needs_in_corpus(question_needs(question, kn.gazetteer), kn)


def test_a_cover_page_line_in_capitals_names_the_document():
    cover = (
        "FORM 10-Q\nFor the quarterly period ended April 1, 2023\nAMAZON.COM, INC.\n(Exact name)"
    )
    names = opening_names(cover)
    assert {"amazon com inc", "amazon com"} <= names
    assert "for the quarterly period ended april 1 2023" not in names  # not in capitals


def test_a_document_period_comes_from_its_file_name_and_its_cover():
    assert document_period("2023 Q2 X.pdf", "", "") == DocPeriod(frozenset({(2023, 2)}), "")
    # No quarter named: the calendar quarter of the stated end, a few days' slack.
    got = document_period("report.pdf", "Report", "For the quarterly period ended July 1, 2023")
    assert got == DocPeriod(frozenset({(2023, 2)}), "2023-07-01")


def test_the_asked_period_is_read_in_its_usual_forms():
    assert [q for q, _ in asked_periods("What was X's income in Q2 2023?").quarters] == [(2023, 2)]
    first = asked_periods("In the first quarter of 2023, what did X spend?")
    assert [q for q, _ in first.quarters] == [(2023, 1)]
    assert [d for d, _ in asked_periods("the quarter ending July 1, 2023").ends] == ["2023-07-01"]
    assert asked_periods("In X's latest 10-Q, what changed?").recent >= 0
    assert asked_periods("How has X's revenue changed over time?").over_set == "over time"
    assert asked_periods("Did X's debt change across these quarters?").over_set
    assert not asked_periods("What did X report in its Q3 2023 10-Q?").over_set


def test_a_name_no_title_gives_is_linked_by_the_cover_that_gives_it(filings):
    needs = needs_of(filings, "Has Northwind reported any legal proceedings?")
    assert [e.key for e in needs.entities] == ["northwind"]
    assert needs.entities[0].targets == NWLP
    assert needs.entities[0].source == "content"


def test_a_name_of_several_filings_keeps_the_asked_period(filings):
    assert needs_of(filings, "What were Northwind's operating expenses in Q2 2023?").entities[
        0
    ].targets == ("2023 Q2 NWLP.md",)
    latest = needs_of(filings, "What legal proceedings did Northwind disclose in its latest 10-Q?")
    assert latest.entities[0].targets == ("2023 Q3 NWLP.md",)
    ending = needs_of(
        filings, "What were Quilltower's inventories for the quarter ending July 1, 2023?"
    )
    assert ending.entities[0].targets == ("2023 Q2 QLTR.md",)


def test_each_period_qualifies_the_name_it_follows(filings):
    needs = needs_of(
        filings, "Compare the net sales of Northwind in Q1 2023 and Brightside in Q3 2022."
    )
    targets = {e.key: e.targets for e in needs.entities}
    assert targets == {"northwind": ("2023 Q1 NWLP.md",), "brightside": ("2022 Q3 BRSD.md",)}


def test_a_question_over_time_asks_for_every_filing_of_the_name_in_period_order(filings):
    needs = needs_of(filings, "How have Northwind's net sales changed over time?")
    assert len(needs.sets) == 1
    assert needs.sets[0].members == NWLP
    assert needs.sets[0].labels == ("2022 Q3", "2023 Q1", "2023 Q2", "2023 Q3")
    assert needs.hops == 1
    # The needs are kept in a run's state as plain data.
    assert type(needs).from_dict(needs.to_dict()) == needs


def test_the_set_takes_one_slot_per_member_within_k(filings):
    index, _ = filings
    needs = needs_of(filings, "How have Northwind's net sales changed over time?")
    hits = initial_hits(index, needs, 5, SealConfig())
    docs = [index.get_chunk(h.chunk_id).doc_id for h in hits]
    assert len(hits) == 5
    assert set(NWLP) <= set(docs)
    # Each member's slot holds its passage on the asked relation.
    for hit in hits[:4]:
        assert "net sales" in index.get_chunk(hit.chunk_id).text


def test_the_gate_opens_until_every_member_is_covered(filings):
    index, kn = filings
    needs = needs_of(filings, "How have Northwind's net sales changed over time?")
    items = need_items(needs, kn.idf)
    assert [it.targets for it in items if it.kind == "member"] == [(d,) for d in NWLP]
    three = [c.chunk_id for d in NWLP[:3] for c in index.doc_chunks(d)[:2]]
    gaps = gap_spec(needs, items, kn.features(three))
    assert [g.targets for g in gaps if g.kind == "missing_entity"] == [(NWLP[3],)]
    assert "2023 Q3" in gaps[0].entity
    # The gap's micro-query asks the missing member's document for the asked relation.
    (query,) = micro_queries(gaps, [], doc_titles=dict(index.titles()), limit=1)
    assert query.title_targets == (NWLP[3],)
    assert "net sales" in query.text
    every = [c.chunk_id for d in NWLP for c in index.doc_chunks(d)[:1]]
    assert not [g for g in gap_spec(needs, items, kn.features(every)) if g.kind == "missing_entity"]


def test_the_words_that_picked_the_documents_are_no_relation_words(filings):
    latest = needs_of(filings, "What legal proceedings did Northwind disclose in its latest 10-Q?")
    assert {"latest", "10", "q"}.isdisjoint(latest.relation_terms)
    assert {"legal", "proceedings"} <= set(latest.relation_terms)
    over = needs_of(filings, "How have Northwind's net sales changed across these quarters?")
    assert "quarters" not in over.relation_terms and "sales" in over.relation_terms


def test_months_written_and_the_month_a_question_dates_what_it_asks_by():
    assert month_years("On 3 March 2021, and May 5, 2019; April of 2020; may 2020") == {
        (2021, 3),
        (2019, 5),
        (2020, 4),
    }
    assert asked_month_years("Who was appointed CFO in August 2021?") == {(2021, 8)}
    # A period that picks the filing is no month of the event asked.
    assert not asked_month_years("What was revenue for the quarter ending July 1, 2023?")
    assert not asked_month_years("What did Apple report in Q2 2023?")
