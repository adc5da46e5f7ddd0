"""Make a freshly built index look like one written by an earlier sealgraph."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from sealgraph.index._manifest import quick_digest


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
