"""Budget fill: after the must-have spans, pack the best remaining evidence sentences.

The context bubble admits spans whose unit values clear an absolute threshold
(``rse_threshold``) and then stops, whatever the budget: on text whose scores sit
lower than the tuning corpus's (long legal clauses, policy prose) most of the budget
stays unused while relevant evidence is left out. The fill stage spends what is left:

* **Candidates** are the evidence units (sentences) no packed span covers, except
  headings (the rendered header shows them) and boilerplate (decided
  ``low_relevance``). A unit whose relevance is below ``fill_relative_floor`` times
  the best relevance among the question's own evidence units is ``low_relevance``
  too: the floor is relative to the question's score distribution, not absolute.
* **Order**: maximal marginal relevance over the unit values,
  ``λ·value − (1 − λ)·max Jaccard(unit, packed units)``, plus ``fill_adjacency_bonus``
  for a unit that touches packed text (it extends a block: no new header, and a
  clause stays whole).
* **Gates**: a unit whose content-word Jaccard with a packed unit is ≥ δ is
  ``too_redundant``; a unit is admitted only if the *real* token count of the whole
  re-rendered context stays within the budget, else ``budget_exceeded``.

Packed units render merged into maximal contiguous runs per document (never across
a piece boundary), so a filled sentence next to a packed span extends its block.

:func:`fill_budget` runs the stage on the bubble's selection and builds the pack
result: the packed runs, and a trace in which the fill's decisions are folded into
the bubble's; :func:`fill_units` is the greedy admission itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sealgraph.packing._spans import packed_span, score_span, span_block, span_decision
from sealgraph.packing.bubble import Choice
from sealgraph.packing.config import PackConfig
from sealgraph.packing.render import render_context
from sealgraph.packing.scoring import boilerplate_reason, jaccard
from sealgraph.packing.select import Selection, choice_trace
from sealgraph.packing.types import Decision, PackDecision, PackedSpan, PackResult, Span, Unit
from sealgraph.packing.unit_scores import UnitScores
from sealgraph.packing.units import DocUnits, make_span
from sealgraph.text.tokens import TokenCounter

__all__ = ["FillChoice", "covered_runs", "fill_budget", "fill_units"]


@dataclass(frozen=True, slots=True)
class FillChoice:
    """The fill stage's verdict on one candidate unit."""

    index: int
    """Global index of the unit."""
    decision: Decision
    """``selected`` or why it was left out."""
    reason: str
    """One human-readable line."""
    tokens: int
    """Tokens the unit added to the context (selected) or its own token count."""
    mmr: float
    """Its MMR value when it was considered."""
    novelty: float
    """1 − highest Jaccard with a packed unit when it was considered."""


def fill_units(
    candidates: Sequence[int],
    packed: Sequence[int],
    *,
    value: Sequence[float],
    content: Sequence[frozenset[str]],
    unit_tokens: Sequence[int],
    adjacent: Callable[[int, set[int]], bool],
    cost: Callable[[set[int]], int],
    used: int,
    budget: int,
    delta: float,
    mmr_lambda: float,
    adjacency_bonus: float,
) -> tuple[list[FillChoice], set[int], int]:
    """Greedily add candidate units to the packed set while the budget allows.

    Args:
        candidates: Global indices of the units that may be added.
        packed: Global indices of the units already packed.
        value: Unit values (relevance + prior + boosts − threshold), by global index.
        content: Content-word sets of the units (redundancy and MMR), by global index.
        unit_tokens: Token count of each unit's text alone, by global index (a cheap
            bound: a unit whose own text does not fit in what is left is not rendered).
        adjacent: ``adjacent(i, packed)``: whether unit i touches packed text.
        cost: Real token count of the context rendered from a set of packed units.
        used: Real token count of the context rendered from ``packed``.
        budget: Token budget.
        delta: Redundancy gate δ (unit-to-unit content Jaccard).
        mmr_lambda: MMR trade-off λ.
        adjacency_bonus: Bonus of a unit that extends packed text.

    Returns:
        ``(choices, packed units, tokens)``: one choice per candidate in the order
        they were decided, the final packed set and its real token count (never above
        ``budget``).

    """
    chosen = set(packed)
    max_sim = {
        i: max((jaccard(content[i], content[j]) for j in chosen), default=0.0) for i in candidates
    }
    remaining = list(candidates)
    choices: list[FillChoice] = []

    def mmr(i: int) -> float:
        bonus = adjacency_bonus if adjacent(i, chosen) else 0.0
        return mmr_lambda * (value[i] + bonus) - (1 - mmr_lambda) * max_sim[i]

    while remaining:
        best = max(remaining, key=lambda i: (mmr(i), -i))
        remaining.remove(best)
        score, novelty = mmr(best), 1.0 - max_sim[best]
        if chosen and max_sim[best] >= delta:
            choices.append(
                FillChoice(
                    best,
                    "too_redundant",
                    f"fill: lexical overlap {max_sim[best]:.2f} with a packed sentence "
                    f"≥ δ={delta:g}",
                    unit_tokens[best],
                    score,
                    novelty,
                )
            )
            continue
        left = budget - used
        # Merging can save a separator; a unit's own text is a near-exact lower bound.
        if unit_tokens[best] - 2 > left:
            choices.append(_no_room(best, unit_tokens[best], left, budget, score, novelty))
            continue
        trial = cost(chosen | {best})
        if trial > budget:
            choices.append(_no_room(best, trial - used, left, budget, score, novelty))
            continue
        chosen.add(best)
        added, used = trial - used, trial
        choices.append(
            FillChoice(
                best,
                "selected",
                f"filled: best remaining sentence (MMR {score:.3f}), +{added} tokens, "
                f"context {used}/{budget}",
                added,
                score,
                novelty,
            )
        )
        for i in remaining:
            max_sim[i] = max(max_sim[i], jaccard(content[i], content[best]))
    return choices, chosen, used


def _no_room(
    index: int, needed: int, left: int, budget: int, mmr: float, novelty: float
) -> FillChoice:
    return FillChoice(
        index,
        "budget_exceeded",
        f"fill: needs {needed} tokens > {left} left of the {budget}-token budget",
        needed,
        mmr,
        novelty,
    )


def covered_runs(
    members: Sequence[int], breaks: Sequence[int], selected: set[int]
) -> list[list[int]]:
    """Maximal runs of consecutive members (local indices of one document) in ``selected``.

    Args:
        members: The document's unit positions to consider, ascending.
        breaks: Positions where a new piece starts (no run crosses them).
        selected: The positions that are packed.

    Returns:
        The runs, in document order.

    """
    cut = set(breaks)
    runs: list[list[int]] = []
    for i in members:
        if i not in selected:
            continue
        if runs and runs[-1][-1] == i - 1 and i not in cut:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def fill_budget(
    selection: Selection,
    docs: Sequence[DocUnits],
    scores: UnitScores,
    *,
    budget: int,
    counter: TokenCounter,
    config: PackConfig,
) -> PackResult:
    """Fill what the bubble's kept spans leave of the budget, and build the pack result.

    Args:
        selection: The bubble's selection (see :mod:`sealgraph.packing.select`).
        docs: The units grouped by document, in evidence order.
        scores: The units' score components.
        budget: Token budget of the rendered context.
        counter: Token counter of the generating model.
        config: Packing settings.

    Returns:
        The :class:`PackResult`: one packed span per rendered run (kept spans and
        filled sentences merged), and a trace deciding every span id once.

    """
    kept_idx = selection.kept_indices()
    kept_spans = [selection.spans[i] for i in kept_idx]
    context, tokens, runs, fill_trace = _fill(
        kept_spans, docs, scores, selection.index_of, budget, counter, config
    )
    trace = _merge_fill_trace(choice_trace(selection, budget), fill_trace, kept_spans, runs)
    choice_of = selection.choice_of()
    kept_choices = [(selection.spans[i], choice_of[i]) for i in kept_idx]
    packed = tuple(
        _packed_run(n, run, kept_choices, selection.index_of, scores, counter, config)
        for n, run in enumerate(runs, start=1)
    )
    return PackResult(context, tokens, packed, tuple(trace), budget, config.strategy)


class _Layout:
    """Where each unit of the pack call sits: its document rank and local position."""

    def __init__(self, docs: Sequence[DocUnits]) -> None:
        self.docs = docs
        self.where: list[tuple[int, int]] = []  # global unit index -> (doc rank, local position)
        for r, doc in enumerate(docs):
            self.where.extend((r, i) for i in range(len(doc.units)))
        self.units: list[Unit] = [u for d in docs for u in d.units]

    def runs_of(self, selected: set[int]) -> list[Span]:
        """Merge a set of units into packed runs: contiguous, trimmed of edge headings."""
        local: dict[int, set[int]] = {}
        for g in selected:
            r, i = self.where[g]
            local.setdefault(r, set()).add(i)
        out = []
        for r in sorted(local):
            doc = self.docs[r]
            for run in covered_runs(range(len(doc.units)), doc.breaks, local[r]):
                run_units = [doc.units[i] for i in run]
                while run_units and run_units[0].heading:
                    run_units.pop(0)
                while run_units and run_units[-1].heading:
                    run_units.pop()
                if run_units and "".join(u.text for u in run_units).strip():
                    out.append(make_span(run_units, "packed"))
        return out

    def adjacent(self, g: int, selected: set[int]) -> bool:
        """Whether unit ``g`` touches a selected unit of its piece."""
        r, i = self.where[g]
        cut = self.docs[r].breaks
        return (i > 0 and i not in cut and g - 1 in selected) or (
            i + 1 < len(self.docs[r].units) and i + 1 not in cut and g + 1 in selected
        )


def _render_runs(runs: Sequence[Span]) -> str:
    """Render the packed runs as the context (numbered 1..)."""
    return render_context([span_block(n, s) for n, s in enumerate(runs, 1)])


def _fill(
    kept: Sequence[Span],
    docs: Sequence[DocUnits],
    scores: UnitScores,
    index_of: Mapping[str, int],
    budget: int,
    counter: TokenCounter,
    config: PackConfig,
) -> tuple[str, int, list[Span], list[PackDecision]]:
    """Fill what the kept spans leave of the budget with the best remaining sentences.

    Returns the context rendered from the packed units (merged into contiguous runs),
    its real token count, the runs, and one decision per run of fill candidates that
    met the same fate.
    """
    layout = _Layout(docs)
    units = layout.units
    packed = {index_of[u.unit_id] for s in kept for u in s.units}

    def cost(selected: set[int]) -> int:
        return counter.count(_render_runs(layout.runs_of(selected)))

    candidates, early = _fill_candidates(units, packed, scores, config)
    used = cost(packed)
    unit_tokens = [counter.count(u.text) if g in candidates else 0 for g, u in enumerate(units)]
    choices, final, used = fill_units(
        candidates,
        sorted(packed),
        value=scores.value,
        content=scores.content,
        unit_tokens=unit_tokens,
        adjacent=layout.adjacent,
        cost=cost,
        used=used,
        budget=budget,
        delta=config.delta,
        mmr_lambda=config.mmr_lambda,
        adjacency_bonus=config.fill_adjacency_bonus,
    )
    runs = layout.runs_of(final)
    context = _render_runs(runs)
    tokens = counter.count(context)
    filled = {c.index: c for c in choices if c.decision == "selected"}
    left_out = early + [c for c in choices if c.decision != "selected"]
    decisions = _fill_decisions(left_out, layout, index_of, scores, counter, config)
    decisions.extend(
        _run_decision(n, run, filled, index_of, scores, counter, config, tokens, budget)
        for n, run in enumerate(runs, 1)
    )
    return context, tokens, runs, decisions


def _fill_candidates(
    units: Sequence[Unit], packed: set[int], scores: UnitScores, config: PackConfig
) -> tuple[list[int], list[FillChoice]]:
    """Find the units the fill may add, and decide those left out before it starts.

    Evidence units no packed span covers are candidates, except headings and empty
    units (not decided), boilerplate and units below the relative relevance floor
    (decided ``low_relevance``).
    """
    relevances = [scores.relevance[i] for i, u in enumerate(units) if u.evidence and not u.heading]
    floor = config.fill_relative_floor * max(relevances, default=0.0)
    candidates: list[int] = []
    early: list[FillChoice] = []
    for g, u in enumerate(units):
        if g in packed or not u.evidence or u.heading or not u.text.strip():
            continue
        reason = _early_reason(g, u, scores, floor, config)
        if reason:
            early.append(FillChoice(g, "low_relevance", reason, 0, 0.0, 0.0))
        else:
            candidates.append(g)
    return candidates, early


def _early_reason(g: int, u: Unit, scores: UnitScores, floor: float, config: PackConfig) -> str:
    """Why unit ``g`` is no fill candidate (boilerplate, low relevance), "" when it is."""
    if scores.boilerplate and scores.boilerplate[g]:
        return f"fill: boilerplate ({boilerplate_reason(u.text) or 'repeated line'})"
    if scores.relevance[g] < floor:
        return (
            f"fill: relevance {scores.relevance[g]:.3f} < {config.fill_relative_floor:g}"
            f" × best sentence relevance ({floor:.3f})"
        )
    return ""


def _run_decision(
    n: int,
    run: Span,
    filled: Mapping[int, FillChoice],
    index_of: Mapping[str, int],
    scores: UnitScores,
    counter: TokenCounter,
    config: PackConfig,
    tokens: int,
    budget: int,
) -> PackDecision:
    """Decide packed run ``n`` ``selected``, naming the sentences filled into it."""
    added = [filled[index_of[u.unit_id]] for u in run.units if index_of[u.unit_id] in filled]
    sc, tok = score_span(run, index_of, scores, counter, config, n)
    if added:
        sc = dataclasses.replace(
            sc, novelty=min(c.novelty for c in added), mmr=max(c.mmr for c in added)
        )
    reason = (
        f"filled {len(added)} sentence(s) (+{sum(c.tokens for c in added)} tokens) after "
        f"the bubble's spans; context {tokens}/{budget}"
        if added
        else ""
    )
    return span_decision(run, tok, sc, "selected", reason)


def _merge_fill_trace(
    trace: Sequence[PackDecision],
    fill_trace: Sequence[PackDecision],
    kept_spans: Sequence[Span],
    runs: Sequence[Span],
) -> list[PackDecision]:
    """Fold the fill stage's decisions into the bubble's trace.

    A packed run replaces the decisions of the kept spans it holds (their reasons
    joined to its own), so the selected decisions are exactly the packed spans; a fill
    decision with the id of a bubble decision replaces it, keeping the bubble's verdict
    in its reason, so every span id is decided once.
    """
    by_id = {d.span_id: d for d in trace}
    order = [d.span_id for d in trace]
    run_of = {r.span_id: r for r in runs}
    for d in fill_trace:
        if d.decision == "selected":
            ids = {u.unit_id for u in run_of[d.span_id].units}
            inside = [s for s in kept_spans if {u.unit_id for u in s.units} <= ids]
            reasons = [by_id[s.span_id].reason for s in inside if s.span_id in by_id]
            for s in inside:
                by_id.pop(s.span_id, None)
            d = dataclasses.replace(d, reason="; ".join(r for r in (*reasons, d.reason) if r))
        elif d.span_id in by_id:
            old = by_id[d.span_id]
            d = dataclasses.replace(d, reason=f"{d.reason} (bubble: {old.decision}: {old.reason})")
        if d.span_id not in order:
            order.append(d.span_id)
        by_id[d.span_id] = d
    return [by_id[i] for i in dict.fromkeys(order) if i in by_id]


def _fill_decisions(
    choices: Sequence[FillChoice],
    layout: _Layout,
    index_of: Mapping[str, int],
    scores: UnitScores,
    counter: TokenCounter,
    config: PackConfig,
) -> list[PackDecision]:
    """Group the fill verdicts into decisions: consecutive sentences with the same fate."""
    where, docs = layout.where, layout.docs
    by_index = {c.index: c for c in choices}
    groups: list[list[FillChoice]] = []
    for g in sorted(by_index):
        c = by_index[g]
        r, i = where[g]
        last = groups[-1][-1] if groups else None
        if (
            last is not None
            and last.index == g - 1
            and last.decision == c.decision
            and where[g - 1][0] == r
            and i not in docs[r].breaks
        ):
            groups[-1].append(c)
        else:
            groups.append([c])
    out = []
    for group in groups:
        span = make_span([layout.units[c.index] for c in group], "fill")
        sc, tok = score_span(span, index_of, scores, counter, config, 1)
        first = group[0]
        reason = (
            first.reason
            if len(group) == 1
            else (f"{len(group)} sentences: " + "; ".join(c.reason for c in group))
        )
        sc = dataclasses.replace(
            sc, novelty=min(c.novelty for c in group), mmr=max(c.mmr for c in group)
        )
        out.append(span_decision(span, tok, sc, first.decision, reason))
    return out


def _packed_run(
    n: int,
    run: Span,
    kept: Sequence[tuple[Span, Choice]],
    index_of: Mapping[str, int],
    scores: UnitScores,
    counter: TokenCounter,
    config: PackConfig,
) -> PackedSpan:
    """Build the packed span of one rendered run (kept spans and filled sentences merged)."""
    sc, _ = score_span(run, index_of, scores, counter, config, n)
    ids = {u.unit_id for u in run.units}
    inside = [c for span, c in kept if span.units[0].unit_id in ids]
    if inside:
        sc = dataclasses.replace(
            sc, novelty=min(c.novelty for c in inside), mmr=max(c.mmr for c in inside)
        )
    return packed_span(n, run, sc, counter)
