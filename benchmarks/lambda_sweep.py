"""Sweep the utility weights λ1..λ4 (and other config keys) on a QA dev file.

Usage:
    python benchmarks/lambda_sweep.py --questions QA.jsonl --index IDX --k 3 \
        --grid '{"utility.corroboration": [0.5, 1.0, 1.5], "utility.novelty": [0.05, 0.1, 0.3]}'

Prints gold-title recall, all-gold and precision of the SEAL graph's evidence for
every combination of the grid (one line each), on one warm index.
"""

from __future__ import annotations

import argparse
import itertools
import json

from sealgraph.config import SealConfig
from sealgraph.graph.builder import build_graph
from sealgraph.index import load_index


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--grid", required=True, help="JSON object: config key -> list of values")
    args = ap.parse_args()
    grid = json.loads(args.grid)
    with open(args.questions, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()][: args.limit]
    index = load_index(args.index)
    keys = sorted(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        overrides = dict(zip(keys, values, strict=True))
        graph = build_graph(index=index, config=SealConfig(k=args.k).override(overrides))
        recall = all_gold = precision = 0.0
        for r in records:
            gold = {t for t, _ in r["supporting_facts"]}
            got = {e["title"] for e in graph.invoke({"question": r["question"]})["evidence"]}
            recall += len(gold & got) / len(gold)
            all_gold += gold <= got
            precision += len(gold & got) / max(1, len(got))
        n = len(records)
        print(
            f"{json.dumps(overrides)}  recall {recall / n:.3f}  all_gold {all_gold / n:.3f}  "
            f"precision {precision / n:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
