"""Checkpointed runs: thread ids, run configs, and rebuilding the graph of a stored run.

A run is one LangGraph thread. ``ask`` stores what is needed to rebuild its graph
in the checkpoint metadata (which LangGraph persists with every checkpoint):

* ``sealgraph_index``: the index directory;
* ``sealgraph_llm``: whether the LLM reasoner was used;
* ``sealgraph_overrides``: the run's config overrides (JSON).

The overrides are the config the run's graph is built with; the metadata lets
``resume``, ``trace`` and ``replay`` rebuild exactly that graph (the LLM settings
are read when the graph is built) even before the first node ran.

A run database is data: what it records is validated as a stranger's would be
(no lexicon module imported), and the LLM endpoint a run used (``llm.base_url``,
``llm.api_key_env``) is never taken from it: continuing an LLM run against a
recorded endpoint needs the endpoint given again (``--set llm.base_url=URL``),
so a database from elsewhere cannot send your API key, or another secret named
as one, to an address of its choosing.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NoReturn

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.checkpoint.base import BaseCheckpointSaver

from sealgraph.config import SealConfig, coerce_value, flatten_overrides, parse_set_args
from sealgraph.errors import CheckpointError, InputError
from sealgraph.index.protocol import SearchIndex
from sealgraph.runs.checkpointers import claim_thread

__all__ = [
    "INDEX_KEY",
    "LLM_KEY",
    "OUTPUT_KEYS",
    "OVERRIDES_KEY",
    "SLOW_NODE_ENV",
    "SLOW_SECONDS_ENV",
    "RunOrigin",
    "SlowNodeHook",
    "build_run_graph",
    "claim_thread",
    "graph_for_thread",
    "hook_callbacks",
    "new_thread_id",
    "parse_overrides",
    "read_origin",
    "reader_graph",
    "run_config",
    "run_output",
    "stream_run",
    "thread_exists",
    "unpinned",
    "validate_thread_id",
]

INDEX_KEY = "sealgraph_index"
"""Checkpoint-metadata key holding the index directory of a run."""

LLM_KEY = "sealgraph_llm"
"""Checkpoint-metadata key telling whether a run used the LLM reasoner."""

OVERRIDES_KEY = "sealgraph_overrides"
"""Checkpoint-metadata key holding the run's config overrides as a JSON object."""

OUTPUT_KEYS = (
    "answer",
    "short_answer",
    "declined",
    "missing",
    "answerability",
    "citations",
    "evidence",
    "context",
    "context_tokens",
    "loops",
    "gaps",
)
"""State keys that make up a run's result (besides its ``seal_log``)."""

SLOW_NODE_ENV = "SEALGRAPH_TEST_SLOW_NODE"
"""Test hook: name of a node that sleeps before it runs (kill-and-resume tests)."""

SLOW_SECONDS_ENV = "SEALGRAPH_TEST_SLOW_SECONDS"
"""Test hook: how long that node sleeps (seconds, default 30)."""

_MAX_THREAD_ID = 200


@dataclass(frozen=True, slots=True)
class RunOrigin:
    """What a stored run was made with: enough to rebuild its graph."""

    thread_id: str
    """The run's thread id."""
    index: str | None
    """Index directory recorded by ``ask`` (None for runs made without it)."""
    llm: bool
    """Whether the run used the LLM reasoner."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """Config overrides of the run (the state's ``config``)."""


def parse_overrides(pairs: list[str] | None) -> dict[str, Any]:
    """Parse ``--set key=value`` pairs; values that read as JSON (numbers, booleans) are converted.

    Raises:
        ConfigError: A pair without ``=``.

    """
    return {key: coerce_value(value) for key, value in parse_set_args(pairs).items()}


def new_thread_id() -> str:
    """Return a fresh, sortable thread id such as ``20250301-142233-5f2c9a``."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{uuid.uuid4().hex[:6]}"


def validate_thread_id(thread_id: object) -> str:
    """Return the thread id stripped, or raise :class:`InputError` when unusable."""
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise InputError("the thread id is empty")
    tid = thread_id.strip()
    if len(tid) > _MAX_THREAD_ID or any(ch.isspace() or ord(ch) < 32 for ch in tid):
        raise InputError(
            f"invalid thread id {thread_id!r}: use at most {_MAX_THREAD_ID} non-space characters"
        )
    return tid


def run_config(
    thread_id: str,
    *,
    index: str | os.PathLike[str] | None = None,
    llm: bool = False,
    overrides: Mapping[str, Any] | None = None,
    callbacks: list[Any] | None = None,
    checkpoint_id: str | None = None,
) -> dict[str, Any]:
    """Return the LangGraph config of a run: thread id plus the metadata ``ask`` records.

    Args:
        thread_id: The run's thread id.
        index: Index directory, recorded as :data:`INDEX_KEY`.
        llm: Whether the LLM reasoner is used, recorded as :data:`LLM_KEY`.
        overrides: The run's config overrides, recorded (as JSON) as :data:`OVERRIDES_KEY`.
        callbacks: LangChain callbacks of the run.
        checkpoint_id: Pins the checkpoint a continued run starts from.

    """
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    metadata: dict[str, Any] = {LLM_KEY: bool(llm)}
    if index is not None:
        from sealgraph.index import user_index_path

        metadata[INDEX_KEY] = user_index_path(os.fspath(index), resolve=True)
    if overrides is not None:
        metadata[OVERRIDES_KEY] = json.dumps(dict(overrides), sort_keys=True)
    config: dict[str, Any] = {"configurable": configurable, "metadata": metadata}
    if callbacks:
        config["callbacks"] = callbacks
    return config


def thread_exists(checkpointer: BaseCheckpointSaver, thread_id: str) -> bool:
    """Return True when the store holds at least one checkpoint of ``thread_id``."""
    thread = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    return checkpointer.get_tuple(thread) is not None


def read_origin(checkpointer: BaseCheckpointSaver, thread_id: str) -> RunOrigin:
    """Read what ``thread_id`` was run with.

    The metadata comes from the thread's first checkpoint (the input, written by
    ``ask`` before any node ran), so it is the run's own whatever happened later.

    Raises:
        CheckpointError: The store has no checkpoint of that thread.

    """
    thread = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    items = list(checkpointer.list(thread))  # newest first
    if not items:
        raise CheckpointError(f"unknown thread {thread_id!r}: no checkpoint of it in this database")
    metadata = next(
        (item.metadata for item in reversed(items) if (item.metadata or {}).get(INDEX_KEY)),
        items[-1].metadata or {},
    )
    overrides: Any = None
    raw = metadata.get(OVERRIDES_KEY)
    if isinstance(raw, str):
        try:
            overrides = json.loads(raw)
        except (ValueError, RecursionError):
            overrides = None
    if not isinstance(overrides, Mapping):  # a run made from Python (or before 0.2): the state
        values = items[0].checkpoint.get("channel_values") or {}
        overrides = values.get("config") if isinstance(values.get("config"), Mapping) else {}
    index = metadata.get(INDEX_KEY)
    return RunOrigin(
        thread_id=thread_id,
        index=str(index) if index else None,
        llm=bool(metadata.get(LLM_KEY, False)),
        overrides=dict(overrides),
    )


def build_run_graph(
    index: str | os.PathLike[str] | SearchIndex,
    *,
    llm: bool = False,
    overrides: Mapping[str, Any] | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    trusted: bool = True,
    config: SealConfig | None = None,
):
    """Build the graph of a run: its index, reasoner and base config.

    ``trusted``: the overrides are the user's own (flags, the server's
    environment); False for overrides read from data, which may not import a
    lexicon module (see :meth:`SealConfig.from_dict`). ``config``: the run's config
    already made from its overrides (the command line validates them once, before
    anything runs); then ``overrides`` are not read again.

    Raises:
        ConfigError: Bad overrides.
        IndexCorruptError: No index (or a damaged one) at ``index``.

    """
    from sealgraph.graph.builder import build_graph

    if config is None:
        config = SealConfig().override(dict(overrides or {}), trusted=trusted)
    if isinstance(index, (str, os.PathLike)):
        from sealgraph.index import load_index

        index = load_index(index)
    return build_graph(
        index, llm="openai" if llm else None, config=config, checkpointer=checkpointer
    )


def graph_for_thread(
    checkpointer: BaseCheckpointSaver,
    thread_id: str,
    *,
    index_override: str | os.PathLike[str] | None = None,
    extra_overrides: Mapping[str, Any] | None = None,
    claim: bool = True,
):
    """Rebuild the graph a stored run used, bound to ``checkpointer``.

    The thread is claimed for the caller (:func:`claim_thread`) until the
    checkpointer is closed, as ``ask`` claims a new one: ``resume`` and ``replay``
    write into it, and two runs never write one thread at once.

    Args:
        checkpointer: The store holding the run.
        thread_id: The run's thread id.
        index_override: Use this index directory instead of the recorded one.
        extra_overrides: Config overrides applied on top of the run's when the
            graph is built (a replay's ``--set``, so that ``llm.*`` changes reach
            the reasoner too).
        claim: Claim the thread (False to only read it).

    Returns:
        ``(graph, origin)``.

    Raises:
        CheckpointError: Unknown thread, or another process is running it.
        InputError: The run recorded no index and none was given.

    """
    origin = read_origin(checkpointer, thread_id)
    if claim:
        claim_thread(checkpointer, thread_id)
    index = str(index_override) if index_override else origin.index
    if not index:
        raise InputError(f"thread {thread_id!r} does not record its index; pass --index DIR")
    origin = RunOrigin(thread_id, index, origin.llm, origin.overrides)
    overrides = _continued_overrides(origin, dict(extra_overrides or {}))
    # The recorded part is data; the user's own part (extra_overrides) was validated
    # as theirs by the caller: a module path they name was imported then.
    graph = build_run_graph(
        index, llm=origin.llm, overrides=overrides, checkpointer=checkpointer, trusted=False
    )
    return graph, origin


ENDPOINT_KEYS = ("llm.base_url", "llm.api_key_env")
"""Settings that say where an LLM run sends its requests and which secret it sends:
never taken from a run database (see the module docstring)."""


def _continued_overrides(origin: RunOrigin, given: dict[str, Any]) -> dict[str, Any]:
    """Return the overrides a continued run uses: the recorded ones, the user's on top.

    Raises:
        InputError: The run sent its LLM steps to a recorded endpoint that the user
            did not give again.

    """
    recorded = flatten_overrides(origin.overrides)
    mine = flatten_overrides(given)
    default = flatten_overrides(SealConfig().to_dict())
    endpoint = {
        key: recorded[key]
        for key in ENDPOINT_KEYS
        if key in recorded and recorded[key] != default.get(key)
    }
    missing = {k: v for k, v in endpoint.items() if mine.get(k) != v}
    if origin.llm and missing:
        shown = " ".join(f"--set {k}={v}" for k, v in missing.items())
        raise InputError(
            f"thread {origin.thread_id!r} ran its LLM steps with {shown}; sealgraph does not "
            f"send your API key where a run database says: give {shown} again to continue it"
        )
    kept = {k: v for k, v in recorded.items() if k not in ENDPOINT_KEYS}
    return {**kept, **mine}


def _refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise InputError("this graph only reads stored runs; rebuild it with an index to run it")


class _UnusableIndex(SearchIndex):
    """Stands in for the index in a graph that only reads stored runs.

    It is a :class:`SearchIndex` (so :func:`build_graph` accepts it) whose methods
    all raise :class:`InputError`; its properties are left empty (None), because
    the protocol check reads them. A run's first node (search) calls a method
    first, so running such a graph fails with that error.
    """

    get_chunk = get_chunks = iter_chunks = doc_chunks = neighbors = _refuse
    titles = headings = lookup_title = _refuse
    search_lexical = search_dense = search_hybrid = score_lexical = _refuse
    embed_query = embed_queries = embed_texts = chunk_vectors = _refuse


def reader_graph(checkpointer: BaseCheckpointSaver):
    """Return a graph that reads the runs in ``checkpointer`` without loading any index.

    Reading a run's state (``get_state``, ``get_state_history``) needs the graph's
    channels but never its nodes, so ``trace`` works even when the run's index
    has since been moved or deleted.
    """
    from sealgraph.graph.builder import build_graph

    return build_graph(_UnusableIndex(), checkpointer=checkpointer)


def run_output(values: Mapping[str, Any], thread_id: str | None = None) -> dict[str, Any]:
    """Return the result of a run as ``--json`` prints it: :data:`OUTPUT_KEYS` plus ``thread_id``."""
    defaults: dict[str, Any] = {
        "answer": "",
        "short_answer": "",
        "declined": False,
        "missing": "",
        "answerability": None,
        "citations": [],
        "evidence": [],
        "context": "",
        "context_tokens": 0,
        "loops": 0,
        "gaps": [],
    }
    out = {key: values.get(key, defaults[key]) for key in OUTPUT_KEYS}
    out["citations"] = [
        {
            "n": c.get("n"),
            "chunk_id": c.get("chunk_id"),
            "title": c.get("title"),
            "text": c.get("text"),
        }
        for c in out["citations"] or []
    ]
    if thread_id is not None:
        out["thread_id"] = thread_id
    return out


def unpinned(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` without a pinned checkpoint id: reads then see the thread's newest checkpoint."""
    configurable = {k: v for k, v in config["configurable"].items() if k != "checkpoint_id"}
    return {**dict(config), "configurable": configurable}


def has_work_left(snapshot: Any) -> bool:
    """Whether a run's state still has work: a next node, or a task whose writes wait.

    A process killed after a node's writes were saved but before the checkpoint that
    applies them leaves a snapshot whose ``next`` is empty and whose ``tasks`` are not:
    the run is not finished, and continuing it applies those writes and goes on.
    """
    return bool(snapshot.next or snapshot.tasks)


def stream_run(
    graph: Any,
    run_input: Mapping[str, Any] | None,
    config: Mapping[str, Any],
    *,
    on_node: Callable[[str, list[dict[str, Any]]], None] | None = None,
    interrupt_before: str | list[str] | None = None,
) -> None:
    """Run (or continue, with ``run_input=None``) the graph, reporting every finished node.

    Checkpoints are written synchronously (``durability="sync"``): when a node's
    update has been reported, it is already on disk, so a run killed at any point
    resumes from its last finished node.

    Args:
        graph: A compiled sealgraph graph with a checkpointer.
        run_input: ``{"question": ...}``, or None to continue.
        config: The run config (see :func:`run_config`).
        on_node: Called with the node name and the events it appended.
        interrupt_before: Nodes to pause before (``"*"`` for all).

    """
    kwargs: dict[str, Any] = {"stream_mode": "updates", "durability": "sync"}
    if interrupt_before is not None:
        kwargs["interrupt_before"] = interrupt_before
    for chunk in graph.stream(run_input, config, **kwargs):
        for node, update in chunk.items():
            if node.startswith("__"):
                continue
            events = list((update or {}).get("seal_log", [])) if isinstance(update, Mapping) else []
            if on_node is not None:
                on_node(node, events)


class SlowNodeHook(BaseCallbackHandler):
    """Test hook: sleep when a given node starts, so a test can kill the run mid-loop."""

    def __init__(self, node: str, seconds: float) -> None:
        self.node = node
        self.seconds = seconds

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Sleep when the node's own run starts (not its inner runnables)."""
        if (metadata or {}).get("langgraph_node") == self.node and kwargs.get("name") == self.node:
            time.sleep(self.seconds)


def hook_callbacks(environ: Mapping[str, str] | None = None) -> list[Any]:
    """Return the test hooks enabled by :data:`SLOW_NODE_ENV` (none in normal use)."""
    env = os.environ if environ is None else environ
    node = env.get(SLOW_NODE_ENV, "").strip()
    if not node:
        return []
    try:
        seconds = float(env.get(SLOW_SECONDS_ENV, "30"))
    except ValueError:
        seconds = 30.0
    return [SlowNodeHook(node, seconds)]
