"""Benchmark: sealgraph's dense search (FAISS, exact and inverted file) against plain FAISS.

Reads the chunks of an existing index (for example one ``benchmarks/scale.py`` builds)
and their vectors: the index's own (``--vectors index``: ``vectors.npy`` of an index
built with an embedder), a ``.npy`` file of one row per chunk row (``--vectors
FILE.npy``, float16 or float32, for example MiniLM vectors embedded on a GPU), or
vectors embedded here with ``--embedder`` (default ``minilm-static``; ``--cache`` keeps
them). The vectors are written as a float32 ``.npy`` under ``--work`` and memory-mapped,
as an index holds them.

Queries (``--queries``, embedded with ``--embedder``, which must be the vectors'
embedder): the first sentence of chunks drawn with a fixed seed (they find their own
chunk and its neighbours) and generated questions about document titles.

For each method it prints one Markdown row: recall@k (the share of the exact top
``k`` found, averaged over queries, and the lowest of a query), milliseconds per
query (one query at a time, FAISS's default threads), milliseconds per query in
batches of ``--batch`` (the micro-queries of a repair loop), build seconds, and
memory: ``anon MB`` is what the process holds of its own (a copy of the vectors, a
graph), ``file MB`` the size of the files it memory-maps (read into the page cache
as queries touch them, never copied). Methods:

* ``sealgraph exact``: :class:`~sealgraph.index.folder._dense.DenseIndex` over the mapped
  vectors (what an index below ``ANN_MIN_VECTORS`` searches);
* ``sealgraph IVF L lists, probe P``: the inverted file a build writes
  (:mod:`sealgraph.index.folder._ann`: seeded k-means, ``--lists`` or 4·√N lists, saved and
  opened memory-mapped), at the probe a build calibrates (marked ``*``: the fewest lists
  for recall 0.98 of the exact top 50 of a sentence of 256 seeded chunks) and at each
  ``--probe``; with ``--sq8`` also with 8-bit codes;
* plain FAISS as its users would write it: ``IndexFlatIP`` (the vectors added, a copy
  in memory), ``index_factory(d, "IVF{L},Flat")`` trained with FAISS's defaults at
  ``nprobe`` 1 (FAISS's default) and at the calibrated probe, and ``IndexHNSWFlat``
  (M = 32) at ``efSearch`` 16 (the default) and 128 (``--no-hnsw`` skips it).

Usage::

    export TIKTOKEN_CACHE_DIR=../shared/tiktoken_cache HF_HUB_OFFLINE=1
    python benchmarks/ann_recall.py --index bench-out/scale/index-250000-s0-lexical \\
        --vectors minilm.f16.npy --embedder local --work bench-out/ann
    python benchmarks/ann_recall.py --index bench-out/scale/index-1000000-s0-static \\
        --vectors index --embedder minilm-static --work bench-out/ann
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, help="an index folder to read")
    parser.add_argument("--vectors", help="'index', a .npy of one row per chunk, or embed here")
    parser.add_argument(
        "--random",
        type=int,
        nargs=2,
        metavar=("N", "DIM"),
        help="instead: N seeded random unit vectors of DIM dims, exact search timed only",
    )
    parser.add_argument("--chunks", type=int, help="the first N chunks only (default all)")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--batch", type=int, default=6, help="queries per batched call")
    parser.add_argument(
        "--probe", type=int, nargs="*", default=[], help="probes besides the calibrated one"
    )
    parser.add_argument(
        "--lists", type=int, nargs="*", help="lists of the inverted files (default: 4·√N)"
    )
    parser.add_argument("--sq8", action="store_true", help="also an inverted file of 8-bit codes")
    parser.add_argument("--no-hnsw", action="store_true", help="skip plain FAISS's HNSW")
    parser.add_argument("--embedder", default="minilm-static")
    parser.add_argument("--cache", type=Path, help="keep embedded vectors in this .npy")
    parser.add_argument("--work", type=Path, default=ROOT / "bench-out" / "ann")
    parser.add_argument("--out", type=Path, help="JSON with every number (WORK/ann.json)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.random:
        _random(args)
        return
    if args.index is None:
        parser.error("give --index (or --random N DIM)")

    import faiss

    from sealgraph.index.embedders import resolve_embedder

    rows = _chunk_rows(args.index, args.chunks)
    embedder = resolve_embedder(args.embedder)
    started = time.perf_counter()
    vectors = _vectors(args, rows, embedder)
    load_s = time.perf_counter() - started
    n, dim = vectors.shape
    queries, query_vectors = _queries(rows, embedder, args.queries)
    report: dict[str, Any] = {"argv": sys.argv[1:], "vectors": n, "dim": dim}
    report.update(faiss=faiss.__version__, threads=faiss.omp_get_max_threads(), methods=[])
    print(
        f"{n:,} vectors of {dim} dims ({args.vectors or args.embedder}; read or embedded in "
        f"{load_s:.0f} s), {len(queries)} queries ({args.embedder}), k = {args.k}, FAISS "
        f"{faiss.__version__} with {faiss.omp_get_max_threads()} threads"
    )
    bench = Bench(args, vectors, query_vectors, report)
    bench.header()
    bench.sealgraph_exact()
    texts = [_text(r) for r in rows]
    asked = np.asarray(embedder.embed_documents(_calibration(texts)), dtype=np.float32)
    for lists in args.lists or [_n_lists(n)]:
        bench.sealgraph_ivf(lists, asked, sq8=False)
    if args.sq8:
        bench.sealgraph_ivf((args.lists or [_n_lists(n)])[0], asked, sq8=True)
    bench.faiss_flat()
    bench.faiss_ivf((args.lists or [_n_lists(n)])[0])
    if not args.no_hnsw:
        bench.faiss_hnsw()
    out = args.out or args.work / "ann.json"
    out.write_text(json.dumps(report, indent=1), encoding="utf-8")


def _random(args: argparse.Namespace) -> None:
    """Time exact search over seeded random unit vectors (the time does not depend on them)."""
    import faiss

    n, dim = args.random
    path = args.work / f"random-{n}x{dim}.npy"
    if not path.is_file():
        rng = np.random.default_rng(0)
        out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, dim))
        for start in range(0, n, 65_536):
            block = rng.standard_normal((min(65_536, n - start), dim)).astype(np.float32)
            out[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
        out.flush()
        del out
    vectors = np.load(path, mmap_mode="r")
    queries = np.asarray(vectors[np.random.default_rng(1).choice(n, args.queries)]) + 0.01
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    report: dict[str, Any] = {"argv": sys.argv[1:], "vectors": n, "dim": dim, "random": True}
    report.update(faiss=faiss.__version__, threads=faiss.omp_get_max_threads(), methods=[])
    print(f"{n:,} random unit vectors of {dim} dims, {len(queries)} queries, k = {args.k}")
    bench = Bench(args, vectors, queries.astype(np.float32), report)
    bench.header()
    bench.sealgraph_exact()
    bench.faiss_flat()
    out = args.out or args.work / "ann.json"
    out.write_text(json.dumps(report, indent=1), encoding="utf-8")


def _chunk_rows(index: Path, limit: int | None) -> list[tuple[str, str, str]]:
    uri = f"{(index / 'docstore.sqlite').resolve().as_uri()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    query = 'SELECT title, section, text FROM chunks ORDER BY "row"'
    rows = conn.execute(query + (" LIMIT ?" if limit else ""), (limit,) if limit else ()).fetchall()
    conn.close()
    return rows


def _text(row: tuple[str, str, str]) -> str:
    from sealgraph.text.chunking import indexed_text
    from sealgraph.types import Chunk

    title, section, text = row
    return indexed_text(Chunk("c", "d", title, tuple(json.loads(section)), 0, 0, 0, text, 0, ()))


def _vectors(args: argparse.Namespace, rows: list, embedder: Any) -> np.ndarray:
    """Return the vectors as a memory-mapped float32 .npy of unit rows under WORK."""
    n = len(rows)
    if args.vectors == "index":
        source = np.load(args.index / "vectors.npy", mmap_mode="r")
    elif args.vectors:
        source = np.load(args.vectors, mmap_mode="r")
    elif args.cache is not None and args.cache.is_file():
        source = np.load(args.cache, mmap_mode="r")
    else:
        texts = [_text(r) for r in rows]
        source = np.concatenate(
            [embedder.embed_documents(texts[i : i + 4096]) for i in range(0, n, 4096)]
        )
        if args.cache is not None:
            np.save(args.cache, source, allow_pickle=False)
    if len(source) < n:
        raise SystemExit(f"{len(source)} vectors for {n} chunks")
    path = args.work / f"vectors-{n}.npy"
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, source.shape[1]))
    for start in range(0, n, 65_536):
        block = np.asarray(source[start : min(n, start + 65_536)], dtype=np.float32)
        out[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    out.flush()
    del out
    return np.load(path, mmap_mode="r")


def _queries(rows: list, embedder: Any, count: int) -> tuple[list[str], np.ndarray]:
    """Return ``count`` queries: first sentences of seeded chunks, then title questions."""
    rng = random.Random(7)
    picks = rng.sample(range(len(rows)), count // 2)
    queries = [rows[i][2].split(". ")[0] for i in picks]
    titles = rng.sample(sorted({r[0] for r in rows}), count - len(queries))
    queries += [f"What is the reference code of {t}?" for t in titles]
    return queries, np.stack([embedder.embed_query(q) for q in queries]).astype(np.float32)


def _calibration(texts: list[str]) -> list[str]:
    from sealgraph.index.folder._ann import calibration_texts

    return calibration_texts(texts)


def _n_lists(n: int) -> int:
    from sealgraph.index.folder._ann import n_lists_for

    return n_lists_for(n)


def _anon_mb() -> float:
    """Anonymous memory of this process (its own copies, not mapped files), in MiB."""
    with open("/proc/self/smaps_rollup") as handle:
        for line in handle:
            if line.startswith("Anonymous:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Bench:
    """The measurements, each a row of the table and an entry of the report."""

    def __init__(
        self, args: argparse.Namespace, vectors: np.ndarray, queries: np.ndarray, report
    ) -> None:
        self.args = args
        self.vectors = vectors
        self.queries = queries
        self.report = report
        self.k = args.k
        self.truth: list[set[int]] = []
        self.calibrated: int | None = None
        # _queries: the first half are sentences of chunks, the rest title questions.
        self.kinds = {
            "sentences": slice(0, len(queries) // 2),
            "questions": slice(len(queries) // 2, None),
        }

    def header(self) -> None:
        print(
            f"| method | recall@{self.k} | sentences | questions | lowest | ms/query | "
            f"CPU ms/query | ms/query in batches of {self.args.batch} | build s | anon MB | "
            f"file MB |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")

    def row(
        self,
        name: str,
        found: list[set[int]],
        times: tuple[float, float, float | None],
        build_s: float | None,
        anon_mb: float,
        file_mb: float,
        **extra: Any,
    ) -> None:
        recalls = [
            len(f & t) / len(t) if t else 1.0 for f, t in zip(found, self.truth, strict=True)
        ]
        single, cpu, batched = times
        entry = {"method": name, "recall": float(np.mean(recalls)), "lowest": float(min(recalls))}
        entry.update({kind: float(np.mean(recalls[part])) for kind, part in self.kinds.items()})
        entry.update(ms_per_query=single, cpu_ms_per_query=cpu, ms_per_query_batched=batched)
        entry.update(build_s=build_s, anon_mb=anon_mb, file_mb=file_mb, **extra)
        self.report["methods"].append(entry)
        cells = [
            name,
            f"{entry['recall']:.4f}",
            f"{entry['sentences']:.4f}",
            f"{entry['questions']:.4f}",
            f"{entry['lowest']:.2f}",
            f"{single:.1f}",
            f"{cpu:.1f}",
            "-" if batched is None else f"{batched:.1f}",
            "-" if build_s is None else f"{build_s:.1f}",
            f"{anon_mb:,.0f}",
            f"{file_mb:,.0f}",
        ]
        print("| " + " | ".join(cells) + " |", flush=True)

    def timed(
        self, search, batch: bool
    ) -> tuple[list[set[int]], tuple[float, float, float | None]]:
        """Run ``search(queries) -> list of row lists`` one query at a time, then in batches.

        Returns the rows found and (wall ms, CPU ms of this process's threads, batched
        wall ms) per query: on a shared machine the CPU time says what the search costs.
        """
        found = []
        started, cpu = time.perf_counter(), time.process_time()
        for q in self.queries:
            found.append(set(search(q[None, :])[0]))
        single = 1000 * (time.perf_counter() - started) / len(self.queries)
        cpu_ms = 1000 * (time.process_time() - cpu) / len(self.queries)
        if not batch:
            return found, (single, cpu_ms, None)
        size = self.args.batch
        started = time.perf_counter()
        for i in range(0, len(self.queries), size):
            search(self.queries[i : i + size])
        batched = 1000 * (time.perf_counter() - started) / len(self.queries)
        return found, (single, cpu_ms, batched)

    def _file_mb(self) -> float:
        return self.vectors.nbytes / 2**20

    def sealgraph_exact(self) -> None:
        from sealgraph.index.folder._dense import DenseIndex

        dense = DenseIndex(self.vectors)
        before = _anon_mb()
        search = lambda qs: [[r for r, _ in hits] for hits in dense.search_many(qs, self.k)]  # noqa: E731
        for q in self.queries[:3]:  # the page cache warmed
            search(q[None, :])
        self.truth = [set() for _ in self.queries]
        self.truth, times = self.timed(search, batch=True)
        self.row(
            "sealgraph exact (FAISS knn over the mapped vectors)",
            self.truth,
            times,
            None,
            max(0.0, _anon_mb() - before),
            self._file_mb(),
        )

    def sealgraph_ivf(self, lists: int, asked: np.ndarray, *, sq8: bool) -> None:
        from sealgraph.index.folder._ann import build_ann, load_ann, save_ann
        from sealgraph.index.folder._dense import DenseIndex, calibrate_probe

        started = time.perf_counter()
        built = build_ann(self.vectors, lists, sq8=sq8)
        build_s = time.perf_counter() - started
        path = self.args.work / f"dense-{lists}{'-sq8' if sq8 else ''}.ivf"
        save_ann(built, path)
        del built
        started = time.perf_counter()
        probe, sample_recall = calibrate_probe(
            self.vectors, load_ann(path, *self.vectors.shape), asked
        )
        calibrate_s = time.perf_counter() - started
        self.calibrated = self.calibrated or probe
        before = _anon_mb()
        lists_index = load_ann(path, *self.vectors.shape)
        dense = DenseIndex(self.vectors, lists_index)
        file_mb = (path.stat().st_size + self.vectors.nbytes) / 2**20
        codes = "8-bit codes" if sq8 else "float32"
        for p in sorted({probe, *self.args.probe}):
            dense.probe = p
            search = lambda qs: [[r for r, _ in h] for h in dense.search_many(qs, self.k)]  # noqa: E731
            found, times = self.timed(search, batch=True)
            mark = "*" if p == probe else ""
            self.row(
                f"sealgraph IVF {lists:,} lists ({codes}), probe {p}{mark}",
                found,
                times,
                build_s,
                max(0.0, _anon_mb() - before),
                file_mb,
                lists=lists,
                probe=p,
                calibrated=p == probe,
                calibration_recall=sample_recall,
                calibrate_s=calibrate_s,
                sq8=sq8,
            )

    def faiss_flat(self) -> None:
        import faiss

        before = _anon_mb()
        started = time.perf_counter()
        flat = faiss.IndexFlatIP(self.vectors.shape[1])
        flat.add(np.ascontiguousarray(self.vectors))
        build_s = time.perf_counter() - started
        search = lambda qs: flat.search(qs, self.k)[1].tolist()  # noqa: E731
        found, times = self.timed(search, batch=True)
        self.row(
            "FAISS IndexFlatIP (vectors copied in)",
            found,
            times,
            build_s,
            _anon_mb() - before,
            0.0,
        )

    def faiss_ivf(self, lists: int) -> None:
        import faiss

        before = _anon_mb()
        started = time.perf_counter()
        index = faiss.index_factory(
            self.vectors.shape[1], f"IVF{lists},Flat", faiss.METRIC_INNER_PRODUCT
        )
        index.train(np.ascontiguousarray(self.vectors))
        index.add(np.ascontiguousarray(self.vectors))
        build_s = time.perf_counter() - started
        for nprobe in sorted({1, self.calibrated or 1}):
            index.nprobe = nprobe
            search = lambda qs: index.search(qs, self.k)[1].tolist()  # noqa: E731
            found, times = self.timed(search, batch=True)
            self.row(
                f"FAISS IVF{lists},Flat (defaults), nprobe {nprobe}",
                found,
                times,
                build_s,
                _anon_mb() - before,
                0.0,
                nprobe=nprobe,
            )

    def faiss_hnsw(self) -> None:
        import faiss

        before = _anon_mb()
        started = time.perf_counter()
        index = faiss.IndexHNSWFlat(self.vectors.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
        index.add(np.ascontiguousarray(self.vectors))
        build_s = time.perf_counter() - started
        for ef in (16, 128):
            index.hnsw.efSearch = ef
            search = lambda qs: index.search(qs, self.k)[1].tolist()  # noqa: E731
            found, times = self.timed(search, batch=True)
            self.row(
                f"FAISS IndexHNSWFlat M=32, efSearch {ef}",
                found,
                times,
                build_s,
                _anon_mb() - before,
                0.0,
                ef_search=ef,
            )


if __name__ == "__main__":
    main()
