"""Span-level helpers shared by selection and fill.

The rendered block of a span, its bubble score components and token cost, its trace
decision and its packed form: the bubble (:mod:`sealgraph.packing.select`) and the
budget fill (:mod:`sealgraph.packing.fill`) describe spans the same way.
"""

from __future__ import annotations

from collections.abc import Mapping

from sealgraph.packing.config import PackConfig
from sealgraph.packing.render import MAX_SECTION, MAX_TITLE, header_part, render_block
from sealgraph.packing.scoring import length_penalty
from sealgraph.packing.types import PackDecision, PackedSpan, Span, SpanScores
from sealgraph.packing.unit_scores import UnitScores
from sealgraph.text.tokens import TokenCounter


def span_block(n: int, span: Span) -> str:
    """Render the block of a span; the header falls back to the doc id without a title."""
    return render_block(n, span.title or span.doc_id, span.label, span.text)


def score_span(
    span: Span,
    index_of: Mapping[str, int],
    scores: UnitScores,
    counter: TokenCounter,
    config: PackConfig,
    placeholder_n: int,
) -> tuple[SpanScores, int]:
    """Bubble score components of a span, and the token cost of its rendered block."""
    idx = [index_of[u.unit_id] for u in span.units]
    tokens = counter.count(span_block(placeholder_n, span))
    relevance = max(scores.relevance[i] for i in idx)
    prior = max(scores.prior[i] for i in idx)
    boost = scores.boost(idx, config)
    lp = length_penalty(tokens, config.theta)
    return SpanScores(relevance, prior, boost, lp, (relevance + prior + boost) * lp), tokens


def span_decision(
    span: Span, tokens: int, scores: SpanScores, decision: str, reason: str
) -> PackDecision:
    """Build the trace entry of a span: what was decided about it, and why."""
    return PackDecision(
        span_id=span.span_id,
        doc_id=span.doc_id,
        chunk_ids=span.chunk_ids,
        section=header_part(span.label, MAX_SECTION),
        tokens=tokens,
        scores=scores,
        decision=decision,  # type: ignore[arg-type]
        reason=reason,
        source=span.source,
    )


def packed_span(n: int, span: Span, scores: SpanScores, counter: TokenCounter) -> PackedSpan:
    """Build the packed form of a span rendered as block ``n`` (tokens counted for real)."""
    return PackedSpan(
        n=n,
        span_id=span.span_id,
        chunk_ids=span.chunk_ids,
        doc_id=span.doc_id,
        title=header_part(span.title, MAX_TITLE),
        section=header_part(span.label, MAX_SECTION),
        text=span.text,
        start=span.start,
        end=span.end,
        tokens=counter.count(span_block(n, span)),
        scores=scores,
    )
