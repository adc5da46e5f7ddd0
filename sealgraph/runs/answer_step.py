"""The answer step of a run, as a person reads it: why this unit was quoted.

The offline reader records, in the ``answer`` event's ``answer_step`` (see
:class:`sealgraph.reasoning.answer.AnswerStep`), each part the question asks, what
answers it (a version, a duration, a name written as code, yes/no…), its best
candidate units with their scores and features, the way that answered (``reader``,
``chain``, ``compare``, ``polar``, ``row``, ``parts`` or ``declined``) and why. This
module renders that record: :func:`answer_step_section` for the HTML run page (the
``Answer step`` section), :func:`answer_step_lines` for the text timeline.

Every text that reaches the page goes through the page's own escape function, passed
in by the caller, so the page keeps one escaping rule.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["answer_step_lines", "answer_step_of", "answer_step_section"]

_FEATURES = ("lexical", "relation", "head", "dense", "type", "structure")
"""Feature columns, in the order the reader weighs them."""
_LINE_CANDIDATES = 3
"""Candidates per part in the text timeline."""


def answer_step_of(events: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """Return the ``answer_step`` of a run's last ``answer`` event (None when it has none)."""
    step = None
    for event in events:
        if event.get("kind") == "answer":
            data = event.get("data") or {}
            step = data.get("answer_step") if isinstance(data, Mapping) else None
    return step if isinstance(step, Mapping) else None


def _escape(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any) -> str:
    return f"{float(value):.2f}" if isinstance(value, int | float) else "–"


def answer_step_section(
    events: Iterable[Mapping[str, Any]],
    state: Mapping[str, Any],
    escape: Callable[[Any], str] = _escape,
    cite_href: Callable[[int], str] | None = None,
) -> str:
    """Render the answer step as an ``<h2>Answer step</h2>`` section ("" without one).

    Args:
        events: The run's events (the last ``answer`` event's step is shown).
        state: The run's state (its ``missing`` is shown with the step).
        escape: The page's escape function, applied to every text shown.
        cite_href: The link target of a citation number (None: numbers are not links).

    """
    missing = str(state.get("missing") or "")
    step = answer_step_of(events)
    if step is None:
        return ""
    lines = [
        f'<div class="facts"><span>answered by: <b>{escape(step.get("route", ""))}</b></span>'
        f"<span>held together: <b>{_num(step.get('held'))}</b></span></div>",
        f"<p>{escape(step.get('why', ''))}</p>",
    ]
    if missing:
        lines.append(f'<p class="mute">missing: {escape(missing)}</p>')
    for part in step.get("parts") or []:
        lines.append(_part_table(part, escape, cite_href))
    return "<h2>Answer step</h2>\n" + "\n".join(lines)


def _part_table(
    part: Mapping[str, Any], escape: Callable[[Any], str], cite_href: Callable[[int], str] | None
) -> str:
    relation = ", ".join(str(r) for r in part.get("relation") or [])
    head = (
        f"<h3>Part: {escape(part.get('part', ''))}</h3>"
        f'<div class="mute">asks for: {escape(part.get("asks", ""))}'
        + (f" · relation: {escape(relation)}" if relation else "")
        + "</div>"
    )
    columns = "".join(f"<th>{name}</th>" for name in _FEATURES)
    rows = []
    for i, cand in enumerate(part.get("candidates") or []):
        features = cand.get("features") or {}
        cells = "".join(f'<td class="n">{_num(features.get(name))}</td>' for name in _FEATURES)
        n = cand.get("n", "")
        cite = escape(f"[{n}]")
        if cite_href is not None and isinstance(n, int):
            cite = f'<a class="cite" href="{escape(cite_href(n))}">{cite}</a>'
        chosen = ' class="entered"' if i == 0 else ""
        rows.append(
            f"<tr{chosen}><td>{cite}</td><td>{escape(cand.get('kind', ''))}</td>"
            f'<td class="n">{_num(cand.get("score"))}</td>{cells}'
            f"<td>{escape(cand.get('value', ''))}</td>"
            f"<td>{escape(cand.get('heading', ''))}</td><td>{escape(cand.get('text', ''))}</td></tr>"
        )
    table = (
        "<table><tr><th>unit</th><th>kind</th><th>score</th>"
        f"{columns}<th>value</th><th>heading</th><th>text</th></tr>{''.join(rows)}</table>"
    )
    return head + table


def answer_step_lines(step: Mapping[str, Any] | None) -> list[str]:
    """Return the timeline's lines of an answer step: the way, why, each part's best units."""
    if not step:
        return []
    lines = [f"           answered by {step.get('route', '')}: {step.get('why', '')}"]
    for part in step.get("parts") or []:
        lines.append(f"           part: {part.get('part', '')}  (asks for {part.get('asks', '')})")
        lines.extend(_candidate_lines(part.get("candidates") or []))
    return lines


def _candidate_lines(candidates: Sequence[Mapping[str, Any]]) -> list[str]:
    out = []
    for cand in candidates[:_LINE_CANDIDATES]:
        value = f" value {cand['value']!r}" if cand.get("value") else ""
        text = str(cand.get("text", ""))
        short = text if len(text) <= 90 else text[:89] + "…"
        out.append(f"             [{cand.get('n', '')}] {_num(cand.get('score'))}{value}  {short}")
    return out
