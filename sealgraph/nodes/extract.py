"""Extract: merge the facts of passages new to the evidence set into the ledger."""

from __future__ import annotations

from sealgraph.ledger.knowledge import knowledge_for
from sealgraph.ledger.ledger import EntityLedger
from sealgraph.nodes._common import (
    EventWriter,
    llm_budget,
    llm_seconds_update,
    llm_time_left,
)


def extract(state, ctx, cfg, config) -> dict:
    """Update U_t: drop facts of evicted passages, read the new ones."""
    loop = state.get("loop", 0)
    w = EventWriter("extract", config, loop)
    ids = [s["chunk_id"] for s in state["slots"]]
    ledger = EntityLedger.from_dict(state.get("ledger"))
    gone = [c for c in ledger.chunk_ids if c not in ids]
    if gone:
        ledger = ledger.without_chunks(gone)
    new_ids = [c for c in ids if c not in ledger.chunk_ids]
    before = set(ledger.entities)
    spent: dict[str, float] = {}
    if new_ids:
        chunks = ctx.index.get_chunks(new_ids)
        feats = knowledge_for(ctx.index).features(new_ids)
        outcome = ctx.reasoner.extract(
            state.get("question", ""),
            chunks,
            feats,
            time_left=llm_time_left(state, cfg),
            budget=llm_budget(state, cfg),
        )
        w.outcome_notes(outcome, "extract")
        spent = llm_seconds_update(outcome)
        ledger = ledger.merge(outcome.value)
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
