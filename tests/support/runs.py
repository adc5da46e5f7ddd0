"""Run single nodes by hand: a node is a function of (state, runtime), nothing more.

:func:`runtime_for` makes the :class:`langgraph.runtime.Runtime` a node reads (its
``context`` the run's settled :class:`~sealgraph.graph.context.RunContext`);
:func:`run_nodes` calls nodes one after another, merging each update into the state as
the graph would (``seal_log`` appended, other keys replaced).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langgraph.runtime import Runtime

from sealgraph.config import SealConfig
from sealgraph.graph.context import RunContext
from sealgraph.reasoning.offline import OfflineReasoner


def runtime_for(index: Any, **config: Any) -> Runtime[RunContext]:
    """The runtime of an offline run over ``index`` with ``config`` settings."""
    run = RunContext.build(index, OfflineReasoner(), SealConfig.from_dict(config))
    return Runtime(context=run)


def merge(state: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """The state after ``update``, as the graph's reducers make it."""
    out = dict(state)
    for key, value in update.items():
        if key == "seal_log":
            out[key] = [*out.get(key, []), *value]
        elif key in ("llm_seconds", "llm_calls"):
            out[key] = out.get(key, 0) + value
        else:
            out[key] = value
    return out


def run_nodes(
    nodes: Sequence[Callable[..., dict[str, Any]]],
    state: dict[str, Any],
    runtime: Runtime[RunContext],
) -> dict[str, Any]:
    """Call ``nodes`` in order on ``state``; return the final state."""
    for node in nodes:
        state = merge(state, node(state, runtime))
    return state
