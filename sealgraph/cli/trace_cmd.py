"""``sealgraph trace`` and ``replay``: read a checkpointed run back, and fork it.

``trace`` prints a run as a readable timeline (or its events as JSON, or the
full state at one checkpoint). ``replay`` forks a run at a checkpoint with
changed config and shows how its evidence and answer differ from the original;
the fork is a new branch of the same thread and the original is left untouched.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sealgraph.cli._env import add_lexicon_argument
from sealgraph.terminal import one_line

_TRACE_DESCRIPTION = """\
Print the run of THREAD as a timeline: per step the node, ledger changes, gaps,
micro-queries, candidates with their S(c) components, swaps and refusals with
reasons, packing decisions and the answer. --json prints the events as a JSON
array; --at STEP prints the full state at the checkpoint of that step. --html FILE
writes the run (or, with --at, the run up to that step) as one self-contained
HTML page instead: the evidence slots across loops with every swap and its S(c)
terms, gaps and micro-queries, refusals, packing and the cited answer."""

_REPLAY_DESCRIPTION = """\
Fork THREAD at the checkpoint of --from STEP with config overrides (--set k=5,
--set epsilon=0.1, --set max_loops=4, ...), run it on as a new branch of the same
thread, and print where its evidence differs from the original (added and
removed passages, answer before and after). The fork always starts from the
original run, whose checkpoints are not modified; `sealgraph trace THREAD
--checkpoint ID` shows a fork."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``trace`` and ``replay`` subcommands."""
    trace = subparsers.add_parser(
        "trace",
        help="show a checkpointed run as a timeline",
        description=_TRACE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    trace.add_argument("thread", metavar="THREAD", help="thread id of the run")
    _add_db(trace)
    output = trace.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the events as a JSON array")
    trace.add_argument(
        "--at", type=int, metavar="STEP", help="show the full state at the checkpoint of STEP"
    )
    output.add_argument(
        "--html",
        metavar="FILE",
        help="write the run as one self-contained HTML page to FILE (no script, no "
        "external load; opens from disk)",
    )
    trace.add_argument(
        "--checkpoint",
        metavar="ID",
        help="show the branch ending at this checkpoint (a replay) instead of the run",
    )
    trace.set_defaults(func=run_trace)

    replay = subparsers.add_parser(
        "replay",
        help="fork a run at a step with changed config and compare",
        description=_REPLAY_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("thread", metavar="THREAD", help="thread id of the run")
    replay.add_argument(
        "--from",
        dest="from_step",
        type=int,
        required=True,
        metavar="STEP",
        help="checkpoint step to fork at",
    )
    replay.add_argument(
        "--set",
        action="append",
        default=[],
        dest="overrides",
        metavar="KEY=VALUE",
        help="config override for the fork, e.g. k=5 (repeatable)",
    )
    _add_db(replay)
    replay.add_argument(
        "--index",
        metavar="DIR",
        help="index directory (default: the run's own; $SEALGRAPH_INDEX for a run that "
        "recorded none)",
    )
    add_lexicon_argument(replay)
    replay.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    replay.set_defaults(func=run_replay)


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH|URL",
        help="checkpoint store: SQLite file or postgresql:// URL (default: user data dir)",
    )


def run_trace(args: argparse.Namespace) -> int:
    """Print a run's timeline, its events, or its state at one step."""
    from sealgraph.runs.branches import branch_ending_at, snapshot_at, thread_branches
    from sealgraph.runs.checkpointers import open_checkpointer
    from sealgraph.runs.threads import read_origin, reader_graph, validate_thread_id
    from sealgraph.runs.timeline import render_timeline, state_json

    thread_id = validate_thread_id(args.thread)
    with open_checkpointer(args.db, create=False) as checkpointer:
        origin = read_origin(checkpointer, thread_id)
        graph = reader_graph(checkpointer)
        main, forks = thread_branches(graph, thread_id)
        branch = branch_ending_at(graph, thread_id, args.checkpoint) if args.checkpoint else main
    if args.html is not None:
        snapshot = snapshot_at(branch, args.at, thread_id) if args.at is not None else branch.end
        path = _write_html(args, origin, branch, snapshot)
        print(one_line(f"wrote {path}"))
        return 0
    if args.at is not None:
        snapshot = snapshot_at(branch, args.at, thread_id)
        view = {
            "thread_id": thread_id,
            "step": int((snapshot.metadata or {}).get("step", -1)),
            "source": (snapshot.metadata or {}).get("source"),
            "checkpoint_id": snapshot.config["configurable"].get("checkpoint_id"),
            "next": list(snapshot.next),
            "values": snapshot.values,
        }
        print(state_json(view))
        return 0
    end = branch.end
    values = end.values
    events = list(values.get("seal_log") or [])
    if args.json:
        print(json.dumps(events, ensure_ascii=False, default=str))
        return 0
    status = "finished" if not end.next else f"stopped before {', '.join(end.next)}"
    what = "run" if branch.forked_at is None else f"replay forked at step {branch.forked_at}"
    lines = [f"thread {thread_id}: {what}, {status} (index {origin.index})"]
    if branch.overrides:
        lines.append(f"config overrides: {json.dumps(branch.overrides, sort_keys=True)}")
    print("\n".join(map(one_line, lines)))
    print(
        render_timeline(
            events,
            question=values.get("question"),
            answer=values.get("answer") if not end.next else None,
        )
    )
    others = [b for b in [main, *forks] if b.end_id != branch.end_id]
    if others:
        print()
        print("other branches (show one with --checkpoint ID):")
        for other in others:
            label = "the run" if other.forked_at is None else f"replay from step {other.forked_at}"
            overrides = json.dumps(other.overrides, sort_keys=True)
            print(one_line(f"  {other.end_id}  {label}, config {overrides}"))
    return 0


def _write_html(args: argparse.Namespace, origin: Any, branch: Any, snapshot: Any) -> str:
    # The page of one checkpoint of a branch: its state, its events so far, and the
    # config the branch ran with (read from the database: never trusted). It never
    # lands on the run database nor inside the run's index.
    from sealgraph.index._registry import is_index_address
    from sealgraph.outputs import Inputs
    from sealgraph.paths import default_db_path
    from sealgraph.runs.checkpointers import is_postgres_conninfo, is_postgres_url
    from sealgraph.runs.page import write_run_page

    thread_id = args.thread
    step = int((snapshot.metadata or {}).get("step", -1))
    what = "run" if branch.forked_at is None else f"replay forked at step {branch.forked_at}"
    status = "finished" if not snapshot.next else f"stopped before {', '.join(snapshot.next)}"
    facts: dict[str, Any] = {
        "thread": thread_id,
        "branch": what,
        "checkpoint": f"step {step}, {status}",
        "index": origin.index or "(not recorded)",
        "embedder": _index_embedder(origin.index),
    }
    if branch.overrides:
        facts["overrides"] = json.dumps(branch.overrides, sort_keys=True)
    index = origin.index if origin.index and not is_index_address(origin.index) else None
    db = args.db or default_db_path()
    on_disk = not (is_postgres_url(db) or is_postgres_conninfo(db))
    inputs = Inputs.of(databases=[db] if on_disk else [], folders=[(index, "the run's index")])
    path = write_run_page(
        args.html,
        snapshot.values,
        inputs=inputs,
        title=f"sealgraph {what}",
        facts=facts,
        config=_run_config(branch.overrides),
    )
    return str(path)


def _run_config(overrides: dict[str, Any]) -> dict[str, Any] | None:
    # The config the run used: defaults and its recorded overrides (None when they
    # no longer apply: the page then shows the overrides as recorded, only).
    from sealgraph.config import SealConfig
    from sealgraph.errors import SealgraphError

    try:
        return SealConfig().override(overrides, trusted=False).to_dict()
    except (SealgraphError, ValueError):
        return None


def _index_embedder(index: str | None) -> str:
    # The embedder of the run's index, from its manifest ("unknown" when it is gone).
    from sealgraph.errors import SealgraphError
    from sealgraph.index import read_index_manifest

    if not index:
        return "unknown"
    try:
        # A Qdrant index keeps its manifest in the collection (an in-memory one is gone).
        embedder = read_index_manifest(index).get("embedder")
    except (SealgraphError, OSError):
        return "unknown (index not readable)"
    if not embedder:
        return "none (lexical only)"
    return str(embedder.get("name", "unknown")) if isinstance(embedder, dict) else str(embedder)


def run_replay(args: argparse.Namespace) -> int:
    """Fork a run at a step with config overrides and print the differences."""
    from sealgraph.cli._env import run_index_arg
    from sealgraph.config import SealConfig
    from sealgraph.runs.checkpointers import open_checkpointer
    from sealgraph.runs.replay import fork_run
    from sealgraph.runs.threads import (
        graph_for_thread,
        parse_overrides,
        run_config,
        validate_thread_id,
    )
    from sealgraph.runs.timeline import progress_line

    thread_id = validate_thread_id(args.thread)
    overrides = parse_overrides(args.overrides)
    SealConfig().override(overrides)  # the user's own: a bad key or value fails here

    def progress(node: str, events: list[dict[str, Any]]) -> None:
        print(progress_line(node, events), file=sys.stderr, flush=True)

    with open_checkpointer(args.db, create=False) as checkpointer:
        index = run_index_arg(checkpointer, thread_id, args.index)
        graph, origin = graph_for_thread(
            checkpointer, thread_id, index_override=index, extra_overrides=overrides
        )
        config = run_config(
            thread_id, index=origin.index, llm=origin.llm, overrides=origin.overrides
        )
        result = fork_run(graph, config, args.from_step, overrides, on_node=progress)
    for warning in result.warnings:
        print(one_line(f"sealgraph: warning: {warning}"), file=sys.stderr, flush=True)
    diff = result.diff
    if args.json:
        out = {
            "thread_id": thread_id,
            "from_step": result.from_step,
            "fork_checkpoint_id": result.fork_checkpoint_id,
            "fork_end_id": result.fork_end_id,
            "overrides": result.overrides,
            "warnings": list(result.warnings),
            **diff.to_dict(),
            "evidence_before": [e.get("chunk_id") for e in result.before.get("evidence") or []],
            "evidence_after": [e.get("chunk_id") for e in result.after.get("evidence") or []],
            "loops_before": result.before.get("loops", 0),
            "loops_after": result.after.get("loops", 0),
        }
        print(json.dumps(out, ensure_ascii=False))
        return 0
    overrides = json.dumps(result.overrides, sort_keys=True)
    lines = [
        f"replayed thread {thread_id} from step {result.from_step} with config {overrides}",
        "evidence:" if diff.added or diff.removed else "evidence: unchanged",
        *(f"  + {change.chunk_id}  {change.title}" for change in diff.added),
        *(f"  - {change.chunk_id}  {change.title}" for change in diff.removed),
        f"loops: {result.before.get('loops', 0)} -> {result.after.get('loops', 0)}",
        f"answer before: {diff.answer_before}",
        f"answer after:  {diff.answer_after}",
        f"trace the fork with: sealgraph trace {thread_id} --checkpoint {result.fork_end_id}",
    ]
    for line in lines:  # ids and titles come from documents: one line each, whatever they hold
        print(one_line(line))
    return 0
