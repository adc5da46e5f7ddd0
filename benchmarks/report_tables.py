"""Render `sealgraph eval` report.json files as the Markdown tables of docs/benchmarks.md.

Usage:
    python benchmarks/report_tables.py bench-out/hotpot.json [more.json ...]
"""

from __future__ import annotations

import json
import sys

COLUMNS = (
    ("recall", "recall", 3),
    ("all_gold", "all-gold", 3),
    ("precision", "precision", 3),
    ("evidence_size_mean", "E size", 2),
    ("evidence_tokens_mean", "evidence tok", 0),
    ("context_tokens_mean", "context tok", 0),
    ("sp_sentence_recall_evidence", "SP sent. (evidence)", 3),
    ("sp_sentence_recall", "SP sent. (context)", 3),
    ("overlap_mean", "overlap", 3),
    ("answer_em", "EM", 3),
    ("answer_f1", "F1", 3),
    ("latency_ms_p50", "p50 ms", 1),
    ("latency_ms_p95", "p95 ms", 1),
    ("loops_mean", "loops", 2),
    ("llm_calls_mean", "LLM calls", 1),
    ("peak_rss_mb", "peak RSS MB", 0),
    ("budget_violations", "over budget", 0),
)


def table(report: dict) -> str:
    """Return one Markdown table with a row per method."""
    head = "| method | " + " | ".join(c[1] for c in COLUMNS) + " |"
    sep = "|---|" + "---:|" * len(COLUMNS)
    rows = []
    for name, m in report["methods"].items():
        cells = []
        for key, _, digits in COLUMNS:
            v = m.get(key)
            cells.append("" if v is None else f"{v:.{digits}f}" if digits else f"{v:.0f}")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join([head, sep, *rows])


def main() -> None:
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as fh:
            report = json.load(fh)
        print(
            f"**{report['questions_file'].rsplit('/', 1)[-1]}**: {report['n_questions']} questions, "
            f"corpus {report['corpus_size']} paragraphs, k={report['k']}, "
            f"budget={report['budget']}, L={report['max_loops']}\n"
        )
        print(table(report))
        print()


if __name__ == "__main__":
    main()
