"""The graph served by the LangGraph server (``langgraph dev`` / LangGraph Platform).

``langgraph.json`` points at the module-level :data:`graph`. It is compiled
WITHOUT a checkpointer: the server brings its own persistence, threads and
streaming. The index comes from ``$SEALGRAPH_INDEX`` or, when that is unset, is
the example corpus indexed into the user cache (built on first start, reused
afterwards). ``SEALGRAPH_LLM=1`` switches to the LLM reasoner, configured by the
usual ``OPENAI_API_KEY`` (and ``SEALGRAPH_CONFIG``, a JSON object of config
overrides such as ``{"llm": {"base_url": "http://localhost:8000/v1"}}``).

Run it with::

    pip install "langgraph-cli[inmem]"
    SEALGRAPH_INDEX=./my-index langgraph dev
"""

from __future__ import annotations

import json
import os
from typing import Any

from sealgraph.errors import ConfigError

__all__ = ["CONFIG_ENV", "INDEX_ENV", "LLM_ENV", "graph", "make_graph"]

INDEX_ENV = "SEALGRAPH_INDEX"
"""Environment variable naming the index directory to serve."""

LLM_ENV = "SEALGRAPH_LLM"
"""Set to 1 (or true/yes) to serve the LLM reasoner instead of the offline one."""

CONFIG_ENV = "SEALGRAPH_CONFIG"
"""Optional JSON object of config overrides (dotted or nested keys)."""


def _overrides() -> dict[str, Any]:
    raw = os.environ.get(CONFIG_ENV, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"{CONFIG_ENV} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{CONFIG_ENV} is nested too deeply") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{CONFIG_ENV} must be a JSON object")
    return value


def make_graph():
    """Build the served graph from the environment (see the module docstring)."""
    from sealgraph.runs.threads import build_run_graph

    index = os.environ.get(INDEX_ENV, "").strip()
    if index:
        from sealgraph.index import user_index_path

        index_dir = user_index_path(index)
    else:
        from sealgraph.examples.demo import ensure_demo_index

        index_dir = ensure_demo_index()
    llm = os.environ.get(LLM_ENV, "").strip().lower() in ("1", "true", "yes", "on")
    return build_run_graph(index_dir, llm=llm, overrides=_overrides())


graph = make_graph()
"""The compiled SEAL graph (no checkpointer: the server persists threads itself)."""
