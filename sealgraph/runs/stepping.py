r"""Stepwise debugging: pause before every node and let the user continue, inspect or stop.

The run is driven with ``interrupt_before="*"``: LangGraph checkpoints the state
and stops before each node. At every pause the user sees the node about to run
and a compact view of the state it will read, then answers with one line:

* empty line: run that node;
* ``s``: print the full state as JSON (then ask again);
* ``q``: stop here; the checkpoint stays, and ``sealgraph resume`` continues it.

End of input (a pipe that ran dry, Ctrl-D) means "run to the end", so piped
input such as ``printf '\\n\\ns\\n'`` works as well as a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sealgraph.runs.threads import has_work_left, stream_run, unpinned
from sealgraph.runs.timeline import state_json, state_view

__all__ = ["PROMPT", "StepOutcome", "run_stepwise"]

PROMPT = "[enter] run it  [s] show state  [q] stop > "
"""What the user is asked at every pause."""

_MAX_STALLS = 2  # stream calls allowed to make no progress before giving up on a pause


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """How a stepwise run ended."""

    finished: bool
    """True when the graph ran to its end."""
    stopped_before: str | None = None
    """Node the user stopped before (``q``), else None."""


def _checkpoint_id(snapshot: Any) -> str | None:
    return (snapshot.config or {}).get("configurable", {}).get("checkpoint_id")


def run_stepwise(
    graph: Any,
    run_input: Mapping[str, Any] | None,
    config: Mapping[str, Any],
    *,
    read_line: Callable[[str], str | None],
    write: Callable[[str], None],
    on_node: Callable[[str, list[dict[str, Any]]], None] | None = None,
) -> StepOutcome:
    """Run the graph one node at a time, asking before each node.

    Args:
        graph: A compiled graph with a checkpointer.
        run_input: The run's input, or None to continue the thread's last checkpoint.
        config: The run config (thread id and metadata; a pinned ``checkpoint_id``
            says which checkpoint to continue when ``run_input`` is None).
        read_line: Shows a prompt and returns the next input line, or None at end of input.
        write: Prints one message for the user (the CLI writes to stderr).
        on_node: Called with each finished node and its events.

    Returns:
        Whether the run finished or where the user stopped it.

    """
    current = dict(config)
    if run_input is not None:
        # Records the input and pauses before the first node.
        stream_run(graph, run_input, current, on_node=on_node, interrupt_before="*")
        current = unpinned(config)
    to_the_end = False
    while True:
        snapshot = graph.get_state(current)
        if not has_work_left(snapshot):
            return StepOutcome(finished=True)
        if not snapshot.next:  # a node's writes wait (its process was killed): apply them
            stream_run(graph, None, current, on_node=on_node, interrupt_before="*")
            current = unpinned(config)
            continue
        if to_the_end:
            stream_run(graph, None, current, on_node=on_node)
            current = unpinned(config)
            continue
        node = ", ".join(snapshot.next)
        step = int((snapshot.metadata or {}).get("step", -1)) + 1
        write(
            f"next: {node} (step {step}) will read:\n{state_view(snapshot.values, snapshot.next[0])}"
        )
        while True:
            line = read_line(PROMPT)
            if line is None:
                write("end of input: running to the end")
                to_the_end = True
                break
            command = line.strip().lower()
            if command == "":
                break
            if command == "s":
                write(state_json(snapshot.values))
            elif command == "q":
                return StepOutcome(finished=False, stopped_before=node)
            else:
                write(f"unknown command {line.strip()!r}")
        if to_the_end:
            continue
        before = _checkpoint_id(snapshot)
        for _ in range(_MAX_STALLS):
            stream_run(graph, None, current, on_node=on_node, interrupt_before="*")
            current = unpinned(config)
            # A checkpoint that was not itself an interrupt (a killed run) first
            # pauses without running anything; run again so one answer = one node.
            if _checkpoint_id(graph.get_state(current)) != before:
                break
