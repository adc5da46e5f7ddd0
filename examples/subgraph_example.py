"""sealgraph as a subgraph: a node of your own LangGraph graph.

The parent graph below plans, asks sealgraph, and reports. It shows three things:

1. **No duplicated log entries.** The parent keeps its own ``log`` (an
   ``operator.add`` list). sealgraph writes its audit trail under a different key,
   ``seal_log``, so its events arrive there exactly once and never mix with, or
   repeat in, the parent's ``log``.
2. **The checkpointer is inherited.** sealgraph is compiled WITHOUT a
   checkpointer; the parent is compiled with :class:`InMemorySaver`. The child's
   checkpoints are stored by the parent's saver under the child's namespace, so
   the child's state can be read mid-run with
   ``parent.get_state(config, subgraphs=True)``.
3. **Streaming through the parent.** ``parent.stream(..., subgraphs=True)`` yields
   each sealgraph node's update, tagged with the child's namespace.

Run it::

    python examples/subgraph_example.py                 # the packaged example corpus
    python examples/subgraph_example.py ./my-index "Who leads the team that owns X?"

Without an index directory the example corpus shipped with sealgraph is used,
indexed into the user cache on first use (the index ``sealgraph demo`` uses).
"""

from __future__ import annotations

import operator
import sys
from typing import Annotated, Any, NotRequired

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from sealgraph import build_graph
from sealgraph.runs.checkpointers import strict_serializer

DEFAULT_QUESTION = "Who leads the team that owns the Ledgerline Billing Service?"


class ParentState(TypedDict):
    """State of the parent graph."""

    question: str
    """Shared with sealgraph: its input key."""
    log: Annotated[list[str], operator.add]
    """The parent's own log; sealgraph never writes to it."""
    answer: NotRequired[str]
    """Filled by sealgraph's output."""
    citations: NotRequired[list[dict[str, Any]]]
    """Filled by sealgraph's output."""
    seal_log: NotRequired[Annotated[list[dict[str, Any]], operator.add]]
    """sealgraph's audit trail, received once when the subgraph finishes."""


def build_parent(seal_graph: Any, checkpointer: Any = None):
    """Return the parent graph with ``seal_graph`` (a compiled sealgraph graph) as a node.

    Args:
        seal_graph: ``sealgraph.build_graph(...)`` compiled without a checkpointer.
        checkpointer: The parent's checkpointer; the subgraph inherits it.

    """

    def plan(state: ParentState) -> dict[str, Any]:
        return {"log": [f"plan: ask sealgraph {state['question']!r}"]}

    def report(state: ParentState) -> dict[str, Any]:
        cited = ", ".join(c["title"] for c in state.get("citations", []))
        return {"log": [f"report: answer {state.get('answer', '')!r} citing {cited or 'nothing'}"]}

    builder = StateGraph(ParentState)
    builder.add_node("plan", plan)
    builder.add_node("sealgraph", seal_graph)
    builder.add_node("report", report)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "sealgraph")
    builder.add_edge("sealgraph", "report")
    builder.add_edge("report", END)
    return builder.compile(checkpointer=checkpointer)


def run(
    index_dir: str, question: str = DEFAULT_QUESTION, *, thread_id: str = "subgraph-demo"
) -> dict[str, Any]:
    """Run the parent graph once and return what the example observed.

    Returns:
        ``{"state": final parent state, "updates": [(namespace, node), ...],
        "child_snapshots": [(child node about to run, events so far), ...]}``.

    """
    seal_graph = build_graph(index_dir)  # no checkpointer: it inherits the parent's
    parent = build_parent(seal_graph, checkpointer=InMemorySaver(serde=strict_serializer()))
    config = {"configurable": {"thread_id": thread_id}}
    updates: list[tuple[tuple[str, ...], str]] = []
    child_snapshots: list[tuple[tuple[str, ...], int]] = []
    for namespace, update in parent.stream(
        {"question": question}, config, stream_mode="updates", subgraphs=True, durability="sync"
    ):
        for node in update:
            updates.append((namespace, node))
        if namespace:  # an update from inside sealgraph: its state lives in the parent's saver
            snapshot = parent.get_state(config, subgraphs=True)
            for task in snapshot.tasks:
                if task.state is not None:
                    child_snapshots.append(
                        (task.state.next, len(task.state.values.get("seal_log", [])))
                    )
    return {
        "state": parent.get_state(config).values,
        "updates": updates,
        "child_snapshots": child_snapshots,
    }


def main(argv: list[str]) -> int:
    """Run the example and print what it shows."""
    if argv:
        index_dir = argv[0]
    else:
        from sealgraph.examples.demo import ensure_demo_index

        index_dir = str(ensure_demo_index())
    question = argv[1] if len(argv) > 1 else DEFAULT_QUESTION
    result = run(index_dir, question)
    state = result["state"]
    print("streamed updates (namespace, node):")
    for namespace, node in result["updates"]:
        print(f"  {'/'.join(namespace) or '(parent)'}: {node}")
    print("child state read through the parent's checkpointer (next node, events so far):")
    for next_nodes, n_events in result["child_snapshots"]:
        print(f"  next {', '.join(next_nodes) or 'END'}: {n_events} events")
    print("parent log (no sealgraph events, no duplicates):")
    for line in state["log"]:
        print(f"  {line}")
    print(f"seal_log: {len(state.get('seal_log', []))} sealgraph events")
    print(f"answer: {state.get('answer', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
