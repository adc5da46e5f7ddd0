"""Render a run's audit trail (its ``seal_log`` events) for people.

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
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
    stops = [str(e.get("message", "")) for e in _of_kind(events, "stop")]
    main: str
    if node == "micro_query":
        queries = _of_kind(events, "micro_query")
        found = sum(len((e.get("data") or {}).get("candidates", [])) for e in queries)
        texts = ", ".join(repr((e.get("data") or {}).get("text", "")) for e in queries)
        main = f"{_plural(len(queries), 'micro-query', 'micro-queries')}, {found} candidate(s)"
        if texts:
            main += f": {texts}"
    elif node == "replace":
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
    else:
        preferred = {
            "search": "retrieved",
            "extract": "ledger",
            "assess": "assess",
            "pack": "pack",
            "generate": "answer",
        }.get(node)
        chosen = _of_kind(events, preferred) if preferred else []
        non_stop = [e for e in events if e.get("kind") != "stop"]
        pick = chosen[-1] if chosen else (non_stop[-1] if non_stop else None)
        main = str(pick.get("message", "")) if pick else ""
        if node == "generate":
            main = snippet(main, 120)
    fallbacks = _of_kind(events, "llm_fallback")
    if fallbacks:
        main += f" [{_plural(len(fallbacks), 'LLM fallback')}]"
    for stop in stops:
        main = f"{main} | stop: {stop}" if main else f"stop: {stop}"
    return main


def progress_line(node: str, events: Sequence[Mapping[str, Any]]) -> str:
    """Return the line ``ask`` prints to stderr when ``node`` finishes: ``"[step] node: summary"``."""
    step = int(events[0].get("step", 0)) if events else 0
    return f"[{step}] {node}: {node_summary(node, events)}"


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
            lines.append(f"  [{c.get('n')}] {c.get('title', '')} ({c.get('chunk_id', '')})")
            text = snippet(c.get("text", ""), snippet_width)
            if text:
                lines.append(f"      {text}")
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
    if kind == "retrieved":
        lines = [f"retrieved  {message}"]
        for hit in data.get("hits", []):
            lines.append(
                f"    #{hit.get('rank', '?')} {hit.get('chunk_id', '')} "
                f"score {float(hit.get('score', 0.0)):.4f}"
            )
        return lines
    if kind == "ledger":
        lines = [f"ledger     {message}"]
        if data.get("added_entities"):
            lines.append(f"    + entities: {', '.join(map(str, data['added_entities']))}")
        if data.get("dropped_passages"):
            lines.append(f"    - facts of evicted passages: {', '.join(data['dropped_passages'])}")
        return lines
    if kind == "gap":
        targets = data.get("targets") or []
        suffix = f" (targets: {', '.join(map(str, targets))})" if targets else ""
        return [f"gap        {message}{suffix}"]
    if kind == "stop":
        return [f"STOP       {message}"]
    if kind == "micro_query":
        lines = [f"micro-query {message}"]
        if data.get("candidates"):
            lines.append(f"    candidates: {', '.join(map(str, data['candidates']))}")
        return lines
    if kind == "candidates":
        lines = [f"candidates {message}"]
        scores = list(data.get("scores", []))
        for score in scores[:_SCORE_ROWS]:
            lines.append(f"    {score.get('chunk_id', '')}  {_score_row(score)}")
        if len(scores) > _SCORE_ROWS:
            lines.append(f"    ... {len(scores) - _SCORE_ROWS} more")
        for score in data.get("incumbents", []):
            lines.append(f"    in E_t: {score.get('chunk_id', '')}  {_score_row(score)}")
        return lines
    if kind in _DECISION_KINDS:
        lines = [f"{kind.upper():<10} {message}"]
        if data.get("candidate_score"):
            lines.append(
                f"    candidate {data.get('candidate')}  {_score_row(data['candidate_score'])}"
            )
        if data.get("victim_score"):
            lines.append(f"    victim    {data.get('victim')}  {_score_row(data['victim_score'])}")
        return lines
    if kind == "pack":
        lines = [f"pack       {message}"]
        for d in data.get("decisions", []):
            lines.append(
                f"    {d.get('decision', ''):<15} {d.get('span_id', '')} "
                f"{d.get('tokens', 0)} tok  {d.get('reason', '')}"
            )
        return lines
    if kind == "answer":
        cited = data.get("cited") or []
        suffix = f"  (cites {', '.join(f'[{n}]' for n in cited)})" if cited else ""
        return [f"answer     {message}{suffix}"]
    return [f"{kind:<10} {message}"]


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
        lines.append(title)
    if question:
        lines.append(f"question: {question}")
    if lines:
        lines.append("")
    calls = group_calls(events)
    for call in calls:
        llm = sum(int(e.get("llm_calls", 0)) for e in call.events)
        extra = f", {_plural(llm, 'LLM call')}" if llm else ""
        lines.append(f"step {call.step} · {call.node} (loop {call.loop}, {call.ms:.1f} ms{extra})")
        for event in call.events:
            lines.extend("  " + line for line in _event_lines(event))
    if not calls:
        lines.append("(no events)")
    if answer is not None:
        lines.append("")
        lines.append(f"final answer: {answer}")
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
    ledger = values.get("ledger") or {}
    gaps = list(values.get("gaps") or [])
    loop = values.get("loop", 0)
    if node == "search":
        pass
    elif node in ("extract", "assess"):
        lines.append(f"loop {loop}; evidence E_t: {_ids(values.get('slots'))}")
        lines.append(
            f"ledger: {len(ledger.get('entities') or {})} entities, "
            f"{len(ledger.get('relations') or [])} relations"
        )
    elif node == "micro_query":
        lines.append(f"loop {loop}; evidence E_t: {_ids(values.get('slots'))}")
        lines.append(f"open gaps: {len(gaps)}")
        lines.extend(f"  - {g.get('kind', '')}: {snippet(g.get('reason', ''), 100)}" for g in gaps)
        lines.append(f"micro-queries issued so far: {len(values.get('issued') or [])}")
    elif node == "replace":
        lines.append(f"loop {loop}; evidence E_t: {_ids(values.get('slots'))}")
        candidates = values.get("candidates") or {}
        pool = list(dict.fromkeys(c for ids in candidates.values() for c in ids))
        lines.append(f"candidates: {', '.join(pool) if pool else '(none)'}")
        blocked = values.get("blocklist") or []
        if blocked:
            lines.append(f"blocklist: {', '.join(blocked)}")
    elif node == "pack":
        lines.append(f"evidence E_t: {_ids(values.get('slots'))}")
        lines.append(f"open gaps: {len(gaps)}; stop reason: {values.get('stop_reason', '')}")
    elif node == "generate":
        packed = values.get("packed") or []
        lines.append(
            f"packed spans: {len(packed)} ({values.get('context_tokens', 0)} tokens); "
            f"open gaps: {len(gaps)}"
        )
        lines.extend(f"  [{p.get('n')}] {p.get('title', '')}" for p in packed)
    else:
        lines.append(f"keys: {', '.join(sorted(values))}")
    return "\n".join("  " + line for line in lines)


def state_json(values: Mapping[str, Any]) -> str:
    """Return the full state as indented JSON (non-JSON values shown with ``str``)."""
    return json.dumps(values, indent=2, ensure_ascii=False, sort_keys=True, default=str)
