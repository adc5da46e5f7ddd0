"""One replacement step: S(c) of the sets and candidates it weighs, each scored once.

:class:`SetScorer` holds what one step scores against: the passages' features, the
question's need items, the question relevance of each passage and the λ weights.
Fixed-k replacement asks it for the same scores many times (every candidate against
the set without each victim, then again for the log); it computes each once, and the
set's own need coverage once per set. :func:`repair_step` runs the step (fixed-k
replacement, or expansion when replacement is off) and returns what the log shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sealgraph.config import SealConfig, UtilityWeights
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.model import NeedItem, ReplacementResult, Slot, UtilityScore
from sealgraph.repair.replacement import expansion_step, replacement_step
from sealgraph.repair.utility import score_set, set_covers, utility

__all__ = ["SetScorer", "StepOutcome", "repair_step"]


@dataclass
class SetScorer:
    """S(c) of candidates and incumbents, memoised for one replacement step."""

    features: Mapping[str, PassageFeatures]
    """Features of every passage that may be scored (incumbents and candidates)."""
    items: Sequence[NeedItem]
    """The question's need items."""
    relevance: Mapping[str, float]
    """Question relevance of each passage, in [0, 1]."""
    weights: UtilityWeights
    """λ1..λ4."""
    _scores: dict[tuple[str, tuple[str, ...]], UtilityScore] = field(default_factory=dict)
    _covers: dict[tuple[str, ...], tuple[float, ...]] = field(default_factory=dict)

    def candidate(self, chunk_id: str, set_ids: Sequence[str]) -> UtilityScore:
        """Score one passage against the set ``set_ids`` (which must not hold it)."""
        key = (chunk_id, tuple(set_ids))
        got = self._scores.get(key)
        if got is None:
            others = [self.features[i] for i in set_ids]
            base = self._covers.get(key[1])
            if base is None:
                base = self._covers[key[1]] = set_covers(others, self.items)
            got = self._scores[key] = utility(
                self.features[chunk_id],
                others,
                self.items,
                self.relevance,
                self.weights,
                base_cover=base,
            )
        return got

    def members(self, set_ids: Sequence[str]) -> dict[str, UtilityScore]:
        """Score every member of a set against the rest of it."""
        return score_set(
            [self.features[i] for i in set_ids], self.items, self.relevance, self.weights
        )


@dataclass(frozen=True)
class StepOutcome:
    """One replacement step: its result, and the scores it was decided on (for the log)."""

    result: ReplacementResult
    """The new set, the decisions, the evicted passages."""
    scored: tuple[UtilityScore, ...]
    """Every new candidate scored against the set the first decision scored it against
    (the set without its victim, when there was one), best first."""
    against: tuple[str, ...]
    """That set."""
    incumbents: tuple[UtilityScore, ...]
    """Each member of the set before the step, scored against the rest."""


def repair_step(
    slots: Sequence[Slot],
    pool: Sequence[str],
    scorer: SetScorer,
    config: SealConfig,
    *,
    loop: int,
    blocklist: frozenset[str],
    n_queries: int,
) -> StepOutcome:
    """Run one loop's replacement (or, with replacement off, expansion) over ``pool``.

    Up to one change per micro-query of the loop (``n_queries``, at least one).
    """
    if config.replacement:
        result = replacement_step(
            slots,
            pool,
            k=config.k,
            loop=loop,
            dwell=config.dwell,
            epsilon=config.epsilon,
            score_set=scorer.members,
            score_candidate=scorer.candidate,
            blocklist=blocklist,
            max_swaps=max(1, n_queries),
        )
    else:
        result = expansion_step(
            slots,
            pool,
            loop=loop,
            n_add=max(1, n_queries),
            score_candidate=scorer.candidate,
            blocklist=blocklist,
        )
    base_ids = [s.chunk_id for s in slots]
    first_victim = result.decisions[0].victim if result.decisions else None
    against = tuple(i for i in base_ids if i != first_victim)
    scored = sorted(
        (scorer.candidate(c, against) for c in pool if c not in base_ids),
        key=lambda s: (-s.total, s.chunk_id),
    )
    return StepOutcome(result, tuple(scored), against, tuple(scorer.members(base_ids).values()))
