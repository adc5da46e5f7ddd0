r"""Render a run's audit trail (its ``seal_log`` events) for people.

Pure functions over plain event dicts and state dicts, so they work the same on
a live stream, on a finished run and on a checkpoint read back from a database:

* :func:`progress_line` / :func:`node_summary`: the one line per node that
  ``sealgraph ask`` prints while a run streams;
* :func:`step_lines`: the short per-step trace printed under an answer;
* :func:`render_timeline`: the full timeline of ``sealgraph trace`` (ledger
  changes, gaps, micro-queries, candidates with their S(c) components, swaps and
  refusals with reasons, packing decisions, the answer);
* :func:`render_answer`: the answer with numbered citations;
* :func:`state_view`: the compact view of the state a node is about to read,
  shown by ``--step``.

Ids, titles, paths and messages come from documents and run databases, so every
line these functions compose from them passes :func:`sealgraph.terminal.one_line`:
a chunk id holding a newline is shown as ``\n``, never as a second line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sealgraph.runs.answer_step import answer_step_lines
from sealgraph.terminal import one_line

__all__ = [
    "NodeCall",
    "duplicate_events",
    "event_key",
    "group_calls",
    "node_summary",
    "progress_line",
    "render_answer",
    "render_timeline",
    "snippet",
    "state_json",
    "state_view",
    "step_lines",
]

_DECISION_KINDS = ("swap", "fill", "append", "refuse")
_DECISION_WORDS = {
    "swap": ("swap", "swaps"),
    "fill": ("fill", "fills"),
    "append": ("append", "appends"),
    "refuse": ("refusal", "refusals"),
}
_SCORE_ROWS = 8  # candidates listed per replace call in the timeline


@dataclass(frozen=True, slots=True)
class NodeCall:
    """The events one node call wrote."""

    step: int
    """LangGraph super-step of the call."""
    node: str
    """Node name."""
    loop: int
    """Repair loop of the call (0 = initial search)."""
    ms: float
    """Wall time of the call in milliseconds."""
    events: tuple[Mapping[str, Any], ...]
    """Its events, in the order they were written."""


def group_calls(events: Iterable[Mapping[str, Any]]) -> list[NodeCall]:
    """Group consecutive events of the same (step, node) into node calls, in log order."""
    calls: list[NodeCall] = []
    current: list[Mapping[str, Any]] = []

    def flush() -> None:
        if current:
            first = current[0]
            calls.append(
                NodeCall(
                    step=int(first.get("step", 0)),
                    node=str(first.get("node", "?")),
                    loop=int(first.get("loop", 0)),
                    ms=float(first.get("ms", 0.0)),
                    events=tuple(current),
                )
            )

    for event in events:
        if current and (event.get("step"), event.get("node")) != (
            current[0].get("step"),
            current[0].get("node"),
        ):
            flush()
            current = []
        current.append(event)
    flush()
    return calls


def event_key(event: Mapping[str, Any]) -> tuple[int, str, str, str]:
    """Identity of an event for duplicate detection: (step, node, kind, message)."""
    return (
        int(event.get("step", 0)),
        str(event.get("node", "")),
        str(event.get("kind", "")),
        str(event.get("message", "")),
    )


def duplicate_events(events: Iterable[Mapping[str, Any]]) -> list[tuple[int, str, str, str]]:
    """Return the keys of events that occur more than once (a resumed run must have none)."""
    seen: dict[tuple[int, str, str, str], int] = {}
    for event in events:
        key = event_key(event)
        seen[key] = seen.get(key, 0) + 1
    return [key for key, count in seen.items() if count > 1]


def _of_kind(events: Sequence[Mapping[str, Any]], *kinds: str) -> list[Mapping[str, Any]]:
    return [e for e in events if e.get("kind") in kinds]


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def node_summary(node: str, events: Sequence[Mapping[str, Any]]) -> str:
    """One line saying what a node call did: the message of its main event(s).

    Args:
        node: Name of the node.
        events: The events that call wrote.

    Returns:
        The summary; ``"(no events)"`` when the call wrote none.

    """
    if not events:
        return "(no events)"
    summarise = _NODE_SUMMARISERS.get(node)
    main = summarise(events) if summarise else _main_message(events, None)
    return _with_fallbacks_and_stops(main, events)


def _micro_query_summary(events: Sequence[Mapping[str, Any]]) -> str:
    # How many micro-queries, how many candidates they found, and their texts.
    queries = _of_kind(events, "micro_query")
    found = sum(len((e.get("data") or {}).get("candidates", [])) for e in queries)
    texts = ", ".join(repr((e.get("data") or {}).get("text", "")) for e in queries)
    main = f"{_plural(len(queries), 'micro-query', 'micro-queries')}, {found} candidate(s)"
    if texts:
        main += f": {texts}"
    return main


def _replace_summary(events: Sequence[Mapping[str, Any]]) -> str:
    # Counts per decision kind (in _DECISION_KINDS order), then the messages of the changes.
    decisions = _of_kind(events, *_DECISION_KINDS)
    counts = [
        _plural(sum(1 for d in decisions if d.get("kind") == kind), *_DECISION_WORDS[kind])
        for kind in _DECISION_KINDS
        if any(d.get("kind") == kind for d in decisions)
    ]
    changes = [d for d in decisions if d.get("kind") != "refuse"]
    main = ", ".join(counts) or "no decision"
    if changes:
        main += ": " + "; ".join(str(d.get("message", "")) for d in changes)
    return main


def _main_message(events: Sequence[Mapping[str, Any]], preferred: str | None) -> str:
    # The message of the last event of the preferred kind, else of the last non-stop event.
    chosen = _of_kind(events, preferred) if preferred else []
    non_stop = [e for e in events if e.get("kind") != "stop"]
    pick = chosen[-1] if chosen else (non_stop[-1] if non_stop else None)
    return str(pick.get("message", "")) if pick else ""


def _main_message_of(kind: str) -> Callable[[Sequence[Mapping[str, Any]]], str]:
    return lambda events: _main_message(events, kind)


def _generate_summary(events: Sequence[Mapping[str, Any]]) -> str:
    # The answer can be long: show its start only.
    return snippet(_main_message(events, "answer"), 120)


def _search_summary(events: Sequence[Mapping[str, Any]]) -> str:
    # The initial top-k, and the fan-out when the question's sets outnumber k.
    fanout = _main_message(events, "fanout") if _of_kind(events, "fanout") else ""
    retrieved = _main_message(events, "retrieved")
    return f"{retrieved}; {fanout}" if fanout else retrieved


def _branch_summary(events: Sequence[Mapping[str, Any]]) -> str:
    # The fan-out branches of one step run side by side: one summary each.
    return "; ".join(str(e.get("message", "")) for e in _of_kind(events, "branch"))


_NODE_SUMMARISERS: dict[str, Callable[[Sequence[Mapping[str, Any]]], str]] = {
    "micro_query": _micro_query_summary,
    "replace": _replace_summary,
    "search": _search_summary,
    "branch": _branch_summary,
    "extract": _main_message_of("ledger"),
    "assess": _main_message_of("assess"),
    "pack": _main_message_of("pack"),
    "generate": _generate_summary,
}
"""Main part of :func:`node_summary` per node; other nodes show their last non-stop message."""


def _with_fallbacks_and_stops(main: str, events: Sequence[Mapping[str, Any]]) -> str:
    # Appended to every summary: LLM fallbacks (count) and each stop reason.
    fallbacks = _of_kind(events, "llm_fallback")
    if fallbacks:
        main += f" [{_plural(len(fallbacks), 'LLM fallback')}]"
    for stop in (str(e.get("message", "")) for e in _of_kind(events, "stop")):
        main = f"{main} | stop: {stop}" if main else f"stop: {stop}"
    return main


def progress_line(node: str, events: Sequence[Mapping[str, Any]]) -> str:
    """Return the line ``ask`` prints to stderr when ``node`` finishes: ``"[step] node: summary"``."""
    step = int(events[0].get("step", 0)) if events else 0
    return one_line(f"[{step}] {node}: {node_summary(node, events)}")


def step_lines(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """One ``"[step] node: summary"`` line per node call, in run order."""
    return [progress_line(call.node, call.events) for call in group_calls(events)]


def snippet(text: str, width: int = 160) -> str:
    """Collapse whitespace (and Markdown heading marks) and cut ``text`` to ``width`` characters."""
    words = [w for w in str(text).split() if w.strip("#")]
    flat = " ".join(words)
    if len(flat) <= width:
        return flat
    return flat[: max(0, width - 1)].rstrip() + "…"


def render_answer(result: Mapping[str, Any], *, snippet_width: int = 160) -> str:
    """Return the answer followed by its numbered citations (``[n] title (chunk id)``, snippet)."""
    lines = [str(result.get("answer", "")).strip() or "(no answer)"]
    citations = list(result.get("citations") or [])
    if citations:
        lines.append("")
        lines.append("Citations:")
        for c in citations:
            lines.append(
                one_line(f"  [{c.get('n')}] {c.get('title', '')} ({c.get('chunk_id', '')})")
            )
            text = snippet(c.get("text", ""), snippet_width)
            if text:
                lines.append(one_line(f"      {text}"))
    return "\n".join(lines)


def _score_row(score: Mapping[str, Any] | None) -> str:
    if not score:
        return ""
    return (
        f"S={float(score.get('total', 0.0)):+.3f} "
        f"(gap {float(score.get('gap_coverage', 0.0)):.3f}, "
        f"corr {float(score.get('corroboration', 0.0)):.3f}, "
        f"nov {float(score.get('novelty', 0.0)):.3f}, "
        f"red {float(score.get('redundancy', 0.0)):.3f})"
    )


def _event_lines(event: Mapping[str, Any]) -> list[str]:
    kind = str(event.get("kind", ""))
    message = str(event.get("message", ""))
    data = event.get("data") or {}
    render = _EVENT_RENDERERS.get(kind)
    if render is None:
        return [f"{kind:<10} {message}"]
    return render(kind, message, data)


def _retrieved_lines(kind: str, message: str, data: Mapping[str, Any]) -> list[str]:
    lines = [f"retrieved  {message}"]
    for hit in data.get("hits", []):
        lines.append(
            f"    #{hit.get('rank', '?')} {hit.get('chunk_id', '')} "
            f"score {float(hit.get('score', 0.0)):.4f}"
        )
    return lines


def _ledger_lines(kind: str, message: str, data: Mapping[str, Any]) -> list[str]:
    lines = [f"ledger     {message}"]
    if data.get("added_entities"):
        lines.append(f"    + entities: {', '.join(map(str, data['added_entities']))}")
    if data.get("dropped_passages"):
        lines.append(f"    - facts of evicted passages: {', '.join(data['dropped_passages'])}")
    return lines


def _gap_lines(kind: str, message: str, data: Mapping[str, Any]) -> list[str]:
    targets = data.get("targets") or []
    suffix = f" (targets: {', '.join(map(str, targets))})" if targets else ""
    return [f"gap        {message}{suffix}"]


def _stop_lines(kind: str, message: str, data: Mapping[str, Any]) -> list[str]:
    return [f"STOP       {message}"]


def _micro_query_lines(kind: str, message: str, data: Mapping[str, Any]) -> list[str]:
    lines = [f"micro-query {message}"]
    if data.get("candidates"):
        lines.append(f"    candidates: {', '.join(map(str, data['candidates']))}")
    return lines


def _candidates_lines(kind: str, message: str, data: Mapping[str, Any]) -> list[str]:
    # The best _SCORE_ROWS candidates with their S(c) components, then the incumbents.
    lines = [f"candidates {message}"]
    scores = list(data.get("scores", []))
    for score in scores[:_SCORE_ROWS]:
        lines.append(f"    {score.get('chunk_id', '')}  {_score_row(score)}")
    if len(scores) > _SCORE_ROWS:
        lines.append(f"    ... {len(scores) - _SCORE_ROWS} more")
    for score in data.get("incumbents", []):
        lines.append(f"    in E_t: {score.get('chunk_id', '')}  {_score_row(score)}")
    return lines


def _decision_lines(kind: str, message: str, data: Mapping[str, Any]) -> list[str]:
    lines = [f"{kind.upper():<10} {message}"]
    if data.get("candidate_score"):
        lines.append(
            f"    candidate {data.get('candidate')}  {_score_row(data['candidate_score'])}"
        )
    if data.get("victim_score"):
        lines.append(f"    victim    {data.get('victim')}  {_score_row(data['victim_score'])}")
    return lines


def _pack_lines(kind: str, message: str, data: Mapping[str, Any]) -> list[str]:
    lines = [f"pack       {message}"]
    for d in data.get("decisions", []):
        lines.append(
            f"    {d.get('decision', ''):<15} {d.get('span_id', '')} "
            f"{d.get('tokens', 0)} tok  {d.get('reason', '')}"
        )
    return lines


def _answer_lines(kind: str, message: str, data: Mapping[str, Any]) -> list[str]:
    cited = data.get("cited") or []
    suffix = f"  (cites {', '.join(f'[{n}]' for n in cited)})" if cited else ""
    lines = [f"answer     {message}{suffix}"]
    score = data.get("answerability")
    if isinstance(score, int | float):
        verdict = "declined" if data.get("insufficient") else "answered"
        lines.append(f"           {verdict}; answerability {float(score):.2f}")
    if data.get("missing"):
        lines.append(f"           missing: {data['missing']}")
    return lines + answer_step_lines(data.get("answer_step"))


_EventRenderer = Callable[[str, str, Mapping[str, Any]], list[str]]
"""Renders one event ``(kind, message, data)`` as timeline lines."""

_EVENT_RENDERERS: dict[str, _EventRenderer] = {
    "retrieved": _retrieved_lines,
    "ledger": _ledger_lines,
    "gap": _gap_lines,
    "stop": _stop_lines,
    "micro_query": _micro_query_lines,
    "candidates": _candidates_lines,
    **dict.fromkeys(_DECISION_KINDS, _decision_lines),
    "pack": _pack_lines,
    "answer": _answer_lines,
}
"""Timeline lines per event kind ``(kind, message, data)``; other kinds get one plain line."""


def render_timeline(
    events: Iterable[Mapping[str, Any]],
    *,
    question: str | None = None,
    answer: str | None = None,
    title: str | None = None,
) -> str:
    """Render the whole run as a readable timeline, one block per node call.

    Args:
        events: The run's ``seal_log``.
        question: The question, shown in the header when given.
        answer: The final answer, shown at the end when given.
        title: First line (for example the thread id).

    Returns:
        Multi-line text without a trailing newline.

    """
    lines: list[str] = []
    if title:
        lines.append(one_line(title))
    if question:
        lines.append(one_line(f"question: {question}"))
    if lines:
        lines.append("")
    calls = group_calls(events)
    for call in calls:
        llm = sum(int(e.get("llm_calls", 0)) for e in call.events)
        extra = f", {_plural(llm, 'LLM call')}" if llm else ""
        lines.append(f"step {call.step} · {call.node} (loop {call.loop}, {call.ms:.1f} ms{extra})")
        for event in call.events:
            lines.extend("  " + one_line(line) for line in _event_lines(event))
    if not calls:
        lines.append("(no events)")
    if answer is not None:
        lines.append("")
        lines.append(one_line(f"final answer: {answer}"))
    return "\n".join(lines)


def _ids(slots: Sequence[Mapping[str, Any]] | None) -> str:
    ids = [str(s.get("chunk_id", "")) for s in slots or []]
    return ", ".join(ids) if ids else "(none)"


def state_view(values: Mapping[str, Any], node: str) -> str:
    """Return a compact view of the state keys ``node`` is about to read.

    Args:
        values: The graph state (a checkpoint's values).
        node: The node about to run.

    Returns:
        A few indented lines.

    """
    lines = [f"question: {snippet(values.get('question', ''), 120)}"]
    overrides = values.get("config")
    if overrides:
        lines.append(f"config overrides: {json.dumps(overrides, sort_keys=True)}")
    view = _NODE_VIEWS.get(node, _keys_view)
    lines.extend(view(values))
    return "\n".join("  " + one_line(line) for line in lines)


def _evidence_line(values: Mapping[str, Any]) -> str:
    return f"loop {values.get('loop', 0)}; evidence E_t: {_ids(values.get('slots'))}"


def _gaps(values: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(values.get("gaps") or [])


def _search_view(values: Mapping[str, Any]) -> list[str]:
    # search reads only the question (and the overrides, shown by state_view).
    return []


def _ledger_view(values: Mapping[str, Any]) -> list[str]:
    ledger = values.get("ledger") or {}
    return [
        _evidence_line(values),
        f"ledger: {len(ledger.get('entities') or {})} entities, "
        f"{len(ledger.get('relations') or [])} relations",
    ]


def _micro_query_view(values: Mapping[str, Any]) -> list[str]:
    gaps = _gaps(values)
    return [
        _evidence_line(values),
        f"open gaps: {len(gaps)}",
        *(f"  - {g.get('kind', '')}: {snippet(g.get('reason', ''), 100)}" for g in gaps),
        f"micro-queries issued so far: {len(values.get('issued') or [])}",
    ]


def _replace_view(values: Mapping[str, Any]) -> list[str]:
    lines = [_evidence_line(values)]
    candidates = values.get("candidates") or {}
    pool = list(dict.fromkeys(c for ids in candidates.values() for c in ids))
    lines.append(f"candidates: {', '.join(pool) if pool else '(none)'}")
    blocked = values.get("blocklist") or []
    if blocked:
        lines.append(f"blocklist: {', '.join(blocked)}")
    return lines


def _pack_view(values: Mapping[str, Any]) -> list[str]:
    return [
        f"evidence E_t: {_ids(values.get('slots'))}",
        f"open gaps: {len(_gaps(values))}; stop reason: {values.get('stop_reason', '')}",
    ]


def _generate_view(values: Mapping[str, Any]) -> list[str]:
    packed = values.get("packed") or []
    return [
        f"packed spans: {len(packed)} ({values.get('context_tokens', 0)} tokens); "
        f"open gaps: {len(_gaps(values))}",
        *(f"  [{p.get('n')}] {p.get('title', '')}" for p in packed),
    ]


def _keys_view(values: Mapping[str, Any]) -> list[str]:
    # A node this module does not know: list the state keys.
    return [f"keys: {', '.join(sorted(values))}"]


_NODE_VIEWS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "search": _search_view,
    "extract": _ledger_view,
    "assess": _ledger_view,
    "micro_query": _micro_query_view,
    "replace": _replace_view,
    "pack": _pack_view,
    "generate": _generate_view,
}
"""What :func:`state_view` shows, per node about to run, after the question and overrides."""


def state_json(values: Mapping[str, Any]) -> str:
    """Return the full state as indented JSON (non-JSON values shown with ``str``)."""
    return json.dumps(values, indent=2, ensure_ascii=False, sort_keys=True, default=str)
