"""The reasoner interface shared by the offline and the LLM reasoner.

A reasoner does the four judgement steps of SEAL: extract facts from passages,
assess gaps, plan micro-queries, and generate the answer. Each call returns a
:class:`StepOutcome` that says how many LLM calls it made, how long they took and
whether it fell back to the offline reasoner (and why), so the graph can log and
count all three.

Every step takes ``time_left``: the seconds of LLM time the run has left
(``llm.deadline_s`` minus the state's ``llm_seconds``). The graph keeps that
account in its state, not in the reasoner, because one compiled graph (and so one
reasoner) serves concurrent runs, and a resumed run must keep its own account.
The offline reasoner ignores it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import Gap, NeedItem
from sealgraph.ledger.ledger import EntityLedger, Facts
from sealgraph.ledger.microqueries import MicroQuery
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.reasoning.answer import SpanText
from sealgraph.types import Chunk

T = TypeVar("T")

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


class Reasoner(Protocol):
    """What the graph needs from a reasoner."""

    name: str

    def extract(
        self,
        question: str,
        chunks: Sequence[Chunk],
        features: Sequence[PassageFeatures],
        *,
        time_left: float | None = None,
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
    ) -> StepOutcome[list[Gap]]:
        """Return the gap specification (empty = sufficient)."""
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
    ) -> StepOutcome[GeneratedAnswer]:
        """Answer from the packed spans, citing them."""
        ...
