"""The LLM reasoner: each step's request (:mod:`._steps`) run by a :class:`._attempts.StepRunner`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sealgraph.config import LLMConfig
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import Gap, NeedItem
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger, Facts
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.reasoning.answer import AnswerAids, SpanText
from sealgraph.reasoning.base import GeneratedAnswer, LLMBudget, StepOutcome, Verdict
from sealgraph.reasoning.llm import _steps
from sealgraph.reasoning.llm._attempts import StepRunner
from sealgraph.reasoning.llm._client import openai_chat_class, prepared_model
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.repair.microqueries import MicroQuery
from sealgraph.types import Chunk


class LLMReasoner:
    """Reasoner backed by a LangChain chat model, falling back to :class:`OfflineReasoner`.

    Args:
        model: Any LangChain chat model supporting ``with_structured_output``. A
            ``ChatOpenAI`` gets the OpenAI SDK's own retries turned off (ours are
            counted and bounded), guarded HTTP clients (each attempt ends by wall
            clock with what is left of its step; a reply past its byte bound is cut
            as it is read), a per-request timeout and the step's token bound; other
            models must bound their own calls and output.
        config: Retries, timeouts, deadlines, token bounds and the structured-output method.

    """

    name = "llm"
    streams_answer = True
    """The generate step streams its answer (:mod:`sealgraph.reasoning.stream`)."""

    def __init__(self, model: Any, config: LLMConfig | None = None) -> None:
        model = prepared_model(model)
        cls = openai_chat_class()
        openai = cls is not None and isinstance(model, cls)
        self.offline = OfflineReasoner()
        self._runner = StepRunner(model, config or LLMConfig(), openai=openai)

    @property
    def model(self) -> Any:
        """The chat model the steps call (prepared: see the class docstring)."""
        return self._runner.model

    @property
    def config(self) -> LLMConfig:
        """Retries, timeouts, deadlines, token bounds and the structured-output method."""
        return self._runner.config

    def structured_output_method(self) -> str | None:
        """Return the method remembered for this reasoner's model (None before one answered)."""
        return self._runner.methods.working()

    # --- the steps ----------------------------------------------------------------------

    def needs(
        self,
        question: str,
        gazetteer: Gazetteer,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[QuestionNeeds]:
        """One call reading the question's needs; its names are linked through the gazetteer.

        The model gives the answer type, the hop count and structure, the names the
        question writes, a choice's options, the names that only describe the answer
        and a comparison's compared attribute (:class:`NeedsReading`). Each name is
        resolved against the corpus as the offline reader resolves one
        (:func:`~sealgraph.reasoning.llm._convert.needs_from`). A hop count out of
        range, or one its structure contradicts ("bridge" with 1 hop), is rejected:
        retried, then the offline reading
        (:func:`~sealgraph.ledger.needs.question_needs`) is used instead.
        """
        step = _steps.needs_request(self.offline, question, gazetteer)
        return self._runner.run(step, time_left, budget)

    async def aneeds(
        self,
        question: str,
        gazetteer: Gazetteer,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[QuestionNeeds]:
        """:meth:`needs`, awaiting the model (``ainvoke``)."""
        step = _steps.needs_request(self.offline, question, gazetteer)
        return await self._runner.arun(step, time_left, budget)

    def extract(
        self,
        question: str,
        chunks: Sequence[Chunk],
        features: Sequence[PassageFeatures],
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[Facts]:
        """One batched extraction call over the new passages, focused by the question."""
        step = _steps.extract_request(self.offline, question, chunks, features)
        return self._runner.run(step, time_left, budget)

    async def aextract(
        self,
        question: str,
        chunks: Sequence[Chunk],
        features: Sequence[PassageFeatures],
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[Facts]:
        """:meth:`extract`, awaiting the model (``ainvoke``)."""
        step = _steps.extract_request(self.offline, question, chunks, features)
        return await self._runner.arun(step, time_left, budget)

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
        """One assess call: the model's gaps, and the passages it says support the needs.

        The same reply names the supporting passages (``Assessment.supporting``), so
        need support costs no call of its own: a named passage gets support 1, the
        others 0 (``Verdict.support``; None when it named no valid passage number).
        The graph keeps it for packing, which asks :meth:`support` for it.
        """
        step = _steps.assess_request(self.offline, needs, items, features, ledger)
        return self._runner.run(step, time_left, budget)

    async def aassess(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        ledger: EntityLedger,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[Verdict]:
        """:meth:`assess`, awaiting the model (``ainvoke``)."""
        step = _steps.assess_request(self.offline, needs, items, features, ledger)
        return await self._runner.arun(step, time_left, budget)

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
        """Return the need support the last assessment judged (no call is made).

        ``assessed`` is the ``Verdict.support`` of the last :meth:`assess` (the graph
        keeps it in its state as ``need_support``). When it does not cover every
        evidence passage (the assess step fell back to the offline gate, the model
        named no supporting passage, or the evidence changed since), the offline need
        support (:func:`~sealgraph.reasoning.offline.need_support`) is used, with a
        note saying so.
        """
        ids = [f.chunk_id for f in features]
        if assessed is not None and ids and all(i in assessed for i in ids):
            return StepOutcome({i: float(assessed[i]) for i in ids})
        note = "no need support from the last assessment: the offline need coverage is used"
        return StepOutcome(self.offline.support(needs, items, features).value, notes=(note,))

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
        """One micro-query call for all open gaps.

        A query that copies the prompt's example query is rejected (small models echo
        examples): the retry says so.
        """
        step = _steps.plan_request(self.offline, needs, gaps, issued, doc_titles, limit)
        return self._runner.run(step, time_left, budget)

    async def aplan(
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
        """:meth:`plan`, awaiting the model (``ainvoke``)."""
        step = _steps.plan_request(self.offline, needs, gaps, issued, doc_titles, limit)
        return await self._runner.arun(step, time_left, budget)

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
        """One generation call, under one answer contract.

        The answer cites passages as ``[n]`` markers in its text, in its citations
        list, or both; the numbers are read from both (:func:`cited_numbers`) and
        checked once: an answer that does not decline must cite at least one packed
        span and no number that is not one. A rejected answer is retried with the
        reason, then the offline answer is used.
        """
        step = _steps.generate_request(self.offline, needs, spans, gaps, aids)
        return self._runner.run(step, time_left, budget)

    async def agenerate(
        self,
        needs: QuestionNeeds,
        spans: Sequence[SpanText],
        gaps: Sequence[Gap],
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
        aids: AnswerAids | None = None,
    ) -> StepOutcome[GeneratedAnswer]:
        """:meth:`generate`, awaiting the model (``ainvoke``)."""
        step = _steps.generate_request(self.offline, needs, spans, gaps, aids)
        return await self._runner.arun(step, time_left, budget)
