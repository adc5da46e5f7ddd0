"""Branch: one fan-out branch repairs its group of set members with its own fixed k."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.graph.context import RunContext
from sealgraph.graph.state import BranchInput, BranchUpdate
from sealgraph.ledger.gaps import gap_spec
from sealgraph.model import QuestionNeeds, SetNeed
from sealgraph.nodes._common import EventWriter
from sealgraph.repair.fanout import branch_needs, repair_branch
from sealgraph.repair.microqueries import micro_queries


def branch(state: BranchInput, runtime: Runtime[RunContext]) -> BranchUpdate:
    """Repair the needs of one group of members (:func:`~sealgraph.repair.fanout.repair_branch`).

    The branch reads with the offline gate and planner (deterministic, no LLM call);
    its events carry its number, so the trace and the run page show each branch.
    """
    run = runtime.context
    number = int(state["branch"])
    group = SetNeed.from_dict(state["group"])
    needs = branch_needs(QuestionNeeds.from_dict(state["needs"]), group)
    kn = run.knowledge
    result = repair_branch(
        run.index,
        kn,
        needs,
        run.config,
        assess=lambda n, items, feats: gap_spec(n, items, feats),
        plan=lambda n, gaps, issued, limit: micro_queries(
            gaps, issued, doc_titles=kn.doc_titles, limit=limit
        ),
    )
    w = EventWriter("branch", result.loops)
    for loop, kind, message, data in result.log:
        w.add(kind, f"branch {number}: {message}", {**data, "branch": number, "loop": loop})
    w.add(
        "branch",
        f"branch {number} ({group.name}: {', '.join(group.labels) or len(group.members)}): "
        f"{len(result.slots)} passage(s), {len(result.gaps)} gap(s) open; {result.stop}",
        {"branch": number, **result.to_dict()},
    )
    return {"branches": [{"branch": number, **result.to_dict()}], "seal_log": w.done()}
