"""Graph state: what flows between the nodes, the input/output schemas, one update per node.

The input schema is the question and, optionally, the run's own bounded settings (which
may also travel in its context: :class:`sealgraph.graph.context.SealContext`); the output schema is the answer with
its evidence and the run's events under ``seal_log``, a key named so that it cannot
collide with a parent graph's own log when sealgraph runs as a subgraph. Records kept
in the state are plain JSON data (checkpoints are read with an allow-list of plain
types), typed here as ``TypedDict``; each node returns its own update type.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from sealgraph.graph.events import Event


def _first_reason(current: str, new: str) -> str:
    """Keep the reason that opened the LLM circuit first (a later one does not replace it)."""
    return current or new


def _gather(current: list | None, new: list | None) -> list:
    """Collect the fan-out branches' results; None (written by ``search``) starts afresh."""
    return [] if new is None else [*(current or []), *new]


class _RunSettings(TypedDict, total=False):
    # A base of its own: ``total=False`` is how a key is optional whatever way the
    # annotations are read (LangChain's ``as_tool`` then asks for the question alone).
    config: dict[str, Any]
    """The run's own overrides (``{"k": 2}``): the bounded keys of
    :data:`sealgraph.config.RUN_OVERRIDES`, applied on the graph's config (and on a run
    context's), checked before any node runs. What a served client sends as
    ``input.config``."""


class SealInput(_RunSettings):
    """What a caller passes in: the question, and optionally the run's own settings."""

    question: str
    """The question to answer."""


class SlotRecord(TypedDict):
    """One of the k evidence slots."""

    chunk_id: str
    """The passage in the slot."""
    inserted_loop: int
    """The loop that put it there (0 = initial search)."""


NeedsRecord = dict[str, Any]
"""N(q) as :meth:`sealgraph.ledger.needs.QuestionNeeds.to_dict` writes it."""
LedgerRecord = dict[str, Any]
"""U_t as :meth:`sealgraph.ledger.ledger.EntityLedger.to_dict` writes it."""
GapRecord = dict[str, Any]
"""A gap as :meth:`sealgraph.ledger.gaps.Gap.to_dict` writes it."""
QueryRecord = dict[str, Any]
"""A micro-query as :meth:`sealgraph.repair.microqueries.MicroQuery.to_dict` writes it."""


class SealOutput(TypedDict):
    """What a run returns."""

    answer: str
    """The answer a person reads: the short answer and its cited sentences, or the
    statement that the evidence is insufficient (never what is missing: see ``missing``)."""
    short_answer: str
    """The short answer span ("" when none is marked or the answer declined)."""
    missing: str
    """What the context does not state ("" when nothing is missing)."""
    declined: bool
    """True when the answer declined (the reasoner's judgement, or offline answerability
    below ``min_answerability``)."""
    answerability: float
    """Offline answerability of the packed context in [0, 1]
    (:mod:`sealgraph.reasoning.answerability`), reported in every mode."""
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

    needs: NeedsRecord
    """N(q) as read from the question."""
    slots: list[SlotRecord]
    """Evidence set as ``{"chunk_id", "inserted_loop"}`` slots."""
    ledger: LedgerRecord
    """The entity ledger U_t (see :class:`sealgraph.ledger.ledger.EntityLedger`)."""
    queries: list[QueryRecord]
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
    fanout: list[dict[str, Any]]
    """The groups of set members repaired apart, one branch each (empty: no fan-out);
    each as :meth:`sealgraph.model.SetNeed.to_dict` writes it."""
    branches: Annotated[list[dict[str, Any]], _gather]
    """What each fan-out branch left (:meth:`sealgraph.repair.fanout.BranchResult.to_dict`)."""
    llm_circuit: Annotated[str, _first_reason]
    """Why the run's LLM circuit is open ("" while closed): the permanent failure
    (refused connection, rejected key, no supported structured output method) of the
    step that opened it. Once set it stays: every later LLM step of the run falls
    back without a call. Per run, for the same reasons as ``llm_seconds``."""


class SearchUpdate(TypedDict, total=False):
    """What ``search`` writes: N(q), the initial top-k and a fresh loop."""

    question: str
    needs: NeedsRecord
    slots: list[SlotRecord]
    ledger: LedgerRecord
    issued: list[str]
    blocklist: list[str]
    candidates: dict[str, list[str]]
    queries: list[QueryRecord]
    loop: int
    stop_reason: str
    sufficient: bool
    fanout: list[dict[str, Any]]
    branches: list[dict[str, Any]] | None
    llm_seconds: float
    llm_calls: int
    llm_circuit: str
    seal_log: list[Event]


class BranchInput(TypedDict):
    """What one fan-out branch is sent (LangGraph ``Send``): the needs and its group."""

    question: str
    """The question."""
    needs: NeedsRecord
    """N(q) of the whole question."""
    group: dict[str, Any]
    """The members this branch repairs (:meth:`sealgraph.model.SetNeed.to_dict`)."""
    branch: int
    """The branch's number (0-based, in group order)."""


class BranchUpdate(TypedDict, total=False):
    """What ``branch`` writes: its result, gathered with the other branches'."""

    branches: list[dict[str, Any]]
    seal_log: list[Event]


class MergeUpdate(TypedDict, total=False):
    """What ``merge`` writes: the branches' sets as one evidence set, the members missing."""

    slots: list[SlotRecord]
    gaps: list[GapRecord]
    loop: int
    stop_reason: str
    seal_log: list[Event]


class ExtractUpdate(TypedDict, total=False):
    """What ``extract`` writes: the ledger with the new passages' facts."""

    ledger: LedgerRecord
    llm_seconds: float
    llm_calls: int
    llm_circuit: str
    seal_log: list[Event]


class AssessUpdate(TypedDict, total=False):
    """What ``assess`` writes: the gap specification and the gate's verdict."""

    gaps: list[GapRecord]
    sufficient: bool
    stop_reason: str
    need_support: dict[str, float] | None
    llm_seconds: float
    llm_calls: int
    llm_circuit: str
    seal_log: list[Event]


class MicroQueryUpdate(TypedDict, total=False):
    """What ``micro_query`` writes: this loop's queries and their candidates."""

    loop: int
    queries: list[QueryRecord]
    issued: list[str]
    candidates: dict[str, list[str]]
    stop_reason: str
    llm_seconds: float
    llm_calls: int
    llm_circuit: str
    seal_log: list[Event]


class ReplaceUpdate(TypedDict, total=False):
    """What ``replace`` writes: the repaired k slots and the evicted passages."""

    slots: list[SlotRecord]
    blocklist: list[str]
    stop_reason: str
    seal_log: list[Event]


class PackUpdate(TypedDict, total=False):
    """What ``pack`` writes: the context and the final evidence."""

    context: str
    context_tokens: int
    evidence: list[dict[str, Any]]
    packed: list[dict[str, Any]]
    loops: int
    llm_seconds: float
    llm_calls: int
    llm_circuit: str
    seal_log: list[Event]


class GenerateUpdate(TypedDict, total=False):
    """What ``generate`` writes: the answer and its citations."""

    answer: str
    short_answer: str
    missing: str
    declined: bool
    answerability: float
    citations: list[dict[str, Any]]
    llm_seconds: float
    llm_calls: int
    llm_circuit: str
    seal_log: list[Event]
