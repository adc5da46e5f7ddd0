"""Build the SEAL state graph.

The topology::

    search → extract → assess ─┬─ sufficient / budget spent ──→ pack → generate
                      ↑        └─ gaps → micro_query ─┬─ no candidates ─→ pack
                      └──── changed ←── replace ←─────┘
                                        └─ no swap improves ─→ pack
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import run_in_executor
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from sealgraph.config import SealConfig
from sealgraph.graph.aio import LoopReasoner
from sealgraph.graph.context import SealContext
from sealgraph.graph.state import SealInput, SealOutput, SealState
from sealgraph.index.protocol import SearchIndex, require_search_index
from sealgraph.nodes import assess, extract, generate, micro_query, pack, replace, search
from sealgraph.nodes._common import resolve
from sealgraph.reasoning.base import Reasoner
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.text.lexicon import lexicon_of, use_lexicon

try:
    from langgraph._internal._runnable import RunnableCallable
except ImportError:  # pragma: no cover - older LangGraph
    from langgraph.utils.runnable import RunnableCallable  # type: ignore[no-redef]


def _node(fn, default: SealContext):
    # Not functools.wraps: LangGraph reads the wrapper's own signature to decide
    # what to inject (config, runtime), and wraps would expose fn's instead.
    def run(
        state: SealState,
        config: RunnableConfig,
        runtime: Runtime[SealContext],
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> dict[str, Any]:
        ctx, cfg = resolve(state, runtime, default)
        if loop is not None:  # an async run: the reasoner's async steps run on its loop
            ctx = dataclasses.replace(ctx, reasoner=LoopReasoner(ctx.reasoner, loop))
        # The run reads in the index's language (the config's for an index that
        # records none): every node sets it, whatever thread LangGraph runs it on.
        with use_lexicon(lexicon_of(ctx.index, cfg.lexicon)):
            return fn(state, ctx, cfg, config)

    async def arun(
        state: SealState, config: RunnableConfig, runtime: Runtime[SealContext]
    ) -> dict[str, Any]:
        # The node's one implementation runs in a worker thread; its LLM calls are
        # awaited on this loop (sealgraph.graph.aio), which stays free meanwhile.
        loop = asyncio.get_running_loop()
        return await run_in_executor(config, run, state, config, runtime, loop)

    run.__name__ = arun.__name__ = fn.__name__
    run.__doc__ = arun.__doc__ = fn.__doc__
    # What LangGraph makes of a sync function (trace=False), with a real async side.
    return RunnableCallable(run, arun, name=fn.__name__, trace=False)


def _after_assess(state: SealState) -> str:
    return "pack" if state.get("stop_reason") else "micro_query"


def _after_micro_query(state: SealState) -> str:
    return "pack" if state.get("stop_reason") else "replace"


def _after_replace(state: SealState) -> str:
    return "pack" if state.get("stop_reason") else "extract"


def make_reasoner(llm: Any, config: SealConfig) -> Reasoner:
    """Return the offline reasoner, or an LLM reasoner around a chat model / ``"openai"``."""
    if llm is None or llm is False:
        return OfflineReasoner()
    from sealgraph.reasoning.llm import LLMReasoner, chat_model_from_config

    model = chat_model_from_config(config.llm) if llm in (True, "openai") else llm
    return LLMReasoner(model, config.llm)


def build_graph(
    index: str | Path | SearchIndex,
    llm: Any = None,
    config: SealConfig | dict[str, Any] | None = None,
    checkpointer: Any = None,
    *,
    name: str = "sealgraph",
):
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
        A compiled graph (a :class:`SealGraph`, i.e. a LangGraph
        ``CompiledStateGraph``): ``graph.invoke({"question": ...})`` returns
        ``answer``, ``citations``, ``evidence``, ``context``, ``context_tokens``,
        ``loops``, ``gaps`` and ``seal_log``; ``graph.as_tool()`` is a LangChain
        tool taking ``{"question": str}``.

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
    default = SealContext(index=index, reasoner=make_reasoner(llm, cfg), config=cfg)

    graph = seal_state_graph(lambda fn: _node(fn, default))
    compiled = graph.compile(checkpointer=checkpointer, name=name)
    # StateGraph.compile always makes a CompiledStateGraph; only as_tool differs.
    compiled.__class__ = SealGraph
    return compiled


class SealGraph(CompiledStateGraph):
    """The graph :func:`build_graph` returns: a ``CompiledStateGraph`` with a working ``as_tool``.

    LangChain's ``Runnable.as_tool()`` derives a compiled graph's tool arguments
    from the input ``TypedDict``'s type hints and marks every key required,
    ``NotRequired`` ones included, so on a plain compiled graph the tool refuses
    ``{"question": ...}`` (``config: Field required``). This subclass changes
    nothing else (copies and ``with_config`` keep the class).
    """

    def as_tool(
        self,
        args_schema: Any = None,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_types: dict[str, type] | None = None,
    ) -> Any:
        """Return the graph as a LangChain tool taking ``{"question": str}``.

        Without ``args_schema`` or ``arg_types`` this is
        :func:`sealgraph.integrations.langchain.make_tool` on this graph (named after the graph
        unless ``name`` is given): the answer with its citations as content, the
        evidence as ``Document`` artifacts. With either, LangChain's generic
        ``Runnable.as_tool`` applies.
        """
        if args_schema is not None or arg_types is not None:
            return super().as_tool(
                args_schema, name=name, description=description, arg_types=arg_types
            )
        from sealgraph.integrations.langchain import make_tool

        return make_tool(self, name=name or self.get_name(), description=description)


NODE_FUNCTIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "search": search.search,
    "extract": extract.extract,
    "assess": assess.assess,
    "micro_query": micro_query.micro_query,
    "replace": replace.replace,
    "pack": pack.pack,
    "generate": generate.generate,
}
"""The node functions ``fn(state, ctx, cfg, config)`` by node name, in pipeline order."""


def seal_state_graph(make_node: Callable[[Callable[..., dict[str, Any]]], Any]) -> StateGraph:
    """Return the uncompiled SEAL topology (the diagram above).

    Args:
        make_node: Turns each node function of :data:`NODE_FUNCTIONS` into the
            callable the graph runs (:func:`build_graph` binds the run's context).

    """
    g = StateGraph(
        SealState, context_schema=SealContext, input_schema=SealInput, output_schema=SealOutput
    )
    for name, fn in NODE_FUNCTIONS.items():
        g.add_node(name, make_node(fn))
    g.add_edge(START, "search")
    g.add_edge("search", "extract")
    g.add_edge("extract", "assess")
    g.add_conditional_edges("assess", _after_assess, ["micro_query", "pack"])
    g.add_conditional_edges("micro_query", _after_micro_query, ["replace", "pack"])
    g.add_conditional_edges("replace", _after_replace, ["extract", "pack"])
    g.add_edge("pack", "generate")
    g.add_edge("generate", END)
    return g
