"""The offline reasoner: deterministic, no model, no network.

It works from the corpus's own structure (titles, headings, entity mentions) and
the ledger: needs read from the question's form and the gazetteer, extraction via
the gazetteer and patterns, assessment and need support via need coverage,
micro-queries from the gap specification, and extractive answers. The LLM reasoner
falls back to it step by step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from sealgraph.ledger.extract import PassageFeatures, extract_facts
from sealgraph.ledger.gaps import Gap, NeedItem, cover, gap_spec
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger, Facts
from sealgraph.ledger.needs import QuestionNeeds, question_needs
from sealgraph.reasoning.answer import AnswerAids, SpanText, compose_answer
from sealgraph.reasoning.base import GeneratedAnswer, LLMBudget, StepOutcome, StepSpec, Verdict
from sealgraph.repair.microqueries import MicroQuery, micro_queries
from sealgraph.types import Chunk

T = TypeVar("T")


def describe_gaps(gaps: Sequence[Gap]) -> str:
    """One line listing open gaps, for an 'insufficient evidence' answer."""
    return "; ".join(g.reason for g in gaps)


def need_support(
    items: Sequence[NeedItem], features: Sequence[PassageFeatures]
) -> dict[str, float] | None:
    """How well each passage serves the question's needs: its best need-item coverage.

    Coverage is :func:`sealgraph.ledger.gaps.cover` in [0, 1] (1: the passage is about
    a question entity, is the linked second hop, states the compared value...).
    Relation words (``terms`` needs) are left out: every passage on the topic shares
    some, distractors included.

    Args:
        items: The question's need items.
        features: Features of the evidence passages.

    Returns:
        Chunk id to support, or None when no need item can tell the passages apart
        (no item, or no passage covers any): packing then uses no support signal.

    """
    scored = [it for it in items if it.kind != "terms"]
    if not scored:
        return None
    support = {f.chunk_id: max(cover(it, f, features, items) for it in scored) for f in features}
    return support if any(support.values()) else None


class OfflineReasoner:
    """Deterministic reasoner over corpus structure and the ledger.

    It makes no LLM call, so it ignores ``time_left`` and ``budget`` (the run's LLM
    time, calls and circuit).
    """

    name = "offline"

    def run_step(
        self,
        spec: StepSpec[Any, T],
        *args: Any,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
        **kwargs: Any,
    ) -> StepOutcome[T]:
        """Run step ``spec``'s offline fallback on the step's arguments (no call is made)."""
        return spec.offline(self, *args, **kwargs)

    def needs(
        self,
        question: str,
        gazetteer: Gazetteer,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[QuestionNeeds]:
        """Read N(q) from the question's form and the gazetteer (:func:`question_needs`)."""
        return StepOutcome(question_needs(question, gazetteer))

    def extract(
        self,
        question: str,
        chunks: Sequence[Chunk],
        features: Sequence[PassageFeatures],
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
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
        budget: LLMBudget | None = None,
    ) -> StepOutcome[Verdict]:
        """Gaps are the need items the evidence does not cover; no support is judged here.

        Need support comes from :meth:`support` when packing asks for it.
        """
        return StepOutcome(Verdict(tuple(gap_spec(needs, items, features))))

    def support(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        *,
        assessed: Mapping[str, float] | None = None,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[dict[str, float] | None]:
        """Each passage's best need-item coverage (:func:`need_support`).

        The offline gate judges no support, so ``assessed`` is not used.
        """
        return StepOutcome(need_support(items, features))

    def plan(
        self,
        needs: QuestionNeeds,
        gaps: Sequence[Gap],
        issued: Sequence[str],
        doc_titles: dict[str, str],
        limit: int,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
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
        budget: LLMBudget | None = None,
        aids: AnswerAids | None = None,
    ) -> StepOutcome[GeneratedAnswer]:
        """Compose the answer from the packed spans.

        The reader's best unit for each asked part (or one cited sentence per hop), the
        short answer marked when its kind is recognised; ``aids`` lends the reader the
        index's embedder and word weights.

        Open gaps do not make it decline: they say what is missing when a hop is not in
        the context. It declines ("Insufficient evidence: …", what is missing in ``missing``) only when no sentence of
        the context answers anything the question asks (see
        :func:`sealgraph.reasoning.answer.compose_answer`).
        """
        got = compose_answer(needs, spans, gaps, aids)
        return StepOutcome(
            GeneratedAnswer(
                got.answer,
                got.cited,
                insufficient=got.insufficient,
                short=got.short,
                support=got.support,
                missing=got.missing,
                step=got.step.to_dict() if got.step is not None else None,
            )
        )
