"""Rank and replace: entity-first utility and fixed-k replacement."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.graph.context import RunContext
from sealgraph.graph.state import ReplaceUpdate, SealState
from sealgraph.ledger.gaps import coverage_memo
from sealgraph.ledger.needs import QuestionNeeds, focus_text
from sealgraph.nodes._common import EventWriter
from sealgraph.repair.replacement import Slot
from sealgraph.repair.scoring import SetScorer, repair_step


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
    items = kn.need_items(needs)
    slots = [Slot(s["chunk_id"], s["inserted_loop"]) for s in state["slots"]]
    pool = list(dict.fromkeys(c for ids in state.get("candidates", {}).values() for c in ids))
    ids_all = [s.chunk_id for s in slots] + pool
    feats = dict(zip(ids_all, kn.features(ids_all), strict=True))
    scorer = SetScorer(feats, items, kn.relevance(focus_text(needs.question), ids_all), cfg.utility)
    step = repair_step(
        slots,
        pool,
        scorer,
        cfg,
        loop=loop,
        blocklist=frozenset(state.get("blocklist", [])),
        n_queries=len(state.get("queries", [])),
    )
    result, scored = step.result, step.scored
    # Every candidate is logged against the set the first decision scored it against.
    w.add(
        "candidates",
        f"{len(pool)} candidate(s) scored; best {scored[0].chunk_id} S={scored[0].total:.3f}"
        if scored
        else "no candidates",
        {
            "scores": [s.to_dict() for s in scored],
            "against": list(step.against),
            "incumbents": [s.to_dict() for s in step.incumbents],
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
