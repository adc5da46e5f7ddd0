"""Extract: merge the facts of passages new to the evidence set into the ledger."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.graph.context import RunContext
from sealgraph.graph.state import ExtractUpdate, SealState
from sealgraph.ledger.chain import describe_chain, follow_chain
from sealgraph.ledger.ledger import EntityLedger
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.model import Step
from sealgraph.nodes._common import (
    EventWriter,
    llm_budget,
    llm_seconds_update,
    llm_time_left,
)


def extract(state: SealState, runtime: Runtime[RunContext]) -> ExtractUpdate:
    """Update U_t: drop facts of evicted passages, read the new ones."""
    run = runtime.context
    cfg = run.config
    loop = state.get("loop", 0)
    w = EventWriter("extract", loop)
    ids = [s["chunk_id"] for s in state["slots"]]
    ledger = EntityLedger.from_dict(state.get("ledger"))
    gone = [c for c in ledger.chunk_ids if c not in ids]
    if gone:
        ledger = ledger.without_chunks(gone)
    new_ids = [c for c in ids if c not in ledger.chunk_ids]
    before = set(ledger.entities)
    spent: dict[str, float] = {}
    if new_ids:
        chunks = run.index.get_chunks(new_ids)
        feats = run.knowledge.features(new_ids)
        outcome = run.reasoner.extract(
            state.get("question", ""),
            chunks,
            feats,
            time_left=llm_time_left(state, cfg),
            budget=llm_budget(state, cfg),
        )
        w.outcome_notes(outcome, Step.EXTRACT)
        spent = llm_seconds_update(outcome)
        ledger = ledger.merge(outcome.value)
    # The question's chain, hop by hop through the evidence (hop, entity, passage).
    needs = QuestionNeeds.from_dict(state["needs"])
    kn = run.knowledge
    ledger = ledger.with_chain(follow_chain(needs, kn.need_items(needs), kn.features(ids)))
    if ledger.chain:
        w.add("chain", describe_chain(ledger.chain), {"hops": [h.to_dict() for h in ledger.chain]})
    added = [ledger.entities[e].name for e in ledger.entities if e not in before]
    w.add(
        "ledger",
        f"read {len(new_ids)} new passage(s); +{len(added)} entities, "
        f"{len(ledger.entities)} in ledger, {len(ledger.relations)} relations, "
        f"{len(ledger.qualifiers)} qualifiers",
        {
            "read": new_ids,
            "dropped_passages": gone,
            "added_entities": added,
            "n_entities": len(ledger.entities),
        },
    )
    return {"ledger": ledger.to_dict(), **spent, "seal_log": w.done()}
