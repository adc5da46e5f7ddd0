"""Approximate dense search for large indexes: a FAISS inverted file with memory-mapped lists.

Exact search reads every vector for every query: fine up to a million or two chunks
on a small machine, slow beyond. From :data:`ANN_MIN_VECTORS` on, a build also writes
a FAISS **inverted file** (``IndexIVFScalarQuantizer`` with 8-bit codes, SQ8; or
``IndexIVFFlat``, float32 lists): the vectors are clustered by spherical k-means into
lists, a query scores the centroids and reads the codes of the ``probe`` best lists
only, and the best ``RERANK × k`` candidates are scored again exactly from the float32
vectors. The codes are a quarter of the vectors' size (0.4 GB a million vectors of
384 dimensions, 3.8 GB at ten million) and, scored again, found the same neighbours
as float32 lists at every probe measured (docs/benchmarks.md). The file is ``dense.ivf`` (FAISS's own format, no pickle); it is opened
with ``IO_FLAG_MMAP``, so its lists are FAISS ``OnDiskInvertedLists`` memory-mapped
from the file: opening reads only the centroids, and a query pages in the lists it
probes. Ids are the chunk rows; rows the lexical index marks deleted are left out by
an ``IDSelector``.

Everything is deterministic (same vectors, same file): the training sample is drawn
with a fixed seed, FAISS's k-means runs a fixed number of rounds from a fixed seed
(its threads split the work but not the sums: the same lists with 1 or 16 threads,
tested), and results are ordered by exact score then row.

A build calibrates how many lists a query reads
(:func:`~sealgraph.index.folder._dense.calibrate_probe`, beside the exact search it
measures against): the fewest
for which query-like sentences of seeded sample chunks find :data:`TARGET_RECALL` of
their exact top 50, recorded in the manifest; an inverted file that would read more
than :data:`ANN_MAX_SHARE` of the bytes exact search reads, or that does not reach the
target recall, is not kept. Recall of other questions
against exact search is measured by ``benchmarks/ann_recall.py``
(docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.text.chunking import split_sentences

__all__ = [
    "ANN_FILE",
    "ANN_KIND",
    "ANN_MIN_VECTORS",
    "LEGACY_ANN_FILES",
    "build_ann",
    "calibrated_probe",
    "calibration_texts",
    "load_ann",
    "renumbered",
]

ANN_FILE = "dense.ivf"
"""The inverted file, in FAISS's format, beside ``vectors.npy``."""
ANN_KIND = "faiss-ivf"
"""The manifest's ``ann.kind`` for :data:`ANN_FILE`."""
LEGACY_ANN_FILES = ("ivf/centroids.npy", "ivf/offsets.npy", "ivf/rows.npy")
"""The numpy inverted file of earlier builds (``ann.kind`` ``ivf``): no longer read.

Their index opens with exact search (a warning says how to get the FAISS lists back:
build it again, which reuses its vectors); an add or a removal leaves it out."""
ANN_MIN_VECTORS = 2_000_000
"""From this many vectors on, a build adds the inverted file and searches it.

Exact search reads every vector: about 100 ms a query at a million vectors of 384
dimensions on 2 cores (docs/benchmarks.md), 200 ms at two million, a question's
budget for its first search. Below it exact search is fast enough, and its recall is 1."""
DEFAULT_PROBE = 48
"""Lists a query reads when the index records no calibrated probe."""
TARGET_RECALL = 0.98
"""Recall of the exact top :data:`CALIBRATION_K` a build calibrates its probe for."""
CALIBRATION_K = 50
CALIBRATION_QUERIES = 256
"""Query-like texts of chunks drawn with a fixed seed that a build asks to calibrate."""
ANN_MAX_SHARE = 0.5
"""An inverted file that must read more than this share of the bytes exact search reads
(its probed lists' codes) for the target recall is not kept: exact search reads every
vector, with recall 1, for little more. Float32 lists may be probed up to half of
them; 8-bit codes are a quarter of the size, so their calibrated probe always passes."""
RERANK = 4
"""With 8-bit codes, ``RERANK × k`` candidates (at least :data:`MIN_RERANK`) are scored
again exactly."""
MIN_RERANK = 64
"""Candidates scored again however small ``k`` is: a code's ranges come from the
training sample, and a vector added later may lie outside them."""

_SEED = 20_260_611
CALIBRATION_SEED = _SEED + 1
"""Seed of the calibration's sample (of texts at build, of stored vectors without them)."""
_SAMPLE = 65_536  # training vectors at least: enough for a few thousand lists
_POINTS_PER_LIST = 64  # and at most this many per list
_ROUNDS = 10
_BLOCK = 65_536  # vectors added at a time (bounded memory)


def _faiss() -> Any:
    import faiss

    return faiss


def n_lists_for(n_vectors: int) -> int:
    """Return how many lists ``n_vectors`` get: four times the square root, at least 16."""
    return max(16, int(4 * np.sqrt(n_vectors)))


def calibration_texts(texts: Sequence[str], n_queries: int = CALIBRATION_QUERIES) -> list[str]:
    """Return query-like texts to calibrate with: a sentence of chunks drawn with a fixed seed.

    The first sentence of at least six words of each drawn chunk's indexed text (its
    title and heading lines are shorter), else its first 200 characters: a short
    text whose answer is in the corpus, as a question's is.
    """
    if not texts:
        return []
    rng = np.random.default_rng(CALIBRATION_SEED)
    rows = np.sort(rng.choice(len(texts), size=min(len(texts), n_queries), replace=False))
    out = []
    for row in rows.tolist():
        text = texts[row]
        spans = [line[a:b].strip() for line in text.split("\n") for a, b in split_sentences(line)]
        out.append(next((s for s in spans if len(s.split()) >= 6), text[:200].strip()))
    return out


def build_ann(vectors: np.ndarray, n_lists: int | None = None, *, sq8: bool = True) -> Any:
    """Return a FAISS inverted file of ``vectors`` (ids: their rows), trained with a fixed seed.

    Its lists hold 8-bit codes (``sq8``, what a build writes) or the float32 vectors.
    """
    faiss = _faiss()
    n, dim = vectors.shape
    n_lists = max(1, min(n_lists or n_lists_for(n), n))
    quantizer = faiss.IndexFlatIP(dim)
    if sq8:
        index = faiss.IndexIVFScalarQuantizer(
            quantizer, dim, n_lists, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
    else:
        index = faiss.IndexIVFFlat(quantizer, dim, n_lists, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = _SEED
    index.cp.niter = _ROUNDS
    index.cp.spherical = True  # unit centroids: inner product is cosine
    index.cp.min_points_per_centroid = 1  # a small sample is the caller's choice: no warning
    index.cp.max_points_per_centroid = 1 << 30  # the sample below is the whole training set
    rng = np.random.default_rng(_SEED)
    size = min(n, max(_SAMPLE, _POINTS_PER_LIST * n_lists))
    sample = np.sort(rng.choice(n, size=size, replace=False))
    index.train(np.ascontiguousarray(vectors[sample], dtype=np.float32))
    add_rows(index, vectors, 0)
    return index


def add_rows(index: Any, vectors: np.ndarray, first_row: int) -> None:
    """Add ``vectors`` to ``index`` as rows ``first_row, first_row + 1, ...``, block by block."""
    for start in range(0, len(vectors), _BLOCK):
        block = np.ascontiguousarray(vectors[start : start + _BLOCK], dtype=np.float32)
        ids = np.arange(first_row + start, first_row + start + len(block), dtype=np.int64)
        index.add_with_ids(block, ids)


def renumbered(path: Path, vectors: np.ndarray) -> Any:
    """Return the inverted file at ``path`` emptied, then holding ``vectors`` as rows 0..n-1.

    For a removal: the kept vectors get new rows, the lists (centroids, and the 8-bit
    codes' ranges) stay those of the build.
    """
    faiss = _faiss()
    index = _read(path, faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
    fresh = faiss.ArrayInvertedLists(index.nlist, index.code_size)
    index.replace_invlists(fresh, True)
    fresh.this.disown()  # the index owns its new lists now
    index.ntotal = 0
    add_rows(index, vectors, 0)
    return index


def extended(path: Path, vectors: np.ndarray, first_row: int) -> Any:
    """Return the inverted file at ``path`` (read into memory) with ``vectors`` added after it."""
    index = _read(path, 0)
    add_rows(index, vectors, first_row)
    return index


def _read(path: Path, flags: int) -> Any:
    """Read the FAISS index at ``path`` as its own class (an inverted file), or raise ValueError."""
    faiss = _faiss()
    index = faiss.read_index(str(path), flags)
    ivf = faiss.downcast_index(index)
    if not isinstance(ivf, faiss.IndexIVF):
        raise ValueError(f"{path.name} is not an inverted file")
    # Two proxies of one object: the one kept must own it (else it is freed with the other).
    index.this.disown()
    ivf.this.acquire()
    return ivf


def save_ann(index: Any, path: Path) -> None:
    """Write ``index`` to ``path`` (FAISS's format)."""
    _faiss().write_index(index, str(path))


def load_ann(path: Path, n_vectors: int, dim: int) -> Any:
    """Open the inverted file at ``path`` with its lists memory-mapped (read-only).

    Raises:
        ValueError: The file is not an inverted file of ``n_vectors`` vectors of ``dim``
            dimensions (FAISS's own errors too: RuntimeError).

    """
    faiss = _faiss()
    ivf = _read(path, faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
    if ivf.d != dim or ivf.ntotal != n_vectors:
        raise ValueError(f"{ANN_FILE} does not fit the vectors")
    if ivf.metric_type != faiss.METRIC_INNER_PRODUCT:
        raise ValueError(f"{ANN_FILE} does not rank by inner product")
    return ivf


def n_lists_of(index: Any) -> int:
    """Return the number of lists of an inverted file."""
    return int(index.nlist)


def read_share(index: Any, probe: int) -> float:
    """Return the share of exact search's bytes a search probing ``probe`` lists reads, about.

    The probed share of the lists, times the size of a code against a float32 vector.
    """
    return probe / index.nlist * index.code_size / (4 * index.d)


def is_quantized(index: Any) -> bool:
    """Tell whether the lists hold 8-bit codes (approximate scores) rather than the vectors."""
    faiss = _faiss()
    return not isinstance(faiss.downcast_index(index), faiss.IndexIVFFlat)


def list_labels(index: Any) -> np.ndarray:
    """Return the list of every row (the lists' ids inverted), as int32."""
    faiss = _faiss()
    invlists = index.invlists
    out = np.full(index.ntotal, -1, dtype=np.int32)
    for i in range(index.nlist):
        size = invlists.list_size(i)
        if size:
            ids = faiss.rev_swig_ptr(invlists.get_ids(i), size)
            out[np.asarray(ids, dtype=np.int64)] = i
    return out


def probe_search(
    index: Any, queries: np.ndarray, k: int, probe: int, selector: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """FAISS's search of the ``probe`` best lists: ``(scores, rows)``, row -1 where none."""
    faiss = _faiss()
    params = faiss.SearchParametersIVF(nprobe=min(probe, index.nlist), sel=selector)
    return index.search(np.ascontiguousarray(queries, dtype=np.float32), k, params=params)


def calibrated_probe(entry: object, n_lists: int) -> int:
    """Return the probe a manifest's ``ann`` entry records, or :data:`DEFAULT_PROBE`.

    The manifest is data: a probe that is not a whole number of lists the index holds
    is not used.
    """
    probe = entry.get("probe") if isinstance(entry, dict) else None
    if type(probe) is int and 1 <= probe <= n_lists:
        return probe
    return min(DEFAULT_PROBE, max(1, n_lists))


def ann_entry(index: Any, probe: int, recall: float) -> dict[str, Any]:
    """Return the manifest's ``ann`` entry of an inverted file calibrated to ``probe``."""
    return {
        "kind": ANN_KIND,
        "lists": int(index.nlist),
        "probe": probe,
        "recall": round(recall, 4),
        "codes": "sq8" if is_quantized(index) else "flat",
    }


def has_ann(manifest: dict[str, Any]) -> bool:
    """Whether an index's manifest records a FAISS inverted file (this sealgraph's)."""
    entry = manifest.get("ann")
    return (
        bool(manifest.get("embedder")) and isinstance(entry, dict) and entry.get("kind") == ANN_KIND
    )


def has_legacy_ann(manifest: dict[str, Any]) -> bool:
    """Whether an index's manifest records the numpy inverted file of an earlier sealgraph."""
    return bool(manifest.get("embedder")) and bool(manifest.get("ann")) and not has_ann(manifest)
