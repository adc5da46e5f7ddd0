"""Runtime dependencies of the graph (LangGraph ``context_schema``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sealgraph.config import SealConfig
from sealgraph.index.protocol import SearchIndex
from sealgraph.reasoning.base import Reasoner


@dataclass
class SealContext:
    """What every node needs besides the state.

    Pass one as ``graph.invoke(..., context=SealContext(...))`` to swap the index,
    reasoner or base config per run. Every field is optional: a field left as None
    is taken from the context the graph was built with, so ``context={}`` (what the
    LangGraph server sends) and ``context=None`` run the built graph unchanged.
    """

    index: SearchIndex | None = None
    """A loaded index (:class:`sealgraph.index.Index`, or any other
    :class:`~sealgraph.index.protocol.SearchIndex`); None keeps the graph's own index."""
    reasoner: Reasoner | None = None
    """The offline or the LLM reasoner; None keeps the graph's own reasoner."""
    config: SealConfig | dict[str, Any] | None = None
    """Base configuration, or a dict of overrides applied on top of the graph's own
    configuration (what a JSON client such as the LangGraph server can send); None
    keeps the graph's own. Per-run overrides from the input's ``config`` apply on top."""
