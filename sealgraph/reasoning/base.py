"""The reasoner interface shared by the offline and the LLM reasoner.

A reasoner makes every judgement of SEAL: it reads the question's needs, extracts
facts from passages, assesses gaps (and which passages support the needs), plans
micro-queries, says how well each evidence passage supports the needs for packing,
and generates (selects) the answer. The LLM reasoner decides them with the model;
the offline heuristics are its fallback, never called around it. Each call returns a
:class:`StepOutcome` that says how many LLM calls it made, how long they took and
whether it fell back to the offline reasoner (and why), so the graph can log and
count all three.

Every step takes ``time_left``: the seconds of LLM time the run has left
(``llm.deadline_s`` minus the state's ``llm_seconds``). The graph keeps that
account in its state, not in the reasoner, because one compiled graph (and so one
reasoner) serves concurrent runs, and a resumed run must keep its own account.
The offline reasoner ignores it.

For the same reason every step also takes ``budget`` (:class:`LLMBudget`): the LLM
calls the run may still make (``llm.max_calls`` minus the state's ``llm_calls``) and
the run's LLM circuit, the reason a permanent failure (a refused connection, a
rejected key, a server that supports no structured output method) gave when an
earlier step opened it. A step that opens the circuit says so in
:attr:`StepOutcome.circuit`; the graph keeps it in its state (``llm_circuit``), and
every later step of that run falls back without a call. None (a direct call, outside
a graph) means no calls bound and a closed circuit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import Gap, NeedItem
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger, Facts
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.reasoning.answer import AnswerAids, SpanText
from sealgraph.repair.microqueries import MicroQuery
from sealgraph.types import Chunk

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


FELL_BACK = "fell back to the offline reasoner"
"""The last note of a step that fell back (its reason is in ``fallback_reason``)."""


@dataclass(frozen=True, slots=True)
class StepOutcome(Generic[T]):
    """Result of one reasoner step."""

    value: T
    """The step's result."""
    llm_calls: int = 0
    """LLM calls made (including retries)."""
    notes: tuple[str, ...] = field(default=())
    """Human-readable notes: retries, fallbacks and why."""
    fallback: bool = False
    """True when the LLM failed and the offline reasoner produced ``value``."""
    fallback_reason: str = ""
    """Why the step fell back: the last failure ("" when it did not)."""
    seconds: float = 0.0
    """Wall time spent on LLM calls (0 offline), charged to the run's ``llm.deadline_s``."""
    circuit: str = ""
    """Non-empty when this step opened the run's LLM circuit: the permanent failure
    (refused connection, authentication, no supported structured output method)."""
    method: str = ""
    """The structured output method of the reply that was used ("" when none was)."""
    prompt_tokens: int = 0
    """Prompt tokens of the step's LLM replies, as the server reported them (0: none)."""
    completion_tokens: int = 0
    """Completion tokens of the step's LLM replies, as the server reported them (0: none)."""


@dataclass(frozen=True, slots=True)
class LLMBudget:
    """What a run has left for LLM calls besides time, read from the graph state."""

    calls_left: int | None = None
    """LLM calls the run may still make (None: no bound)."""
    circuit: str = ""
    """Why the run's LLM circuit is open ("" while it is closed)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the sufficiency gate decides: the open gaps, and the passages that serve the needs.

    ``support`` is the gate's own judgement of need support, when it made one: the LLM
    gate names the passages that hold evidence the answer needs in the same call that
    names the gaps (no extra call). The graph keeps it in the state (``need_support``)
    and hands it back to :meth:`Reasoner.support` at packing time. The offline gate
    leaves it None: its support is computed from need coverage when packing asks.
    """

    gaps: tuple[Gap, ...] = ()
    """The gap specification (empty = sufficient)."""
    support: dict[str, float] | None = None
    """Chunk id → need support in [0, 1] of every assessed passage, or None when the
    gate judged none (offline, a fallback, or a reply that named no passage)."""


@dataclass(frozen=True, slots=True)
class GeneratedAnswer:
    """An answer with the citation numbers it uses.

    ``answer`` is always a readable string. The offline reasoner writes
    ``short — sentence [n] sentence [m]`` (or the sentences alone when no short answer
    is recognised); ``short``, ``support`` and ``missing`` keep its parts apart for
    callers that need the short span alone (answer scoring, a UI).
    """

    answer: str
    """Answer text (may contain [n] markers)."""
    cited: tuple[int, ...]
    """Citation numbers of packed spans the answer relies on."""
    insufficient: bool = False
    """True when the reasoner declined to answer: the context holds nothing that answers."""
    short: str = ""
    """The short answer span ("Dana Whitcombe", "yes", "October 2018"), "" when none is
    marked (the answer type was not recognised with confidence, or the LLM wrote prose)."""
    support: tuple[tuple[int, str], ...] = ()
    """``(citation number, sentence)`` of each supporting sentence, one per hop (offline)."""
    missing: str = ""
    """What the context does not state (from the open gaps), "" when nothing is missing."""
    step: Mapping[str, Any] | None = None
    """How the offline answer was chosen: the asked parts, their candidate units with
    scores and features, and why the chosen one won (JSON-safe,
    :meth:`~sealgraph.reasoning.answer.AnswerStep.to_dict`); None for an LLM's answer."""


@dataclass(frozen=True, slots=True)
class Ask(Generic[M, T]):
    """What one call of a step asks: the prompt's values, and how a reply is used."""

    values: Mapping[str, str]
    """The prompt's placeholders filled (fenced already: :func:`~sealgraph.prompts.fence`)."""
    convert: Callable[[M], T]
    """Turns a checked reply into the step's value."""
    check: Callable[[M], str | None] | None = None
    """The step's own check of a reply: what is wrong with it, None when nothing is."""
    stream: str | None = None
    """The question, when the reply's ``answer`` field streams as text (generate)."""


@dataclass(frozen=True, slots=True)
class StepSpec(Generic[M, T]):
    """One LLM step: the one record a step is declared by.

    The records are registered in :data:`sealgraph.reasoning.llm.STEPS`
    (:mod:`sealgraph.reasoning.llm._steps`), from which the rest is derived: both
    reasoners run a record with :meth:`Reasoner.run_step`, the LLM reasoner builds its
    request from it, and its token bound is ``llm.max_tokens.<name>``, else ``max_tokens``.
    """

    name: str
    """The step's name: its notes' and events' ``step``, its ``llm.max_tokens.<name>``."""
    prompt: str
    """Its prompt file, ``sealgraph/prompts/<prompt>.md`` (``# System``, ``# User``)."""
    schema: type[M]
    """The reply's pydantic schema (unknown keys forbidden, no defaults)."""
    max_tokens: int | None
    """Most tokens a reply may generate when ``llm.max_tokens`` names no bound for it."""
    offline: Callable[..., StepOutcome[T]]
    """The offline fallback, called as ``offline(offline_reasoner, *args, **kwargs)``."""
    ask: Callable[..., Ask[M, T] | StepOutcome[T]]
    """The step's arguments to an :class:`Ask`, or to its outcome when nothing is asked."""
    doc: str = field(default="")
    """One line saying what the step does."""


class Reasoner(Protocol):
    """What the graph needs from a reasoner.

    :meth:`run_step` runs any LLM step from its record
    (:class:`~sealgraph.reasoning.llm.StepSpec`, registered in
    :data:`~sealgraph.reasoning.llm.STEPS`); the built-in steps also have a method
    each (:meth:`needs`, :meth:`extract`, ...), which runs their record.
    """

    name: str

    def run_step(
        self,
        spec: StepSpec[Any, T],
        *args: Any,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
        **kwargs: Any,
    ) -> StepOutcome[T]:
        """Run LLM step ``spec`` on the step's arguments (its ``ask`` and ``offline`` take them).

        The LLM reasoner asks the model and falls back on ``spec.offline``; the offline
        reasoner runs ``spec.offline`` alone.
        """
        ...

    def needs(
        self,
        question: str,
        gazetteer: Gazetteer,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[QuestionNeeds]:
        """Read N(q): answer type, hop count and structure, the entities the question names.

        Named entities are linked to the corpus through ``gazetteer`` (the documents
        each name refers to), whoever read them.
        """
        ...

    def extract(
        self,
        question: str,
        chunks: Sequence[Chunk],
        features: Sequence[PassageFeatures],
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[Facts]:
        """Read entities, relations and qualifiers from new passages (one batched call).

        The question focuses the reading; it is not answered here.
        """
        ...

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
        """Return the gap specification (no gaps = sufficient) and, when judged, need support."""
        ...

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
        """How well each evidence passage supports the needs, for packing (chunk id → [0, 1]).

        ``assessed`` is the support the last :meth:`assess` judged (``Verdict.support``,
        kept in the graph state), None when it judged none. None as the value means no
        signal: packing then down-weights no passage.
        """
        ...

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
        """Return new atomic micro-queries, one per gap."""
        ...

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
        """Answer from the packed spans, citing them.

        ``aids`` is what the index lends the offline reader (its embedder and word
        weights, :class:`~sealgraph.reasoning.answer.AnswerAids`); a reasoner that
        reads otherwise ignores it.
        """
        ...
