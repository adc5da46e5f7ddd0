"""Hysteresis / dwell ablation of the SEAL controller: does fixed-k replacement thrash?

Fixed-k replacement swaps the best candidate c* for the weakest unprotected passage
only if S(c*) > S(victim) + ε (hysteresis), and a passage swapped in is protected
from eviction for ``dwell`` loops. Without them the controller may insert a passage
and evict it again a moment later: *thrashing*. This script runs the graph (offline
reasoner) over a multi-hop QA JSONL file in four configurations:

* ``default``: ``SealConfig(k=K)`` as shipped (ε = 0.02, dwell = 1);
* ``{"epsilon": 0, "dwell": 0}``: neither guard;
* ``{"epsilon": 0}``: dwell guard only;
* ``{"dwell": 0}``: hysteresis only.

From each run's audit trail (``result["seal_log"]``) it counts:

* ``swaps``: events of kind ``swap`` (``data["candidate"]`` in, ``data["victim"]`` out);
* ``undone``: swaps whose inserted passage a later swap of the same run evicts again
  (each such passage counted once; evicted passages are blocklisted, so a passage is
  evicted at most once);
* ``dwell refusals``: ``refuse`` events because every passage was protected;

and from the final state: gold-title recall and all-gold rate of the final evidence
set (gold titles = distinct titles of the record's ``supporting_facts``), mean loops.

Usage::

    export TIKTOKEN_CACHE_DIR=/work/shared/tiktoken_cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
    python benchmarks/thrash_ablation.py --questions QA.jsonl --index IDX --k 3 [--limit N]

The index is loaded with :func:`sealgraph.index.load_index` as is: an index with
vectors uses hybrid retrieval (and loads its embedder); ``--lexical`` forces BM25 only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run from a checkout without installing: put the repository root on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sealgraph.config import SealConfig
from sealgraph.graph.builder import build_graph
from sealgraph.index import load_index

CONFIGURATIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("default", {}),
    ("epsilon=0, dwell=0", {"epsilon": 0, "dwell": 0}),
    ("epsilon=0", {"epsilon": 0}),
    ("dwell=0", {"dwell": 0}),
)
"""(row name, SealConfig overrides) of every configuration, in table order."""


@dataclass(frozen=True, slots=True)
class SwapCounts:
    """Swap statistics of one run's audit trail."""

    swaps: int
    """Swap events."""
    undone: int
    """Passages inserted by a swap and evicted again by a later swap of the same run."""
    dwell_refusals: int
    """Refusals because every passage was protected by the dwell guard."""


def count_swaps(events: Iterable[Mapping[str, Any]]) -> SwapCounts:
    """Count swaps, undone swaps and dwell refusals in one run's events (in log order)."""
    swaps = undone = dwell_refusals = 0
    inserted_by_swap: set[str] = set()
    for event in events:
        data = event.get("data") or {}
        if event.get("kind") == "refuse" and "dwell" in str(data.get("reason", "")):
            dwell_refusals += 1
        if event.get("kind") != "swap":
            continue
        swaps += 1
        victim = data.get("victim")
        if victim in inserted_by_swap:
            undone += 1
            inserted_by_swap.discard(victim)
        if data.get("candidate") is not None:
            inserted_by_swap.add(data["candidate"])
    return SwapCounts(swaps, undone, dwell_refusals)


def gold_titles(record: Mapping[str, Any]) -> set[str]:
    """Distinct titles of the record's supporting facts."""
    return {fact[0] for fact in record.get("supporting_facts", [])}


def load_records(path: Path, limit: int | None) -> list[dict[str, Any]]:
    """Read the JSONL records that have a question and supporting facts."""
    records = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("question") and gold_titles(record):
                records.append(record)
            if limit is not None and len(records) >= limit:
                break
    return records


def run_config(graph: Any, records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Run every question through ``graph`` and aggregate the counts."""
    swaps = undone = refusals = 0
    runs_with_undo = 0
    recall, all_gold, loops = [], [], []
    for record in records:
        result = graph.invoke({"question": record["question"]})
        counts = count_swaps(result.get("seal_log", []))
        swaps += counts.swaps
        undone += counts.undone
        refusals += counts.dwell_refusals
        runs_with_undo += counts.undone > 0
        gold = gold_titles(record)
        found = {e["title"] for e in result.get("evidence", [])}
        recall.append(len(gold & found) / len(gold))
        all_gold.append(float(gold <= found))
        loops.append(result.get("loops", 0))
    return {
        "swaps": swaps,
        "undone": undone,
        "undone_share": undone / swaps if swaps else 0.0,
        "runs_with_undo": runs_with_undo,
        "dwell_refusals": refusals,
        "recall": statistics.fmean(recall),
        "all_gold": statistics.fmean(all_gold),
        "loops": statistics.fmean(loops),
    }


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """Render the rows as a Markdown table."""
    lines = [
        "| configuration | ε | dwell | swaps | undone | undone/swaps | runs with undo "
        "| dwell refusals | mean loops | gold recall | all-gold |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['config']} | {r['epsilon']:g} | {r['dwell']} | {r['swaps']} | {r['undone']} "
            f"| {r['undone_share']:.3f} | {r['runs_with_undo']} | {r['dwell_refusals']} "
            f"| {r['loops']:.2f} | {r['recall']:.3f} | {r['all_gold']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the four configurations and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, required=True, help="QA JSONL file")
    parser.add_argument("--index", type=Path, required=True, help="prebuilt index directory")
    parser.add_argument("--k", type=int, default=3, help="evidence-set size")
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--lexical", action="store_true", help="ignore the index's vectors")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be >= 1")

    records = load_records(args.questions, args.limit)
    if not records:
        parser.error(f"no records with a question and supporting_facts in {args.questions}")
    index = load_index(args.index, embedder="none" if args.lexical else None)
    rows = []
    for name, overrides in CONFIGURATIONS:
        config = SealConfig(k=args.k).override(overrides)
        graph = build_graph(index=index, config=config)
        start = time.perf_counter()
        stats = run_config(graph, records)
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        rows.append({"config": name, "epsilon": config.epsilon, "dwell": config.dwell, **stats})

    retrieval = "hybrid" if index.has_dense else "lexical"
    print(
        f"{args.questions.name}: {len(records)} questions, index {args.index} ({retrieval}), "
        f"k={args.k}, offline reasoner\n"
    )
    print(markdown_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
