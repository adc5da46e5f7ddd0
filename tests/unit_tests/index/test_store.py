from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from sealgraph.index._store import read_chunk_hashes, read_docstore, write_docstore
from sealgraph.types import Chunk, Document

DOCS = [
    Document("b.md", "Beta", "## Part\n\nHello there. Bye.", "b.md", {"format": "markdown"}),
    Document("a.md", "Alpha", "Só texto.", "a.md", {"format": "markdown", "n": 1}),
]
CHUNKS = [
    Chunk("b.md#0", "b.md", "Beta", ("Beta", "Part"), 0, 0, 21, "## Part\n\nHello there. ", 6,
          ((0, 9), (9, 21))),
    Chunk("b.md#1", "b.md", "Beta", ("Beta", "Part"), 1, 21, 25, "Bye.", 2, ((0, 4),)),
    Chunk("a.md#0", "a.md", "Alpha", (), 0, 0, 9, "Só texto.", 3, ((0, 9),)),
]  # fmt: skip
HASHES = ["h0", "h1", "h2"]


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "docstore.sqlite"
    write_docstore(path, DOCS, CHUNKS, HASHES, name_key=str.lower)
    return path


def test_round_trip_keeps_every_field_and_order(store):
    documents, chunks, hashes = read_docstore(store)
    assert [(d.doc_id, d.title, d.source) for d in documents] == [
        ("b.md", "Beta", "b.md"),
        ("a.md", "Alpha", "a.md"),
    ]
    assert chunks == CHUNKS
    assert hashes == HASHES == read_chunk_hashes(store)


def test_schema_has_rows_metadata_and_doc_order_index(store):
    conn = sqlite3.connect(store)
    try:
        rows = conn.execute('SELECT chunk_id, "row" FROM chunks ORDER BY "row"').fetchall()
        assert rows == [("b.md#0", 0), ("b.md#1", 1), ("a.md#0", 2)]
        indexes = {r[0]: r[1] for r in conn.execute("SELECT name, sql FROM sqlite_master")}
        assert "(doc_id, ord)" in indexes["chunks_doc_ord"]
        (metadata,) = conn.execute("SELECT metadata FROM documents WHERE doc_id='a.md'").fetchone()
        assert metadata == '{"format": "markdown", "n": 1}'
    finally:
        conn.close()


def test_non_contiguous_rows_are_rejected(store):
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("UPDATE chunks SET \"row\" = 7 WHERE chunk_id = 'a.md#0'")
    conn.close()
    with pytest.raises(ValueError, match="not contiguous"):
        read_docstore(store)


def test_index_files_hold_no_pickles(tiny_index):
    # Every array file must load with pickling disabled.
    files = sorted(tiny_index.path.rglob("*.npy"))
    assert files
    for path in files:
        np.load(path, allow_pickle=False)
    for path in tiny_index.path.rglob("*"):
        if path.is_file():
            assert not path.read_bytes().startswith(b"\x80"), f"{path} looks like a pickle"
