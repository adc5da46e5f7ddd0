"""Stage 2 of :func:`~sealgraph.packing.pack`: cut the evidence into candidate spans.

By strategy: whole evidence chunks (``bubble``), maximum-sum segments of unit values
(``segments``), dynamic semantic windows grown from every positive unit (``window``),
or segments grown as windows (``auto``). The last three add a span for every run of
answer-bearing evidence units no span covers, and a ``gap`` span for each stretch of
evidence text no span kept, so that the trace accounts for all evidence text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sealgraph.packing.config import PackConfig
from sealgraph.packing.scoring import cohesion
from sealgraph.packing.segments import max_sum_segments
from sealgraph.packing.types import Span, Unit
from sealgraph.packing.unit_scores import UnitScores
from sealgraph.packing.units import DocUnits, make_span
from sealgraph.packing.window import grow_window, merge_windows

__all__ = ["candidate_spans"]


def candidate_spans(
    docs: Sequence[DocUnits],
    scores: UnitScores,
    config: PackConfig,
    vectors: np.ndarray | None,
) -> tuple[list[Span], list[Span]]:
    """Cut candidate spans (and the leftover gap spans) according to the strategy.

    Args:
        docs: The units of the pack call, grouped by document in evidence order.
        scores: The units' score components.
        config: Packing settings (``strategy`` and its parameters).
        vectors: Unit embeddings (rows aligned with the units) or None.

    Returns:
        ``(spans, gaps)``: the candidate spans, and the gap spans of the evidence
        text no candidate covers (none for the ``bubble`` strategy).

    """
    if config.strategy == "bubble":
        return _chunk_spans(docs), []

    ranges = _span_ranges(docs, scores, config, vectors)
    if not any(ranges.values()):
        ranges = _fallback_ranges(docs, scores)
    if config.keep_answer_bearing:
        ranges = _with_answer_ranges(docs, scores, ranges)
    spans: list[Span] = []
    gaps: list[Span] = []
    offset = 0
    for doc in docs:
        values = scores.value[offset : offset + len(doc.units)]
        doc_spans, doc_gaps = _doc_candidates(doc, values, ranges[doc.doc_id])
        spans.extend(doc_spans)
        gaps.extend(doc_gaps)
        offset += len(doc.units)
    return spans, gaps


def _chunk_spans(docs: Sequence[DocUnits]) -> list[Span]:
    """One span per evidence chunk, whole (the ``bubble`` strategy)."""
    spans = []
    for doc in docs:
        by_chunk: dict[str, list[Unit]] = {}
        for u in doc.units:
            if u.evidence:
                by_chunk.setdefault(u.chunk_id, []).append(u)
        for chunk_id, chunk_units in by_chunk.items():
            spans.append(Span(chunk_id, tuple(chunk_units), "chunk"))
    return spans


def _doc_candidates(
    doc: DocUnits, values: Sequence[float], ranges: Sequence[tuple[int, int, str]]
) -> tuple[list[Span], list[Span]]:
    """Cut one document's unit ranges into spans, and its uncovered evidence into gaps."""
    spans: list[Span] = []
    covered = [False] * len(doc.units)
    for start, end, source in ranges:
        covered[start:end] = [True] * (end - start)
        span = _range_span(doc, values, start, end, source)
        if span is not None:
            spans.append(span)
    gaps: list[Span] = []
    for run in _uncovered_evidence_runs(doc, covered):
        if any(not doc.units[j].heading and doc.units[j].text.strip() for j in run):
            gap_units = [doc.units[j] for j in run]
            gaps.append(make_span(gap_units, "gap", sum(values[j] for j in run)))
    return spans, gaps


def _range_span(
    doc: DocUnits, values: Sequence[float], start: int, end: int, source: str
) -> Span | None:
    """Build the span of a unit range, or None when it holds nothing worth citing."""
    # Heading lines at the edges repeat the rendered header: leave them out.
    while start < end and doc.units[start].heading:
        start += 1
    while end > start and doc.units[end - 1].heading:
        end -= 1
    units = doc.units[start:end]
    if not "".join(u.text for u in units).strip():
        return None
    # Neighbour text is there to extend evidence; alone it is only worth its
    # document's lead sentence (which says what the document is about).
    if not any(u.evidence or u.lead for u in units):
        return None
    return make_span(units, source, sum(values[start:end]))


def _with_answer_ranges(
    docs: Sequence[DocUnits],
    scores: UnitScores,
    ranges: Mapping[str, list[tuple[int, int, str]]],
) -> dict[str, list[tuple[int, int, str]]]:
    """Add a range (source ``answer``) for every uncovered run of answer-bearing units.

    Only evidence units count; no answer-bearing sentence is left to a
    ``low_relevance`` gap.
    """
    out: dict[str, list[tuple[int, int, str]]] = {}
    offset = 0
    for doc in docs:
        n = len(doc.units)
        covered = [False] * n
        for start, end, _ in ranges.get(doc.doc_id, []):
            covered[start:end] = [True] * (end - start)
        cut = set(doc.breaks)
        added: list[tuple[int, int, str]] = []
        for i, unit in enumerate(doc.units):
            if covered[i] or not unit.evidence or not scores.bearing[offset + i]:
                continue
            if added and added[-1][1] == i and i not in cut:
                added[-1] = (added[-1][0], i + 1, "answer")
            else:
                added.append((i, i + 1, "answer"))
        out[doc.doc_id] = sorted([*ranges.get(doc.doc_id, []), *added])
        offset += n
    return out


def _uncovered_evidence_runs(doc: DocUnits, covered: Sequence[bool]) -> list[list[int]]:
    """Maximal runs of evidence units no span covers, never across a piece boundary."""
    cut = set(doc.breaks)
    runs: list[list[int]] = []
    run: list[int] = []
    for i, unit in enumerate(doc.units):
        if run and (i in cut or covered[i] or not unit.evidence):
            runs.append(run)
            run = []
        if unit.evidence and not covered[i]:
            run.append(i)
    if run:
        runs.append(run)
    return runs


def _span_ranges(
    docs: Sequence[DocUnits],
    scores: UnitScores,
    config: PackConfig,
    vectors: np.ndarray | None,
) -> dict[str, list[tuple[int, int, str]]]:
    """Per document, the (start, end, source) unit ranges of the candidate spans."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    offset = 0
    for doc in docs:
        n = len(doc.units)
        values = scores.value[offset : offset + n]
        if config.strategy in ("segments", "auto"):
            seeds = [
                (s.start, s.end)
                for s in max_sum_segments(
                    values,
                    max_length=config.max_segment_length,
                    max_segments=config.max_segments_per_doc,
                    breaks=doc.breaks,
                )
            ]
        else:
            seeds = [(i, i + 1) for i, v in enumerate(values) if v > 0]
        if config.strategy == "segments" or not seeds:
            out[doc.doc_id] = [(s, e, "segment") for s, e in sorted(seeds)]
            offset += n
            continue
        adjacent, threshold = _adjacent_similarity(doc, scores, vectors, offset, config)
        piece_of = _piece_bounds(doc)
        grown = [
            grow_window(
                s,
                e,
                adjacent,
                threshold=threshold,
                max_expand=config.window_max_expand,
                lo=piece_of[s][0],
                hi=piece_of[s][1],
            )
            for s, e in seeds
        ]
        merged = merge_windows(grown, breaks=doc.breaks)
        seed_set = set(seeds)
        out[doc.doc_id] = [
            (s, e, "segment" if config.strategy == "auto" and (s, e) in seed_set else "window")
            for s, e in merged
        ]
        offset += n
    return out


def _fallback_ranges(
    docs: Sequence[DocUnits], scores: UnitScores
) -> dict[str, list[tuple[int, int, str]]]:
    """One single-unit span per document: its best unit (nothing had a positive value)."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    offset = 0
    for doc in docs:
        values = scores.value[offset : offset + len(doc.units)]
        usable = [i for i, u in enumerate(doc.units) if not u.heading and u.text.strip()]
        if usable:
            best = max(usable, key=lambda i: (values[i], -i))
            out[doc.doc_id] = [(best, best + 1, "fallback")]
        else:
            out[doc.doc_id] = []
        offset += len(doc.units)
    return out


def _piece_bounds(doc: DocUnits) -> list[tuple[int, int]]:
    bounds = [(0, 0)] * len(doc.units)
    for start, end in doc.pieces():
        for i in range(start, end):
            bounds[i] = (start, end)
    return bounds


def _adjacent_similarity(
    doc: DocUnits,
    scores: UnitScores,
    vectors: np.ndarray | None,
    offset: int,
    config: PackConfig,
) -> tuple[list[float], float]:
    """Similarity of consecutive units and the growth threshold that goes with it."""
    n = len(doc.units)
    if vectors is not None:
        rows = vectors[offset : offset + n]
        sims = [float(rows[i] @ rows[i + 1]) for i in range(n - 1)]
        return sims, config.window_threshold
    unit_terms = scores.terms[offset : offset + n]
    sims = [cohesion(unit_terms[i], unit_terms[i + 1], doc.units[i + 1].text) for i in range(n - 1)]
    return sims, config.window_lexical_threshold
