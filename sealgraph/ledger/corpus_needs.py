"""N(q) read against the corpus: names linked by content, periods, sets, years.

The reasoner reads a question's needs from its words and the gazetteer
(:meth:`sealgraph.reasoning.base.Reasoner.needs`); :func:`needs_in_corpus` then reads
what only the corpus can tell: names linked by what documents say of themselves
(:mod:`sealgraph.ledger.content_links`), the documents of the asked period
(:func:`~sealgraph.ledger.periods.narrow_by_period`) or years
(:func:`~sealgraph.ledger.needs.narrow_by_years`), and the sets a question asks over
(:func:`~sealgraph.ledger.periods.set_needs`); the words of the period phrases
that picked documents are then no relation words. Whoever reads the needs, offline
or with a model, gets the same corpus reading.
"""

from __future__ import annotations

from typing import Protocol

from sealgraph.ledger.content_links import link_by_content
from sealgraph.ledger.needs import narrow_by_years
from sealgraph.ledger.periods import DocPeriod, narrow_by_period, period_words_read, set_needs
from sealgraph.model import QuestionNeeds

__all__ = ["CorpusReading", "needs_in_corpus"]


class CorpusReading(Protocol):
    """What :func:`needs_in_corpus` reads of a corpus.

    A :class:`~sealgraph.ledger.knowledge.CorpusKnowledge` is one.
    """

    def content_documents(self, key: str) -> tuple[str, ...]:
        """Return the documents whose opening gives the name ``key``."""

    def doc_period(self, doc_id: str) -> DocPeriod:
        """Return the period a document covers."""

    def doc_years(self, doc_id: str) -> frozenset[str]:
        """Return the years a document writes."""


def needs_in_corpus(needs: QuestionNeeds, corpus: CorpusReading) -> QuestionNeeds:
    """Link, narrow and complete N(q) with what the corpus says (see the module docstring)."""
    linked = link_by_content(needs, corpus.content_documents)
    needs = narrow_by_period(linked, corpus.doc_period)
    needs = narrow_by_years(needs, corpus.doc_years)
    needs = set_needs(needs, corpus.doc_period)
    return period_words_read(linked, needs)
