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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sealgraph.packing.scoring import jaccard
from sealgraph.packing.types import Decision

__all__ = ["FillChoice", "covered_runs", "fill_units"]


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
