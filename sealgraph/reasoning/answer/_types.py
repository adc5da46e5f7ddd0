"""The offline answer's value types: the spans it reads and the answers it gives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["AnswerStep", "ComposedAnswer", "GapLike", "OfflineAnswer", "SpanText"]


class GapLike(Protocol):
    """A gap the sufficiency gate left open: what it says is missing."""

    reason: str


@dataclass(frozen=True, slots=True)
class SpanText:
    """A packed span as the answerer sees it."""

    n: int
    """Citation number."""
    doc_id: str
    """Document the span comes from."""
    title: str
    """Document title."""
    text: str
    """Span text."""
    section: str = ""
    """The headings the span is under, joined by ``" > "`` ("" when untagged): what
    its units are about when its text does not show the heading."""


@dataclass(frozen=True, slots=True)
class OfflineAnswer:
    """A short extractive answer with the spans it was read from."""

    answer: str
    """The short answer ("" when none is recognised)."""
    cited: tuple[int, ...]
    """Citation numbers of the spans it was read from."""
    confidence: float
    """0..1 heuristic confidence."""


@dataclass(frozen=True, slots=True)
class AnswerStep:
    """How the offline answer was chosen: what a person reads on the run page."""

    route: str
    """Which way answered: ``reader``, ``chain``, ``compare``, ``polar``, ``row``,
    ``parts`` or ``declined``."""
    why: str
    """One line: why that way (and that unit) won."""
    held: float
    """The least share of a part's word weight that one unit states together (the
    combination the decline reads), in [0, 1]."""
    parts: tuple[dict[str, Any], ...] = ()
    """Per asked part: its text, the answer value it asks for, and its best candidate
    units with their scores and features (JSON-safe)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the step as JSON-safe data (the trace's ``answer_step``)."""
        return {"route": self.route, "why": self.why, "held": self.held, "parts": list(self.parts)}


@dataclass(frozen=True, slots=True)
class ComposedAnswer:
    """An offline answer: the short span, its supporting sentences and what is missing."""

    answer: str
    """The readable answer: ``short — sentence [n] …``, the sentences alone when no short
    span is marked, or "Insufficient evidence: …" when the composer declined; never
    what is missing (that is :attr:`missing`)."""
    short: str
    """The short answer span ("yes"/"no", an option, a name, a date…) or "" when the
    answer kind is not recognised with confidence."""
    support: tuple[tuple[int, str], ...]
    """``(citation number, sentence)`` of each supporting sentence, in hop order."""
    cited: tuple[int, ...]
    """Citation numbers the answer relies on (sorted)."""
    insufficient: bool = False
    """True only when the context holds nothing that answers (the answer declines)."""
    missing: str = ""
    """What the context does not state (from the open gaps), "" when nothing is missing."""
    kind: str = "other"
    """The expected answer kind (see :func:`answer_kind`)."""
    confidence: float = 0.0
    """0..1 heuristic confidence of the short answer."""
    step: AnswerStep | None = None
    """How the answer was chosen (None for an answer built outside the composer)."""
