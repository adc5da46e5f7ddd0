"""A name shared by several documents keeps the ones that write the asked years."""

from __future__ import annotations

from sealgraph.ledger.needs import NeedEntity, QuestionNeeds, narrow_by_years
from sealgraph.text.names import years_in

YEARS = {"rep-2020": frozenset({"2020", "2010"}), "rep-2021": frozenset({"2021", "2010"})}


def needs(question: str, *targets: str) -> QuestionNeeds:
    entity = NeedEntity("Northwind Ltd.", "northwind ltd", tuple(targets), "gazetteer")
    return QuestionNeeds(question, (entity,), ("buy",), "other", "single")


def test_years_in_reads_four_digit_years_only():
    assert years_in("In March 2021, 12,000 units; founded 1998, code 20215") == {"2021", "1998"}


def test_the_document_of_the_asked_year_is_kept():
    got = narrow_by_years(
        needs("What did Northwind Ltd. buy in 2021?", "rep-2020", "rep-2021"), YEARS.get
    )
    assert got.entities[0].targets == ("rep-2021",)


def test_nothing_tells_the_documents_apart_so_both_stay():
    for question in (
        "What did Northwind Ltd. buy?",
        "What did Northwind Ltd. buy in 2010?",
        "What did Northwind Ltd. buy in 1999?",
    ):
        got = narrow_by_years(needs(question, "rep-2020", "rep-2021"), YEARS.get)
        assert got.entities[0].targets == ("rep-2020", "rep-2021")


def test_a_name_with_one_document_is_left_alone():
    got = narrow_by_years(needs("What did Northwind Ltd. buy in 2021?", "rep-2020"), YEARS.get)
    assert got.entities[0].targets == ("rep-2020",)
