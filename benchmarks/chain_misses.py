"""What stops seal on the multi-hop questions it misses: one line per question.

Usage::

    python benchmarks/chain_misses.py QUESTIONS RECORDS [--k 5] [--budget 400]

QUESTIONS is a multi-hop QA file (its paragraphs are the corpus; the index is the
eval's content-addressed one, opened as ``sealgraph eval`` opens it) and RECORDS the
``--records`` file of a ``sealgraph eval`` run over it with method ``seal``. Every seal
record whose evidence lacks a gold title is run again with the same settings, and one
line is printed per question: its id, its half, the hops the id gives (MuSiQue's
``2hop``, ``3hop1``, ``4hop1`` ...) against the hops read from the question's form, the
gold titles the evidence lacks, whether each was ever a candidate of a micro-query
("never retrieved", "candidate, not chosen", "partly candidate") and the ledger's chain
at the end. A summary counts the causes and the hops read against the hops asked.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from sealgraph.config import SealConfig
from sealgraph.eval._inputs import OpenedQuestions, open_questions
from sealgraph.eval.split import split_of
from sealgraph.graph.builder import build_graph


def open_multihop(path: Path, config: SealConfig, split: str | None = None) -> OpenedQuestions:
    """Open a multi-hop QA file as ``sealgraph eval`` does: its questions and their index."""
    return open_questions(
        path,
        corpus=None,
        index_dir=None,
        pools=(),
        embedder="auto",
        config=config,
        split=split,
        limit=None,
    )


def _true_hops(qid: str) -> str:
    """Return the hop count an id gives ("3hop1__..." -> "3"), or "?"."""
    m = re.match(r"(\d)hop", qid)
    return m.group(1) if m else "?"


def _cause(missing: set[str], candidates: set[str]) -> str:
    found = missing & candidates
    if not found:
        return "never retrieved"
    return "candidate, not chosen" if found == missing else "partly candidate"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions", type=Path)
    ap.add_argument("records", type=Path)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--budget", type=int, default=400)
    args = ap.parse_args(argv)
    config = SealConfig(k=args.k, budget=args.budget)
    opened = open_multihop(args.questions, config)
    index = opened.opened.index
    questions = {q.qid: q for q in opened.questions}
    graph = build_graph(index, config=config)
    causes: Counter[str] = Counter()
    hops: Counter[tuple[str, int]] = Counter()
    print("| id | half | hops asked / read | missing gold titles | cause | chain at the end |")
    print("|---|---|---|---|---|---|")
    for line in args.records.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["method"] != "seal" or r["scores"].get("all_gold"):
            continue
        q = questions[r["id"]]
        out = graph.invoke({"question": q.question})
        log = out["seal_log"]
        read = next(e["data"]["hops"] for e in log if e["kind"] == "needs")
        candidates = {
            index.get_chunk(c).title
            for e in log
            if e["kind"] == "micro_query"
            for c in e["data"].get("candidates", [])
        }
        missing = set(q.gold_titles) - {x["title"] for x in out["evidence"]}
        cause = _cause(missing, candidates)
        chain = [e["message"] for e in log if e["kind"] == "chain"]
        causes[cause] += 1
        hops[_true_hops(r["id"]), read] += 1
        print(
            f"| {r['id']} | {split_of(r['id'])} | {_true_hops(r['id'])} / {read} | "
            f"{'; '.join(sorted(missing))} | {cause} | {(chain[-1] if chain else '')[:160]} |"
        )
    print("\ncauses:", dict(causes.most_common()))
    print("hops asked / read:", {f"{t}/{h}": n for (t, h), n in sorted(hops.items())})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
