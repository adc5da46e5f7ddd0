"""Merge: the fan-out branches' sets become one evidence set, packed once."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.graph.context import RunContext
from sealgraph.graph.state import MergeUpdate, SealState
from sealgraph.nodes._common import EventWriter
from sealgraph.repair.fanout import BranchResult, merge_branches


def merge(state: SealState, runtime: Runtime[RunContext]) -> MergeUpdate:
    """Merge the branches in branch order (:func:`~sealgraph.repair.fanout.merge_branches`)."""
    k = runtime.context.config.k
    records = sorted(state.get("branches") or [], key=lambda b: int(b["branch"]))
    results = [BranchResult.from_dict(b) for b in records]
    slots, gaps = merge_branches(results, k)
    loops = max((r.loops for r in results), default=0)
    w = EventWriter("merge", loops)
    missing = [g.entity for g in gaps if g.kind == "missing_entity"]
    w.add(
        "merge",
        f"{len(results)} branches merged: {len(slots)} passage(s)"
        + (f"; missing: {', '.join(missing)}" if missing else "; every member represented"),
        {"slots": [s.chunk_id for s in slots], "missing": missing},
    )
    stop = "fan-out: every branch repaired with its own k, merged"
    w.add("stop", stop, {"loop": loops})
    return {
        "slots": [{"chunk_id": s.chunk_id, "inserted_loop": s.inserted_loop} for s in slots],
        "gaps": [g.to_dict() for g in gaps],
        "loop": loops,
        "stop_reason": stop,
        "seal_log": w.done(),
    }
