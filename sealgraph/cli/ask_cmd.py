"""``sealgraph ask``, ``resume`` and ``demo``: answer questions, with a checkpointed audit trail.

``ask`` streams one progress line per node to stderr as the run happens, then
prints the answer with numbered citations and a short per-step trace (or, with
``--json``, one JSON object and nothing else on stdout, whose ``llm_fallbacks``
lists the LLM steps that fell back to the offline reasoner and why; without
``--json`` such fallbacks are summed up in one warning line on stderr). Every run is
checkpointed (SQLite by default, PostgreSQL with ``--db postgresql://...``) under
a thread id, so it can be traced, replayed and resumed later.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from sealgraph.cli._env import (
    INDEX_ENV,
    add_index_argument,
    add_lexicon_argument,
    index_arg,
    run_index_arg,
)
from sealgraph.cli._questions import read_questions
from sealgraph.errors import InputError
from sealgraph.terminal import one_line

EXIT_LLM_FELL_BACK = 3
"""Exit status of an ``ask --llm`` whose answer came (in part) from the offline reasoner:
an LLM step fell back (timeout, bad replies, run deadline), so scripts can tell."""

_ASK_DESCRIPTION = """\
Answer QUESTION over the index in --index DIR (default: $SEALGRAPH_INDEX) with
the SEAL graph (offline by default; --llm uses an OpenAI-compatible model
configured with --set llm.*).
Progress goes to stderr, one line per node; the answer, its citations and a
per-step trace go to stdout (or one JSON object with --json, whose llm_fallbacks
lists the LLM steps that fell back to the offline reasoner and why, and llm_circuit
the permanent LLM failure, if any, after which no LLM call was made). The run is
checkpointed under a thread id (printed as "thread: ID" when generated) in --db:
a SQLite file (default: runs.sqlite in the user data dir) or a postgresql:// URL.
--step pauses before every node: Enter runs it, s shows the state, q stops
(resume later with `sealgraph resume ID`)."""

_RESUME_DESCRIPTION = """\
Continue a stopped or interrupted run from its last checkpoint and print its
result like `ask` does. A finished run is printed again as it is."""

_DEMO_DESCRIPTION = """\
Index the example corpus shipped with sealgraph (cached in the user cache dir,
rebuilt only when the corpus changed) and answer every example question offline,
printing each answer, its citations and a one-line-per-step trace."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``ask``, ``resume`` and ``demo`` subcommands."""
    ask = subparsers.add_parser(
        "ask",
        help="answer a question over an index (checkpointed)",
        description=_ASK_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ask.add_argument("question", metavar="QUESTION", nargs="?", help="the question to answer")
    ask.add_argument(
        "--questions",
        metavar="FILE",
        help="answer many questions in one process (the index and models are loaded once): "
        "one question a line, or JSON Lines with id and question; - reads standard input. "
        "Each question is its own checkpointed run; with --json, one object a line",
    )
    add_index_argument(ask, "index directory")
    ask.add_argument("--k", type=int, metavar="N", help="evidence-set size (config k)")
    ask.add_argument("--max-loops", type=int, metavar="L", help="loop budget (config max_loops)")
    ask.add_argument("--budget", type=int, metavar="TOKENS", help="context token budget")
    _add_set(ask)
    ask.add_argument("--llm", action="store_true", help="use the LLM reasoner (langchain-openai)")
    _add_db(ask)
    ask.add_argument("--thread", metavar="ID", help="thread id of the run (default: a new one)")
    _add_output(ask)
    ask.set_defaults(func=run_ask)

    resume = subparsers.add_parser(
        "resume",
        help="continue a stopped or interrupted run",
        description=_RESUME_DESCRIPTION,
    )
    resume.add_argument("thread", metavar="THREAD", help="thread id of the run")
    _add_db(resume)
    resume.add_argument(
        "--index",
        metavar="DIR",
        help=f"index directory (default: the run's own; ${INDEX_ENV} for a run that recorded none)",
    )
    add_lexicon_argument(resume)
    _add_set(
        resume,
        "settings to continue with, on top of the run's own; an LLM run's endpoint "
        "(llm.base_url, llm.api_key_env) is never read from the database: give it again",
    )
    _add_output(resume)
    resume.set_defaults(func=run_resume)

    demo = subparsers.add_parser(
        "demo",
        help="answer the example questions over the example corpus",
        description=_DEMO_DESCRIPTION,
    )
    demo.add_argument(
        "--index",
        metavar="DIR",
        help=f"where to keep the demo index (default: user cache; ${INDEX_ENV} is not used)",
    )
    demo.add_argument(
        "--embedder",
        default="auto",
        metavar="SPEC",
        help="embedder used when the demo index is built (auto, none, local; default auto)",
    )
    demo.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    demo.set_defaults(func=run_demo)


def _add_set(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        dest="overrides",
        metavar="KEY=VALUE",
        help=help or "config override, e.g. utility.novelty=0.2 or llm.base_url=URL (repeatable)",
    )


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH|URL",
        help="checkpoint store: SQLite file or postgresql:// URL (default: user data dir)",
    )


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--step", action="store_true", help="pause before every node")


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _progress(node: str, events: list[dict[str, Any]]) -> None:
    from sealgraph.runs.timeline import progress_line

    _err(progress_line(node, events))


def _read_line(prompt: str) -> str | None:
    print(prompt, end="", file=sys.stderr, flush=True)
    stream = sys.stdin
    line = stream.readline() if stream is not None and not stream.closed else ""
    if not (stream is not None and not stream.closed and stream.isatty()):
        print(file=sys.stderr, flush=True)  # piped input is not echoed: end the prompt line
    return line if line else None


def resume_command(thread_id: str, db: str | None) -> str:
    """Return the shell command that continues ``thread_id``."""
    command = f"sealgraph resume {shlex.quote(thread_id)}"
    if db:
        command += f" --db {shlex.quote(db)}"
    return command


def _checked_overrides(pairs: list[str]) -> dict[str, Any]:
    from sealgraph.config import SealConfig
    from sealgraph.runs.threads import parse_overrides

    overrides = parse_overrides(pairs)
    SealConfig().override(overrides)  # the user's own: a bad key or value fails here
    return overrides


def _ask_overrides(args: argparse.Namespace) -> tuple[dict[str, Any], Any]:
    """Return the run's overrides (recorded with the run) and the config they make.

    Validated once, here, before anything runs: a bad key or value is a one-line error.
    """
    from sealgraph.config import SealConfig
    from sealgraph.runs.threads import parse_overrides

    overrides = parse_overrides(args.overrides)
    for key, value in (("k", args.k), ("max_loops", args.max_loops), ("budget", args.budget)):
        if value is not None:
            overrides[key] = value
    return overrides, SealConfig().override(overrides)


def run_ask(args: argparse.Namespace) -> int:
    """Answer one question (or each of ``--questions``) and checkpoint the run."""
    from sealgraph.index import load_index, user_index_path
    from sealgraph.nodes.search import validate_question
    from sealgraph.runs.checkpointers import open_checkpointer
    from sealgraph.runs.threads import build_run_graph, new_thread_id, validate_thread_id

    batch = args.questions is not None
    if batch == (args.question is not None):
        raise InputError("give one QUESTION or --questions FILE (- for standard input)")
    if batch and (args.thread is not None or args.step):
        flag = "--thread" if args.thread is not None else "--step"
        raise InputError(f"{flag} is for one question; with --questions each is its own run")
    question = None if batch else validate_question(args.question)
    overrides, config = _ask_overrides(args)
    index_dir = user_index_path(index_arg(args))
    index = load_index(index_dir)
    thread_id = validate_thread_id(args.thread) if args.thread is not None else new_thread_id()
    with open_checkpointer(args.db) as checkpointer:
        graph = build_run_graph(index, llm=args.llm, config=config, checkpointer=checkpointer)
        run = _AskRun(graph, checkpointer, index_dir, overrides, args)
        if question is not None:
            return run.one(question, thread_id, announce=args.thread is None)
        return run.many(args.questions)


class _AskRun:
    """The runs of one ``ask`` command: one graph, one store, one or many questions."""

    def __init__(
        self,
        graph: Any,
        checkpointer: Any,
        index_dir: str,
        overrides: dict[str, Any],
        args: argparse.Namespace,
    ) -> None:
        self.graph = graph
        self.checkpointer = checkpointer
        self.index_dir = index_dir
        self.overrides = overrides
        self.args = args

    def _config(self, thread_id: str) -> dict[str, Any]:
        from sealgraph.runs.checkpointers import describe_db
        from sealgraph.runs.threads import claim_thread, hook_callbacks, run_config, thread_exists

        claim_thread(self.checkpointer, thread_id)  # held until the store closes
        if thread_exists(self.checkpointer, thread_id):
            raise InputError(
                f"thread {thread_id!r} already exists in {describe_db(self.args.db)}; continue "
                f"it with `{resume_command(thread_id, self.args.db)}` or choose another --thread"
            )
        # The overrides are the graph's own config (and recorded in the run's metadata).
        return run_config(
            thread_id,
            index=self.index_dir,
            llm=self.args.llm,
            overrides=self.overrides,
            callbacks=hook_callbacks(),
        )

    def one(self, question: str, thread_id: str, *, announce: bool) -> int:
        config = self._config(thread_id)
        if announce:
            _err(f"thread: {one_line(thread_id)}")
        return _drive(self.graph, {"question": question}, config, thread_id, self.args)

    def many(self, source: str) -> int:
        """Answer each question of ``source``; exit 1 when a line was not a question."""
        from sealgraph.runs.threads import new_thread_id

        failed = fell_back = 0
        for number, line in enumerate(read_questions(source)):
            if line.error:
                failed += 1
                _err(f"sealgraph: error: {one_line(line.error)}")
                if self.args.json:
                    print(json.dumps({"id": line.id, "error": line.error}, ensure_ascii=False))
                continue
            if number and not self.args.json:
                print()
            thread_id = new_thread_id()
            if not self.args.json:
                print(one_line(f"Q {line.id}: {line.question}"))
            _err(f"{one_line(line.id)}: thread {thread_id}")
            status = _drive(
                self.graph,
                {"question": line.question},
                self._config(thread_id),
                thread_id,
                self.args,
                extra={"id": line.id, "question": line.question},
            )
            fell_back += status == EXIT_LLM_FELL_BACK
        if failed:
            return 1
        return EXIT_LLM_FELL_BACK if fell_back else 0


def run_resume(args: argparse.Namespace) -> int:
    """Continue a run from the last checkpoint of its main branch."""
    from sealgraph.runs.branches import thread_branches
    from sealgraph.runs.checkpointers import open_checkpointer
    from sealgraph.runs.threads import (
        graph_for_thread,
        hook_callbacks,
        run_config,
        validate_thread_id,
    )

    thread_id = validate_thread_id(args.thread)
    with open_checkpointer(args.db, create=False) as checkpointer:
        index = run_index_arg(checkpointer, thread_id, args.index)
        graph, origin = graph_for_thread(
            checkpointer,
            thread_id,
            index_override=index,
            extra_overrides=_checked_overrides(args.overrides),
        )
        main, _ = thread_branches(graph, thread_id)
        latest = graph.get_state({"configurable": {"thread_id": thread_id}})
        # Pin the run's last checkpoint only when a replay wrote newer ones: pinning
        # makes LangGraph fork, which would add a needless checkpoint otherwise.
        pinned = (
            main.end_id if latest.config["configurable"]["checkpoint_id"] != main.end_id else None
        )
        config = run_config(
            thread_id,
            index=origin.index,
            llm=origin.llm,
            overrides=origin.overrides,
            callbacks=hook_callbacks(),
            checkpoint_id=pinned,
        )
        if not main.end.next:
            _err(f"thread {thread_id} had already finished; showing its result")
        return _drive(graph, None, config, thread_id, args)


def _drive(
    graph: Any,
    run_input: Mapping[str, Any] | None,
    config: dict[str, Any],
    thread_id: str,
    args: argparse.Namespace,
    *,
    extra: Mapping[str, Any] | None = None,
) -> int:
    """Run (or continue) the graph, then print the result.

    Returns 0, or :data:`EXIT_LLM_FELL_BACK` when an LLM step of the run fell back to the
    offline reasoner. ``extra`` fields lead the ``--json`` object (a batch's id and question).
    """
    try:
        with _llm_notices(args):
            return _run_graph(graph, run_input, config, thread_id, args, extra)
    except KeyboardInterrupt:
        _err(f"interrupted; resume with: {resume_command(thread_id, args.db)}")
        raise


def _llm_notices(args: argparse.Namespace) -> Any:
    """While an LLM run waits on the model, say so on stderr (nothing for offline runs)."""
    from contextlib import nullcontext

    if not getattr(args, "llm", False):
        return nullcontext()
    from sealgraph.cli._llm_wait import WaitNotices
    from sealgraph.reasoning.llm.waits import listening

    return listening(WaitNotices())


def _run_graph(
    graph: Any,
    run_input: Mapping[str, Any] | None,
    config: dict[str, Any],
    thread_id: str,
    args: argparse.Namespace,
    extra: Mapping[str, Any] | None,
) -> int:
    from sealgraph.runs.branches import thread_branches
    from sealgraph.runs.stepping import run_stepwise
    from sealgraph.runs.threads import has_work_left, stream_run

    if args.step:
        outcome = run_stepwise(
            graph, run_input, config, read_line=_read_line, write=_err, on_node=_progress
        )
        if not outcome.finished:
            _err(f"stopped before {outcome.stopped_before}; thread: {thread_id}")
            _err(f"resume with: {resume_command(thread_id, args.db)}")
            if args.json:
                status = {
                    "thread_id": thread_id,
                    "status": "stopped",
                    "next": outcome.stopped_before,
                    "resume": resume_command(thread_id, args.db),
                }
                print(json.dumps(status, ensure_ascii=False))
            return 0
    elif run_input is not None or has_work_left(graph.get_state(config)):
        stream_run(graph, run_input, config, on_node=_progress)
    main, _ = thread_branches(graph, thread_id)
    values = main.end.values
    _print_result(values, thread_id, as_json=args.json, extra=extra)
    return EXIT_LLM_FELL_BACK if llm_fallbacks(values.get("seal_log") or []) else 0


def llm_fallbacks(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return one ``{"step", "reason", "loop"}`` per LLM step that fell back, in run order.

    ``reason`` is the step's last failure (``"run deadline spent"`` when no call
    was made); offline runs have none.
    """
    out = []
    for e in events:
        if e.get("kind") != "llm_fallback":
            continue
        data = e.get("data") or {}
        out.append(
            {
                "step": str(data.get("step") or e.get("node", "")),
                "reason": str(data.get("reason") or e.get("message", "")),
                "loop": int(e.get("loop", 0)),
            }
        )
    return out


def llm_circuit(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Return ``{"step", "reason", "loop"}`` of the step that opened the run's LLM circuit.

    A permanent failure (refused connection, rejected key, no supported structured
    output method) opens it; every later LLM step then fell back without a call.
    None when it stayed closed.
    """
    for e in events:
        if e.get("kind") == "llm_circuit":
            data = e.get("data") or {}
            step = str(data.get("step") or e.get("node", ""))
            return {
                "step": step,
                "reason": str(data.get("reason", "")),
                "loop": int(e.get("loop", 0)),
            }
    return None


def circuit_warning(circuit: Mapping[str, Any] | None) -> str:
    """Return the stderr warning for an open LLM circuit ('' when it stayed closed)."""
    if not circuit:
        return ""
    return one_line(
        f"sealgraph: warning: LLM circuit opened at {circuit['step']}: {circuit['reason']}; "
        "the remaining LLM steps used the offline reasoner without a call"
    )


def fallback_warning(fallbacks: Sequence[Mapping[str, Any]]) -> str:
    """Return the one-line stderr warning for steps that fell back ('' when none did)."""
    if not fallbacks:
        return ""
    # The last reason of each step name, in order of first appearance: one short line.
    last: dict[str, str] = {}
    for f in fallbacks:
        reason = " ".join(str(f["reason"]).split())
        if reason.startswith("LLM circuit open:"):
            reason = "LLM circuit open"  # its own warning line gives the reason
        last[str(f["step"])] = reason
    reasons = "; ".join(
        f"{step}: {reason if len(reason) <= 80 else reason[:79] + '…'}"
        for step, reason in last.items()
    )
    n = len(fallbacks)
    steps = "LLM step" if n == 1 else "LLM steps"
    return one_line(
        f"sealgraph: warning: {n} {steps} fell back to the offline reasoner ({reasons})"
    )


def _print_result(
    values: Mapping[str, Any],
    thread_id: str,
    *,
    as_json: bool,
    extra: Mapping[str, Any] | None = None,
) -> None:
    from sealgraph.runs.threads import run_output
    from sealgraph.runs.timeline import render_answer, step_lines

    fallbacks = llm_fallbacks(values.get("seal_log") or [])
    circuit = llm_circuit(values.get("seal_log") or [])
    if circuit:
        _err(circuit_warning(circuit))  # a dead endpoint is worth a line even with --json
    if as_json:
        # Fallbacks are in the log too; this list saves a script from digging for them.
        output = {
            **(extra or {}),
            **run_output(values, thread_id),
            "llm_fallbacks": fallbacks,
            "llm_circuit": circuit,
        }
        print(json.dumps(output, ensure_ascii=False))
        return
    if fallbacks:
        _err(fallback_warning(fallbacks))
    print(render_answer(values))
    print()
    print(
        f"Trace (loops: {values.get('loops', 0)}, context: {values.get('context_tokens', 0)} tokens):"
    )
    for line in step_lines(values.get("seal_log") or []):
        print(f"  {line}")


def run_demo(args: argparse.Namespace) -> int:
    """Answer every example question over the (cached) example-corpus index, and score it."""
    from sealgraph.examples import load_questions
    from sealgraph.examples.demo import answer_matches, ensure_demo_index
    from sealgraph.runs.threads import build_run_graph, run_output
    from sealgraph.runs.timeline import step_lines

    index_dir = ensure_demo_index(args.index, embedder=args.embedder)
    graph = build_run_graph(index_dir)
    records = []
    questions = load_questions()
    matched = 0
    for number, item in enumerate(questions, start=1):
        values = graph.invoke({"question": item["question"]})
        trace = step_lines(values.get("seal_log") or [])
        match = answer_matches(values, item["answer"])
        matched += match
        if args.json:
            records.append(
                {
                    "id": item["id"],
                    "question": item["question"],
                    "expected": item["answer"],
                    "matches": match,
                    **run_output(values),
                    "trace": trace,
                }
            )
            continue
        if number > 1:
            print()
        print(one_line(f"Q {item['id']}: {item['question']}"))
        print(f"A: {values.get('answer', '')}")
        mark = "matches" if match else "does NOT match"
        print(f"   expected: {item['answer']} ({mark})")
        for c in values.get("citations") or []:
            print(one_line(f"   [{c.get('n')}] {c.get('title', '')}: {c.get('chunk_id', '')}"))
        print("   steps:")
        for line in trace:
            print(f"     {line}")
    summary = f"{matched}/{len(questions)} answers match the expected answer"
    if args.json:
        output = {"index": str(index_dir), "questions": records, "matched": matched}
        print(
            json.dumps({**output, "total": len(questions), "summary": summary}, ensure_ascii=False)
        )
    else:
        print()
        print(summary)
    return 0
