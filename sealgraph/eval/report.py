"""Writing and printing evaluation results.

Outputs are written atomically and together, through :mod:`sealgraph.outputs`:
every file goes to a temporary sibling first and is moved into place only once
all of them were written, so a failed run never leaves a half-written report
behind, and none lands on a file or inside a folder the evaluation reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from sealgraph.outputs import Inputs, Output
from sealgraph.outputs import write_outputs as write_all

__all__ = [
    "CORPUS_TABLE_COLUMNS",
    "TABLE_COLUMNS",
    "eval_outputs",
    "format_table",
    "table_columns",
    "write_outputs",
]

TABLE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("recall", "recall", ".3f"),
    ("all_gold", "all_gold", ".3f"),
    ("precision", "prec", ".3f"),
    ("evidence_size_mean", "|E|", ".2f"),
    ("evidence_tokens_mean", "ev_tok", ".0f"),
    ("context_tokens_mean", "ctx_tok", ".0f"),
    ("sp_sentence_recall", "sp_rec", ".3f"),
    ("overlap_mean", "overlap", ".3f"),
    ("answer_em", "EM", ".3f"),
    ("answer_f1", "F1", ".3f"),
    ("answer_containment", "contain", ".3f"),
    ("declined_answerable", "decl", ".3f"),
    ("latency_ms_p50", "p50_ms", ".1f"),
    ("latency_ms_p95", "p95_ms", ".1f"),
    ("loops_mean", "loops", ".2f"),
    ("llm_calls_mean", "llm", ".2f"),
    ("budget_violations", "over", "d"),
)
"""Columns of the multi-hop QA table: (metric key, header, format spec)."""

CORPUS_TABLE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("recall", "doc_rec", ".3f"),
    ("all_gold", "all_docs", ".3f"),
    ("span_recall_evidence", "span_ev", ".3f"),
    ("span_recall_context", "span_ctx", ".3f"),
    ("evidence_size_mean", "|E|", ".2f"),
    ("context_tokens_mean", "ctx_tok", ".0f"),
    ("declined_answerable", "decl_ans", ".3f"),
    ("declined_unanswerable", "decl_unans", ".3f"),
    ("answer_containment", "contain", ".3f"),
    ("answer_f1", "F1", ".3f"),
    ("latency_ms_p50", "p50_ms", ".1f"),
    ("latency_ms_p95", "p95_ms", ".1f"),
    ("loops_mean", "loops", ".2f"),
    ("budget_violations", "over", "d"),
)
"""Columns of the table of questions about a corpus folder."""


def table_columns(report_format: str) -> tuple[tuple[str, str, str], ...]:
    """Return the table columns of a report's ``format`` (``corpus`` or ``multihop``)."""
    return CORPUS_TABLE_COLUMNS if report_format == "corpus" else TABLE_COLUMNS


def format_table(
    methods: Mapping[str, Mapping[str, Any]],
    columns: Sequence[tuple[str, str, str]] = TABLE_COLUMNS,
) -> str:
    """Render per-method metrics as an aligned text table (methods as rows).

    A metric that does not apply (None, or absent) shows as ``-``; columns
    default to :data:`TABLE_COLUMNS`.
    """
    header = ["method", *(title for _, title, _ in columns)]
    rows = [header]
    for name, values in methods.items():
        rows.append([name, *(_cell(values.get(key), spec) for key, _, spec in columns)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells))
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def _cell(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def eval_outputs(
    report: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    *,
    out: str | Path | None = None,
    records_out: str | Path | None = None,
    plot: str | Path | None = None,
    html: str | Path | None = None,
    page: str | None = None,
) -> list[Output]:
    """Return the outputs an evaluation was asked for (those given a path), in writing order.

    Args:
        report: Content of ``report.json``.
        records: Lines of ``records.jsonl``.
        out: Path of ``report.json``.
        records_out: Path of ``records.jsonl``.
        plot: Path of the sweep plot image.
        html: Path of the HTML page.
        page: The HTML page's text (see :mod:`sealgraph.eval.page`).

    """
    outputs: list[Output] = []
    if out is not None:
        outputs.append(Output(out, "--out", lambda f: f.write(_dump_json(report).encode())))
    if records_out is not None:
        outputs.append(Output(records_out, "--records", lambda f: _write_records(f, records)))
    if plot is not None:
        from sealgraph.eval.plot import plot_sweeps

        kind = Path(plot).suffix.lstrip(".").lower() or "png"
        outputs.append(
            Output(plot, "--plot", lambda f: plot_sweeps(report.get("sweeps", {}), f, kind))
        )
    if html is not None:
        outputs.append(Output(html, "--html", lambda f: f.write((page or "").encode())))
    return outputs


def write_outputs(
    report: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    *,
    inputs: Inputs | None = None,
    **paths: Any,
) -> None:
    """Write the report, the records, the sweep plot and the HTML page, all or nothing.

    ``paths`` are :func:`eval_outputs`' keywords; every file goes through
    :func:`sealgraph.outputs.write_outputs`, which never lets one land on ``inputs``.
    """
    write_all(eval_outputs(report, records, **paths), inputs)


def _dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _write_records(handle: BinaryIO, records: Sequence[Mapping[str, Any]]) -> None:
    for record in records:
        line = json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
        handle.write(line.encode("utf-8"))
