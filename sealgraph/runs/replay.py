"""Replay: fork a stored run at a checkpoint with changed config and compare the outcomes.

The fork is a new branch of the same thread. :func:`fork_run` writes one new
checkpoint (a LangGraph ``update_state`` on the chosen checkpoint, recording the
fork's overrides in its metadata) and runs the graph on from there with the
graph's config, which holds the overrides (build it with
:func:`sealgraph.runs.threads.graph_for_thread` and ``extra_overrides``); the
original checkpoints are never touched, so the original run stays readable and
replayable.
:func:`diff_evidence` says where the fork's evidence differs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sealgraph.config import SealConfig
from sealgraph.errors import InputError
from sealgraph.runs.branches import snapshot_at, thread_branches
from sealgraph.runs.threads import OVERRIDES_KEY, stream_run

__all__ = [
    "SETTING_NODES",
    "EvidenceChange",
    "EvidenceDiff",
    "ReplayResult",
    "diff_evidence",
    "fork_run",
    "unreached_settings",
]

_LOOP = frozenset({"assess", "micro_query", "replace"})
SETTING_NODES: tuple[tuple[str, frozenset[str]], ...] = (
    ("k", frozenset({"search", "replace"})),
    ("retrieval.", frozenset({"search", "micro_query"})),
    ("max_loops", _LOOP),
    ("epsilon", _LOOP),
    ("dwell", _LOOP),
    ("replacement", _LOOP),
    ("micro_query_k", frozenset({"micro_query"})),
    ("max_micro_queries", frozenset({"micro_query"})),
    ("utility.", _LOOP),
    ("budget", frozenset({"pack"})),
    ("tokenizer_model", frozenset({"pack"})),
    ("pack.", frozenset({"pack"})),
    ("min_answerability", frozenset({"generate"})),
    ("decline_unseen_names", frozenset({"generate"})),
)
"""The nodes each setting (a key, or a ``prefix.``) acts at. ``k`` sets the initial top-k
at search; replace only fills a set that holds fewer than k passages. Settings not listed
(``llm.*``, ``lexicon``) act at every node."""


@dataclass(frozen=True, slots=True)
class EvidenceChange:
    """A passage present in only one of the two evidence sets."""

    chunk_id: str
    """The passage."""
    title: str
    """Title of its document."""


@dataclass(frozen=True, slots=True)
class EvidenceDiff:
    """How the fork's final evidence differs from the original's."""

    added: tuple[EvidenceChange, ...]
    """Passages only the fork has, in the fork's order."""
    removed: tuple[EvidenceChange, ...]
    """Passages only the original has, in the original's order."""
    kept: tuple[str, ...]
    """Chunk ids in both, in the fork's order."""
    answer_before: str
    """The original answer."""
    answer_after: str
    """The fork's answer."""

    @property
    def changed(self) -> bool:
        """True when the evidence or the answer differ."""
        return bool(self.added or self.removed) or self.answer_before != self.answer_after

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict."""
        return {
            "added": [{"chunk_id": c.chunk_id, "title": c.title} for c in self.added],
            "removed": [{"chunk_id": c.chunk_id, "title": c.title} for c in self.removed],
            "kept": list(self.kept),
            "answer_before": self.answer_before,
            "answer_after": self.answer_after,
        }


def diff_evidence(
    before: Sequence[Mapping[str, Any]],
    after: Sequence[Mapping[str, Any]],
    *,
    answer_before: str = "",
    answer_after: str = "",
) -> EvidenceDiff:
    """Compare two evidence lists (dicts with ``chunk_id`` and ``title``) by chunk id."""
    before_ids = {str(e.get("chunk_id")) for e in before}
    after_ids = {str(e.get("chunk_id")) for e in after}

    def change(e: Mapping[str, Any]) -> EvidenceChange:
        return EvidenceChange(str(e.get("chunk_id")), str(e.get("title", "")))

    return EvidenceDiff(
        added=tuple(change(e) for e in after if str(e.get("chunk_id")) not in before_ids),
        removed=tuple(change(e) for e in before if str(e.get("chunk_id")) not in after_ids),
        kept=tuple(str(e.get("chunk_id")) for e in after if str(e.get("chunk_id")) in before_ids),
        answer_before=answer_before,
        answer_after=answer_after,
    )


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """The outcome of one replay."""

    from_step: int
    """Metadata step of the checkpoint the fork starts from."""
    fork_checkpoint_id: str
    """Id of the fork's first checkpoint (the config update)."""
    fork_end_id: str
    """Id of the fork's last checkpoint (``sealgraph trace THREAD --checkpoint ID`` shows it)."""
    overrides: dict[str, Any]
    """The fork's full config overrides (the run's, updated with the new ones)."""
    before: dict[str, Any]
    """Final state values of the original branch."""
    after: dict[str, Any]
    """Final state values of the fork."""
    diff: EvidenceDiff = field(repr=False)
    """Where the evidence and the answer differ."""
    warnings: tuple[str, ...] = ()
    """Changed settings that act (in part) at nodes the fork does not run again."""


def _recorded(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Return the overrides a run config's metadata records (none when it records none)."""
    raw = metadata.get(OVERRIDES_KEY)
    try:
        value = json.loads(raw) if isinstance(raw, str) else {}
    except (ValueError, RecursionError):
        value = {}
    return dict(value) if isinstance(value, Mapping) else {}


def fork_run(
    graph: Any,
    config: Mapping[str, Any],
    step: int,
    overrides: Mapping[str, Any],
    *,
    on_node: Callable[[str, list[dict[str, Any]]], None] | None = None,
) -> ReplayResult:
    """Fork the run of ``config``'s thread at the checkpoint of ``step``, with config overrides.

    The fork starts from the main branch (the original run), whatever forks were
    made before, and is compared with the original run's outcome.

    Args:
        graph: The run's graph, with its checkpointer, built with the run's overrides
            and ``overrides`` (:func:`sealgraph.runs.threads.graph_for_thread`).
        config: The run config (thread id and the metadata to record on the fork,
            the run's own overrides among them: :func:`sealgraph.runs.threads.run_config`).
        step: Metadata step of the checkpoint to fork from (0 re-runs everything
            from the search; the run's input checkpoint, step -1, cannot be forked).
        overrides: Dotted config overrides (``{"k": 5}``), applied on top of the run's.
        on_node: Called with each node the fork runs and its events.

    Returns:
        The original and forked outcomes and their difference.

    Raises:
        CheckpointError: Unknown thread or step out of range.
        ConfigError: Bad overrides.
        InputError: ``step`` is the input checkpoint.

    """
    if step < 0:
        raise InputError(
            "cannot fork the input checkpoint (step -1); use --from 0 to redo the search"
        )
    thread_id = str(config["configurable"]["thread_id"])
    main, _ = thread_branches(graph, thread_id)
    start = snapshot_at(main, step, thread_id)
    metadata = dict(config.get("metadata") or {})
    merged = {**_recorded(metadata), **dict(overrides)}
    SealConfig().override(merged, trusted=False)  # validate before writing anything
    metadata[OVERRIDES_KEY] = json.dumps(merged, sort_keys=True)
    fork_config = graph.update_state({**start.config, "metadata": metadata}, None)
    run_config = {
        **dict(config),
        "metadata": metadata,
        "configurable": dict(fork_config["configurable"]),
    }
    warnings = unreached_settings(overrides, _reachable(graph, tuple(start.next)), step)
    stream_run(graph, None, run_config, on_node=on_node)
    before = dict(main.end.values)
    end = graph.get_state({"configurable": {"thread_id": thread_id}})  # the fork just written
    after = dict(end.values)
    diff = diff_evidence(
        before.get("evidence") or [],
        after.get("evidence") or [],
        answer_before=str(before.get("answer", "")),
        answer_after=str(after.get("answer", "")),
    )
    return ReplayResult(
        from_step=step,
        fork_checkpoint_id=str(fork_config["configurable"].get("checkpoint_id", "")),
        fork_end_id=str(end.config["configurable"].get("checkpoint_id", "")),
        overrides=merged,
        before=before,
        after=after,
        diff=diff,
        warnings=tuple(warnings),
    )


def _reachable(graph: Any, start: Sequence[str]) -> frozenset[str]:
    """Nodes the graph can run from ``start`` (the fork's next nodes) on, by its edges."""
    edges: dict[str, set[str]] = {}
    for edge in graph.get_graph().edges:
        edges.setdefault(edge.source, set()).add(edge.target)
    seen: set[str] = set()
    todo = list(start)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(edges.get(node, ()))
    return frozenset(seen)


def unreached_settings(
    overrides: Mapping[str, Any], reachable: frozenset[str], step: int
) -> list[str]:
    """Say which changed settings act at nodes a fork from ``step`` does not run again.

    A replay from a later step keeps what the earlier nodes did: ``--from 3 --set k=5``
    keeps the run's initial top-k (``k`` acts at search), so its evidence changes only
    where a repair loop fills the set. One line per such setting, naming the nodes.
    """
    lines = []
    for key in sorted(overrides):
        nodes = next((n for name, n in SETTING_NODES if key == name or key.startswith(name)), None)
        if nodes is None:
            continue
        missed = sorted(nodes - reachable)
        if not missed:
            continue
        where = ", ".join(missed)
        if nodes <= set(missed):
            lines.append(
                f"{key} acts only at {where}, which ran before step {step}: "
                "the fork cannot change with it (replay --from 0 to run it again)"
            )
        else:
            lines.append(
                f"{key} acts at {where}, which ran before step {step}: the fork keeps what "
                f"{where} did (replay --from 0 to run it again with {key})"
            )
    return lines
