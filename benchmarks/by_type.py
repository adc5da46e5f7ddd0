"""Break eval records down by question type and half: doc recall and all-gold per method.

Usage::

    python benchmarks/by_type.py RECORDS.jsonl [RECORDS.jsonl ...]

Each file is written by ``sealgraph eval --records`` (any question set whose questions
carry a ``type``: the SEC 10-Q set's Single-Doc Single-Chunk / Single-Doc Multi-Chunk /
Multi-Doc RAG, finance-dragonball's types). Prints one Markdown table per file: for
each type and half (``a``, ``b`` by ``sealgraph.eval.split``, and all), the number of
answerable questions with gold documents and, per method, doc recall / all-gold.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from sealgraph.eval.split import split_of


def load(path: Path) -> list[dict]:
    """Return the records of one file (one JSON object a line)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def table(records: list[dict]) -> list[str]:
    """Markdown rows: type, half, n, then doc recall / all-gold of each method."""
    methods = list(dict.fromkeys(r["method"] for r in records))
    cells: dict[tuple[str, str, str], list[tuple[float, bool]]] = defaultdict(list)
    for r in records:
        scores = r.get("scores") or {}
        if scores.get("recall") is None:
            continue  # unanswerable, or no gold documents
        for half in (split_of(r["id"]), "all"):
            for kind in (r.get("type") or "-", "all types"):
                cells[kind, half, r["method"]].append((scores["recall"], bool(scores["all_gold"])))
    kinds = [*sorted({k for k, _, _ in cells} - {"all types"}), "all types"]
    head = "| type | half | n | " + " | ".join(f"{m} doc recall / all-gold" for m in methods) + " |"
    rows = [head, "|---|---|---:|" + "---:|" * len(methods)]
    for kind in kinds:
        for half in ("a", "b", "all"):
            got = [cells.get((kind, half, m), []) for m in methods]
            if not any(got):
                continue
            n = max(len(g) for g in got)
            parts = [
                f"{sum(r for r, _ in g) / len(g):.3f} / {sum(a for _, a in g) / len(g):.3f}"
                if g
                else "-"
                for g in got
            ]
            rows.append(f"| {kind} | {half} | {n} | " + " | ".join(parts) + " |")
    return rows


def main(argv: list[str]) -> int:
    for name in argv:
        print(f"\n{name}\n")
        print("\n".join(table(load(Path(name)))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
