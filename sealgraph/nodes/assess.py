"""Assess: the sufficiency gate writes the gap specification G_t (and, in LLM mode, need support)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.graph.context import RunContext
from sealgraph.graph.state import AssessUpdate, SealState
from sealgraph.ledger.ledger import EntityLedger
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.model import Step
from sealgraph.nodes._common import (
    EventWriter,
    llm_budget,
    llm_seconds_update,
    llm_time_left,
)


def assess(state: SealState, runtime: Runtime[RunContext]) -> AssessUpdate:
    """Compare N(q) with the evidence; decide whether to loop."""
    run = runtime.context
    cfg = run.config
    loop = state.get("loop", 0)
    w = EventWriter("assess", loop)
    needs = QuestionNeeds.from_dict(state["needs"])
    kn = run.knowledge
    items = kn.need_items(needs)
    feats = kn.features([s["chunk_id"] for s in state["slots"]])
    outcome = run.reasoner.assess(
        needs,
        items,
        feats,
        EntityLedger.from_dict(state.get("ledger")),
        time_left=llm_time_left(state, cfg),
        budget=llm_budget(state, cfg),
    )
    w.outcome_notes(outcome, Step.ASSESS)
    gaps = outcome.value.gaps
    support = outcome.value.support
    for g in gaps:
        w.add("gap", f"{g.kind}: {g.reason}", g.to_dict())
    sufficient = not gaps
    stop = ""
    if sufficient:
        stop = "sufficient: every need of the question is covered"
    elif loop >= cfg.max_loops:
        stop = f"loop budget spent (L={cfg.max_loops})"
    data = {"sufficient": sufficient, "n_gaps": len(gaps), "needs": [i.kind for i in items]}
    if support is not None:
        data["need_support"] = support
    w.add("assess", "sufficient" if sufficient else f"{len(gaps)} gap(s) open", data)
    if stop:
        w.add("stop", stop, {"loop": loop})
    update: AssessUpdate = {
        "gaps": [g.to_dict() for g in gaps],
        "sufficient": sufficient,
        "stop_reason": stop,
        **llm_seconds_update(outcome),
    }
    # The gate's need support is the last assessment's: a verdict without one clears
    # an earlier loop's. Offline runs never judge one, so they never write the key.
    if support is not None or state.get("need_support") is not None:
        update["need_support"] = support
    update["seal_log"] = w.done()
    return update
