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
from sealgraph.reasoning.answer import SpanText, extractive_answer
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
        """Answer extractively; when gaps remain, say so and list them instead of guessing."""
        if gaps:
            text = "Insufficient evidence: " + describe_gaps(gaps) + "."
            return StepOutcome(GeneratedAnswer(text, (), insufficient=True))
        got = extractive_answer(needs, spans)
        if not got.answer:
            return StepOutcome(
                GeneratedAnswer(
                    "Insufficient evidence: no span of the expected type in the context.",
                    (),
                    insufficient=True,
                )
            )
        # Cite the answer's span and the spans about the entities the question
        # names: together they are the chain of evidence of a multi-hop answer.
        entity_docs = {d for e in needs.entities for d in e.targets}
        chain = {s.n for s in spans if s.doc_id in entity_docs}
        return StepOutcome(GeneratedAnswer(got.answer, tuple(sorted(set(got.cited) | chain))))
