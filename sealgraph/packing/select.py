"""Stages 3 and 4 of :func:`~sealgraph.packing.pack`: select candidate spans and render them.

:func:`select_candidates` scores every candidate span (and gap) for the context
bubble, selects spans under the budget (:mod:`sealgraph.packing.bubble`), orders the
selected ones for reading and renders them, dropping the lowest-value span while the
real token count is over budget (:mod:`sealgraph.packing.render`). The resulting
:class:`Selection` becomes the result directly (:func:`bubble_result`) or goes on
to the budget fill (:func:`sealgraph.packing.fill.fill_budget`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sealgraph.packing._spans import packed_span, score_span, span_block, span_decision
from sealgraph.packing.bubble import BubbleItem, Choice, marginal_values, select_spans
from sealgraph.packing.config import PackConfig
from sealgraph.packing.render import fit_to_budget, render_context
from sealgraph.packing.scoring import jaccard
from sealgraph.packing.types import PackDecision, PackResult, Span, SpanScores, Unit
from sealgraph.packing.unit_scores import UnitScores
from sealgraph.packing.units import DocUnits
from sealgraph.text.tokens import TokenCounter

__all__ = ["Selection", "bubble_result", "choice_trace", "select_candidates"]


@dataclass(frozen=True, slots=True)
class Selection:
    """What the bubble selected, and the context rendered from it within the budget."""

    spans: Sequence[Span]
    """The candidate spans."""
    gaps: Sequence[Span]
    """The gap spans (evidence text no candidate covers)."""
    index_of: Mapping[str, int]
    """Global index of every unit by unit id."""
    scored: Sequence[tuple[SpanScores, int]]
    """Score components and block tokens of each candidate."""
    gap_scored: Sequence[tuple[SpanScores, int]]
    """Score components and block tokens of each gap."""
    choices: Sequence[Choice]
    """The bubble's verdict on each candidate."""
    gap_verdict: tuple[str, str] | None
    """``(decision, reason)`` of every gap when no span fits, else None."""
    chosen: Sequence[int]
    """Indices of the selected candidates, in reading order."""
    kept: Sequence[int]
    """Positions in ``chosen`` of the spans the final render kept."""
    dropped: Sequence[tuple[int, int]]
    """``(position in chosen, context tokens)`` of each span dropped at render."""
    context: str
    """The rendered context of the kept spans."""
    tokens: int
    """Its real token count."""

    def kept_indices(self) -> list[int]:
        """Return the indices of the kept candidates, in reading order."""
        return [self.chosen[k] for k in self.kept]

    def choice_of(self) -> dict[int, Choice]:
        """Return the bubble's choice by candidate index."""
        return {c.index: c for c in self.choices}


def select_candidates(
    spans: list[Span],
    gaps: list[Span],
    docs: Sequence[DocUnits],
    units: Sequence[Unit],
    scores: UnitScores,
    vectors: np.ndarray | None,
    *,
    budget: int,
    counter: TokenCounter,
    config: PackConfig,
    filling: bool,
) -> Selection:
    """Score the candidates, select them and render them in reading order within budget.

    Args:
        spans: The candidate spans.
        gaps: The gap spans.
        docs: The units grouped by document, in evidence order.
        units: Every unit of the pack call (global order).
        scores: The units' score components.
        vectors: Unit embeddings (rows aligned with ``units``) or None.
        budget: Token budget of the rendered context.
        counter: Token counter of the generating model.
        config: Packing settings.
        filling: Whether the budget fill follows (then only candidate spans, not
            gaps, can be too large to cite).

    Returns:
        The :class:`Selection`.

    """
    index_of = {u.unit_id: i for i, u in enumerate(units)}
    # Citation numbers are only known after selection; any number of the right size
    # gives the block cost (the final render is counted for real anyway).
    placeholder_n = max(1, len(spans))
    scored = [score_span(s, index_of, scores, counter, config, placeholder_n) for s in spans]
    gap_scored = [score_span(g, index_of, scores, counter, config, placeholder_n) for g in gaps]
    overlap, semantic = _similarities(spans, index_of, scores, vectors)
    keeps = [
        config.keep_answer_bearing
        and any(u.evidence and scores.bearing[index_of[u.unit_id]] for u in s.units)
        for s in spans
    ]
    choices, gap_verdict = _bubble_choices(
        spans, scored, gap_scored, keeps, overlap, semantic, budget, config, filling
    )
    chosen = _reading_order(choices, spans, docs)
    mmr_sim = semantic if semantic is not None else overlap
    context, tokens, kept, dropped = _render_within_budget(
        spans, chosen, scored, keeps, mmr_sim, counter, budget, config
    )
    return Selection(
        spans,
        gaps,
        index_of,
        scored,
        gap_scored,
        choices,
        gap_verdict,
        chosen,
        kept,
        dropped,
        context,
        tokens,
    )


def _bubble_choices(
    spans: Sequence[Span],
    scored: Sequence[tuple[SpanScores, int]],
    gap_scored: Sequence[tuple[SpanScores, int]],
    keeps: Sequence[bool],
    overlap: list[list[float]],
    semantic: list[list[float]] | None,
    budget: int,
    config: PackConfig,
    filling: bool,
) -> tuple[list[Choice], tuple[str, str] | None]:
    """Decide every candidate with the bubble; give the gaps' verdict when none fits."""
    # Fill packs single sentences, so spans larger than the budget leave it work to do:
    # only the candidate spans themselves can be too large to cite.
    smallest = min((tok for _, tok in scored), default=0)
    if not filling:
        smallest = min((tok for _, tok in [*scored, *gap_scored]), default=0)
    if smallest > budget:
        # No span fits whole: say so for every candidate (fill may still cut sentences
        # out of them; without fill the caller decides what to do).
        too_small = f"budget {budget} is below the smallest span ({smallest} tokens)"
        choices = [
            Choice(i, "budget_exceeded", too_small, 1.0, config.mmr_lambda * sc.final)
            for i, (sc, _) in enumerate(scored)
        ]
        return choices, None if filling else ("budget_exceeded", too_small)
    items = [
        BubbleItem(s.span_id, s.doc_id, s.label, tok, sc.final, keep)
        for s, (sc, tok), keep in zip(spans, scored, keeps, strict=True)
    ]
    choices = select_spans(items, budget=budget, config=config, overlap=overlap, semantic=semantic)
    return choices, None


def _reading_order(
    choices: Sequence[Choice], spans: Sequence[Span], docs: Sequence[DocUnits]
) -> list[int]:
    """Order the selected candidates for reading: documents in evidence order, then position."""
    doc_rank = {d.doc_id: r for r, d in enumerate(docs)}
    return sorted(
        (c.index for c in choices if c.decision == "selected"),
        key=lambda i: (doc_rank[spans[i].doc_id], spans[i].start, spans[i].end),
    )


def _render_within_budget(
    spans: Sequence[Span],
    chosen: Sequence[int],
    scored: Sequence[tuple[SpanScores, int]],
    keeps: Sequence[bool],
    mmr_sim: list[list[float]],
    counter: TokenCounter,
    budget: int,
    config: PackConfig,
) -> tuple[str, int, list[int], list[tuple[int, int]]]:
    """Render the chosen spans; while over budget, drop the one of lowest marginal value."""
    finals = [sc.final for sc, _ in scored]

    def render(kept: Sequence[int]) -> str:
        return render_context(
            [span_block(n, spans[chosen[k]]) for n, k in enumerate(kept, start=1)]
        )

    def lowest_value(kept: Sequence[int]) -> int:
        idx = [chosen[k] for k in kept]
        mv = marginal_values(idx, finals, mmr_sim, config.mmr_lambda)
        # Answer-bearing spans go last; then lowest value first; on a tie the bigger
        # span (frees more room), then the later one.
        pos = min(
            range(len(kept)),
            key=lambda p: (keeps[idx[p]], mv[p], -scored[idx[p]][1], -kept[p]),
        )
        return kept[pos]

    return fit_to_budget(len(chosen), render, lowest_value, counter, budget)


def choice_trace(selection: Selection, budget: int) -> list[PackDecision]:
    """One decision per candidate: the bubble's verdict, or dropped at the final render.

    Args:
        selection: The selection.
        budget: The token budget (named in the reason of a span dropped at render).

    Returns:
        The decisions, in the bubble's order.

    """
    chosen = selection.chosen
    dropped_at_render = {
        chosen[k]: f"dropped at final render (lowest marginal value): context was {t} tokens"
        f" > budget {budget}"
        for k, t in selection.dropped
    }
    trace = []
    for c in selection.choices:
        decision, reason = c.decision, c.reason
        if c.index in dropped_at_render:
            decision, reason = "budget_exceeded", dropped_at_render[c.index]
        sc, tok = selection.scored[c.index]
        span_scores = dataclasses.replace(sc, novelty=c.novelty, mmr=c.mmr)
        trace.append(span_decision(selection.spans[c.index], tok, span_scores, decision, reason))
    return trace


def bubble_result(
    selection: Selection, *, budget: int, counter: TokenCounter, config: PackConfig
) -> PackResult:
    """Build the pack result of the bubble's spans alone (no budget fill).

    Args:
        selection: The selection.
        budget: The token budget.
        counter: Token counter of the generating model.
        config: Packing settings.

    Returns:
        The :class:`PackResult`: the kept spans, and a trace deciding every
        candidate and gap.

    """
    trace = choice_trace(selection, budget)
    for gap, (sc, tok) in zip(selection.gaps, selection.gap_scored, strict=False):
        decision, reason = selection.gap_verdict or (
            "low_relevance",
            f"in no relevant segment or window (unit values sum to {gap.value:.2f})",
        )
        trace.append(span_decision(gap, tok, sc, decision, reason))
    choice_of = selection.choice_of()
    packed = []
    for n, i in enumerate(selection.kept_indices(), start=1):
        c = choice_of[i]
        span_scores = dataclasses.replace(selection.scored[i][0], novelty=c.novelty, mmr=c.mmr)
        packed.append(packed_span(n, selection.spans[i], span_scores, counter))
    return PackResult(
        selection.context, selection.tokens, tuple(packed), tuple(trace), budget, config.strategy
    )


def _similarities(
    spans: Sequence[Span],
    index_of: Mapping[str, int],
    scores: UnitScores,
    vectors: np.ndarray | None,
) -> tuple[list[list[float]], list[list[float]] | None]:
    """Pairwise lexical overlap of the spans, and their embedding cosine when available.

    Lexical overlap is the Jaccard index of content-word sets, the measure of
    :func:`sealgraph.text.lexical_overlap`; a span's embedding is the normalised mean
    of its units' embeddings (no second call to ``embed``).
    """
    words = [
        frozenset().union(*(scores.content[index_of[u.unit_id]] for u in s.units)) for s in spans
    ]
    overlap = [[jaccard(a, b) for b in words] for a in words]
    if vectors is None or not spans:
        return overlap, None
    means = np.stack([vectors[[index_of[u.unit_id] for u in s.units]].mean(axis=0) for s in spans])
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
    return overlap, (means @ means.T).tolist()
