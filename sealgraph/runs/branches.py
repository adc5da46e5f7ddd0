"""The branches of a thread: the original run and the forks ``replay`` made of it.

A thread's checkpoints form a tree. The *main branch* is the run itself: the
chain of checkpoints written by ``ask`` (and ``resume``), from the input to the
newest checkpoint. Every ``replay`` adds a *fork*: one checkpoint written by a
config update (metadata ``source == "update"``) on a checkpoint of the main
branch, followed by the checkpoints of the re-run. Forks never change the main
branch, so ``trace``, ``replay`` and ``resume`` always see the original run
unless a fork is asked for by its checkpoint id.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sealgraph.errors import CheckpointError

__all__ = ["Branch", "branch_ending_at", "snapshot_at", "thread_branches"]


@dataclass(frozen=True, slots=True)
class Branch:
    """One root-to-leaf chain of checkpoints."""

    snapshots: tuple[Any, ...]
    """LangGraph ``StateSnapshot`` objects, oldest first."""
    forked_at: int | None
    """Step of the checkpoint a fork starts from; None for the main branch."""

    @property
    def end(self) -> Any:
        """The branch's newest checkpoint."""
        return self.snapshots[-1]

    @property
    def end_id(self) -> str:
        """Checkpoint id of :attr:`end`."""
        return _id(self.end)

    @property
    def overrides(self) -> dict[str, Any]:
        """Config overrides in force at the end of the branch.

        What the branch's newest checkpoint that records any says in its metadata
        (``ask`` records a run's, ``replay`` a fork's); runs made before overrides
        left the state read them from the state.
        """
        from sealgraph.runs.threads import OVERRIDES_KEY

        for snapshot in reversed(self.snapshots):
            raw = (snapshot.metadata or {}).get(OVERRIDES_KEY)
            if isinstance(raw, str):
                try:
                    value = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(value, dict):
                    return value
        legacy = self.end.values.get("config")
        return dict(legacy) if isinstance(legacy, dict) else {}


def _id(snapshot: Any) -> str:
    return str(snapshot.config["configurable"]["checkpoint_id"])


def _parent_id(snapshot: Any) -> str | None:
    parent = snapshot.parent_config
    return str(parent["configurable"]["checkpoint_id"]) if parent else None


def _step(snapshot: Any) -> int:
    return int((snapshot.metadata or {}).get("step", -1))


def _history(graph: Any, thread_id: str) -> list[Any]:
    history = list(graph.get_state_history({"configurable": {"thread_id": thread_id}}))
    if not history:
        raise CheckpointError(f"unknown thread {thread_id!r}: no checkpoint of it in this database")
    return history


def _chain(leaf: Any, by_id: dict[str, Any]) -> list[Any]:
    chain = []
    current = leaf
    while current is not None:
        chain.append(current)
        parent = _parent_id(current)
        current = by_id.get(parent) if parent else None
    chain.reverse()
    return chain


def _branch(chain: Sequence[Any]) -> Branch:
    forked_at = None
    for previous, snapshot in itertools.pairwise(chain):
        if (snapshot.metadata or {}).get("source") == "update":
            forked_at = _step(previous)
            break
    return Branch(snapshots=tuple(chain), forked_at=forked_at)


def thread_branches(graph: Any, thread_id: str) -> tuple[Branch, list[Branch]]:
    """Return the main branch of ``thread_id`` and its forks (oldest fork first).

    Raises:
        CheckpointError: The thread has no checkpoint.

    """
    history = _history(graph, thread_id)  # newest first
    by_id = {_id(s): s for s in history}
    parents = {_parent_id(s) for s in history}
    leaves = [s for s in history if _id(s) not in parents]
    branches = [_branch(_chain(leaf, by_id)) for leaf in leaves]
    mains = [b for b in branches if b.forked_at is None]
    main = mains[0] if mains else branches[0]
    forks = [b for b in branches if b is not main]
    forks.reverse()  # leaves come newest first
    return main, forks


def branch_ending_at(graph: Any, thread_id: str, checkpoint_id: str) -> Branch:
    """Return the chain of checkpoints of ``thread_id`` that ends at ``checkpoint_id``.

    Raises:
        CheckpointError: Unknown thread or checkpoint.

    """
    history = _history(graph, thread_id)
    by_id = {_id(s): s for s in history}
    if checkpoint_id not in by_id:
        raise CheckpointError(f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}")
    return _branch(_chain(by_id[checkpoint_id], by_id))


def snapshot_at(branch: Branch, step: int, thread_id: str = "") -> Any:
    """Return the checkpoint of ``branch`` whose metadata step is ``step``.

    Raises:
        CheckpointError: No checkpoint of the branch has that step.

    """
    steps = [_step(s) for s in branch.snapshots]
    matches = [s for s, n in zip(branch.snapshots, steps, strict=True) if n == step]
    if not matches:
        raise CheckpointError(
            f"step {step} is out of range for thread {thread_id!r}: "
            f"its checkpoints have steps {min(steps)}..{max(steps)}"
        )
    return matches[-1]
