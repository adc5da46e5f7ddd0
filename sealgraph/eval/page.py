"""``sealgraph eval --html``: the methods' table and, per question, the run behind each number.

The page is built in two steps so that an evaluation keeps only what it shows:
:func:`method_run_section` renders one (question, method) as soon as the method
has answered it (a graph method's whole run, through
:func:`sealgraph.runs.page.run_section`; a flat method's evidence, citations and
answer), and :func:`render_eval_page` puts the report's tables in front of those
sections. The page has the run page's guarantees: every text escaped, no script,
no external load (:data:`sealgraph.runs.page.PAGE_CSP`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sealgraph.eval.report import table_columns
from sealgraph.runs._html import html_attr, html_text
from sealgraph.runs.page import page_anchor, page_document, run_section
from sealgraph.runs.timeline import snippet

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.eval.methods import MethodOutput

__all__ = ["cell_verdict", "method_run_anchor", "method_run_section", "render_eval_page"]

_SUMMARY_SCORES: tuple[tuple[str, str], ...] = (
    ("recall", "recall"),
    ("span_recall_context", "span_ctx"),
    ("answer_f1", "F1"),
    ("answer_containment", "contain"),
)
"""Per-question scores shown next to each method: (record score key, label)."""

_LOW = 0.5  # a per-question score below this is marked, to find the bad numbers fast


def _e(value: Any) -> str:
    # Element content: escaped, bidi controls shown, right-to-left text isolated.
    return html_text(value)


def method_run_anchor(question_id: str, method: str) -> str:
    """Return the page id of one question's run by one method (safe characters only)."""
    return page_anchor("", "run", f"{question_id}/{method}")


def _score_text(scores: Mapping[str, Any]) -> str:
    shown = [
        f"{label} {float(scores[key]):.2f}"
        for key, label in _SUMMARY_SCORES
        if isinstance(scores.get(key), int | float) and not isinstance(scores.get(key), bool)
    ]
    if scores.get("declined"):
        shown.append("declined")
    return " · ".join(shown)


def cell_verdict(record: Mapping[str, Any]) -> tuple[str, str]:
    """Return how a question's cell is marked (``low``, ``right`` or ``""``) and a note.

    An unanswerable question (its corpus does not hold the answer) is right when the
    method declined and wrong when it answered, whatever its scores; an answerable one
    is marked low when a score is under :data:`_LOW` or the method declined.
    """
    scores = record.get("scores") or {}
    declined = bool(scores.get("declined"))
    if record.get("answerable") is False:
        return ("right", "right: unanswerable") if declined else ("low", "answered: unanswerable")
    low = any(
        isinstance(scores.get(key), float) and scores[key] < _LOW for key, _ in _SUMMARY_SCORES
    )
    return ("low", "") if low or declined else ("", "")


def _flat_state(record: Mapping[str, Any], output: MethodOutput) -> dict[str, Any]:
    # What a method without a graph run has to show: its evidence, answer and citations
    # (with the offsets of the packed spans, cited by number in reading order).
    citations = []
    for citation in output.citations:
        item = dict(citation)
        n = int(item.get("n", 0))
        if 0 < n <= len(output.packed):
            doc_id, start, end = output.packed[n - 1]
            item.update({"doc_id": doc_id, "start": start, "end": end})
        citations.append(item)
    return {
        "question": record.get("question", ""),
        "answer": output.answer,
        "short_answer": output.short_answer,
        "declined": output.declined,
        "missing": output.missing,
        "answerability": output.answerability,
        "citations": citations,
        "evidence": [
            {
                "chunk_id": c.chunk_id,
                "doc_id": c.doc_id,
                "title": c.title,
                "section": list(c.section),
                "text": c.text,
                "start": c.start,
                "end": c.end,
                "inserted_loop": 0,
            }
            for c in output.evidence
        ],
    }


def method_run_section(
    record: Mapping[str, Any],
    output: MethodOutput,
    config: Mapping[str, Any] | None = None,
) -> str:
    """Render one question's run by one method as a collapsible block of the eval page.

    Args:
        record: The question's ``records.jsonl`` line for the method (id, method, scores).
        output: What the method produced; a graph method's ``run`` (its final state,
            events included) is rendered whole, other methods show their evidence.
        config: The config the method ran with, as a dict.

    """
    qid, method = str(record.get("id", "")), str(record.get("method", ""))
    anchor = method_run_anchor(qid, method)
    state = output.run if output.run is not None else _flat_state(record, output)
    body = run_section(
        state,
        config=config if output.run is not None else None,
        heading=method,
        prefix=f"{anchor}-",
        level=4,
    )
    scores = _score_text(record.get("scores") or {})
    answer = snippet(output.answer, 100)
    return (
        f'<details class="method-run" id="{anchor}" data-method="{html_attr(method)}">'
        f'<summary><b>{_e(method)}</b> <span class="mute">{_e(scores)}</span> · '
        f"{_e(answer)}</summary>\n{body}\n</details>"
    )


def _methods_table(report: Mapping[str, Any]) -> str:
    columns = table_columns(str(report.get("format", "")))
    head = "".join(f"<th>{_e(title)}</th>" for _, title, _ in columns)
    rows = []
    for name, values in (report.get("methods") or {}).items():
        cells = "".join(
            f'<td class="n">{"-" if values.get(key) is None else _e(format(values[key], spec))}</td>'
            for key, _, spec in columns
        )
        rows.append(f'<tr class="method"><th>{_e(name)}</th>{cells}</tr>')
    return f'<table class="methods"><tr><th>method</th>{head}</tr>{"".join(rows)}</table>'


def _overview(
    questions: Sequence[str],
    by_key: Mapping[tuple[str, str], Mapping[str, Any]],
    methods: Sequence[str],
    texts: Mapping[str, str],
) -> str:
    # One row per question, one cell per method: its scores, linking to the run.
    head = "".join(f"<th>{_e(m)}</th>" for m in methods)
    rows = []
    for qid in questions:
        cells = []
        for method in methods:
            record = by_key.get((qid, method))
            if record is None:
                cells.append("<td></td>")
                continue
            scores = record.get("scores") or {}
            verdict, note = cell_verdict(record)
            cls = f' class="{verdict}"' if verdict else ""
            text = " · ".join(filter(None, (_score_text(scores), note))) or "open"
            cells.append(
                f'<td{cls}><a href="#{method_run_anchor(qid, method)}">{_e(text)}</a></td>'
            )
        rows.append(
            f'<tr><th><a href="#q-{_slug(qid)}">{_e(qid)}</a></th>'
            f"<td>{_e(snippet(texts.get(qid, ''), 90))}</td>{''.join(cells)}</tr>"
        )
    return f'<table class="questions"><tr><th>id</th><th>question</th>{head}</tr>{"".join(rows)}</table>'


def _slug(text: str) -> str:
    return page_anchor("", "q", text)


def _question_part(qid: str, records: Sequence[Mapping[str, Any]], sections: Sequence[str]) -> str:
    first = records[0]
    gold = first.get("gold_answer")
    gold_docs = first.get("gold_documents") or first.get("gold_titles") or []
    facts = [f"gold answer: <b>{_e(gold if gold is not None else '(unanswerable)')}</b>"]
    if gold_docs:
        facts.append(f"gold: {_e(', '.join(map(str, gold_docs)))}")
    return (
        f'<section class="question" id="q-{_slug(qid)}"><h2>{_e(qid)}: '
        f"{_e(first.get('question', ''))}</h2>"
        f'<div class="facts">{"".join(f"<span>{f}</span>" for f in facts)}</div>'
        + "\n".join(sections)
        + "</section>"
    )


def render_eval_page(
    report: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    sections: Sequence[str],
) -> str:
    """Render the evaluation: the methods' table, a table of questions, then every run.

    Args:
        report: The content of ``report.json``.
        records: The ``records.jsonl`` lines of the main run (every method, every question).
        sections: ``method_run_section`` of each record, in the same order.

    Returns:
        The HTML text of a self-contained page.

    """
    methods = list(dict.fromkeys(str(r.get("method", "")) for r in records))
    questions = list(dict.fromkeys(str(r.get("id", "")) for r in records))
    by_key = {(str(r.get("id", "")), str(r.get("method", ""))): r for r in records}
    texts = {str(r.get("id", "")): str(r.get("question", "")) for r in records}
    grouped: dict[str, list[tuple[Mapping[str, Any], str]]] = {q: [] for q in questions}
    for record, section in zip(records, sections, strict=True):
        grouped[str(record.get("id", ""))].append((record, section))
    facts = {
        "questions": report.get("questions_file", ""),
        "format": report.get("format", ""),
        "n": report.get("n_questions", len(questions)),
        "corpus": report.get("corpus_size", ""),
        "k": report.get("k", ""),
        "budget": report.get("budget", ""),
        "max_loops": report.get("max_loops", ""),
        "embedder": (report.get("index") or {}).get("embedder") or "none",
    }
    if report.get("split"):
        facts["split"] = report["split"]
    shown = "".join(f"<span>{_e(k)}: <b>{_e(v)}</b></span>" for k, v in facts.items())
    body = [
        f"<h1>sealgraph eval: {_e(report.get('questions_file', ''))}</h1>",
        f'<div class="facts">{shown}</div>',
        "<h2>Methods</h2>",
        _methods_table(report),
        "<h2>Questions</h2>",
        '<p class="mute">Each cell is one method on one question (scores below '
        f"{_LOW} or a declined answer are marked; on a question the documents cannot answer, "
        "a decline is right and an answer wrong); it links to that run.</p>",
        _overview(questions, by_key, methods, texts),
        *(
            _question_part(qid, [r for r, _ in grouped[qid]], [s for _, s in grouped[qid]])
            for qid in questions
        ),
    ]
    title = f"sealgraph eval: {report.get('questions_file', '')}"
    return page_document(title, "\n".join(body))
