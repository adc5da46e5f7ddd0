"""Graph overhead: the SEAL steps called as plain functions vs through LangGraph.

Usage:
    python benchmarks/bench_graph_overhead.py --questions QA.jsonl --index IDX [--limit N] [--k 3]

Both paths run the very same node functions on the same index and config; the
plain path reproduces the graph's routing in a Python loop and merges updates
the way the graph's reducers do. Prints p50/mean latency of each and the overhead, and LangGraph's floor: the same
topology invoked with nodes that only return the updates the plain run recorded (the
same supersteps over the same state, with no work).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from sealgraph.config import SealConfig
from sealgraph.graph.builder import build_graph, seal_state_graph
from sealgraph.graph.context import SealContext
from sealgraph.graph.state import SealState
from sealgraph.index import load_index
from sealgraph.nodes import assess, extract, generate, micro_query, pack, replace, search
from sealgraph.reasoning.offline import OfflineReasoner


def run_plain(question: str, ctx: SealContext, cfg: SealConfig, record: list | None = None) -> dict:
    state: dict = {"question": question, "seal_log": []}

    def apply(update: dict) -> None:
        if record is not None:
            record.append(dict(update))
        log = update.pop("seal_log", [])
        state.update(update)
        state["seal_log"] = state["seal_log"] + log

    apply(search.search(state, ctx, cfg, None))
    while True:
        apply(extract.extract(state, ctx, cfg, None))
        apply(assess.assess(state, ctx, cfg, None))
        if state.get("stop_reason"):
            break
        apply(micro_query.micro_query(state, ctx, cfg, None))
        if state.get("stop_reason"):
            break
        apply(replace.replace(state, ctx, cfg, None))
        if state.get("stop_reason"):
            break
    apply(pack.pack(state, ctx, cfg, None))
    apply(generate.generate(state, ctx, cfg, None))
    return state


def replay_graph():
    """The SEAL graph's topology with nodes that return recorded updates.

    Invoking it on a question's recorded updates runs the same supersteps over the
    same state as the real graph, minus the work: what remains is LangGraph's own cost.
    """
    updates: list[dict] = []

    def node(state: SealState) -> dict:
        return dict(updates.pop(0))

    return seal_state_graph(lambda _fn: node).compile(), updates


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument(
        "--cold",
        action="store_true",
        help="clear the query-embedding cache before every timed call (a new question)",
    )
    args = ap.parse_args()
    with open(args.questions, encoding="utf-8") as fh:
        qs = [json.loads(line)["question"] for line in fh if line.strip()]
    qs = qs[: args.limit]
    index = load_index(args.index)
    cfg = SealConfig(k=args.k)
    ctx = SealContext(index=index, reasoner=OfflineReasoner(), config=cfg)
    graph = build_graph(index=index, config=cfg)
    # Warm caches (passage features, query embeddings) identically for both paths.
    for q in qs:
        run_plain(q, ctx, cfg)
        graph.invoke({"question": q})
    plain, via_graph = [], []
    for q in qs:
        if args.cold:
            index.clear_query_cache()
        t0 = time.perf_counter()
        a = run_plain(q, ctx, cfg)
        plain.append((time.perf_counter() - t0) * 1000)
        if args.cold:
            index.clear_query_cache()
        t0 = time.perf_counter()
        b = graph.invoke({"question": q})
        via_graph.append((time.perf_counter() - t0) * 1000)
        assert [e["chunk_id"] for e in a["evidence"]] == [e["chunk_id"] for e in b["evidence"]]
    # LangGraph's floor: the same supersteps and state, the node work replaced by
    # returning the updates the plain run recorded.
    replay, queue = replay_graph()
    recorded = {}
    for q in qs:
        recorded[q] = []
        run_plain(q, ctx, cfg, recorded[q])
    floor = []
    for q in qs:
        queue[:] = recorded[q]
        t0 = time.perf_counter()
        replay.invoke({"question": q})
        floor.append((time.perf_counter() - t0) * 1000)
    p50p, p50g = statistics.median(plain), statistics.median(via_graph)
    print(f"questions: {len(qs)}")
    print(f"plain functions: p50 {p50p:.2f} ms, mean {statistics.mean(plain):.2f} ms")
    print(f"langgraph:       p50 {p50g:.2f} ms, mean {statistics.mean(via_graph):.2f} ms")
    print(
        f"langgraph alone (replayed updates, no work): p50 {statistics.median(floor):.2f} ms, "
        f"mean {statistics.mean(floor):.2f} ms"
    )
    print(f"overhead (p50): {100 * (p50g - p50p) / p50p:.1f}%")
    print(
        f"overhead (mean): {100 * (statistics.mean(via_graph) - statistics.mean(plain)) / statistics.mean(plain):.1f}%"
    )


if __name__ == "__main__":
    main()
