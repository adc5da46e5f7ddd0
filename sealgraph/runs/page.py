"""A run's repair as one self-contained HTML page a person reads at a glance.

:func:`render_run_page` turns a run's ``seal_log`` events and its final state
into one HTML document: the question and its needs, the evidence set as k slots
across loops with every swap drawn as in → out and the S(c) terms of winner and
victim, the gaps and the micro-queries that chased them, refusals with their
reason, the packing view (budget bar, kept and dropped spans) and the answer with
each citation linked to its span, document and character offsets.

The page is safe to open for any corpus: every piece of document, question or
answer text is escaped (:mod:`sealgraph.runs._html`: bidi controls shown as
escapes, right-to-left text isolated in ``<bdi>``), and a Content-Security-Policy
forbids every script and every external load (the page uses none: collapsible
parts are ``<details>``). It opens from disk, prints readably (``@media print``)
and is deterministic: the same events and state give the same bytes.

Pure functions over plain dicts (what a checkpoint holds): this module knows
nothing of LangGraph. :func:`run_section` renders one run as a ``<section>``
that other pages embed (``sealgraph eval --html``); :func:`page_document` wraps
sections into a document.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sealgraph.outputs import Inputs, write_output
from sealgraph.runs._page_loops import _loops_part, _slots_part
from sealgraph.runs._page_run import (
    _TERMS,
    _TEXT_CHARS,
    _a,
    _e,
    _gather,
    _num,
    _Run,
    _shown_title,
    page_anchor,
)
from sealgraph.runs.answer_step import answer_step_section
from sealgraph.runs.page_branches import branches_part
from sealgraph.runs.timeline import group_calls, node_summary, snippet

__all__ = [
    "PAGE_CSP",
    "page_anchor",
    "page_document",
    "render_run_page",
    "run_section",
    "write_page",
    "write_run_page",
]

PAGE_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
"""Content-Security-Policy of every page: no script at all, no external load of any kind."""

_CSS = """
:root{--ink:#1d2430;--mute:#5b6472;--line:#d8dde5;--bg:#f6f7f9;--in:#1f7a3f;--inbg:#e3f4e8;
--out:#a1262d;--outbg:#fbe6e7;--warn:#8a5a00;--warnbg:#fff3d6;--acc:#2456a6}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);margin:0;
background:#fff}
main{max-width:1180px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:20px;margin:8px 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:2px solid
var(--line);padding-bottom:3px}h3{font-size:14px;margin:14px 0 6px}
h4{font-size:15px;margin:12px 0 4px}h5{font-size:14px;margin:18px 0 6px;border-bottom:1px solid
var(--line)}h6{font-size:13px;margin:10px 0 4px}
a{color:var(--acc);text-decoration:none}a:hover{text-decoration:underline}
.mute{color:var(--mute)}.cid{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.ctitle{font-weight:600}
table{border-collapse:collapse;margin:6px 0;font-size:13px}
th,td{border:1px solid var(--line);padding:3px 6px;vertical-align:top;text-align:left}
th{background:var(--bg);font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.facts{display:flex;flex-wrap:wrap;gap:4px 14px;margin:4px 0 8px;color:var(--mute)}
.facts b{color:var(--ink);font-weight:600}
.answer{background:var(--bg);border-left:4px solid var(--acc);padding:8px 12px;margin:8px 0}
.answer .short{font-size:16px;font-weight:600}
.badge{display:inline-block;border-radius:3px;padding:0 5px;font-size:12px;
border:1px solid var(--line);background:var(--bg);white-space:nowrap}
.badge.in{color:var(--in);background:var(--inbg);border-color:#9fd3b0}
.badge.out{color:var(--out);background:var(--outbg);border-color:#e9a9ad}
.badge.warn{color:var(--warn);background:var(--warnbg);border-color:#ecc96b}
table.slots td.slot{min-width:150px;max-width:230px}
td.slot.in{background:var(--inbg);border:2px solid var(--in)}
td.slot.kept{color:var(--mute)}
td.low{background:var(--outbg)}
td.right{background:var(--inbg)}
.swap{border:1px solid var(--line);border-radius:4px;padding:6px 10px;margin:8px 0;
break-inside:avoid}
.swap .arrow{font-weight:700;margin:0 6px}
.bar{display:flex;height:18px;border:1px solid var(--line);background:var(--bg);margin:6px 0;
max-width:900px}
.bar span{display:block;height:100%;background:#7fa6dd;border-right:1px solid #fff;
overflow:hidden;font-size:10px;color:#fff;text-align:center}
.bar span:nth-child(even){background:#4f7fc4}
pre.text{white-space:pre-wrap;word-break:break-word;background:var(--bg);padding:6px 8px;
margin:4px 0;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;max-height:22em;overflow:auto}
section.chunk{border-top:1px solid var(--line);padding-top:4px}
details>summary{cursor:pointer}
@media print{main{max-width:none;padding:0}a{color:inherit}
details::details-content{content-visibility:visible;display:block}
details>summary{list-style:none}pre.text{max-height:none;overflow:visible}
h2{break-after:avoid}table,.swap,section.chunk{break-inside:avoid}}
"""


def page_document(title: str, body: str) -> str:
    """Wrap ``body`` (HTML already escaped) into a complete self-contained document.

    Args:
        title: The document title (escaped here).
        body: The content of ``<main>``.

    Returns:
        The HTML text, with the strict :data:`PAGE_CSP` and the inline style sheet.

    """
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{PAGE_CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_a(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body><main>\n{body}\n</main></body></html>\n"
    )


def write_page(path: str | os.PathLike[str], text: str, *, inputs: Inputs | None = None) -> Path:
    """Write a page through :func:`sealgraph.outputs.write_output` and return its path.

    Args:
        path: The page file.
        text: The HTML text.
        inputs: What the command writing it reads, never replaced by the page.

    Raises:
        InputError: The target is refused (a file the command reads, inside an
            index, a link, not a regular file...) or writing failed; nothing changed.

    """
    return write_output(path, text, flag="--html", inputs=inputs)


def render_run_page(
    state: Mapping[str, Any],
    *,
    events: Iterable[Mapping[str, Any]] | None = None,
    title: str | None = None,
    facts: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
) -> str:
    """Render one run as a complete HTML page.

    Args:
        state: The run's state (a graph result or a checkpoint's values): its
            ``question``, ``answer``, ``citations``, ``evidence``, ``packed`` and
            the answer fields ``short_answer``, ``declined``, ``missing`` and
            ``answerability`` are read when present.
        events: The run's events; default ``state["seal_log"]``.
        title: Heading of the page (default: "sealgraph run").
        facts: More header facts shown as ``name: value`` (thread id, index, ...).
        config: The run's config as a dict (``SealConfig.to_dict()``): k, loops, ε,
            dwell, budget and the λ weights are shown when given.

    Returns:
        The HTML text.

    """
    log = list(state.get("seal_log") or []) if events is None else list(events)
    heading = title or "sealgraph run"
    section = run_section(state, events=log, facts=facts, config=config, heading=heading)
    return page_document(f"{heading}: {snippet(state.get('question', ''), 80)}", section)


def write_run_page(
    path: str | os.PathLike[str],
    state: Mapping[str, Any],
    *,
    inputs: Inputs | None = None,
    **kwargs: Any,
) -> Path:
    """Render a run with :func:`render_run_page` (same keywords) and write it to ``path``.

    ``write_run_page("run.html", graph.invoke({"question": q}))`` is a whole run's page;
    ``inputs`` are files and folders the page must never replace (:func:`write_page`).
    """
    return write_page(path, render_run_page(state, **kwargs), inputs=inputs)


def run_section(
    state: Mapping[str, Any],
    *,
    events: Iterable[Mapping[str, Any]] | None = None,
    facts: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    heading: str = "sealgraph run",
    prefix: str = "",
    level: int = 1,
) -> str:
    """Render one run as a ``<section>``: the body of :func:`render_run_page`.

    Args:
        state: The run's state (see :func:`render_run_page`).
        events: The run's events; default ``state["seal_log"]``.
        facts: More header facts.
        config: The run's config as a dict.
        heading: The section heading.
        prefix: Prefix of every id in the section (unique per run on a page).
        level: Heading level of the section title (its parts are one below).

    """
    log = list(state.get("seal_log") or []) if events is None else list(events)
    run = _gather(prefix, log, state, config)
    parts = [
        _header(run, heading, facts, level),
        _answer_box(run),
        answer_step_section(run.events, run.state, _e, lambda n: f"#{run.prefix}cite-{n}"),
        _llm_part(run),
        _needs_part(run),
        branches_part(run.events, run.chunk_link),
        _slots_part(run),
        _loops_part(run),
        _packing_part(run),
        _citations_part(run),
        _evidence_part(run),
        _steps_part(run),
    ]
    # Parts are written with <h2> and <h3>: shifted below the section's own level.
    body = "\n".join(p for p in parts if p)
    for written in (3, 2):
        shifted = min(level + written - 1, 6)
        body = body.replace(f"<h{written}>", f"<h{shifted}>")
        body = body.replace(f"</h{written}>", f"</h{shifted}>")
    return f'<section class="run" id="{run.prefix}run">\n{body}\n</section>'


# ---------------------------------------------------------------- header and answer


def _header(run: _Run, heading: str, facts: Mapping[str, Any] | None, level: int) -> str:
    question = run.state.get("question") or _needs(run).get("question") or ""
    shown: dict[str, Any] = dict(facts or {})
    cfg = run.config
    for key in ("k", "max_loops", "epsilon", "dwell", "budget", "replacement"):
        if key in cfg:
            shown.setdefault(key, cfg[key])
    weights = cfg.get("utility") or {}
    if weights:
        shown.setdefault(
            "λ",
            ", ".join(f"{label} {_num(weights.get(w), 'g')}" for _, label, w in _TERMS),
        )
    loops = run.state.get("loops", run.state.get("loop"))
    if loops is not None:
        shown.setdefault("loops run", loops)
    if run.state.get("stop_reason"):
        shown.setdefault("stopped", run.state["stop_reason"])
    items = "".join(f"<span>{_e(k)}: <b>{_e(v)}</b></span>" for k, v in shown.items())
    return (
        f'<h{level} class="question">{_e(heading)}: {_e(question)}</h{level}>\n'
        f'<div class="facts">{items}</div>'
    )


_CITE = re.compile(r"\[(\d{1,4})\]")


def _linked_answer(run: _Run, text: str) -> str:
    # Escaped first: the [n] marks survive escaping unchanged and become links.
    cited = {int(c.get("n", -1)) for c in run.state.get("citations") or []}

    def link(match: re.Match[str]) -> str:
        n = int(match.group(1))
        if n not in cited:
            return match.group(0)
        return f'<a class="cite" href="#{run.prefix}cite-{n}">[{n}]</a>'

    return _CITE.sub(link, _e(text))


def _answer_box(run: _Run) -> str:
    state = run.state
    if "answer" not in state:
        return '<div class="answer mute">No answer yet: the run stopped before generate.</div>'
    lines = []
    if state.get("short_answer"):
        lines.append(f'<div class="short">{_e(state["short_answer"])}</div>')
    lines.append(f'<div class="text">{_linked_answer(run, str(state.get("answer", "")))}</div>')
    verdict = []
    if state.get("declined"):
        verdict.append('<span class="badge warn">declined</span>')
    if isinstance(state.get("answerability"), int | float):
        verdict.append(f"answerability {_num(state['answerability'], '.2f')}")
    if state.get("missing"):
        verdict.append(f"missing: {_e(state['missing'])}")
    if verdict:
        lines.append(f'<div class="mute">{" · ".join(verdict)}</div>')
    return f'<h2>Answer</h2>\n<div class="answer">{"".join(lines)}</div>'


def _llm_part(run: _Run) -> str:
    # LLM steps that fell back to the offline reasoner, and the circuit, if it opened:
    # the parts of the run the model did not decide.
    notes = run.of_kind("llm_fallback", "llm_circuit")
    if not notes:
        return ""
    items = "".join(
        f'<li class="llm-note"><span class="badge warn">{_e(e.get("kind", ""))}</span> '
        f"step {_e((e.get('data') or {}).get('step', e.get('node', '')))}: "
        f"{_e((e.get('data') or {}).get('reason', e.get('message', '')))}</li>"
        for e in notes
    )
    return f"<h2>LLM fallbacks</h2>\n<ul>{items}</ul>"


# ---------------------------------------------------------------- needs


def _needs(run: _Run) -> Mapping[str, Any]:
    found = run.of_kind("needs")
    if found:
        return found[-1].get("data") or {}
    return run.state.get("needs") or {}


def _needs_part(run: _Run) -> str:
    needs = _needs(run)
    if not needs:
        return ""
    rows = [
        ("answer type", _e(needs.get("answer_type", ""))),
        ("structure", _e(needs.get("structure", ""))),
        ("hops", _e(needs.get("hops", ""))),
    ]
    entities = needs.get("entities") or []
    if entities:
        rows.append(("entities", "<br>".join(_entity_line(e) for e in entities)))
    for key, label in (
        ("relation_terms", "relation words"),
        ("options", "options"),
        ("answer_modifiers", "modifiers"),
    ):
        if needs.get(key):
            rows.append((label, _e(", ".join(map(str, needs[key])))))
    body = "".join(f"<tr><th>{label}</th><td>{value}</td></tr>" for label, value in rows)
    return f'<h2>Question needs</h2>\n<table class="needs">{body}</table>'


def _entity_line(entity: Mapping[str, Any]) -> str:
    targets = entity.get("targets") or []
    where = f' <span class="mute">→ {_e(", ".join(map(str, targets)))}</span>' if targets else ""
    return f"{_e(entity.get('name', ''))}{where}"


# ---------------------------------------------------------------- slots across loops


def _pack_data(run: _Run) -> Mapping[str, Any]:
    packs = run.of_kind("pack")
    return (packs[-1].get("data") or {}) if packs else {}


def _offsets(run: _Run) -> dict[int, Mapping[str, Any]]:
    # Citation number -> where its span lies (the pack event of runs that record it).
    return {int(s.get("n", 0)): s for s in _pack_data(run).get("spans") or []}


def _where(span: Mapping[str, Any] | None) -> str:
    if not span or "start" not in span:
        return '<span class="mute">offsets not recorded</span>'
    return f'<span class="cid">{_e(span.get("doc_id", ""))} [{span["start"]}:{span["end"]}]</span>'


def _packing_part(run: _Run) -> str:
    data = _pack_data(run)
    if not data:
        return ""
    decisions = list(data.get("decisions") or [])
    budget = int(data.get("budget") or 0)
    used = int(data.get("tokens") or 0)
    kept = [d for d in decisions if d.get("decision") == "selected"]
    dropped = [d for d in decisions if d.get("decision") != "selected"]
    return (
        f"<h2>Packing</h2>\n<div>{used} of {budget} tokens used "
        f"({_e(data.get('strategy', ''))}); {len(kept)} span(s) kept, "
        f"{len(dropped)} dropped</div>{_budget_bar(kept, budget)}"
        f"{_kept_table(run, kept)}{_dropped_table(dropped)}"
    )


def _budget_bar(kept: Sequence[Mapping[str, Any]], budget: int) -> str:
    if budget <= 0:
        return ""
    segments = "".join(
        f'<span style="width:{100 * int(d.get("tokens") or 0) / budget:.2f}%" '
        f'title="{_a(d.get("span_id", ""))}: {int(d.get("tokens") or 0)} tokens">'
        f"{int(d.get('tokens') or 0)}</span>"
        for d in kept
    )
    return f'<div class="bar" role="img" aria-label="budget used">{segments}</div>'


def _kept_table(run: _Run, kept: Sequence[Mapping[str, Any]]) -> str:
    if not kept:
        return ""
    by_span = {str(s.get("span_id")): s for s in _offsets(run).values()}
    rows = []
    for d in kept:
        span = by_span.get(str(d.get("span_id")))
        cite = f'<a href="#{run.prefix}cite-{span["n"]}">[{span["n"]}]</a>' if span else ""
        rows.append(
            f'<tr class="kept"><td>{cite}</td><td class="cid">{_e(d.get("span_id", ""))}</td>'
            f"<td>{_e(d.get('section', ''))}</td><td>{_where(span)}</td>"
            f'<td class="n">{int(d.get("tokens") or 0)}</td><td>{_e(d.get("reason", ""))}</td></tr>'
        )
    return (
        "<h3>Kept, in the order packing admitted them</h3><table><tr><th>cite</th><th>span</th>"
        "<th>section</th><th>source</th><th>tokens</th><th>why</th></tr>"
        f"{''.join(rows)}</table>"
    )


def _dropped_table(dropped: Sequence[Mapping[str, Any]]) -> str:
    if not dropped:
        return '<p class="mute">No span was dropped.</p>'
    rows = "".join(
        f'<tr class="dropped"><td class="cid">{_e(d.get("span_id", ""))}</td>'
        f'<td>{_e(d.get("doc_id", ""))}</td><td class="n">{int(d.get("tokens") or 0)}</td>'
        f'<td><span class="badge out">{_e(d.get("decision", ""))}</span> '
        f"{_e(d.get('reason', ''))}</td></tr>"
        for d in dropped
    )
    return (
        "<h3>Dropped</h3><table><tr><th>span</th><th>document</th><th>tokens</th>"
        f"<th>why</th></tr>{rows}</table>"
    )


# ---------------------------------------------------------------- citations and evidence


def _citations_part(run: _Run) -> str:
    citations = list(run.state.get("citations") or [])
    if not citations:
        return ""
    where = _offsets(run)
    items = []
    for c in citations:
        n = int(c.get("n", 0))
        chunks = ", ".join(run.chunk_link(str(cid)) for cid in c.get("chunk_ids") or [])
        items.append(
            f'<li class="citation" id="{run.prefix}cite-{n}" value="{n}">'
            f"<b>{_shown_title(c.get('title', ''))}</b> · {_where(where.get(n, c))} · {chunks}"
            f'<pre class="text">{_e(c.get("text", ""))}</pre></li>'
        )
    return f'<h2>Citations</h2>\n<ol class="citations">{"".join(items)}</ol>'


def _evidence_part(run: _Run) -> str:
    evidence = list(run.state.get("evidence") or [])
    if not evidence:
        return ""
    parts = []
    for item in evidence:
        cid = str(item.get("chunk_id", ""))
        text = str(item.get("text", ""))
        cut = " …" if len(text) > _TEXT_CHARS else ""
        section = " > ".join(map(str, item.get("section") or []))
        if "start" in item:
            section += f" · characters [{item['start']}:{item['end']}]"
        parts.append(
            f'<section class="chunk" id="{page_anchor(run.prefix, "chunk", cid)}" '
            f'data-chunk="{_a(cid)}"><b>{_shown_title(item.get("title", ""))}</b> '
            f'<span class="cid">{_e(cid)}</span> <span class="mute">{_e(section)} · '
            f"document {_e(item.get('doc_id', ''))} · entered in loop "
            f"{_e(item.get('inserted_loop', 0))}</span>"
            f'<pre class="text">{_e(text[:_TEXT_CHARS])}{cut}</pre></section>'
        )
    return "<h2>Final evidence</h2>\n" + "\n".join(parts)


def _steps_part(run: _Run) -> str:
    calls = group_calls(run.events)
    if not calls:
        return ""
    rows = "".join(
        f'<tr><td class="n">{c.step}</td><td>{_e(c.node)}</td><td class="n">{c.loop}</td>'
        f'<td class="n">{c.ms:.1f}</td><td>{_e(snippet(node_summary(c.node, c.events), 220))}</td>'
        "</tr>"
        for c in calls
    )
    return (
        "<h2>Steps</h2>\n<details><summary>One line per node call</summary><table>"
        "<tr><th>step</th><th>node</th><th>loop</th><th>ms</th><th>what it did</th></tr>"
        f"{rows}</table></details>"
    )
