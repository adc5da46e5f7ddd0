"""Pack: token-true context construction under the budget, with a full trace."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.graph.context import RunContext
from sealgraph.graph.state import PackUpdate, SealState
from sealgraph.graph.steps import packed_dicts, support_and_pack, trace_dicts
from sealgraph.ledger.gaps import Gap
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.nodes._common import EventWriter, llm_seconds_update, llm_time_left


def pack(state: SealState, runtime: Runtime[RunContext]) -> PackUpdate:
    """Select the spans of the evidence that reach the generator.

    Which passages support the question's needs is the reasoner's call
    (``Reasoner.support``): in LLM mode the last assessment's judgement, kept in the
    state as ``need_support``; offline (or when the model judged none) need coverage.
    """
    run = runtime.context
    cfg = run.config
    w = EventWriter("pack", state.get("loop", 0))
    needs = QuestionNeeds.from_dict(state["needs"])
    gaps = [Gap.from_dict(g) for g in state.get("gaps", [])]
    ids = [s["chunk_id"] for s in state["slots"]]
    chunks = run.index.get_chunks(ids)
    kn = run.knowledge
    outcome, result = support_and_pack(
        run.reasoner,
        needs,
        chunks,
        run.index,
        cfg,
        gaps,
        kn.need_items(needs),
        knowledge=kn,
        assessed=state.get("need_support"),
        time_left=llm_time_left(state, cfg),
    )
    w.outcome_notes(outcome, "support")
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
            "need_support": outcome.value,
            "decisions": trace,
            # Where each cited span lies in its document, by citation number: the
            # state's packed spans carry only their text (pages link citations here).
            "spans": [
                {"n": s.n, "span_id": s.span_id, "doc_id": s.doc_id, "start": s.start, "end": s.end}
                for s in result.spans
            ],
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
        **llm_seconds_update(outcome),
        "seal_log": w.done(),
    }
