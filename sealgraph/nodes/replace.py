"""Rank and replace: entity-first utility and fixed-k replacement."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.graph.context import RunContext
from sealgraph.graph.state import ReplaceUpdate, SealState
from sealgraph.ledger.gaps import coverage_memo, need_items
from sealgraph.ledger.needs import QuestionNeeds, focus_text
from sealgraph.nodes._common import EventWriter
from sealgraph.repair.replacement import Slot, expansion_step, replacement_step
from sealgraph.repair.utility import UtilityScore, score_set, set_covers, utility


def replace(state: SealState, runtime: Runtime[RunContext]) -> ReplaceUpdate:
    """Score candidates and incumbents with S(c); swap, fill or refuse."""
    # Every candidate is graded against the same few sets: each passage's hop and
    # relation coverage in one set is computed once.
    with coverage_memo():
        return _replace(state, runtime)


def _replace(state: SealState, runtime: Runtime[RunContext]) -> ReplaceUpdate:
    run = runtime.context
    cfg = run.config
    loop = state["loop"]
    w = EventWriter("replace", loop)
    needs = QuestionNeeds.from_dict(state["needs"])
    kn = run.knowledge
    items = need_items(needs, kn.idf)
    slots = [Slot(s["chunk_id"], s["inserted_loop"]) for s in state["slots"]]
    pool = list(dict.fromkeys(c for ids in state.get("candidates", {}).values() for c in ids))
    ids_all = [s.chunk_id for s in slots] + pool
    feats = dict(zip(ids_all, kn.features(ids_all), strict=True))
    relevance = kn.relevance(focus_text(needs.question), ids_all)
    weights = cfg.utility

    scores: dict[tuple[str, tuple[str, ...]], UtilityScore] = {}
    base_covers: dict[tuple[str, ...], tuple[float, ...]] = {}

    def score_candidate(cid, set_ids):
        # Memoised: the log below re-reads the scores the first decision computed.
        # The set's own need coverage is the same for every candidate: computed once.
        key = (cid, tuple(set_ids))
        if key not in scores:
            others = [feats[i] for i in set_ids]
            if key[1] not in base_covers:
                base_covers[key[1]] = set_covers(others, items)
            scores[key] = utility(
                feats[cid], others, items, relevance, weights, base_cover=base_covers[key[1]]
            )
        return scores[key]

    def score_members(set_ids):
        return score_set([feats[i] for i in set_ids], items, relevance, weights)

    blocklist = frozenset(state.get("blocklist", []))
    if cfg.replacement:
        result = replacement_step(
            slots,
            pool,
            k=cfg.k,
            loop=loop,
            dwell=cfg.dwell,
            epsilon=cfg.epsilon,
            score_set=score_members,
            score_candidate=score_candidate,
            blocklist=blocklist,
            max_swaps=max(1, len(state.get("queries", []))),
        )
    else:
        result = expansion_step(
            slots,
            pool,
            loop=loop,
            n_add=max(1, len(state.get("queries", []))),
            score_candidate=score_candidate,
            blocklist=blocklist,
        )
    base_ids = [s.chunk_id for s in slots]
    # Log every candidate against the set the first decision scored them against
    # (the set without its victim, when there was one).
    first_victim = result.decisions[0].victim if result.decisions else None
    against = [i for i in base_ids if i != first_victim]
    scored = sorted(
        (score_candidate(c, against) for c in pool if c not in base_ids),
        key=lambda s: (-s.total, s.chunk_id),
    )
    w.add(
        "candidates",
        f"{len(pool)} candidate(s) scored; best {scored[0].chunk_id} S={scored[0].total:.3f}"
        if scored
        else "no candidates",
        {
            "scores": [s.to_dict() for s in scored],
            "against": against,
            "incumbents": [s.to_dict() for s in score_members(base_ids).values()],
        },
    )
    for d in result.decisions:
        w.add(
            d.action,
            f"{d.action} {d.victim or ''} -> {d.candidate or ''}: {d.reason}".replace("  ", " "),
            {
                "candidate": d.candidate,
                "victim": d.victim,
                "reason": d.reason,
                "candidate_score": d.candidate_score.to_dict() if d.candidate_score else None,
                "victim_score": d.victim_score.to_dict() if d.victim_score else None,
            },
        )
    update: ReplaceUpdate = {
        "slots": [
            {"chunk_id": s.chunk_id, "inserted_loop": s.inserted_loop} for s in result.evidence
        ],
        "blocklist": [*state.get("blocklist", []), *result.evicted],
    }
    if not result.changed:
        update["stop_reason"] = "no swap improves the evidence set"
        w.add("stop", update["stop_reason"], {"loop": loop})
    update["seal_log"] = w.done()
    return update
