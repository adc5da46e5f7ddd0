"""Units: the sentences of the evidence chunks (and their neighbours), per document.

Units of one document are listed in document order and cut into *pieces*: maximal
runs in which each unit starts exactly where the previous one ends and all share a
section. Spans never cross a piece boundary, which is what makes a span's text, the
plain concatenation of its units, exactly the document text between its offsets
(chunks are zero-overlap, but an index may leave whitespace between two chunks, and a
neighbour chunk may not be adjacent at all).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sealgraph.packing.types import Span, Unit
from sealgraph.types import Chunk

__all__ = ["DocUnits", "NeighborFn", "chunk_units", "collect_units", "make_span"]

# A Markdown ATX heading alone on its line (with the blank line after it).
_HEADING_RE = re.compile(r"\s*#{1,6}[ \t]+[^\n]*\s*")

NeighborFn = Callable[[str, int, int], Sequence[Chunk]]
"""``neighbors(chunk_id, before, after)``: chunks around a chunk in its document."""


@dataclass(frozen=True, slots=True)
class DocUnits:
    """The units of one document, in document order, cut into pieces."""

    doc_id: str
    """The document."""
    units: tuple[Unit, ...]
    """Its units in document order."""
    breaks: tuple[int, ...]
    """Indices (into ``units``) where a new piece starts; 0 is not listed."""

    def pieces(self) -> list[tuple[int, int]]:
        """Return the pieces as half-open ``(start, end)`` index ranges."""
        bounds = [0, *self.breaks, len(self.units)]
        return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def chunk_units(chunk: Chunk, *, evidence: bool = True) -> list[Unit]:
    """Split a chunk into units along its sentence spans (the whole chunk when it has none)."""
    spans = chunk.sentences or ((0, len(chunk.text)),)
    units = []
    position = 0
    for i, (a, b) in enumerate(spans):
        if b <= a:
            continue
        text = chunk.text[a:b]
        heading = _HEADING_RE.fullmatch(text) is not None
        units.append(
            Unit(
                unit_id=f"{chunk.chunk_id}:{i}",
                doc_id=chunk.doc_id,
                chunk_id=chunk.chunk_id,
                title=chunk.title,
                section=tuple(chunk.section),
                chunk_order=chunk.order,
                index=i,
                start=chunk.start + a,
                end=chunk.start + b,
                text=text,
                evidence=evidence,
                heading=heading,
                position=-1 if heading else position,
            )
        )
        position += not heading
    return units


def collect_units(
    chunks: Sequence[Chunk],
    *,
    neighbors: NeighborFn | None = None,
    neighbor_chunks: int = 0,
) -> list[DocUnits]:
    """Gather the units of the evidence chunks and, optionally, of their neighbours.

    Args:
        chunks: Evidence chunks (a repeated chunk id is used once).
        neighbors: Accessor for adjacent chunks of the same document, or None.
        neighbor_chunks: Chunks fetched on each side of every evidence chunk.

    Returns:
        One :class:`DocUnits` per document, documents in order of first appearance
        in ``chunks``.

    """
    by_doc: dict[str, dict[str, Chunk]] = {}
    evidence_ids: set[str] = set()
    for chunk in chunks:
        if chunk.chunk_id not in evidence_ids:
            evidence_ids.add(chunk.chunk_id)
            by_doc.setdefault(chunk.doc_id, {})[chunk.chunk_id] = chunk
    if neighbors is not None and neighbor_chunks > 0:
        for chunk in [c for doc in by_doc.values() for c in doc.values()]:
            for other in neighbors(chunk.chunk_id, neighbor_chunks, neighbor_chunks) or ():
                if other.doc_id == chunk.doc_id:
                    by_doc[chunk.doc_id].setdefault(other.chunk_id, other)
    out: list[DocUnits] = []
    for doc_id, doc_chunks in by_doc.items():
        ordered = sorted(doc_chunks.values(), key=lambda c: (c.order, c.start, c.chunk_id))
        units: list[Unit] = []
        for chunk in ordered:
            units.extend(chunk_units(chunk, evidence=chunk.chunk_id in evidence_ids))
        breaks = tuple(
            i
            for i in range(1, len(units))
            if units[i].start != units[i - 1].end
            or units[i].section != units[i - 1].section
            or units[i].chunk_order not in (units[i - 1].chunk_order, units[i - 1].chunk_order + 1)
        )
        out.append(DocUnits(doc_id, tuple(units), breaks))
    return out


def make_span(units: Sequence[Unit], source: str, value: float = 0.0) -> Span:
    """Build a span over contiguous units and give it its id."""
    first, last = units[0], units[-1]
    if len(units) == 1:
        span_id = first.unit_id
    elif first.chunk_id == last.chunk_id:
        span_id = f"{first.unit_id}-{last.index}"
    else:
        span_id = f"{first.unit_id}-{last.unit_id}"
    return Span(span_id=span_id, units=tuple(units), source=source, value=value)
