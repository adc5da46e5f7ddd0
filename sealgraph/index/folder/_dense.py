"""Dense vectors: unit vectors in one ``.npy`` file, memory-mapped, searched by FAISS.

The vectors are L2-normalised, so inner product is cosine similarity. They are
kept as float32 ``.npy`` (``allow_pickle=False``) and memory-mapped when an index
opens: nothing is read then, and the process holds no copy. Search is FAISS's
brute-force k-nearest-neighbours over the mapped array (``knn_inner_product``: the
array is handed to FAISS as it is, without a copy), or, for a large index, FAISS's
inverted file (:mod:`sealgraph.index.folder._ann`). Indexes of earlier builds held a
FAISS copy of the vectors (``dense.faiss``), which is no longer written or read.

Scores are computed twice: FAISS finds the candidates (a few more than asked), and
:func:`exact_scores` scores those again in float64, one row at a time, so that a row's
score does not depend on how it was found (one query or a batch, exact search or the
inverted file, one thread or many) and results are ordered by that score, then by row.
FAISS runs in sealgraph's own search threads, one OpenMP thread each
(:func:`run_pooled`): the caller's FAISS settings are left alone, and no OpenMP
thread spins at a barrier waiting for a core a busy machine gives to another process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.index.folder._ann import (
    ANN_FILE,
    CALIBRATION_K,
    CALIBRATION_QUERIES,
    CALIBRATION_SEED,
    DEFAULT_PROBE,
    MIN_RERANK,
    RERANK,
    TARGET_RECALL,
    is_quantized,
    list_labels,
    load_ann,
    probe_search,
    save_ann,
)

FAISS_FILE = "dense.faiss"
"""The FAISS copy of the vectors earlier builds wrote (a build may replace it)."""
VECTORS_FILE = "vectors.npy"
DENSE_FILES = (VECTORS_FILE,)


Ranked = list[tuple[int, float]]
"""``(row, score)`` pairs, best first."""


class DenseIndex:
    """Unit vectors addressed by row, searched by inner product through FAISS.

    The vectors are memory-mapped from ``vectors.npy``: opening reads nothing, a
    search reads them (page cache), and the process holds no copy. Rows the lexical
    index marks deleted are left out by the caller's ``live`` mask. Search is exact,
    or, when the index holds an inverted file (large indexes,
    :mod:`sealgraph.index.folder._ann`), over the lists it probes.
    """

    def __init__(self, vectors: np.ndarray, ann: Any = None) -> None:
        self.dim = int(vectors.shape[1])
        self.vectors = vectors
        if vectors.flags.writeable:
            self.vectors.setflags(write=False)
        self.ann = ann
        """The FAISS inverted file searched instead of every vector, if any."""
        self.probe = DEFAULT_PROBE
        """Lists an approximate search reads."""
        self._bits: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def n_vectors(self) -> int:
        """Number of stored vectors (deleted rows included)."""
        return int(self.vectors.shape[0])

    def save(self, directory: Path) -> None:
        """Write ``vectors.npy`` (and the inverted file, if any) into ``directory``."""
        with open(directory / VECTORS_FILE, "wb") as f:
            np.save(f, np.ascontiguousarray(self.vectors, dtype=np.float32), allow_pickle=False)
        if self.ann is not None:
            save_ann(self.ann, directory / ANN_FILE)

    @classmethod
    def load(cls, directory: Path, *, ann: bool = False) -> DenseIndex:
        """Memory-map the vectors written by :meth:`save` (and the inverted file if ``ann``)."""
        vectors = np.load(directory / VECTORS_FILE, mmap_mode="r", allow_pickle=False)
        if vectors.dtype != np.float32 or vectors.ndim != 2:
            raise ValueError(
                f"{VECTORS_FILE} holds {vectors.dtype} {vectors.shape}, not float32 rows"
            )
        lists = load_ann(directory / ANN_FILE, len(vectors), vectors.shape[1]) if ann else None
        return cls(vectors, lists)

    def search(self, query_vector: np.ndarray, k: int, live: np.ndarray | None = None) -> Ranked:
        """Top ``k`` rows by inner product, best first, ties broken by row.

        ``live`` (a boolean mask over the rows) leaves out deleted rows.
        """
        return self.search_many(np.asarray(query_vector).reshape(1, -1), k, live)[0]

    def search_many(
        self, query_vectors: np.ndarray, k: int, live: np.ndarray | None = None
    ) -> list[Ranked]:
        """:meth:`search` for each row of ``query_vectors``, in one call.

        The results are those of :meth:`search` one query at a time (the same rows,
        the same scores). FAISS's exhaustive search scans the rows once per query (its
        matrix-product path starts at 128,000 queries), so a batch costs about as much
        as its queries one by one, less the calls' overhead.
        """
        queries = np.ascontiguousarray(query_vectors, dtype=np.float32).reshape(-1, self.dim)
        if k <= 0 or self.n_vectors == 0:
            return [[] for _ in range(len(queries))]
        bits = self._live_bits(live)
        if self.ann is None:
            return exact_search(self.vectors, queries, k, bits)
        # Lists of 8-bit codes score approximately: more candidates, scored again exactly.
        wider = max(RERANK * k, MIN_RERANK) if is_quantized(self.ann) else k + _SLACK
        want = min(self.n_vectors, wider)
        _, rows = probe_search(
            self.ann, queries, want, self.probe, _bitmap(bits, 0, self.n_vectors)
        )
        return [
            ranked(self.vectors, query, found[found >= 0], k)
            for query, found in zip(queries, rows, strict=True)
        ]

    def _live_bits(self, live: np.ndarray | None) -> np.ndarray | None:
        """Return the rows ``live`` keeps as a little-endian bitmap (None: all), once per mask."""
        if live is None:
            return None
        if self._bits is None or self._bits[0] is not live:
            mask = np.asarray(live[: self.n_vectors], dtype=bool)
            self._bits = (live, np.packbits(mask, bitorder="little"))
        return self._bits[1]


_SLACK = 16
"""Candidates asked of FAISS beyond ``k``: its float32 scores and :func:`exact_scores` can
order near-ties differently, and rows tied at the cut must all be seen."""
_NEAR = 1e-5
"""Float32 scores this close to the cut may be on either side of it in float64."""
_MIN_SLICE_ROWS = 1 << 16
"""A lone query's rows are cut into one slice per thread, of at least this many rows."""
_POOL: list[ThreadPoolExecutor] = []


def _faiss() -> Any:
    import faiss

    return faiss


def exact_scores(vectors: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Inner products of ``query`` with the given rows, in float64, each row on its own.

    Each score is a pairwise sum along the row, so it is the same whatever other rows
    are scored with it: results do not depend on how candidates were found.
    """
    block = np.asarray(vectors[rows], dtype=np.float64)
    return (block * np.asarray(query, dtype=np.float64)).sum(axis=1)


def ranked(vectors: np.ndarray, query: np.ndarray, rows: np.ndarray, k: int) -> Ranked:
    """Return the ``k`` best of ``rows`` by :func:`exact_scores`, then by row."""
    rows = np.unique(np.asarray(rows, dtype=np.int64))  # ascending: ties go to the lower row
    if rows.size == 0:
        return []
    scores = exact_scores(vectors, rows, query)
    order = np.argsort(-scores, kind="stable")[:k]
    return [(int(rows[i]), float(scores[i])) for i in order]


def exact_search(
    vectors: np.ndarray, queries: np.ndarray, k: int, live_bits: np.ndarray | None = None
) -> list[Ranked]:
    """Exact top ``k`` rows of ``vectors`` for each query: FAISS's brute force, then :func:`ranked`.

    FAISS returns ``k`` plus :data:`_SLACK` candidates; while the last of them scores
    about as well as the ``k``-th (near-ties at the cut), more are asked for, until
    every row that could be in the top ``k`` is among them. ``live_bits`` (a
    little-endian bitmap over the rows) leaves out the rows whose bit is 0.
    """
    n = len(vectors)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    want = min(n, k + _SLACK)
    scores, rows = _knn(vectors, queries, want, live_bits)
    out: list[Ranked] = []
    for i, query in enumerate(queries):
        found_scores, found = scores[i], rows[i]
        wider = want
        while _may_miss(found_scores[found >= 0], k, wider, n):  # rare: widen this query
            wider = min(n, 2 * wider)
            more_scores, more = _knn(vectors, query[None, :], wider, live_bits)
            found_scores, found = more_scores[0], more[0]
        out.append(ranked(vectors, query, found[found >= 0], k))
    return out


def _may_miss(scores: np.ndarray, k: int, want: int, n: int) -> bool:
    """Whether rows beyond the ``want`` FAISS returned could still rank in the top ``k``."""
    if want >= n or len(scores) < want or len(scores) == 0:
        return False  # every row was seen (or every live one)
    return bool(scores[-1] >= scores[min(k, len(scores)) - 1] - _NEAR)


def _knn(
    vectors: np.ndarray, queries: np.ndarray, k: int, live_bits: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """FAISS's ``knn_inner_product`` over ``vectors`` (memory-mapped: not copied).

    The rows are cut into one slice per core, searched side by side by :func:`run_pooled`'s
    threads (FAISS releases the GIL), and the slices' best merged.
    """
    n = len(vectors)
    slices = max(1, min(_pool_size(), n // _MIN_SLICE_ROWS))
    step = -(-n // slices // 8) * 8  # slices start at multiples of 8 (a bitmap's bytes)
    pairs = [(lo, min(n, lo + step)) for lo in range(0, n, step)]
    parts = run_pooled([_bind(_knn_slice, vectors, queries, k, live_bits, *p) for p in pairs])
    if len(parts) == 1:
        return parts[0]
    scores = np.concatenate([s for s, _ in parts], axis=1)
    rows = np.concatenate([r for _, r in parts], axis=1)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, axis=1), np.take_along_axis(rows, order, axis=1)


def _bind(function: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: function(*args)


def _pool_size() -> int:
    return max(1, os.cpu_count() or 1)


def _one_omp_thread() -> None:
    # OpenMP's thread count is per calling thread: FAISS runs one thread in ours, and
    # the caller's own FAISS calls keep their settings. (Two OpenMP threads per call
    # spin at FAISS's barriers: ten times slower for a lone query on a busy machine.)
    _faiss().omp_set_num_threads(1)


def run_pooled(calls: Sequence[Callable[[], Any]]) -> list[Any]:
    """Run FAISS calls side by side in sealgraph's search threads (one OpenMP thread each)."""
    if not _POOL:
        _POOL.append(
            ThreadPoolExecutor(
                _pool_size(), thread_name_prefix="sealgraph-faiss", initializer=_one_omp_thread
            )
        )
    futures = [_POOL[0].submit(call) for call in calls]
    return [future.result() for future in futures]


def _knn_slice(
    vectors: np.ndarray,
    queries: np.ndarray,
    k: int,
    live_bits: np.ndarray | None,
    lo: int,
    hi: int,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_knn` over rows ``lo..hi`` (``lo`` a multiple of 8); rows as in the whole array."""
    faiss = _faiss()
    part = np.asarray(vectors[lo:hi])  # a view of the mapped file: C-contiguous float32
    want = min(k, hi - lo)
    scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    rows = np.full((len(queries), k), -1, dtype=np.int64)
    found_scores = np.empty((len(queries), want), dtype=np.float32)
    found = np.empty((len(queries), want), dtype=np.int64)
    faiss.knn_inner_product(
        faiss.swig_ptr(queries),
        faiss.swig_ptr(part),
        part.shape[1],
        len(queries),
        hi - lo,
        want,
        faiss.swig_ptr(found_scores),
        faiss.swig_ptr(found),
        _bitmap(live_bits, lo, hi),
    )
    scores[:, :want] = found_scores
    rows[:, :want] = np.where(found >= 0, found + lo, -1)
    return scores, rows


def _bitmap(live_bits: np.ndarray | None, lo: int, hi: int) -> Any:
    """Return a FAISS selector of the live rows among ``lo..hi`` (numbered from 0), or None."""
    if live_bits is None:
        return None
    faiss = _faiss()
    return faiss.IDSelectorBitmap(hi - lo, faiss.swig_ptr(live_bits[lo // 8 :]))


# --- the inverted file's probe, calibrated on the exact search ---------------------------


def calibrate_probe(
    vectors: np.ndarray,
    index: Any,
    queries: np.ndarray | None = None,
    *,
    target: float = TARGET_RECALL,
    k: int = CALIBRATION_K,
    n_queries: int = CALIBRATION_QUERIES,
) -> tuple[int, float]:
    """Return the fewest lists to probe for recall ``target`` of exact top ``k``, and that recall.

    ``queries`` are unit query vectors (a build embeds :func:`calibration_texts`);
    without them, ``n_queries`` stored vectors drawn with a fixed seed are asked.
    Lists of float32 vectors rank their candidates exactly, so a probed search
    returns every row of the exact top ``k`` whose list it reads: its recall at
    ``probe`` is the share of those rows whose list is among the query's ``probe``
    best, counted here for every probe at once from one exact search per query.
    Lists of 8-bit codes are then searched at that probe and at larger ones until
    the measured recall reaches the target.
    """
    n, n_lists = len(vectors), index.nlist
    if n == 0:
        return 1, 1.0
    if queries is None:
        rng = np.random.default_rng(CALIBRATION_SEED)
        rows = np.sort(rng.choice(n, size=min(n, n_queries), replace=False))
        queries = np.asarray(vectors[rows], dtype=np.float32)
    queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, vectors.shape[1])
    k = min(k, n)
    best = np.asarray([[row for row, _ in hits] for hits in exact_search(vectors, queries, k)])
    labels = list_labels(index)
    # rank[q, list]: position of each list in the query's centroid order (0 = best).
    _, order = index.quantizer.search(queries, n_lists)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n_lists)[None, :], axis=1)
    needed = np.take_along_axis(rank, labels[best], axis=1)  # list rank of each true neighbour
    counts = np.bincount(needed.ravel(), minlength=n_lists)
    recall = np.cumsum(counts) / needed.size  # recall[p - 1]: probing p lists
    probe = min(int(np.searchsorted(recall, target - 1e-12)) + 1, n_lists)
    if not is_quantized(index):
        return probe, float(recall[probe - 1])
    return _probe_measured(vectors, index, queries, best, probe, target)


def _probe_measured(
    vectors: np.ndarray,
    index: Any,
    queries: np.ndarray,
    best: np.ndarray,
    probe: int,
    target: float,
) -> tuple[int, float]:
    """Raise ``probe`` (by an eighth at a time) until searches of 8-bit lists reach ``target``."""
    dense = DenseIndex(vectors, index)
    truth = [set(row.tolist()) for row in best]
    while True:
        dense.probe = probe
        found = dense.search_many(queries, best.shape[1])
        recall = float(
            np.mean(
                [len({r for r, _ in f} & t) / len(t) for f, t in zip(found, truth, strict=True)]
            )
        )
        if recall >= target - 1e-12 or probe >= index.nlist:
            return probe, recall
        probe = min(index.nlist, probe + max(1, probe // 8))
