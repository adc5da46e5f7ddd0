"""Per-half tables from whole-file eval records: recall, all-gold, span recall, latency.

Usage::

    python benchmarks/records_table.py [--label NAME=DIR ...] SET [SET ...]

Each DIR holds ``SET.records.jsonl`` written by ``sealgraph eval --records`` over a
whole question file. A question's half is the eval's own (``sealgraph.eval.split``:
the first byte of the SHA-256 of its id), so the half-a and half-b rows are what
``--split a`` and ``--split b`` runs score: every method scores each question alone.
Prints one Markdown table per set: for each half (a, b, all), label and method,
doc recall, all-gold, span recall in the evidence (sets with gold spans; "-"
elsewhere), supporting-sentence recall in the packed context (sets with supporting
sentences; "-" elsewhere: the records keep no sentence recall of the evidence itself),
evidence size and p50 latency in ms.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from sealgraph.eval.split import split_of


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "-"


def rows(label: str, path: Path) -> list[tuple[str, str, str, dict[str, str]]]:
    """``(half, label, method, cells)`` for every half and method of one records file."""
    cells: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        s = r.get("scores") or {}
        for half in (split_of(r["id"]), "all"):
            c = cells[half, r["method"]]
            c["latency"].append(float(r.get("latency_ms") or 0.0))
            c["size"].append(float(len(r.get("evidence") or [])))
            if s.get("recall") is not None:
                c["recall"].append(float(s["recall"]))
                c["all_gold"].append(1.0 if s.get("all_gold") else 0.0)
            if s.get("span_recall_evidence") is not None:
                c["span"].append(float(s["span_recall_evidence"]))
            if s.get("sp_sentences"):
                c["sp"].append(float(s.get("sp_in_context") or 0) / float(s["sp_sentences"]))
    out = []
    for (half, method), c in sorted(cells.items()):
        out.append(
            (
                half,
                label,
                method,
                {
                    "n": str(len(c["latency"])),
                    "recall": _mean(c["recall"]),
                    "all_gold": _mean(c["all_gold"]),
                    "span": _mean(c["span"]),
                    "sp": _mean(c["sp"]),
                    "size": _mean(c["size"]),
                    "p50": f"{statistics.median(c['latency']):.0f}" if c["latency"] else "-",
                },
            )
        )
    return out


def main(argv: list[str]) -> int:
    labels: list[tuple[str, Path]] = []
    sets: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--label":
            name, _, folder = next(args).partition("=")
            labels.append((name, Path(folder)))
        else:
            sets.append(arg)
    for name in sets:
        print(f"\n**{name}**\n")
        print(
            "| half | code | method | n | doc recall | all-gold | span recall (evidence) "
            "| SP sent. (context) | evidence size | p50 ms |"
        )
        print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
        found = []
        for label, folder in labels:
            path = folder / f"{name}.records.jsonl"
            if path.exists():
                found.extend(rows(label, path))
        order = {"a": 0, "b": 1, "all": 2}
        for half, label, method, c in sorted(found, key=lambda t: (order[t[0]], t[1], t[2])):
            print(
                f"| {half} | {label} | {method} | {c['n']} | {c['recall']} | {c['all_gold']} | "
                f"{c['span']} | {c['sp']} | {c['size']} | {c['p50']} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
