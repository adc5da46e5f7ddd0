"""sealgraph: multi-hop QA that repairs its evidence instead of piling more on.

A LangGraph state graph Search → Extract → Assess → Loop (SEAL) → Pack → Generate
over an indexed corpus, with an offline deterministic reasoner and an LLM mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sealgraph._version import __version__

__all__ = [
    "SealConfig",
    "SealRetriever",
    "__version__",
    "build_graph",
    "build_index",
    "load_index",
    "make_tool",
]

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.config import SealConfig
    from sealgraph.graph.builder import build_graph
    from sealgraph.index import build_index, load_index
    from sealgraph.integrations.langchain import SealRetriever, make_tool

_LAZY = {
    "SealConfig": "sealgraph.config",
    "build_graph": "sealgraph.graph.builder",
    "build_index": "sealgraph.index",
    "load_index": "sealgraph.index",
    "SealRetriever": "sealgraph.integrations.langchain",
    "make_tool": "sealgraph.integrations.langchain",
}


def __getattr__(name: str) -> Any:
    # Lazy imports keep `import sealgraph` (and the CLI's --help) fast: torch,
    # langgraph is only loaded when it is used.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sealgraph' has no attribute {name!r}")
