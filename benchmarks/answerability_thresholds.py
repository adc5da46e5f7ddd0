"""What each ``min_answerability`` threshold would decline, per set and half, from eval records.

The offline answerability score is in every record of ``sealgraph eval --records`` (the
default threshold, 0, declines nothing for it). This script replays thresholds on those
records: for each, the share of answerable questions that would be declined (keep it low)
and of unanswerable ones (raise it), on half a (tuning), half b (check) and all.

Usage:
    python benchmarks/answerability_thresholds.py [--method seal] [--thresholds 0.4,0.5,...]
        NAME=RECORDS.jsonl [NAME=RECORDS.jsonl ...]

Example (records of the whole files, as benchmarks/run_main_tables.sh writes them):
    python benchmarks/answerability_thresholds.py \
        fastapi=bench-out/main21/fastapi.all.records.jsonl \
        finance=bench-out/main21/finance-dragonball.all.records.jsonl \
        musique=bench-out/main21/musique.all.records.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sealgraph.eval.split import split_of


def _rate(hit: int, n: int) -> str:
    return f"{hit}/{n}" if n else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("sets", nargs="+", metavar="NAME=RECORDS.jsonl")
    parser.add_argument("--method", default="seal")
    parser.add_argument("--thresholds", default="0.3,0.4,0.45,0.5,0.55,0.6,0.65")
    args = parser.parse_args()
    thresholds = [float(t) for t in args.thresholds.split(",")]
    print(
        "| set | threshold | half a: answerable / unanswerable declined | half b | all |\n"
        "|---|---:|---|---|---|"
    )
    for spec in args.sets:
        name, _, path = spec.partition("=")
        records = [
            r
            for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip() and (r := json.loads(line))["method"] == args.method
        ]
        for threshold in thresholds:
            cells = []
            for half in ("a", "b", None):
                rows = [r for r in records if half is None or split_of(r["id"]) == half]

                def declined(r: dict, t: float = threshold) -> bool:
                    score = r.get("answerability")
                    return bool(r["declined"]) or (score is not None and score < t)

                ans = [r for r in rows if r.get("answerable", True)]
                un = [r for r in rows if not r.get("answerable", True)]
                cells.append(
                    f"{_rate(sum(map(declined, ans)), len(ans))} / "
                    f"{_rate(sum(map(declined, un)), len(un))}"
                )
            print(f"| {name} | {threshold:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
