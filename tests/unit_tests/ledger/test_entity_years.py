"""Qualifiers read per entity: "X in 2019 and Y in 2021" asks X's passage and Y's passage."""

from __future__ import annotations

from sealgraph.ledger.extract import passage_features
from sealgraph.ledger.gaps import MET, cover, gap_spec, need_items
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import question_needs
from sealgraph.repair.microqueries import micro_queries
from sealgraph.types import Chunk

GAZ = Gazetteer([("nw", "Northwind Media"), ("bs", "Brightside Energy")])
QUESTION = (
    "Compare the shareholder equity of Northwind Media in 2019 and Brightside Energy in "
    "2021. Which company had higher shareholder equity?"
)


def feat(chunk_id: str, doc_id: str, title: str, *sentences: str):
    text = " ".join(sentences)
    spans, at = [], 0
    for s in sentences:
        spans.append((at, at + len(s)))
        at += len(s) + 1
    chunk = Chunk(chunk_id, doc_id, title, (), 0, 0, len(text), text, 10, tuple(spans))
    return passage_features(chunk, GAZ)


OPENING = feat(
    "nw#0",
    "nw",
    "Northwind Media",
    "Northwind Media was founded in 2000.",
    "In 2019 its shareholders met twice.",
    "Its equity team grew.",
)
EQUITY = feat(
    "nw#2",
    "nw",
    "Northwind Media",
    "Shareholder equity reached $1.4 billion at the end of 2019.",
)


def test_each_year_qualifies_the_name_it_follows():
    items = need_items(question_needs(QUESTION, GAZ))
    words = {it.key: it.words for it in items if it.kind == "entity"}
    assert words["northwind media"][0] == "2019"
    assert words["brightside energy"][0] == "2021"
    # The asked attribute, without the words that compare or name the answer's kind.
    assert set(words["northwind media"][1:]) == {"sharehold", "equiti"}


def test_the_entitys_passage_is_the_one_that_states_the_attribute_in_one_sentence():
    items = need_items(question_needs(QUESTION, GAZ))
    northwind = next(it for it in items if it.key == "northwind media")
    assert cover(northwind, EQUITY, [EQUITY], items) == 1.0
    # Shareholders in one sentence and equity in another state no shareholder equity.
    assert cover(northwind, OPENING, [OPENING], items) < MET


def test_the_gap_asks_the_entitys_document_for_its_year_and_attribute():
    needs = question_needs(QUESTION, GAZ)
    items = need_items(needs)
    gaps = gap_spec(needs, items, [OPENING])
    (query,) = [
        q
        for q in micro_queries(gaps, [], doc_titles={"nw": "Northwind Media"})
        if q.title_targets == ("nw",)
    ]
    assert query.text.startswith("Northwind Media 2019")
    assert "equiti" in query.text or "equity" in query.text
