"""Typed log events: the audit trail every node appends to.

Events are plain ``TypedDict`` dicts so that they serialise through any LangGraph
checkpointer without custom types, and they are appended through the
``operator.add`` reducer of the ``seal_log`` state key: no node ever rewrites an
earlier event.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict


class Event(TypedDict):
    """One entry of the audit trail."""

    step: int
    """LangGraph super-step in which the event was written."""
    node: str
    """Node that wrote it (``search``, ``extract``, ``assess``, ...)."""
    kind: str
    """What happened: ``retrieved``, ``ledger``, ``gap``, ``micro_query``, ``candidate``,
    ``swap``, ``refuse``, ``stop``, ``pack``, ``answer``, ``llm_call``, ``llm_fallback``, ..."""
    message: str
    """One human-readable line: what was decided and why."""
    data: dict[str, Any]
    """Structured details (scores, ids, utility components, packing decisions)."""
    loop: int
    """Repair loop the event belongs to (0 = initial search)."""
    ms: float
    """Wall time of the node call that wrote the event (same for all events of one call)."""
    llm_calls: int
    """LLM calls made for this event (0 offline)."""
    tokens: int
    """Tokens involved (context tokens for packing, prompt tokens in LLM mode), else 0."""


def make_event(
    node: str,
    kind: str,
    message: str,
    data: dict[str, Any] | None = None,
    *,
    step: int = 0,
    loop: int = 0,
    ms: float = 0.0,
    llm_calls: int = 0,
    tokens: int = 0,
) -> Event:
    """Build an :class:`Event` with defaults for the optional fields."""
    return Event(
        step=step,
        node=node,
        kind=kind,
        message=message,
        data=dict(data or {}),
        loop=loop,
        ms=round(float(ms), 3),
        llm_calls=llm_calls,
        tokens=tokens,
    )
