"""Pack: token-true context construction under the budget, with a full trace."""

from __future__ import annotations

from sealgraph.ledger.gaps import Gap
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.nodes._common import EventWriter
from sealgraph.pipeline import pack_evidence, packed_dicts, trace_dicts


def pack(state, ctx, cfg, config) -> dict:
    """Select the spans of the evidence that reach the generator."""
    w = EventWriter("pack", config, state.get("loop", 0))
    needs = QuestionNeeds.from_dict(state["needs"])
    gaps = [Gap.from_dict(g) for g in state.get("gaps", [])]
    chunks = ctx.index.get_chunks([s["chunk_id"] for s in state["slots"]])
    result = pack_evidence(needs, chunks, ctx.index, cfg, gaps)
    trace = trace_dicts(result)
    selected = sum(1 for d in trace if d["decision"] == "selected")
    w.add(
        "pack",
        f"{selected} of {len(trace)} span(s) packed, {result.tokens}/{cfg.budget} tokens "
        f"({cfg.pack.strategy})",
        {
            "budget": cfg.budget,
            "tokens": result.tokens,
            "strategy": cfg.pack.strategy,
            "decisions": trace,
        },
        tokens=result.tokens,
    )
    evidence = [
        {
            "chunk_id": c.chunk_id,
            "doc_id": c.doc_id,
            "title": c.title,
            "section": list(c.section),
            "text": c.text,
            "n_tokens": c.n_tokens,
            "inserted_loop": s["inserted_loop"],
        }
        for c, s in zip(chunks, state["slots"], strict=True)
    ]
    packed = packed_dicts(result)
    return {
        "context": result.context,
        "context_tokens": result.tokens,
        "evidence": evidence,
        "packed": packed,
        "loops": state.get("loop", 0),
        "seal_log": w.done(),
    }
