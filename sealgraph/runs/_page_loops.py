"""The repair on a run's page: the k slots across loops, and each loop's work.

Each loop shows its gaps, micro-queries, candidates with their S(c) terms, swaps and
refusals, and why the loop stopped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sealgraph.runs._page_run import (
    _FIND_ROWS,
    _REFUSAL_KINDS,
    _SCORE_ROWS,
    _TERMS,
    _a,
    _e,
    _num,
    _Run,
)
from sealgraph.runs.timeline import group_calls


@dataclass(frozen=True)
class _Row:
    """The evidence set after one loop, and what changed in it."""

    loop: int
    ids: tuple[str, ...]
    entered: frozenset[str]
    """Chunks that entered the set in this loop (swapped, filled or appended)."""
    replaced: Mapping[str, str] = field(default_factory=dict)
    """Victim of each chunk swapped in during this loop, by the chunk that took its slot."""


def _initial_ids(run: _Run) -> list[str]:
    retrieved = run.of_kind("retrieved")
    if not retrieved:
        return []
    event = retrieved[0]
    hits = [str(h.get("chunk_id", "")) for h in (event.get("data") or {}).get("hits", [])]
    k = run.config.get("k")
    if not isinstance(k, int):
        match = re.search(r"top-(\d+)", str(event.get("message", "")))
        k = int(match.group(1)) if match else len(hits)
    return hits[:k]


def _slot_rows(run: _Run) -> list[_Row]:
    ids = _initial_ids(run)
    rows = [_Row(0, tuple(ids), frozenset(ids))] if ids else []
    for call in group_calls(run.events):
        if call.node != "replace":
            continue
        entered: set[str] = set()
        replaced: dict[str, str] = {}
        for event in call.events:
            data = event.get("data") or {}
            kind, cand = event.get("kind"), data.get("candidate")
            if kind == "swap" and data.get("victim") in ids and cand:
                ids[ids.index(data["victim"])] = str(cand)
                replaced[str(cand)] = str(data["victim"])
                entered.add(str(cand))
            elif kind in ("fill", "append") and cand:
                ids.append(str(cand))
                entered.add(str(cand))
        rows.append(_Row(call.loop, tuple(ids), frozenset(entered), replaced))
    final = tuple(str(s.get("chunk_id", "")) for s in run.state.get("slots") or [])
    if final and rows and set(final) != set(rows[-1].ids):
        rows.append(_Row(-1, final, frozenset(final) - set(rows[-1].ids)))
    return rows


def _slots_part(run: _Run) -> str:
    rows = _slot_rows(run)
    if not rows:
        return ""
    width = max(len(r.ids) for r in rows)
    head = "".join(f"<th>slot {i + 1}</th>" for i in range(width))
    body = []
    for row in rows:
        label = {0: "0 · search", -1: "final"}.get(row.loop, f"loop {row.loop}")
        cells = [_slot_cell(run, row, cid) for cid in row.ids]
        cells += ["<td></td>"] * (width - len(row.ids))
        body.append(f'<tr class="loop"><th>{_e(label)}</th>{"".join(cells)}</tr>')
    return (
        "<h2>Evidence slots across loops</h2>\n"
        '<p class="mute">One row per loop: the k passages of the evidence set after it. '
        "A passage that entered in that loop is framed green; its swap is described "
        "under the loop below.</p>\n"
        f'<table class="slots"><tr><th>loop</th>{head}</tr>{"".join(body)}</table>'
    )


def _slot_cell(run: _Run, row: _Row, chunk_id: str) -> str:
    entered = row.loop > 0 and chunk_id in row.entered
    cls = "slot in" if entered else "slot"
    mark = ' <span class="badge in">in</span>' if entered else ""
    victim = row.replaced.get(chunk_id)
    if victim:
        mark += (
            f'<div class="out-of-slot"><span class="badge out">out</span> '
            f'<s class="cid">{_e(victim)}</s></div>'
        )
    return (
        f'<td class="{cls}" data-chunk="{_a(chunk_id)}" data-loop="{row.loop}">'
        f"{run.chunk_link(chunk_id)}{mark}</td>"
    )


def _loops_part(run: _Run) -> str:
    # Per repair loop: the gaps it chased (assessed at the end of the loop before),
    # its micro-queries, the candidates' S(c), and the decisions.
    calls = group_calls(run.events)
    loops = sorted({c.loop for c in calls if c.node in ("micro_query", "replace")})
    if not loops:
        gaps = _gap_list(run, 0)
        return f"<h2>Repair loops</h2>\n<p>No repair loop ran.</p>{gaps}"
    parts = ["<h2>Repair loops</h2>", _formula(run)]
    for loop in loops:
        of_loop = [e for c in calls if c.loop == loop for e in c.events]
        parts.append(
            f'<section class="repair-loop" id="{run.prefix}loop-{loop}"><h3>Loop {loop}</h3>'
            f"{_gap_list(run, loop - 1)}{_blocked(run, loop)}{_queries(run, of_loop)}"
            f"{_candidates(run, of_loop)}"
            f"{_decisions(run, of_loop)}{_stops(of_loop)}</section>"
        )
    open_gaps = _gap_list(run, loops[-1])
    if open_gaps:
        parts.append(f"<h3>After the last loop</h3>{open_gaps}")
    return "\n".join(parts)


def _formula(run: _Run) -> str:
    # S(c) with the run's λ weights, when the config is known: how the terms add up.
    weights = run.config.get("utility") or {}
    if not weights:
        return '<p class="mute">S(c) = λ1·GapCov + λ2·Corr + λ3·Nov − λ4·Red</p>'
    terms = [f"{_num(weights.get(w), 'g')}·{label}" for _, label, w in _TERMS]
    return (
        f'<p class="mute">S(c) = {terms[0]} + {terms[1]} + {terms[2]} − {terms[3]}; a swap '
        f"needs S(c*) &gt; S(victim) + ε and must do no harm.</p>"
    )


def _gap_list(run: _Run, loop: int) -> str:
    gaps = [e for e in run.of_kind("gap") if int(e.get("loop", 0)) == loop]
    if not gaps:
        return ""
    items = []
    for event in gaps:
        data = event.get("data") or {}
        targets = data.get("targets") or []
        where = f' <span class="mute">targets: {_e(", ".join(map(str, targets)))}</span>'
        items.append(
            f'<li class="gap"><span class="badge warn">{_e(data.get("kind", "gap"))}</span> '
            f"{_e(data.get('reason') or event.get('message', ''))}{where if targets else ''}</li>"
        )
    return f'<div><b>Open gaps</b><ul class="gaps">{"".join(items)}</ul></div>'


_NOTHING = '<span class="mute">nothing new</span>'


def _blocked(run: _Run, loop: int) -> str:
    # Passages evicted in earlier loops: blocklisted, so no micro-query brings them back.
    evicted = [
        str((e.get("data") or {}).get("victim"))
        for e in run.of_kind("swap")
        if int(e.get("loop", 0)) < loop and (e.get("data") or {}).get("victim")
    ]
    if not evicted:
        return ""
    return (
        '<div class="blocklist"><b>Blocklist</b> <span class="mute">(evicted earlier, never '
        f"re-admitted)</span>: {', '.join(run.chunk_link(c) for c in evicted)}</div>"
    )


def _entered(events: Sequence[Mapping[str, Any]]) -> set[str]:
    return {
        str((e.get("data") or {}).get("candidate"))
        for e in events
        if e.get("kind") in ("swap", "fill", "append")
    }


def _queries(run: _Run, events: Sequence[Mapping[str, Any]]) -> str:
    queries = [e for e in events if e.get("kind") == "micro_query"]
    if not queries:
        return ""
    entered = _entered(events)
    rows = []
    for event in queries:
        data = event.get("data") or {}
        found = [str(c) for c in data.get("candidates") or []]
        # The first finds, and any find that entered the set however low it came.
        shown = found[:_FIND_ROWS] + [c for c in found[_FIND_ROWS:] if c in entered]
        finds = ", ".join(
            run.chunk_link(c) + (' <span class="badge in">in</span>' if c in entered else "")
            for c in shown
        )
        more = len(found) - len(shown)
        rest = f' <span class="mute">+{more} more</span>' if more > 0 else ""
        gap = " · ".join(str(data[k]) for k in ("gap_kind", "entity") if data.get(k))
        rows.append(
            f'<tr class="micro-query"><td>{_e(data.get("text", ""))}</td>'
            f'<td>{_e(gap)}</td><td class="n">{len(found)}</td>'
            f"<td>{finds or _NOTHING}{rest}</td></tr>"
        )
    return (
        "<div><b>Micro-queries</b><table><tr><th>query</th><th>gap</th><th>found</th>"
        f"<th>top finds</th></tr>{''.join(rows)}</table></div>"
    )


def _score_cells(score: Mapping[str, Any] | None) -> str:
    if not score:
        return '<td colspan="5" class="mute">not scored</td>'
    terms = "".join(f'<td class="n">{_num(score.get(key))}</td>' for key, _, _ in _TERMS)
    return f'{terms}<td class="n"><b>{_num(score.get("total"))}</b></td>'


_TERM_HEAD = "".join(f"<th>{label}</th>" for _, label, _ in _TERMS) + "<th>S(c)</th>"


def _candidates(run: _Run, events: Sequence[Mapping[str, Any]]) -> str:
    found = [e for e in events if e.get("kind") == "candidates"]
    if not found:
        return ""
    data = found[-1].get("data") or {}
    scores = list(data.get("scores") or [])
    rows = [
        f'<tr class="candidate"><td>{run.chunk_link(str(s.get("chunk_id", "")))}</td>'
        f"{_score_cells(s)}</tr>"
        for s in scores[:_SCORE_ROWS]
    ]
    more = len(scores) - _SCORE_ROWS
    if more > 0:
        rows.append(f'<tr><td colspan="6" class="mute">… {more} more candidate(s)</td></tr>')
    rows += [
        f'<tr class="incumbent"><td><span class="badge">in E</span> '
        f"{run.chunk_link(str(s.get('chunk_id', '')))}</td>{_score_cells(s)}</tr>"
        for s in data.get("incumbents") or []
    ]
    return (
        f"<details><summary><b>Candidates scored</b> ({len(scores)}; best first, then the "
        f"passages in the set)</summary><table><tr><th>passage</th>{_TERM_HEAD}</tr>"
        f"{''.join(rows)}</table></details>"
    )


def _refusal_badge(reason: str) -> str:
    for fragment, label in _REFUSAL_KINDS:
        if fragment in reason:
            return f'<span class="badge warn">{_e(label)}</span>'
    return '<span class="badge warn">refused</span>'


def _decisions(run: _Run, events: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for event in events:
        kind = str(event.get("kind", ""))
        if kind in ("swap", "refuse"):
            parts.append(_decision_card(run, kind, event.get("data") or {}))
        elif kind in ("fill", "append"):
            data = event.get("data") or {}
            parts.append(
                f'<div class="swap {kind}"><span class="badge in">{kind}</span> '
                f"{run.chunk_link(str(data.get('candidate', '')))} "
                f'<span class="mute">{_e(data.get("reason", ""))}</span></div>'
            )
    return "".join(parts)


def _decision_card(run: _Run, kind: str, data: Mapping[str, Any]) -> str:
    cand, victim = data.get("candidate"), data.get("victim")
    reason = str(data.get("reason", ""))
    c_score, v_score = data.get("candidate_score"), data.get("victim_score")
    swap = kind == "swap"
    badge = '<span class="badge in">swap</span>' if swap else _refusal_badge(reason)
    # A refusal changed nothing: its candidate stayed out and its victim in.
    in_label, out_label = ("in", "out") if swap else ("candidate", "kept")
    inn = run.chunk_link(str(cand)) if cand else '<span class="mute">no candidate</span>'
    out = run.chunk_link(str(victim)) if victim else '<span class="mute">no victim</span>'
    margin = ""
    if c_score and v_score:
        diff = float(c_score.get("total", 0.0)) - float(v_score.get("total", 0.0))
        eps = run.config.get("epsilon")
        margin = f"S(c*) − S(victim) = {diff:+.3f}" + (f"; ε = {_num(eps, 'g')}" if eps else "")
    table = ""
    if c_score or v_score:
        table = (
            f"<table><tr><th></th>{_TERM_HEAD}</tr>"
            f'<tr class="winner"><th>candidate c*</th>{_score_cells(c_score)}</tr>'
            f'<tr class="victim"><th>victim</th>{_score_cells(v_score)}</tr></table>'
        )
    return (
        f'<div class="swap {kind}" data-candidate="{_a(cand or "")}" '
        f'data-victim="{_a(victim or "")}">{badge} '
        f'<span class="badge in">{in_label}</span> {inn}<span class="arrow">⇄</span>'
        f'<span class="badge out">{out_label}</span> {out}'
        f'<div class="reason">{_e(reason)}</div>'
        f'<div class="mute">{_e(margin)}</div>{table}</div>'
    )


def _stops(events: Sequence[Mapping[str, Any]]) -> str:
    stops = [str(e.get("message", "")) for e in events if e.get("kind") == "stop"]
    return "".join(f'<div class="stop"><b>stop:</b> {_e(s)}</div>' for s in stops)
