"""Make a freshly built index look like one written by an earlier sealgraph."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from sealgraph.index.folder._manifest import quick_digest


def as_earlier_index(index_dir: Path, *, drop_document_files: bool = False) -> None:
    """List the source files in the manifest (no ``source_files`` table), checksums kept right.

    With ``drop_document_files``, the docstore also lacks the file of each document
    (indexes before that was recorded).
    """
    store = index_dir / "docstore.sqlite"
    conn = sqlite3.connect(store)
    if drop_document_files:
        conn.execute("DROP TABLE document_files")
    rows = conn.execute("SELECT path, sha256, documents FROM source_files").fetchall()
    conn.execute("DROP TABLE source_files")
    conn.commit()
    conn.close()
    manifest = json.loads((index_dir / "manifest.json").read_text())
    manifest["sources"] = [{"path": p, "sha256": h, "documents": n} for p, h, n in rows]
    manifest["files"]["docstore.sqlite"] = hashlib.sha256(store.read_bytes()).hexdigest()
    manifest["quick"]["docstore.sqlite"] = quick_digest(store)
    (index_dir / "manifest.json").write_text(json.dumps(manifest))


def with_numpy_inverted_file(index_dir: Path) -> None:
    """Give a dense index the numpy inverted file earlier builds wrote (``ann.kind`` ``ivf``)."""
    import numpy as np

    vectors = np.load(index_dir / "vectors.npy")
    folder = index_dir / "ivf"
    folder.mkdir()
    arrays = {
        "centroids.npy": vectors[:1].copy(),
        "offsets.npy": np.array([0, len(vectors)], dtype=np.int64),
        "rows.npy": np.arange(len(vectors), dtype=np.int32),
    }
    manifest = json.loads((index_dir / "manifest.json").read_text())
    for name, array in arrays.items():
        np.save(folder / name, array, allow_pickle=False)
        path = folder / name
        manifest["files"][f"ivf/{name}"] = hashlib.sha256(path.read_bytes()).hexdigest()
        manifest["quick"][f"ivf/{name}"] = quick_digest(path)
    manifest["ann"] = {"kind": "ivf", "lists": 1, "probe": 1, "recall": 1.0}
    (index_dir / "manifest.json").write_text(json.dumps(manifest))
