"""Benchmark: seal's latency against flat-hybrid's, question by question in one process.

``sealgraph eval --methods flat-hybrid,seal`` times every question of one method, then
every question of the other: on a shared machine whose load drifts over minutes the two
methods' p50 can meet different loads. Here both methods answer each question in turn
(the order alternating question by question), after the same warm-up as the evaluation
(the index's passage features and question embeddings cached, one untimed question per
method), so each pair of timings meets the same load. It prints each method's p50 and
p95, their ratios (the issue's targets: seal p50 ≤ 3× flat-hybrid, p95 ≤ 5×), the median
of the per-question ratios and of what seal adds per question, and for each method the
query embedder's model calls, texts and milliseconds per question (the offline reader
embeds the question's parts and its best sentences for both methods), with the p50 of
the time spent outside the model.

Usage::

    export TIKTOKEN_CACHE_DIR=../shared/tiktoken_cache HF_HUB_OFFLINE=1
    python benchmarks/seal_vs_flat.py --questions ../shared/data/hotpotqa_dev.jsonl --k 3 \\
        --budget 400 --out bench-out/seal-vs-flat-hotpotqa.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sealgraph.eval._inputs import open_questions, run_config  # noqa: E402
from sealgraph.eval.methods import default_pipeline, get_method  # noqa: E402
from sealgraph.eval.metrics import percentile  # noqa: E402


class _Calls:
    """Counts the query embedder's model calls, texts and milliseconds (wraps ``embed_documents``)."""

    def __init__(self, embedder: Any) -> None:
        self.calls = 0
        self.texts = 0
        self.ms = 0.0
        if embedder is None:
            return
        inner = embedder.embed_documents

        def counted(texts: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(texts)
            finally:
                self.calls += 1
                self.texts += len(texts)
                self.ms += (time.perf_counter() - started) * 1000

        embedder.embed_documents = counted

    def read(self) -> tuple[int, int, float]:
        return self.calls, self.texts, self.ms


def _timed(runner: Any, question: str, calls: _Calls) -> tuple[float, tuple[int, int, float]]:
    before = calls.read()
    started = time.perf_counter()
    runner(question)
    ms = (time.perf_counter() - started) * 1000
    after = calls.read()
    return ms, tuple(b - a for a, b in zip(before, after, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", required=True, type=Path)
    parser.add_argument("--k", type=int, default=None)
    parser.add_argument("--budget", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--methods", default="flat-hybrid,seal", help="baseline,method")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    config = run_config(k=args.k, budget=args.budget, max_loops=None, overrides={})
    loaded = open_questions(
        args.questions,
        corpus=None,
        index_dir=None,
        pools=[],
        embedder="auto",
        config=config,
        split=None,
        limit=args.limit,
    )
    index = loaded.opened.index
    questions = [q.question for q in loaded.questions]
    pipeline = default_pipeline()
    if pipeline.warm_up is not None:
        pipeline.warm_up(index, questions)
    names = args.methods.split(",")
    runners = {n: get_method(n).build(index, config, pipeline) for n in names}
    for runner in runners.values():  # the evaluation's untimed first question
        runner(questions[0])
    calls = _Calls(getattr(getattr(index, "_queries", None), "embedder", None))
    times: dict[str, list[float]] = {n: [] for n in names}
    model: dict[str, list[tuple[int, int, float]]] = {n: [] for n in names}
    for i, question in enumerate(questions):
        for name in names if i % 2 == 0 else names[::-1]:
            ms, used = _timed(runners[name], question, calls)
            times[name].append(ms)
            model[name].append(used)
    print(json.dumps(_summary(names, times, model, args, len(questions)), indent=1))


def _summary(names, times, model, args, n) -> dict[str, Any]:
    base, other = names
    out: dict[str, Any] = {"questions": str(args.questions), "n": n, "k": args.k}
    for name in names:
        out[name] = {
            "p50_ms": round(percentile(times[name], 50), 1),
            "p95_ms": round(percentile(times[name], 95), 1),
            "model_calls_per_question": round(sum(m[0] for m in model[name]) / n, 2),
            "texts_per_question": round(sum(m[1] for m in model[name]) / n, 2),
            "model_ms_p50": round(percentile([m[2] for m in model[name]], 50), 1),
            "p50_ms_outside_model": round(
                percentile([t - m[2] for t, m in zip(times[name], model[name], strict=True)], 50),
                1,
            ),
        }
    out["p50_ratio"] = round(out[other]["p50_ms"] / out[base]["p50_ms"], 2)
    out["p95_ratio"] = round(out[other]["p95_ms"] / out[base]["p95_ms"], 2)
    pairs = [b / a for a, b in zip(times[base], times[other], strict=True) if a > 0]
    out["median_pair_ratio"] = round(statistics.median(pairs), 2)
    added = [b - a for a, b in zip(times[base], times[other], strict=True)]
    out["p50_added_ms"] = round(percentile(added, 50), 1)
    out["p95_added_ms"] = round(percentile(added, 95), 1)
    out["times_ms"] = {name: [round(t, 2) for t in times[name]] for name in names}
    out["model_ms"] = {name: [round(m[2], 2) for m in model[name]] for name in names}
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return {key: value for key, value in out.items() if key not in ("times_ms", "model_ms")}


if __name__ == "__main__":
    main()
