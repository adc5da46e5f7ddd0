"""Runtime dependencies of the graph (LangGraph ``context_schema``)."""

from __future__ import annotations

from dataclasses import dataclass

from sealgraph.config import SealConfig
from sealgraph.reasoning.base import Reasoner


@dataclass
class SealContext:
    """What every node needs besides the state.

    Pass one as ``graph.invoke(..., context=SealContext(...))`` to swap the index,
    reasoner or base config per run; when none is passed, the graph uses the one
    it was built with.
    """

    index: object
    """A loaded :class:`sealgraph.index.Index`."""
    reasoner: Reasoner
    """The offline or the LLM reasoner."""
    config: SealConfig
    """Base configuration (per-run overrides from the input's ``config`` apply on top)."""
