"""The reasoner interface shared by the offline and the LLM reasoner.

A reasoner does the four judgement steps of SEAL: extract facts from passages,
assess gaps, plan micro-queries, and generate the answer. Each call returns a
:class:`StepOutcome` that says how many LLM calls it made and whether it fell
back to the offline reasoner, so the graph can log and count both.
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


@dataclass(frozen=True, slots=True)
class GeneratedAnswer:
    """An answer with the citation numbers it uses."""

    answer: str
    """Answer text (may contain [n] markers in LLM mode)."""
    cited: tuple[int, ...]
    """Citation numbers of packed spans the answer relies on."""
    insufficient: bool = False
    """True when the reasoner declined to answer because gaps remain."""


class Reasoner(Protocol):
    """What the graph needs from a reasoner."""

    name: str

    def extract(
        self, chunks: Sequence[Chunk], features: Sequence[PassageFeatures]
    ) -> StepOutcome[Facts]:
        """Read entities, relations and qualifiers from new passages (one batched call)."""
        ...

    def assess(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        ledger: EntityLedger,
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
    ) -> StepOutcome[list[MicroQuery]]:
        """Return new atomic micro-queries, one per gap."""
        ...

    def generate(
        self, needs: QuestionNeeds, spans: Sequence[SpanText], gaps: Sequence[Gap]
    ) -> StepOutcome[GeneratedAnswer]:
        """Answer from the packed spans, citing them."""
        ...
