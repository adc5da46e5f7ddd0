"""The LLM reasoner: any step's record (:mod:`._steps`) run by a :class:`._attempts.StepRunner`.

Each built-in step keeps its own method (and its async twin), one line calling
:meth:`LLMReasoner.run_step` with its record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from sealgraph.config import LLMConfig
from sealgraph.errors import ConfigError
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import Gap, NeedItem
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger, Facts
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.reasoning.answer import AnswerAids, SpanText
from sealgraph.reasoning.base import GeneratedAnswer, LLMBudget, StepOutcome, StepSpec, Verdict
from sealgraph.reasoning.llm import _steps
from sealgraph.reasoning.llm._attempts import StepRunner
from sealgraph.reasoning.llm._client import openai_chat_class, prepared_model
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.repair.microqueries import MicroQuery
from sealgraph.types import Chunk

T = TypeVar("T")


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
        config = config or LLMConfig()
        unknown = sorted(set(config.max_tokens.named()) - set(_steps.STEPS))
        if unknown:
            raise ConfigError(
                f"llm.max_tokens.{unknown[0]}: no LLM step is named {unknown[0]!r}; "
                f"the steps: {', '.join(_steps.STEPS)}"
            )
        self.offline = OfflineReasoner()
        self._runner = StepRunner(model, config, openai=openai)

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

    # --- any step -----------------------------------------------------------------------

    def run_step(
        self,
        spec: StepSpec[Any, T],
        *args: Any,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
        **kwargs: Any,
    ) -> StepOutcome[T]:
        """Run LLM step ``spec`` (a record of :data:`~._steps.STEPS`) on the step's arguments.

        One request (:func:`~._steps.step_request`) run with its attempts, retries and
        bounds; when it fails, ``spec.offline`` runs on :attr:`offline` instead.
        """
        request = _steps.step_request(spec, self.offline, *args, **kwargs)
        return self._runner.run(request, time_left, budget)

    async def arun_step(
        self,
        spec: StepSpec[Any, T],
        *args: Any,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
        **kwargs: Any,
    ) -> StepOutcome[T]:
        """:meth:`run_step`, awaiting the model (``ainvoke``)."""
        request = _steps.step_request(spec, self.offline, *args, **kwargs)
        return await self._runner.arun(request, time_left, budget)

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
        return self.run_step(_steps.NEEDS, question, gazetteer, time_left=time_left, budget=budget)

    async def aneeds(
        self,
        question: str,
        gazetteer: Gazetteer,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[QuestionNeeds]:
        """:meth:`needs`, awaiting the model (``ainvoke``)."""
        return await self.arun_step(
            _steps.NEEDS, question, gazetteer, time_left=time_left, budget=budget
        )

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
        return self.run_step(
            _steps.EXTRACT, question, chunks, features, time_left=time_left, budget=budget
        )

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
        return await self.arun_step(
            _steps.EXTRACT, question, chunks, features, time_left=time_left, budget=budget
        )

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
        return self.run_step(
            _steps.ASSESS, needs, items, features, ledger, time_left=time_left, budget=budget
        )

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
        return await self.arun_step(
            _steps.ASSESS, needs, items, features, ledger, time_left=time_left, budget=budget
        )

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
        return self.run_step(
            _steps.PLAN, needs, gaps, issued, doc_titles, limit, time_left=time_left, budget=budget
        )

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
        return await self.arun_step(
            _steps.PLAN, needs, gaps, issued, doc_titles, limit, time_left=time_left, budget=budget
        )

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
        return self.run_step(
            _steps.GENERATE, needs, spans, gaps, aids=aids, time_left=time_left, budget=budget
        )

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
        return await self.arun_step(
            _steps.GENERATE, needs, spans, gaps, aids=aids, time_left=time_left, budget=budget
        )
