"""The offline reasoner: deterministic, no model, no network.

It works from the corpus's own structure (titles, headings, entity mentions) and
the ledger: extraction via the gazetteer and patterns, assessment via need
coverage, micro-queries from the gap specification, and extractive answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from sealgraph.ledger.extract import PassageFeatures, extract_facts
from sealgraph.ledger.gaps import Gap, NeedItem, gap_spec
from sealgraph.ledger.ledger import EntityLedger, Facts
from sealgraph.ledger.microqueries import MicroQuery, micro_queries
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.reasoning.answer import SpanText, compose_answer
from sealgraph.reasoning.base import GeneratedAnswer, StepOutcome
from sealgraph.types import Chunk


def describe_gaps(gaps: Sequence[Gap]) -> str:
    """One line listing open gaps, for an 'insufficient evidence' answer."""
    return "; ".join(g.reason for g in gaps)


class OfflineReasoner:
    """Deterministic reasoner over corpus structure and the ledger.

    It makes no LLM call, so it ignores ``time_left`` (the run's LLM time).
    """

    name = "offline"

    def extract(
        self,
        question: str,
        chunks: Sequence[Chunk],
        features: Sequence[PassageFeatures],
        *,
        time_left: float | None = None,
    ) -> StepOutcome[Facts]:
        """Read facts with the gazetteer and value patterns (the question is not needed)."""
        return StepOutcome(extract_facts(list(chunks), list(features)))

    def assess(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        ledger: EntityLedger,
        *,
        time_left: float | None = None,
    ) -> StepOutcome[list[Gap]]:
        """Gaps are the need items the evidence does not cover."""
        return StepOutcome(gap_spec(needs, items, features))

    def plan(
        self,
        needs: QuestionNeeds,
        gaps: Sequence[Gap],
        issued: Sequence[str],
        doc_titles: dict[str, str],
        limit: int,
        *,
        time_left: float | None = None,
    ) -> StepOutcome[list[MicroQuery]]:
        """One atomic query per gap (plus one per linked bridge document)."""
        return StepOutcome(micro_queries(gaps, issued, doc_titles=doc_titles, limit=limit))

    def generate(
        self,
        needs: QuestionNeeds,
        spans: Sequence[SpanText],
        gaps: Sequence[Gap],
        *,
        time_left: float | None = None,
    ) -> StepOutcome[GeneratedAnswer]:
        """Compose the answer from the packed spans.

        One cited sentence per hop, the short answer marked when its kind is recognised.

        Open gaps do not make it decline: they say what is missing when a hop is not in
        the context. It declines ("Insufficient evidence: …") only when no sentence of
        the context answers anything the question asks (see
        :func:`sealgraph.reasoning.answer.compose_answer`).
        """
        got = compose_answer(needs, spans, gaps)
        return StepOutcome(
            GeneratedAnswer(
                got.answer,
                got.cited,
                insufficient=got.insufficient,
                short=got.short,
                support=got.support,
                missing=got.missing,
            )
        )
