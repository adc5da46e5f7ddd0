"""Search: read N(q) (the reasoner's needs step) and retrieve the initial top-k evidence set."""

from __future__ import annotations

from langgraph.runtime import Runtime

from sealgraph.errors import InputError
from sealgraph.graph.context import RunContext
from sealgraph.graph.state import SealState, SearchUpdate, SlotRecord
from sealgraph.ledger.corpus_needs import needs_in_corpus
from sealgraph.model import Step
from sealgraph.nodes._common import (
    EventWriter,
    llm_budget,
    llm_seconds_update,
    llm_time_left,
)
from sealgraph.repair.candidates import initial_hits
from sealgraph.repair.fanout import fanout_groups
from sealgraph.text.normalize import normalize_for_matching

MAX_QUESTION_CHARS = 4000


def validate_question(question: object) -> str:
    """Return the question normalised and stripped, or raise :class:`InputError`."""
    if not isinstance(question, str) or not question.strip():
        raise InputError("the question is empty")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:
        # Undecodable command-line bytes arrive as lone surrogates (PEP 383).
        raise InputError(
            "the question is not valid text (it holds bytes that are not UTF-8); "
            "check the terminal's or the file's encoding"
        ) from None
    # Read as documents are: NFC, no invisible characters that split words.
    q = " ".join(normalize_for_matching(question).split())
    if len(q) > MAX_QUESTION_CHARS:
        raise InputError(
            f"the question is {len(q)} characters long; the limit is {MAX_QUESTION_CHARS}"
        )
    return q


def search(state: SealState, runtime: Runtime[RunContext]) -> SearchUpdate:
    """Read N(q) with the reasoner and retrieve the initial hybrid top-k."""
    run = runtime.context
    cfg = run.config
    w = EventWriter("search", 0)
    question = validate_question(state.get("question"))
    kn = run.knowledge
    outcome = run.reasoner.needs(
        question,
        kn.gazetteer,
        time_left=llm_time_left(state, cfg),
        budget=llm_budget(state, cfg),
    )
    w.outcome_notes(outcome, Step.NEEDS)
    # Names linked by what documents say of themselves, the documents of the asked
    # period or years, and the sets the question asks over.
    needs = needs_in_corpus(outcome.value, kn)
    w.add(
        "needs",
        f"answer type {needs.answer_type}, {needs.structure} question naming "
        f"{', '.join(e.name for e in needs.entities) or 'no known entity'}",
        needs.to_dict(),
    )
    hits = initial_hits(run.index, needs, cfg.k, cfg)
    slots: list[SlotRecord] = [{"chunk_id": h.chunk_id, "inserted_loop": 0} for h in hits[: cfg.k]]
    w.add(
        "retrieved",
        f"initial top-{cfg.k}: " + ", ".join(h.chunk_id for h in hits[: cfg.k]),
        {
            "hits": [
                {"chunk_id": h.chunk_id, "score": round(h.score, 6), "rank": h.rank} for h in hits
            ]
        },
    )
    groups = fanout_groups(needs, cfg.k)
    if groups:
        w.add(
            "fanout",
            f"{sum(len(g.members) for g in groups)} set members outnumber k={cfg.k}: "
            f"{len(groups)} repair branches",
            {"groups": [g.to_dict() for g in groups]},
        )
    return {
        "question": question,
        "needs": needs.to_dict(),
        "fanout": [g.to_dict() for g in groups],
        "branches": None,
        "slots": slots,
        "ledger": {},
        "issued": [],
        "blocklist": [],
        "candidates": {},
        "queries": [],
        "loop": 0,
        "stop_reason": "",
        "sufficient": False,
        **llm_seconds_update(outcome),
        "seal_log": w.done(),
    }
