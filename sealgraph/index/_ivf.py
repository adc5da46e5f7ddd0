"""An approximate dense index for large corpora: an inverted file over k-means lists.

Exact search reads every vector for every query: fine up to a million or two
chunks on a small machine, slow beyond. Above :data:`ANN_MIN_VECTORS` an index also holds an
**inverted file** (IVF): the vectors are clustered by spherical k-means into
``lists``; a query scores the centroids, reads the vectors of the ``probe`` best
lists only, and ranks those exactly.

Everything is deterministic (same vectors, same lists, same evidence): the
training sample and the first centroids are drawn with a fixed seed, k-means runs
a fixed number of rounds in a fixed order, and ties go to the lower list or row.
A seeded IVF fits this better than a multithreaded HNSW build, whose graph depends
on thread timing. The files are plain ``.npy`` arrays (no pickle), memory-mapped:

    ivf/centroids.npy   (lists, dim) float32 unit centroids
    ivf/offsets.npy     (lists + 1,) int64: list i holds rows[offsets[i]:offsets[i+1]]
    ivf/rows.npy        (vectors,) int32 rows grouped by list, ascending in each

A build calibrates how many lists a query reads (:func:`calibrate_probe`): the
fewest for which query-like sentences of seeded sample chunks find
:data:`TARGET_RECALL` of their exact top 50, recorded in the manifest; an inverted
file that would read more than :data:`ANN_MAX_SHARE` of its lists is not kept. Recall of real questions against exact search is
measured by ``benchmarks/ann_recall.py`` (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sealgraph.text.chunking import split_sentences

__all__ = [
    "ANN_MIN_VECTORS",
    "IVF_DIR",
    "IVF_FILES",
    "InvertedFile",
    "calibrate_probe",
    "calibrated_probe",
    "calibration_texts",
    "train_ivf",
]

IVF_DIR = "ivf"
IVF_FILES = (f"{IVF_DIR}/centroids.npy", f"{IVF_DIR}/offsets.npy", f"{IVF_DIR}/rows.npy")
ANN_MIN_VECTORS = 2_000_000
"""From this many vectors on, a build adds the inverted file and searches it.

Chosen by measurement (docs/benchmarks.md): exact search reads every vector, 20 ms
a query for 300,000 vectors of 256 dimensions on 2 cores, so about 100 ms at a
million of 384 and 200 ms at two million: within a question's budget up to there.
Below it exact search is fast enough, and its recall is 1."""
DEFAULT_PROBE = 48
"""Lists a query reads when the index records no calibrated probe (built before calibration)."""
TARGET_RECALL = 0.98
"""Recall of the exact top :data:`CALIBRATION_K` a build calibrates its probe for."""
CALIBRATION_K = 50
CALIBRATION_QUERIES = 256
"""Query-like texts of chunks drawn with a fixed seed that a build asks to calibrate."""
ANN_MAX_SHARE = 0.5
"""An inverted file that must read more than this share of its lists for the target
recall is not kept: exact search reads every vector, with recall 1, for little more."""

_SEED = 20_260_611
_SAMPLE = 65_536  # training vectors: enough for a few thousand lists
_ROUNDS = 8
_BLOCK = 16_384  # vectors assigned at a time (bounded memory)


def calibration_texts(texts: Sequence[str], n_queries: int = CALIBRATION_QUERIES) -> list[str]:
    """Return query-like texts to calibrate with: a sentence of chunks drawn with a fixed seed.

    The first sentence of at least six words of each drawn chunk's indexed text (its
    title and heading lines are shorter), else its first 200 characters: a short
    text whose answer is in the corpus, as a question's is.
    """
    if not texts:
        return []
    rng = np.random.default_rng(_SEED + 1)
    rows = np.sort(rng.choice(len(texts), size=min(len(texts), n_queries), replace=False))
    out = []
    for row in rows.tolist():
        text = texts[row]
        spans = [line[a:b].strip() for line in text.split("\n") for a, b in split_sentences(line)]
        out.append(next((s for s in spans if len(s.split()) >= 6), text[:200].strip()))
    return out


def calibrate_probe(
    vectors: np.ndarray,
    ivf: InvertedFile,
    queries: np.ndarray | None = None,
    *,
    target: float = TARGET_RECALL,
    k: int = CALIBRATION_K,
    n_queries: int = CALIBRATION_QUERIES,
) -> tuple[int, float]:
    """Return the fewest lists to probe for recall ``target`` of exact top ``k``, and that recall.

    ``queries`` are unit query vectors (a build embeds :func:`calibration_texts`);
    without them, ``n_queries`` stored vectors drawn with a fixed seed are asked. A
    probed search ranks its candidates exactly, so it returns every row of the
    exact top ``k`` whose list it reads: its recall at ``probe`` is the share of
    those rows whose list is among the query's ``probe`` best, counted here for every
    probe at once from one exact search per query. ``benchmarks/ann_recall.py``
    measures other questions' recall at the calibrated probe.
    """
    n, n_lists = len(vectors), len(ivf.centroids)
    if n == 0:
        return 1, 1.0
    if queries is None:
        rng = np.random.default_rng(_SEED + 1)
        rows = np.sort(rng.choice(n, size=min(n, n_queries), replace=False))
        queries = vectors[rows]
    queries = np.asarray(queries, dtype=np.float32).reshape(-1, vectors.shape[1])
    k = min(k, n)
    best = np.empty((len(queries), 0), dtype=np.int64)
    best_scores = np.empty((len(queries), 0), dtype=np.float32)
    for start in range(0, n, _BLOCK):  # exact top k, block by block (bounded memory)
        block = np.asarray(vectors[start : start + _BLOCK], dtype=np.float32)
        scores = np.concatenate([best_scores, queries @ block.T], axis=1)
        ids = np.concatenate(
            [
                best,
                np.broadcast_to(np.arange(start, start + len(block)), (len(queries), len(block))),
            ],
            axis=1,
        )
        keep = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        best_scores = np.take_along_axis(scores, keep, axis=1)
        best = np.take_along_axis(ids, keep, axis=1)
    labels = ivf.labels()
    # rank[q, list]: position of each list in the query's centroid order (0 = best).
    order = np.argsort(-(queries @ np.asarray(ivf.centroids).T), axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n_lists)[None, :], axis=1)
    needed = np.take_along_axis(rank, labels[best], axis=1)  # list rank of each true neighbour
    counts = np.bincount(needed.ravel(), minlength=n_lists)
    recall = np.cumsum(counts) / needed.size  # recall[p - 1]: probing p lists
    probe = int(np.searchsorted(recall, target - 1e-12)) + 1
    probe = min(probe, n_lists)
    return probe, float(recall[probe - 1])


def calibrated_probe(entry: object, n_lists: int) -> int:
    """Return the probe a manifest's ``ann`` entry records, or :data:`DEFAULT_PROBE`.

    The manifest is data: a probe that is not a whole number of lists the index holds
    is not used (an index built before calibration records none).
    """
    probe = entry.get("probe") if isinstance(entry, dict) else None
    if type(probe) is int and 1 <= probe <= n_lists:
        return probe
    return min(DEFAULT_PROBE, max(1, n_lists))


def n_lists_for(n_vectors: int) -> int:
    """Return how many lists ``n_vectors`` get: about twice the square root, at least 16."""
    return max(16, int(2 * np.sqrt(n_vectors)))


def _assign(vectors: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Index of the best centroid of each vector (the lower on a tie), block by block."""
    out = np.empty(len(vectors), dtype=np.int32)
    for start in range(0, len(vectors), _BLOCK):
        block = np.asarray(vectors[start : start + _BLOCK], dtype=np.float32)
        out[start : start + len(block)] = np.argmax(block @ centroids.T, axis=1)
    return out


def train_ivf(vectors: np.ndarray, n_lists: int | None = None) -> np.ndarray:
    """Return unit centroids of spherical k-means on a seeded sample of ``vectors``."""
    n = len(vectors)
    n_lists = min(n_lists or n_lists_for(n), n)
    rng = np.random.default_rng(_SEED)
    sample_rows = np.sort(rng.choice(n, size=min(n, max(_SAMPLE, n_lists)), replace=False))
    sample = np.asarray(vectors[sample_rows], dtype=np.float32)
    centroids = sample[np.sort(rng.choice(len(sample), size=n_lists, replace=False))].copy()
    for _ in range(_ROUNDS):
        labels = _assign(sample, centroids)
        sums = np.zeros_like(centroids)
        np.add.at(sums, labels, sample)
        counts = np.bincount(labels, minlength=n_lists)
        empty = counts == 0
        # An empty list keeps its centroid (no reseeding: same input, same lists).
        sums[empty] = centroids[empty]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = (sums / np.where(norms > 0, norms, 1)).astype(np.float32)
    return centroids


@dataclass(frozen=True)
class InvertedFile:
    """The lists of an index's vectors, memory-mapped."""

    centroids: np.ndarray
    """(lists, dim) unit centroids."""
    offsets: np.ndarray
    """(lists + 1,) where each list's rows start in :attr:`rows`."""
    rows: np.ndarray
    """Every row, grouped by list, ascending within a list."""

    @classmethod
    def build(cls, vectors: np.ndarray, centroids: np.ndarray | None = None) -> InvertedFile:
        """Assign every vector to its list (training centroids first when none are given)."""
        if centroids is None:
            centroids = train_ivf(vectors)
        labels = _assign(vectors, centroids)
        return cls.of_labels(centroids, labels)

    @classmethod
    def of_labels(cls, centroids: np.ndarray, labels: np.ndarray) -> InvertedFile:
        """Return the inverted file of rows whose list is ``labels[row]``."""
        order = np.argsort(labels, kind="stable").astype(np.int32)  # by list, then row
        counts = np.bincount(labels, minlength=len(centroids))
        offsets = np.zeros(len(centroids) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return cls(centroids, offsets, order)

    def labels(self) -> np.ndarray:
        """Return the list of every row (the inverse of :attr:`rows`)."""
        out = np.empty(len(self.rows), dtype=np.int32)
        for i in range(len(self.centroids)):
            out[self.rows[self.offsets[i] : self.offsets[i + 1]]] = i
        return out

    def extended(self, vectors: np.ndarray) -> InvertedFile:
        """Return these lists with ``vectors`` appended as the next rows (same centroids)."""
        labels = np.concatenate([self.labels(), _assign(vectors, self.centroids)])
        return InvertedFile.of_labels(self.centroids, labels)

    def save(self, directory: Path) -> None:
        """Write the three arrays under ``directory/ivf``."""
        folder = directory / IVF_DIR
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "centroids.npy", self.centroids, allow_pickle=False)
        np.save(folder / "offsets.npy", self.offsets, allow_pickle=False)
        np.save(folder / "rows.npy", self.rows, allow_pickle=False)

    @classmethod
    def load(cls, directory: Path) -> InvertedFile:
        """Memory-map the arrays :meth:`save` wrote."""
        folder = directory / IVF_DIR
        centroids = np.load(folder / "centroids.npy", mmap_mode="r", allow_pickle=False)
        offsets = np.load(folder / "offsets.npy", allow_pickle=False)
        rows = np.load(folder / "rows.npy", mmap_mode="r", allow_pickle=False)
        if (
            centroids.ndim != 2
            or offsets.shape != (len(centroids) + 1,)
            or rows.ndim != 1
            or int(offsets[-1]) != len(rows)
            or int(offsets[0]) != 0
            or bool(np.any(np.diff(offsets) < 0))
        ):
            raise ValueError("the inverted file's arrays do not fit together")
        if len(rows) and (int(np.min(rows)) < 0 or int(np.max(rows)) >= len(rows)):
            raise ValueError("the inverted file names rows the vectors do not hold")
        return cls(centroids, offsets, rows)

    def candidates(self, query: np.ndarray, probe: int) -> np.ndarray:
        """Rows of the ``probe`` lists whose centroids score best for ``query``, ascending."""
        scores = np.asarray(self.centroids) @ query
        probe = min(probe, len(scores))
        best = np.argpartition(-scores, probe - 1)[:probe]
        best = sorted(best.tolist(), key=lambda i: (-float(scores[i]), i))
        parts = [np.asarray(self.rows[self.offsets[i] : self.offsets[i + 1]]) for i in best]
        rows = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        return np.sort(rows)
