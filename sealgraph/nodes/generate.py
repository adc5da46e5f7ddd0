"""Generate: the answer with citations to the packed spans."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.graph.context import RunContext
from sealgraph.graph.state import GenerateUpdate, SealState
from sealgraph.graph.steps import answer_packed, citations_for
from sealgraph.ledger.gaps import Gap
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.model import Step
from sealgraph.nodes._common import (
    EventWriter,
    llm_budget,
    llm_seconds_update,
    llm_time_left,
    node_config,
)
from sealgraph.reasoning.stream import AnswerStream


def generate(state: SealState, runtime: Runtime[RunContext]) -> GenerateUpdate:
    """Answer from the packed context, citing spans as [n]."""
    run = runtime.context
    cfg = run.config
    w = EventWriter("generate", state.get("loop", 0))
    needs = QuestionNeeds.from_dict(state["needs"])
    gaps = [Gap.from_dict(g) for g in state.get("gaps", [])]
    packed = state.get("packed", [])
    outcome, ans, found = answer_packed(
        run.reasoner,
        needs,
        packed,
        gaps,
        run.index,
        cfg,
        knowledge=run.knowledge,
        lexicon=run.lexicon,
        time_left=llm_time_left(state, cfg),
        budget=llm_budget(state, cfg),
    )
    w.outcome_notes(outcome, Step.GENERATE)
    if not getattr(run.reasoner, "streams_answer", False):
        # The offline reasoner (or a custom one): the answer as one message chunk,
        # so a UI streaming in LangGraph's messages mode sees it too.
        AnswerStream(node_config(), needs.question).finish(ans.answer)
    w.add(
        "answer",
        ans.answer,
        {
            "cited": list(ans.cited),
            "insufficient": ans.insufficient,
            "reasoner": run.reasoner.name,
            "short": ans.short,
            "missing": ans.missing,
            "answerability": found.score,
            "answerability_passages": [packed[i]["n"] for i in found.passages],
            "unseen_names": list(found.unseen),
            "answer_step": dict(ans.step) if ans.step is not None else None,
        },
    )
    return {
        "answer": ans.answer,
        "short_answer": ans.short,
        "missing": ans.missing,
        "declined": ans.insufficient,
        "answerability": found.score,
        "citations": citations_for(packed, ans),
        **llm_seconds_update(outcome),
        "seal_log": w.done(),
    }
