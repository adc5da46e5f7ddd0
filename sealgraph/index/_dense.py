"""Dense vectors: a FAISS inner-product index over unit vectors, plus the raw array.

The vectors are L2-normalised, so inner product is cosine similarity. FAISS
writes its own binary format (no pickle); the raw float32 vectors are kept as
``.npy`` (``allow_pickle=False``) so chunks can be compared without FAISS.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

FAISS_FILE = "dense.faiss"
VECTORS_FILE = "vectors.npy"
DENSE_FILES = (FAISS_FILE, VECTORS_FILE)


class DenseIndex:
    """Unit vectors addressed by row (0..n-1), searchable by inner product."""

    def __init__(self, vectors: np.ndarray, faiss_index=None) -> None:
        import faiss

        self.dim = int(vectors.shape[1])
        if faiss_index is None:
            faiss_index = faiss.IndexFlatIP(self.dim)
            faiss_index.add(vectors)
        self._faiss = faiss_index
        self.vectors = vectors
        self.vectors.setflags(write=False)

    @property
    def n_vectors(self) -> int:
        """Number of stored vectors."""
        return int(self._faiss.ntotal)

    def save(self, directory: Path) -> None:
        """Write ``dense.faiss`` and ``vectors.npy`` into ``directory``."""
        import faiss

        faiss.write_index(self._faiss, str(directory / FAISS_FILE))
        with open(directory / VECTORS_FILE, "wb") as f:
            np.save(f, self.vectors, allow_pickle=False)

    @classmethod
    def load(cls, directory: Path) -> DenseIndex:
        """Read the files written by :meth:`save`."""
        import faiss

        vectors = np.load(directory / VECTORS_FILE, allow_pickle=False)
        faiss_index = faiss.read_index(str(directory / FAISS_FILE))
        if vectors.dtype != np.float32 or vectors.ndim != 2:
            raise ValueError(
                f"{VECTORS_FILE} holds {vectors.dtype} {vectors.shape}, not float32 rows"
            )
        if faiss_index.ntotal != vectors.shape[0] or faiss_index.d != vectors.shape[1]:
            raise ValueError(f"{FAISS_FILE} and {VECTORS_FILE} disagree on the vectors")
        return cls(vectors, faiss_index)

    def search(self, query_vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top ``k`` rows by inner product, best first, ties broken by row."""
        if k <= 0 or self.n_vectors == 0:
            return []
        # Fetch a few extra so that ties at the cut are decided by row, not by FAISS.
        depth = min(self.n_vectors, k + 8)
        query = np.ascontiguousarray(query_vector, dtype=np.float32).reshape(1, -1)
        scores, rows = self._faiss.search(query, depth)
        found = [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]
        found.sort(key=lambda item: (-item[1], item[0]))
        return found[:k]
