"""SEAL over a Qdrant index against SEAL over the folder index of the same corpus (issue 22).

In one process: builds the corpus into a folder index (a temporary directory) and
into ``qdrant+memory://COLLECTION`` (Qdrant's in-process local mode) with the same
embedder, runs the evaluation's SEAL method over the questions on each
(:func:`sealgraph.eval.runner.run_eval`, the same metrics as ``sealgraph eval``),
and prints document recall, all-gold and span recall for both, and the gaps.

    python benchmarks/qdrant_vs_folder.py \\
        --corpus ../shared/data/ood/finance-dragonball/corpus \\
        --questions ../shared/data/ood/finance-dragonball/questions.jsonl

Local mode is for tests and small data: its timings say nothing about a server's.
Needs the ``qdrant`` extra (``pip install 'sealgraph[qdrant]'``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sealgraph.eval.runner import run_eval

METRICS = ("recall", "all_gold", "span_recall_evidence", "span_recall_context")


def _run(index: str, args: argparse.Namespace) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    result = run_eval(
        args.questions,
        k=args.k,
        budget=args.budget,
        methods=args.method,
        corpus=args.corpus,
        index_dir=index,
        embedder=args.embedder,
        progress=False,
    )
    seal = result.report["methods"][args.method]
    return {m: seal.get(m) for m in METRICS}, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Run the comparison; print one line per index and the gaps (JSON with --json)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="folder of the documents")
    parser.add_argument("--questions", required=True, help="corpus questions JSONL")
    parser.add_argument("--embedder", default="local", help="embedder of both indexes")
    parser.add_argument("--method", default="seal", help="evaluation method (default seal)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--budget", type=int, default=800)
    parser.add_argument("--collection", default="finance", help="qdrant+memory collection")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sealgraph-folder-") as tmp:
        folder, folder_s = _run(str(Path(tmp) / "index"), args)
    qdrant, qdrant_s = _run(f"qdrant+memory://{args.collection}", args)
    gaps = {
        m: None if folder[m] is None or qdrant[m] is None else qdrant[m] - folder[m]
        for m in METRICS
    }
    if args.json:
        print(json.dumps({"folder": folder, "qdrant": qdrant, "gap": gaps}, indent=2))
        return 0
    print("index    " + "  ".join(f"{m:>21}" for m in METRICS) + "  seconds")
    for name, row, seconds in (("folder", folder, folder_s), ("qdrant", qdrant, qdrant_s)):
        cells = "  ".join(
            f"{row[m]:>21.3f}" if row[m] is not None else f"{'-':>21}" for m in METRICS
        )
        print(f"{name:<8} {cells}  {seconds:7.1f}")
    worst = max(abs(g) for g in gaps.values() if g is not None)
    print(f"largest gap {worst:.3f} ({'within' if worst <= 0.02 else 'beyond'} 0.02)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
