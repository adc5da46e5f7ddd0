"""Graph state: what flows between the nodes, and the input/output schemas.

The input schema is just the question (plus optional per-run config overrides);
the output schema is the answer with its evidence and the run's events under
``seal_log``, a key named so that it cannot collide with a parent graph's own log
when sealgraph runs as a subgraph.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired

from typing_extensions import TypedDict

from sealgraph.graph.events import Event


def _first_reason(current: str, new: str) -> str:
    """Keep the reason that opened the LLM circuit first (a later one does not replace it)."""
    return current or new


class SealInput(TypedDict):
    """What a caller passes in."""

    question: str
    """The question to answer."""
    config: NotRequired[dict[str, Any]]
    """Per-run config overrides, dotted or nested (``{"k": 5, "retrieval": {"pool": 50}}``):
    only the bounded keys of :data:`sealgraph.config.RUN_OVERRIDES`; everything else
    is set when the graph is built."""


class SealOutput(TypedDict):
    """What a run returns."""

    answer: str
    """The answer (or an explicit statement that evidence is insufficient)."""
    citations: list[dict[str, Any]]
    """``{"n", "chunk_id", "title", "text"}`` for every span the answer cites."""
    evidence: list[dict[str, Any]]
    """The final evidence set E_t: ``{"chunk_id", "doc_id", "title", "section", "text", "n_tokens", "inserted_loop"}``."""
    context: str
    """The packed context given to the generator."""
    context_tokens: int
    """Exact token count of ``context``."""
    loops: int
    """Repair loops run."""
    gaps: list[dict[str, Any]]
    """Gaps still open at the end (empty when the gate judged the evidence sufficient)."""
    seal_log: Annotated[list[Event], operator.add]
    """The audit trail: every node's typed events, append-only."""


class SealState(SealInput, SealOutput):
    """Full internal state."""

    needs: dict[str, Any]
    """N(q) as read from the question."""
    slots: list[dict[str, Any]]
    """Evidence set as ``{"chunk_id", "inserted_loop"}`` slots."""
    ledger: dict[str, Any]
    """The entity ledger U_t (see :class:`sealgraph.ledger.ledger.EntityLedger`)."""
    queries: list[dict[str, Any]]
    """Micro-queries of the current loop."""
    issued: list[str]
    """Texts of every micro-query issued so far."""
    candidates: dict[str, list[str]]
    """Candidate chunk ids per micro-query of the current loop."""
    blocklist: list[str]
    """Evicted passages (never re-admitted)."""
    loop: int
    """Current loop number (0 = initial search)."""
    sufficient: bool
    """Whether the sufficiency gate passed."""
    stop_reason: str
    """Why the loop ended."""
    need_support: dict[str, float] | None
    """The last assessment's need support: chunk id → [0, 1] for every assessed passage
    (``Verdict.support``), handed back to ``Reasoner.support`` when packing. Only the
    LLM gate judges one (the passages its assess reply names as supporting, no extra
    call); a later verdict without one resets it to None, and offline runs never
    write it (packing then uses the offline need coverage)."""
    packed: list[dict[str, Any]]
    """Packed spans ``{"n", "doc_id", "title", "chunk_ids", "text", "tokens"}``."""
    llm_seconds: Annotated[float, operator.add]
    """LLM time the run has spent so far, all steps and loops (LLM steps add theirs;
    offline runs never write it, so it stays 0). It lives in the state, not in the
    reasoner, because one compiled graph serves concurrent runs and a run resumed
    from a checkpoint must keep its account against ``llm.deadline_s``."""
    llm_calls: Annotated[int, operator.add]
    """LLM calls the run has made so far (retries and method probes included), kept
    against ``llm.max_calls`` like ``llm_seconds`` against ``llm.deadline_s``."""
    llm_circuit: Annotated[str, _first_reason]
    """Why the run's LLM circuit is open ("" while closed): the permanent failure
    (refused connection, rejected key, no supported structured output method) of the
    step that opened it. Once set it stays: every later LLM step of the run falls
    back without a call. Per run, for the same reasons as ``llm_seconds``."""
