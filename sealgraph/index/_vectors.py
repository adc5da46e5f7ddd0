"""What the embedders share: unit-length rows, and how to install the local model."""

from __future__ import annotations

from typing import Any

import numpy as np

ENABLE_DENSE_HINT = "pip install 'sealgraph[local]'"
"""What to run to get offline dense retrieval."""


def normalize_rows(vectors: Any) -> np.ndarray:
    """Return ``vectors`` as a C-contiguous float32 array with unit-length rows.

    All-zero rows stay zero instead of becoming NaN.
    """
    array = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if array.ndim == 1:
        norm = float(np.linalg.norm(array))
        return array / norm if norm > 0 else array
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(array / norms, dtype=np.float32)
