"""Score the answers of eval records: containment, exact short answers, declines, per half.

Reads the ``records.jsonl`` that ``sealgraph eval --records`` writes (one or more sets)
and prints, per set, half (the eval's SHA-256 split of the question id) and method:

* ``contain``: answerable questions whose answer holds the reference answer as whole
  tokens (HotpotQA normalisation, :func:`sealgraph.eval.metrics.answer_contained`);
* ``ceiling``: answerable questions whose packed context holds it (what a reader
  could state at best);
* ``short``: answerable questions given a short answer, and ``exact``: those whose
  short answer equals the reference once normalised;
* ``words``: mean words of an answer to an answerable question (a reader that quotes
  more text contains more by chance: read containment with it);
* ``declined``: the declined share of answerable and of unanswerable questions.

Usage::

    python benchmarks/answer_bench.py NAME=RECORDS.jsonl [NAME=RECORDS.jsonl ...] [--method seal]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from sealgraph.eval.metrics import answer_contained, answer_exact_match
from sealgraph.eval.split import split_of
from sealgraph.text.readable import readable

_COLUMNS = (
    "set      half method       n(ans/un)  contain  ceiling  short  exact  words  declined(ans/un)"
)


def _records(path: Path, method: str | None) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if method is None or record.get("method") == method:
                out.append(record)
    return out


def _answerable(record: dict[str, Any]) -> bool:
    if "answerable" in record:
        return bool(record["answerable"]) and record.get("gold_answer") is not None
    return record.get("gold_answer") is not None


def score(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the scores of one group of records (see the module docstring)."""
    answerable = [r for r in records if _answerable(r)]
    unanswerable = [r for r in records if not _answerable(r)]
    n = max(1, len(answerable))
    gold = [str(r["gold_answer"]) for r in answerable]
    return {
        "n": len(answerable),
        "n_un": len(unanswerable),
        "contain": sum(
            answer_contained(r["answer"], g) for r, g in zip(answerable, gold, strict=True)
        )
        / n,
        "ceiling": sum(
            answer_contained(readable(r.get("context") or ""), g)
            for r, g in zip(answerable, gold, strict=True)
        )
        / n,
        "short": sum(bool(r.get("short_answer")) for r in answerable) / n,
        "exact": sum(
            bool(r.get("short_answer")) and answer_exact_match(r["short_answer"], g)
            for r, g in zip(answerable, gold, strict=True)
        )
        / n,
        "words": sum(len(str(r["answer"]).split()) for r in answerable) / n,
        "declined": sum(bool(r.get("declined")) for r in answerable) / n,
        "declined_un": (
            sum(bool(r.get("declined")) for r in unanswerable) / len(unanswerable)
            if unanswerable
            else None
        ),
    }


def _row(name: str, half: str, method: str, s: dict[str, Any]) -> str:
    un = "–" if s["declined_un"] is None else f"{s['declined_un']:.2f}"
    return (
        f"{name:<8} {half:<4} {method:<12} {s['n']:>4}/{s['n_un']:<4}  {s['contain']:.3f}    "
        f"{s['ceiling']:.3f}    {s['short']:.2f}   {s['exact']:.3f}  {s['words']:5.1f}  "
        f"{s['declined']:.2f} / {un}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("sets", nargs="+", help="NAME=records.jsonl")
    parser.add_argument("--method", default=None, help="only this method (default: each)")
    args = parser.parse_args()
    print(_COLUMNS)
    for spec in args.sets:
        name, _, path = spec.partition("=")
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for record in _records(Path(path), args.method):
            method = str(record.get("method", ""))
            groups[(split_of(str(record["id"])), method)].append(record)
            groups[("all", method)].append(record)
        for (half, method), records in sorted(groups.items()):
            print(_row(name, half, method, score(records)))


if __name__ == "__main__":
    main()
