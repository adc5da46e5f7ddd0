"""Value types of the pack step: units, candidate spans, decisions and the result.

A *unit* is one sentence of a chunk, the atom every span is built from. A *span*
is a contiguous run of units of one document (a whole chunk, a relevant segment,
a semantic window). Spans are scored, selected into the context bubble and
rendered; :class:`PackResult` keeps the rendered context, the cited spans and a
:class:`PackDecision` for every candidate span.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from sealgraph.packing.scoring import section_label

Decision = Literal[
    "selected", "budget_exceeded", "section_budget", "too_redundant", "low_relevance", "doc_cap"
]
"""Outcome of one candidate span."""

DECISIONS: tuple[Decision, ...] = (
    "selected",
    "budget_exceeded",
    "section_budget",
    "too_redundant",
    "low_relevance",
    "doc_cap",
)
"""Every decision kind, in the order reports list them."""


@dataclass(frozen=True, slots=True)
class Unit:
    """One sentence of a chunk, located in its document."""

    unit_id: str
    """``"{chunk_id}:{sentence index}"``."""
    doc_id: str
    """Document the sentence belongs to."""
    chunk_id: str
    """Chunk the sentence belongs to."""
    title: str
    """Title of the document."""
    section: tuple[str, ...]
    """Heading chain of the chunk."""
    chunk_order: int
    """Position of the chunk in its document."""
    index: int
    """Position of the sentence in its chunk."""
    start: int
    """Offset of the sentence's first character in the document text."""
    end: int
    """Offset one past the sentence's last character in the document text."""
    text: str
    """The sentence exactly as in the chunk, surrounding whitespace included."""
    evidence: bool
    """True for sentences of evidence chunks, False for sentences of fetched neighbours."""
    heading: bool = False
    """True for a Markdown heading line: the rendered header already shows it."""
    position: int = 0
    """Position among the chunk's non-heading units (-1 for a heading)."""

    @property
    def lead(self) -> bool:
        """Whether this is the first sentence of its document (headings aside)."""
        return self.chunk_order == 0 and self.position == 0


@dataclass(frozen=True, slots=True)
class Span:
    """A candidate span: a contiguous run of units of one document and section."""

    span_id: str
    """``chunk_id`` for a whole chunk, else ``"{chunk_id}:{i}-{j}"`` or ``"{c1}:{i}-{c2}:{j}"``."""
    units: tuple[Unit, ...]
    """The units, in document order; consecutive units are contiguous in the document."""
    source: str
    """What produced it: ``chunk``, ``segment``, ``window``, ``answer`` (an answer-bearing
    sentence no segment covered) or ``gap`` (text no segment kept)."""
    value: float = 0.0
    """Value of the span where its producer has one (segment sum of unit values), else 0."""

    @property
    def doc_id(self) -> str:
        """Document of the span."""
        return self.units[0].doc_id

    @property
    def title(self) -> str:
        """Title of the span's document."""
        return self.units[0].title

    @property
    def section(self) -> tuple[str, ...]:
        """Heading chain of the span."""
        return self.units[0].section

    @property
    def label(self) -> str:
        """Section label: the heading chain joined by ``" > "``, without the title heading."""
        return section_label(self.section, self.title)

    @property
    def text(self) -> str:
        """Exact source text: the concatenation of the units' texts, nothing inserted."""
        return "".join(u.text for u in self.units)

    @property
    def chunk_ids(self) -> tuple[str, ...]:
        """Ids of the chunks the span draws from, in document order."""
        return tuple(dict.fromkeys(u.chunk_id for u in self.units))

    @property
    def start(self) -> int:
        """Document offset of the span's first character."""
        return self.units[0].start

    @property
    def end(self) -> int:
        """Document offset one past the span's last character."""
        return self.units[-1].end


@dataclass(frozen=True, slots=True)
class SpanScores:
    """Score components of one span (see :mod:`sealgraph.packing.scoring`)."""

    relevance: float
    """Fused similarity to the question of the span's best unit, in [0, 1]."""
    prior: float
    """Structural prior: π(section) plus the lead-sentence prior."""
    boost: float
    """Keyword/answerability boost: focus terms and answer-type values found in the span."""
    length_penalty: float
    """1 / (1 + tokens/θ)."""
    final: float
    """Bubble score (relevance + prior + boost) × length penalty: what the gates compare."""
    novelty: float = 1.0
    """1 − highest similarity to the spans already selected when it was considered."""
    mmr: float = 0.0
    """MMR value λ·final − (1 − λ)·(1 − novelty) when it was considered."""


@dataclass(frozen=True, slots=True)
class PackDecision:
    """What happened to one candidate span, and why."""

    span_id: str
    """Id of the candidate span."""
    doc_id: str
    """Its document."""
    chunk_ids: tuple[str, ...]
    """Chunks it draws from."""
    section: str
    """Its section label (heading chain joined by ``" > "``, empty when untagged)."""
    tokens: int
    """Tokens of its rendered block (header and text)."""
    scores: SpanScores
    """Its score components."""
    decision: Decision
    """``selected`` or the reason it was left out."""
    reason: str
    """One human-readable line explaining the decision."""
    source: str = ""
    """What produced the span (``chunk``, ``segment``, ``window``, ``gap``)."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class PackedSpan:
    """A span of the rendered context, with its citation number."""

    n: int
    """Citation number, 1-based, in reading order."""
    span_id: str
    """Id of the span."""
    chunk_ids: tuple[str, ...]
    """Chunks the span draws from."""
    doc_id: str
    """Its document."""
    title: str
    """Title of its document."""
    section: str
    """Section label (heading chain joined by ``" > "``, empty when untagged)."""
    text: str
    """Exact source text (the rendered block shows it stripped of outer whitespace)."""
    start: int
    """Document offset of the first character of ``text``."""
    end: int
    """Document offset one past the last character of ``text``."""
    tokens: int
    """Tokens of its rendered block, counted alone."""
    scores: SpanScores
    """Its score components."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class PackResult:
    """The packed context and its audit trail."""

    context: str
    """Final rendered context given to the model (see :func:`render_context`)."""
    tokens: int
    """Exact token count of ``context``; never above ``budget``."""
    spans: tuple[PackedSpan, ...]
    """The cited spans, in reading order (``spans[i].n == i + 1``)."""
    trace: tuple[PackDecision, ...]
    """One decision per candidate span, in the order they were considered."""
    budget: int
    """The token budget the context was packed under."""
    strategy: str
    """The strategy that produced it."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict."""
        return asdict(self)

    def decisions(self) -> dict[str, int]:
        """Return how many candidates got each decision (every kind listed, zeros included)."""
        counts = dict.fromkeys(DECISIONS, 0)
        for d in self.trace:
            counts[d.decision] += 1
        return counts
