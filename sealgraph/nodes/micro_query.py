"""Micro-query: one atomic query per gap, and the candidates they retrieve."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.graph.context import RunContext
from sealgraph.graph.state import MicroQueryUpdate, SealState
from sealgraph.ledger.gaps import Gap
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.model import Step
from sealgraph.nodes._common import (
    EventWriter,
    llm_budget,
    llm_seconds_update,
    llm_time_left,
)
from sealgraph.repair.candidates import gather_candidates


def micro_query(state: SealState, runtime: Runtime[RunContext]) -> MicroQueryUpdate:
    """Plan micro-queries for the open gaps and gather candidate passages."""
    run = runtime.context
    cfg = run.config
    loop = state.get("loop", 0) + 1
    w = EventWriter("micro_query", loop)
    needs = QuestionNeeds.from_dict(state["needs"])
    gaps = [Gap.from_dict(g) for g in state.get("gaps", [])]
    kn = run.knowledge
    outcome = run.reasoner.plan(
        needs,
        gaps,
        state.get("issued", []),
        kn.doc_titles,
        cfg.max_micro_queries,
        time_left=llm_time_left(state, cfg),
        budget=llm_budget(state, cfg),
    )
    w.outcome_notes(outcome, Step.PLAN)
    queries = outcome.value
    exclude = {s["chunk_id"] for s in state["slots"]} | set(state.get("blocklist", []))
    candidates = gather_candidates(run.index, queries, cfg, exclude)
    for q in queries:
        w.add(
            "micro_query",
            f"{q.text!r} ({q.gap_kind}) -> {len(candidates[q.text])} candidate(s)",
            {**q.to_dict(), "candidates": candidates[q.text]},
        )
    update: MicroQueryUpdate = {
        "loop": loop,
        "queries": [q.to_dict() for q in queries],
        "issued": [*state.get("issued", []), *(q.text for q in queries)],
        "candidates": candidates,
        **llm_seconds_update(outcome),
    }
    if not any(candidates.values()):
        why = "no new micro-queries" if not queries else "micro-queries found no new passages"
        w.add("stop", why, {"loop": loop})
        update["stop_reason"] = why
    update["seal_log"] = w.done()
    return update
