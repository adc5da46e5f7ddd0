"""CPU time per question of flat-hybrid and seal, run in turn in one process.

Usage::

    python benchmarks/cpu_ratio.py QUESTIONS [--k 5] [--budget 400] [--split a] [--n 25]

A multi-hop QA file's questions (its paragraphs are the corpus, indexed as ``sealgraph eval``
indexes them) are answered by both methods through the eval's own runners, one question at
a time, after one warm-up question; ``time.process_time`` around each call counts the CPU
seconds of the whole process (its search threads included). On a machine that other jobs
share, wall-clock latencies move with their load; the CPU time of each call, and the ratio
of the medians, move much less. Prints the median CPU ms of each method and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from chain_misses import open_multihop

from sealgraph.config import SealConfig
from sealgraph.eval.methods import METHODS, default_pipeline

_METHODS = ("flat-hybrid", "seal")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions", type=Path)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--split", default="a")
    ap.add_argument("--n", type=int, default=25)
    args = ap.parse_args(argv)
    config = SealConfig(k=args.k, budget=args.budget)
    opened = open_multihop(args.questions, config, args.split)
    questions = [q.question for q in opened.questions][: args.n]
    runners = {
        m: METHODS[m].build(opened.opened.index, config, default_pipeline()) for m in _METHODS
    }
    for run in runners.values():
        run(questions[0])  # warm-up, not counted
    cpu: dict[str, list[float]] = {m: [] for m in _METHODS}
    for question in questions:
        for method, run in runners.items():
            started = time.process_time()
            run(question)
            cpu[method].append((time.process_time() - started) * 1000)
    p50 = {m: statistics.median(v) for m, v in cpu.items()}
    print(
        f"{args.questions.name} half {args.split}, {len(questions)} questions: CPU p50 "
        f"flat-hybrid {p50['flat-hybrid']:.1f} ms, seal {p50['seal']:.1f} ms, "
        f"ratio x{p50['seal'] / p50['flat-hybrid']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
