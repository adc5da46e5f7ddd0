"""Benchmark: recall and latency of the inverted file (approximate dense search) against exact.

Reads the first ``--chunks`` chunks of an existing index (for example the lexical
index ``benchmarks/scale.py`` builds of a million chunks), embeds their indexed
text with ``--embedder`` (default ``minilm-static``, fast on a CPU), trains the
inverted file the way a build does (:mod:`sealgraph.index._ivf`: seeded k-means,
about 2·√N lists), and compares, for ``--queries`` queries, the top ``--k`` rows of
the approximate search at each ``--probe`` with the exact top ``--k``. Queries are
the first sentence of chunks drawn with a fixed seed (they find their own chunk
and its neighbours) and generated questions about document titles.

It also calibrates the probe as a build does (:func:`~sealgraph.index._ivf.calibrate_probe`:
the fewest lists for recall 0.98 of the exact top 50 of a sentence of seeded sample chunks) and reports the
questions' recall at that probe too. It prints one Markdown row per probe: recall@k (the share of the exact top k the
approximate search returns, averaged over queries), milliseconds per query
(exact and approximate, one thread of numpy each, vectors in memory), and the
time to train and assign the lists.

Usage::

    export TIKTOKEN_CACHE_DIR=../shared/tiktoken_cache HF_HUB_OFFLINE=1
    python benchmarks/ann_recall.py --index bench-out/scale/index-1000000-s0-lexical \\
        --chunks 300000 --probe 8 16 32 48 64
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="an index folder to read")
    parser.add_argument("--chunks", type=int, default=300_000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--probe", type=int, nargs="+", default=[8, 16, 32, 48, 64])
    parser.add_argument("--embedder", default="minilm-static")
    parser.add_argument("--lists", type=int, help="lists of the inverted file (default: 2·√N)")
    parser.add_argument("--cache", type=Path, help="keep the vectors in this .npy for the next run")
    args = parser.parse_args()

    from sealgraph.index._dense import DenseIndex
    from sealgraph.index._ivf import (
        InvertedFile,
        calibrate_probe,
        calibration_texts,
        n_lists_for,
        train_ivf,
    )
    from sealgraph.index.embedders import resolve_embedder
    from sealgraph.text.chunking import indexed_text
    from sealgraph.types import Chunk

    conn = sqlite3.connect(
        f"{(args.index / 'docstore.sqlite').resolve().as_uri()}?mode=ro", uri=True
    )
    rows = conn.execute(
        'SELECT title, section, text FROM chunks ORDER BY "row" LIMIT ?', (args.chunks,)
    ).fetchall()
    conn.close()
    import json

    texts = [
        indexed_text(Chunk("c", "d", title, tuple(json.loads(section)), 0, 0, 0, text, 0, ()))
        for title, section, text in rows
    ]
    embedder = resolve_embedder(args.embedder)
    started = time.perf_counter()
    if args.cache is not None and args.cache.is_file():
        vectors = np.load(args.cache, allow_pickle=False)
    else:
        vectors = np.concatenate(
            [embedder.embed_documents(texts[i : i + 4096]) for i in range(0, len(texts), 4096)]
        )
        if args.cache is not None:
            np.save(args.cache, vectors, allow_pickle=False)
    embed_s = time.perf_counter() - started
    rng = random.Random(7)
    picks = rng.sample(range(len(rows)), args.queries // 2)
    queries = [rows[i][2].split(". ")[0] for i in picks]
    titles = rng.sample(sorted({r[0] for r in rows}), args.queries - len(queries))
    queries += [f"What is the reference code of {t}?" for t in titles]
    query_vectors = np.stack([embedder.embed_query(q) for q in queries])

    started = time.perf_counter()
    centroids = train_ivf(vectors, args.lists)
    ivf = InvertedFile.build(vectors, centroids)
    train_s = time.perf_counter() - started
    started = time.perf_counter()
    asked = np.asarray(embedder.embed_documents(calibration_texts(texts)), dtype=np.float32)
    calibrated, sample_recall = calibrate_probe(vectors, ivf, asked)  # what a build records
    calibrate_s = time.perf_counter() - started
    exact = DenseIndex(vectors)
    started = time.perf_counter()
    truth = [{r for r, _ in exact.search(q, args.k)} for q in query_vectors]
    exact_ms = 1000 * (time.perf_counter() - started) / len(queries)
    print(
        f"{len(vectors):,} vectors of {vectors.shape[1]} dims ({args.embedder}, embedded in "
        f"{embed_s:.0f} s); {len(centroids):,} lists (2·√N = {n_lists_for(len(vectors)):,}), "
        f"trained and assigned in {train_s:.1f} s; {len(queries)} queries; exact search "
        f"{exact_ms:.1f} ms/query; calibrated probe {calibrated} (recall {sample_recall:.4f} "
        f"of the build's calibration sentences, in {calibrate_s:.1f} s; marked * below)"
    )
    print(f"| probe | recall@{args.k} | min recall | ms/query | rows read/query |")
    print("|---|---|---|---|---|")
    approximate = DenseIndex(vectors, ivf)
    for probe in sorted({*args.probe, calibrated}):
        approximate.probe = probe
        started = time.perf_counter()
        found = [{r for r, _ in approximate.search(q, args.k)} for q in query_vectors]
        ms = 1000 * (time.perf_counter() - started) / len(queries)
        recalls = [len(f & t) / len(t) for f, t in zip(found, truth, strict=True) if t]
        read = np.mean([len(ivf.candidates(q, probe)) for q in query_vectors[:50]])
        mark = "*" if probe == calibrated else ""
        print(
            f"| {probe}{mark} | {np.mean(recalls):.4f} | {min(recalls):.2f} | {ms:.1f} | {read:,.0f} |"
        )


if __name__ == "__main__":
    main()
