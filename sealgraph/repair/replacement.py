"""Fixed-k replacement: evict the weakest passage only for a clearly better one.

The evidence set never grows past k. Per step, the best candidate c* is compared
with the *victim*, the lowest-utility passage not protected by the dwell guard;
the swap happens only if S(c*) > S(victim) + ε (hysteresis, against thrashing).
A swapped-in passage is protected for ``dwell`` loops, and an evicted passage is
blocklisted so it never comes back. While the set holds fewer than k passages
(a tiny corpus) the best candidate is added instead.

Do no harm (when the scores carry need coverage, see
:class:`~sealgraph.repair.utility.UtilityScore`):

- a swap must close a gap the victim does not: the candidate's marginal need
  coverage (GapCov before normalising) must exceed what evicting the victim loses,
  whenever the victim serves the question (it covers some need, or it is a passage
  of a document the question names). A passage that serves nothing may still give
  way to a better-corroborated one, as the utility decides;
- a passage of a document the question names that states more of the question's
  relation words than the candidate is only evicted for a candidate that brings a
  needed document (an entity, mention, bridge or qualifier gain), never for relation
  words alone;
- a passage of a document the question names that was in the initial top-k is
  protected unless the candidate covers strictly more: it brings a needed document
  the set lacks, or covers every document need at least as well as the passage and
  one of them better. Two chunks of the named document that differ only in how
  many relation words they state are a ranking question the initial search settled;
- a candidate that closes more beside the victim than without it hangs from the
  victim (the hop the victim's passage leads to): the victim stays.

When such a rule refuses the weakest victim, the next weakest is tried.

These functions are pure: the caller supplies a scoring function and receives the
new set plus one decision record per swap or refusal (:class:`Slot`,
:class:`Decision` and :class:`ReplacementResult` are plain values of
:mod:`sealgraph.model`, importable from here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sealgraph.model import Decision, ReplacementResult, Slot, UtilityScore

__all__ = [
    "Decision",
    "ReplacementResult",
    "ScoreCandidate",
    "ScoreSet",
    "Slot",
    "evict_victim",
    "expansion_step",
    "harm_reason",
    "protected",
    "replacement_step",
]


def protected(slot: Slot, loop: int, dwell: int) -> bool:
    """Tell whether a passage inserted in a repair loop is still within its dwell time."""
    return slot.inserted_loop > 0 and loop - slot.inserted_loop < dwell


def evict_victim(
    evidence: Sequence[Slot], scores: dict[str, UtilityScore], loop: int, dwell: int
) -> Slot | None:
    """Return the lowest-utility passage not protected by the dwell guard (None if all are)."""
    open_slots = [s for s in evidence if not protected(s, loop, dwell)]
    if not open_slots:
        return None
    # Ties: evict the one that entered last, then by id, so the result is deterministic.
    return min(open_slots, key=lambda s: (scores[s.chunk_id].total, -s.inserted_loop, s.chunk_id))


def harm_reason(victim: Slot, s_victim: UtilityScore, s_cand: UtilityScore) -> str:
    """Return why swapping ``victim`` for the candidate would do harm ('' when it would not).

    Scores without need coverage (``need_gain`` None) are not judged.
    """
    if s_victim.need_gain is None or s_cand.need_gain is None:
        return ""
    serves = s_victim.need_gain > 1e-9 or s_victim.named
    if serves and s_cand.need_gain <= s_victim.need_gain + 1e-9:
        return (
            f"do no harm: the candidate closes no gap the victim does not "
            f"(gain {s_cand.need_gain:.3f} <= loss {s_victim.need_gain:.3f})"
        )
    brings_document = (s_cand.doc_gain or 0.0) > (s_victim.doc_gain or 0.0) + 1e-9
    if brings_document or not s_victim.named:
        return ""
    if s_victim.relation > s_cand.relation + 1e-9:
        return (
            f"do no harm: the victim states more of the question's relation words "
            f"({s_victim.relation:.2f} > {s_cand.relation:.2f}) and the candidate "
            "brings no needed document"
        )
    if victim.inserted_loop == 0 and not s_cand.dominates(s_victim):
        return (
            "do no harm: an initial passage of a document the question names is kept "
            "unless the candidate covers strictly more"
        )
    return ""


ScoreSet = Callable[[Sequence[str]], dict[str, UtilityScore]]
"""Scores every passage of a set of ids against the rest of that set."""
ScoreCandidate = Callable[[str, Sequence[str]], UtilityScore]
"""Scores one candidate id against a set of ids."""


def _best_candidate(
    pool: Sequence[str], set_ids: Sequence[str], score_candidate: ScoreCandidate
) -> tuple[str, UtilityScore]:
    """Return the highest-utility candidate against ``set_ids`` (ties: smallest id)."""
    scored = {c: score_candidate(c, set_ids) for c in pool}
    top = min(pool, key=lambda c: (-scored[c].total, c))
    return top, scored[top]


def replacement_step(
    evidence: Sequence[Slot],
    candidates: Sequence[str],
    *,
    k: int,
    loop: int,
    dwell: int,
    epsilon: float,
    score_set: ScoreSet,
    score_candidate: ScoreCandidate,
    blocklist: frozenset[str] = frozenset(),
    max_swaps: int = 3,
) -> ReplacementResult:
    """Run up to ``max_swaps`` fill/swap decisions of one loop.

    Args:
        evidence: Current set E_t (at most k slots).
        candidates: Candidate passage ids, any order (duplicates, members of the
            set and blocklisted ids are ignored).
        k: Fixed set size.
        loop: Current loop number (>= 1).
        dwell: Loops a newly inserted passage is protected.
        epsilon: Hysteresis margin.
        score_set: Scores the members of a set against each other.
        score_candidate: Scores a candidate against a set.
        blocklist: Passages never to (re)admit.
        max_swaps: Most changes in this step.

    """
    slots = list(evidence)
    decisions: list[Decision] = []
    evicted: list[str] = []
    pool = [
        c
        for c in dict.fromkeys(candidates)
        if c not in blocklist and c not in {s.chunk_id for s in slots}
    ]
    for _ in range(max_swaps):
        ids = [s.chunk_id for s in slots]
        pool = [c for c in pool if c not in ids and c not in evicted]
        if not pool:
            decisions.append(Decision("refuse", "no new candidate passages"))
            break
        if len(slots) < k:
            best, s_best = _best_candidate(pool, ids, score_candidate)
            slots.append(Slot(best, loop))
            decisions.append(
                Decision("fill", f"set has {len(ids)} < k={k} passages", best, None, s_best)
            )
            continue
        decision = _swap_or_refuse(
            slots,
            pool,
            loop=loop,
            dwell=dwell,
            epsilon=epsilon,
            score_set=score_set,
            score_candidate=score_candidate,
        )
        decisions.append(decision)
        if decision.action != "swap":
            break
        slots = [
            Slot(decision.candidate, loop) if s.chunk_id == decision.victim else s for s in slots
        ]
        evicted.append(decision.victim)
    return ReplacementResult(tuple(slots), tuple(decisions), tuple(evicted))


def _swap_or_refuse(
    slots: Sequence[Slot],
    pool: Sequence[str],
    *,
    loop: int,
    dwell: int,
    epsilon: float,
    score_set: ScoreSet,
    score_candidate: ScoreCandidate,
) -> Decision:
    """Decide one swap of a full set: the best candidate for the weakest open victim.

    The victim is the lowest-utility passage the dwell guard leaves open; when the
    do-no-harm rules refuse it for a candidate that would otherwise win, the next
    weakest victims are tried (:func:`_harmless_swap`).
    """
    ids = [s.chunk_id for s in slots]
    set_scores = score_set(ids)
    victim = evict_victim(slots, set_scores, loop, dwell)
    if victim is None:
        best, s_best = _best_candidate(pool, ids, score_candidate)
        return Decision(
            "refuse", "every passage is protected by the dwell guard", best, None, s_best
        )
    s_victim = set_scores[victim.chunk_id]
    # Score candidates against the set they would actually join: the set
    # without the victim they replace.
    best, s_best = _best_candidate(pool, [i for i in ids if i != victim.chunk_id], score_candidate)
    harm = harm_reason(victim, s_victim, s_best) or _hangs_from(best, s_best, ids, score_candidate)
    if harm and s_best.total > s_victim.total + epsilon:
        # The weakest passage may not go for this candidate: try the next ones.
        other = _harmless_swap(
            slots, victim, pool, set_scores, loop, dwell, epsilon, score_candidate
        )
        if other is not None:
            victim, s_victim, best, s_best = other
            harm = ""
    if harm:
        return Decision("refuse", harm, best, victim.chunk_id, s_best, s_victim)
    if s_best.total > s_victim.total + epsilon:
        return Decision(
            "swap",
            f"S(c*)={s_best.total:.3f} > S(victim)={s_victim.total:.3f} + ε={epsilon}",
            best,
            victim.chunk_id,
            s_best,
            s_victim,
        )
    return Decision(
        "refuse",
        f"S(c*)={s_best.total:.3f} <= S(victim)={s_victim.total:.3f} + ε={epsilon}",
        best,
        victim.chunk_id,
        s_best,
        s_victim,
    )


def _hangs_from(
    candidate: str, s_cand: UtilityScore, ids: Sequence[str], score_candidate: ScoreCandidate
) -> str:
    """Say why the candidate may not replace the victim it hangs from ('' when it may not).

    A candidate that closes more gaps beside the victim than without it is a hop the
    victim leads to ("X served as incident commander" for the page naming X as the
    guild's chair): evicting the victim would cut the chain the candidate continues.
    """
    with_victim = score_candidate(candidate, ids)
    if with_victim.gap_coverage > s_cand.gap_coverage + 1e-9:
        return (
            "do no harm: the candidate continues the chain from the victim "
            f"(GapCov {with_victim.gap_coverage:.3f} with it, {s_cand.gap_coverage:.3f} without)"
        )
    return ""


def _harmless_swap(
    slots: Sequence[Slot],
    victim: Slot,
    pool: Sequence[str],
    set_scores: dict[str, UtilityScore],
    loop: int,
    dwell: int,
    epsilon: float,
    score_candidate: ScoreCandidate,
) -> tuple[Slot, UtilityScore, str, UtilityScore] | None:
    """Return the next weakest open victim whose best candidate wins without harm.

    ``(victim, S(victim), candidate, S(candidate))``, or None when every other open
    passage either beats its best candidate by ε or would be harmed by the swap.
    """
    ids = [s.chunk_id for s in slots]
    for other in sorted(
        (s for s in slots if s is not victim and not protected(s, loop, dwell)),
        key=lambda s: (set_scores[s.chunk_id].total, -s.inserted_loop, s.chunk_id),
    ):
        o_best, o_score = _best_candidate(
            pool, [i for i in ids if i != other.chunk_id], score_candidate
        )
        s_other = set_scores[other.chunk_id]
        if o_score.total <= s_other.total + epsilon:
            continue
        if not harm_reason(other, s_other, o_score):
            return other, s_other, o_best, o_score
    return None


def expansion_step(
    evidence: Sequence[Slot],
    candidates: Sequence[str],
    *,
    loop: int,
    n_add: int,
    score_candidate: ScoreCandidate,
    blocklist: frozenset[str] = frozenset(),
) -> ReplacementResult:
    """Run the replacement-off ablation: append the ``n_add`` best new candidates, evicting nothing."""
    slots = list(evidence)
    ids = [s.chunk_id for s in slots]
    pool = [c for c in dict.fromkeys(candidates) if c not in blocklist and c not in ids]
    scored = sorted(((score_candidate(c, ids), c) for c in pool), key=lambda t: (-t[0].total, t[1]))
    decisions = []
    for sc, c in scored[:n_add]:
        slots.append(Slot(c, loop))
        decisions.append(Decision("append", "expansion mode adds retrieved passages", c, None, sc))
    if not decisions:
        decisions.append(Decision("refuse", "no new candidate passages"))
    return ReplacementResult(tuple(slots), tuple(decisions), ())
