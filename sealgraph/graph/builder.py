"""Build the SEAL state graph.

The topology::

    search → extract → assess ─┬─ sufficient / budget spent ──→ pack → generate
      │               ↑        └─ gaps → micro_query ─┬─ no candidates ─→ pack
      │               └──── changed ←── replace ←─────┘         ↑
      │                                 └─ no swap improves ─→ pack
      └─ set larger than k ─→ Send: branch × groups ─→ merge ───┘

Each node is a typed function ``(state, runtime: Runtime[RunContext]) -> Update`` of
:mod:`sealgraph.nodes`. :class:`SealNode` runs it: it settles the run's context
once (:func:`sealgraph.graph.context.settle`), reads in the run's lexicon, and gives
an async run's LLM calls the run's event loop (:mod:`sealgraph.graph.aio`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import run_in_executor
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Send

from sealgraph.config import SealConfig
from sealgraph.graph.aio import LoopReasoner
from sealgraph.graph.context import RunContext, SealContext, settle
from sealgraph.graph.state import SealInput, SealOutput, SealState
from sealgraph.index.protocol import SearchIndex, require_search_index
from sealgraph.nodes import (
    assess,
    branch,
    extract,
    generate,
    merge,
    micro_query,
    pack,
    replace,
    search,
)
from sealgraph.reasoning.base import Reasoner
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.text.lexicon import use_lexicon

__all__ = [
    "NODE_FUNCTIONS",
    "SealNode",
    "build_graph",
    "compile_graph",
    "make_reasoner",
    "seal_state_graph",
]

NodeFn = Callable[[SealState, Runtime[RunContext]], Any]
"""A node: ``(state, runtime) -> partial state update``, its runtime's context settled."""


class SealNode(Runnable[SealState, Any]):
    """Runs one node function in its run's settled context, sync or async.

    A plain :class:`~langchain_core.runnables.Runnable` (no callback run of its own,
    like LangGraph's own node wrapper): ``invoke`` runs the node in the caller's
    thread; ``ainvoke`` runs it in a worker thread (search, extraction and packing
    are CPU work) with the reasoner's async steps awaited on the run's loop.
    """

    def __init__(self, fn: NodeFn, default: RunContext) -> None:
        self.fn = fn
        """The node function."""
        self.default = default
        """The context the graph was built with."""
        self.name = fn.__name__

    def _run(
        self, state: SealState, runtime: Runtime[Any], loop: asyncio.AbstractEventLoop | None
    ) -> Any:
        run = settle(runtime.context, self.default, state.get("config"))
        if loop is not None:  # an async run: the reasoner's async steps run on its loop
            run = dataclasses.replace(run, reasoner=LoopReasoner(run.reasoner, loop))
        # Every node sets the run's language, whatever thread LangGraph runs it on.
        with use_lexicon(run.lexicon):
            return self.fn(state, runtime.override(context=run))

    def invoke(self, input: SealState, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the node (LangGraph calls this with the node's config in context)."""
        return self._run(input, get_runtime(), None)

    async def ainvoke(
        self, input: SealState, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        """Run the node in a worker thread; its LLM calls are awaited on this loop."""
        loop = asyncio.get_running_loop()
        runtime = get_runtime()
        return await run_in_executor(config, self._run, input, runtime, loop)


def _after_search(state: SealState) -> Literal["extract"] | list[Send]:
    """Go on to the loop, or fan out: one ``branch`` per group of set members."""
    groups = state.get("fanout") or []
    if not groups:
        return "extract"
    return [
        Send(
            "branch",
            {"question": state["question"], "needs": state["needs"], "group": g, "branch": i},
        )
        for i, g in enumerate(groups)
    ]


def _after_assess(state: SealState) -> Literal["pack", "micro_query"]:
    return "pack" if state.get("stop_reason") else "micro_query"


def _after_micro_query(state: SealState) -> Literal["pack", "replace"]:
    return "pack" if state.get("stop_reason") else "replace"


def _after_replace(state: SealState) -> Literal["pack", "extract"]:
    return "pack" if state.get("stop_reason") else "extract"


LLMChoice = BaseChatModel | Literal["openai"] | bool | None
"""The reasoner :func:`build_graph` makes: None/False offline, a chat model, or
``"openai"``/True for ``ChatOpenAI`` built from ``config.llm``."""


def make_reasoner(llm: LLMChoice, config: SealConfig) -> Reasoner:
    """Return the offline reasoner, or an LLM reasoner around a chat model / ``"openai"``."""
    if llm is None or llm is False:
        return OfflineReasoner()
    from sealgraph.reasoning.llm import LLMReasoner, chat_model_from_config

    model = chat_model_from_config(config.llm) if llm is True or llm == "openai" else llm
    return LLMReasoner(model, config.llm)


def build_graph(
    index: str | Path | SearchIndex,
    llm: LLMChoice = None,
    config: SealConfig | dict[str, Any] | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    name: str = "sealgraph",
) -> CompiledStateGraph:
    """Build and compile the SEAL graph.

    Args:
        index: An index directory (str or Path) or a loaded :class:`sealgraph.index.Index`
            (any :class:`~sealgraph.index.protocol.SearchIndex`).
        llm: None for the offline reasoner (default); a LangChain chat model, or
            ``"openai"`` to build ``ChatOpenAI`` from ``config.llm``, for LLM mode.
        config: A :class:`SealConfig` or a dict of settings.
        checkpointer: Any LangGraph checkpointer (persists the state log for
            replay, forking and stepwise debugging).
        name: Name of the compiled graph (shown when used as a subgraph).

    Returns:
        A compiled LangGraph graph: ``graph.invoke({"question": ...})`` returns
        ``answer``, ``citations``, ``evidence``, ``context``, ``context_tokens``,
        ``loops``, ``gaps`` and ``seal_log`` (the input may carry the run's own
        bounded settings as ``config``); ``graph.as_tool()`` is LangChain's generic
        tool (:func:`sealgraph.integrations.langchain.make_tool` gives one that takes
        the question alone and answers with citations and the evidence as artifacts).

    Raises:
        InputError: ``index`` is neither a directory nor a sealgraph index (for
            example a LangChain vector store or retriever).

    """
    if isinstance(index, (str, Path)):
        from sealgraph.index import load_index

        index = load_index(index)
    index = require_search_index(
        index,
        where="build_graph",
        expected="a directory or sealgraph.index.load_index(...)",
    )
    cfg = config if isinstance(config, SealConfig) else SealConfig.from_dict(config)
    return compile_graph(
        RunContext.build(index, make_reasoner(llm, cfg), cfg), checkpointer=checkpointer, name=name
    )


def compile_graph(
    default: RunContext, *, checkpointer: BaseCheckpointSaver | None = None, name: str = "sealgraph"
) -> CompiledStateGraph:
    """Compile the SEAL graph whose runs default to ``default`` (what :func:`build_graph` does).

    For callers that hold a context already: an evaluation builds several graphs
    over one index and gives them one corpus knowledge.
    """
    graph = seal_state_graph(lambda fn: SealNode(fn, default))
    return graph.compile(checkpointer=checkpointer, name=name)


NODE_FUNCTIONS: dict[str, NodeFn] = {
    "search": search.search,
    "extract": extract.extract,
    "assess": assess.assess,
    "micro_query": micro_query.micro_query,
    "replace": replace.replace,
    "pack": pack.pack,
    "generate": generate.generate,
    "branch": branch.branch,
    "merge": merge.merge,
}
"""The node functions by node name, in pipeline order."""


def seal_state_graph(make_node: Callable[[NodeFn], Any]) -> StateGraph:
    """Return the uncompiled SEAL topology (the diagram above).

    Args:
        make_node: Turns each node function of :data:`NODE_FUNCTIONS` into the
            runnable the graph runs (:func:`build_graph` binds the built context).

    """
    g = StateGraph(
        SealState, context_schema=SealContext, input_schema=SealInput, output_schema=SealOutput
    )
    for name, fn in NODE_FUNCTIONS.items():
        g.add_node(name, make_node(fn))
    g.add_edge(START, "search")
    g.add_conditional_edges("search", _after_search, ["extract", "branch"])
    g.add_edge("branch", "merge")
    g.add_edge("merge", "pack")
    g.add_edge("extract", "assess")
    g.add_conditional_edges("assess", _after_assess, ["micro_query", "pack"])
    g.add_conditional_edges("micro_query", _after_micro_query, ["replace", "pack"])
    g.add_conditional_edges("replace", _after_replace, ["extract", "pack"])
    g.add_edge("pack", "generate")
    g.add_edge("generate", END)
    return g
