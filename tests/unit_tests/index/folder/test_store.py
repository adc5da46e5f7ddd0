from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from sealgraph.index.folder._store import (
    read_chunk_hashes,
    read_docstore,
    read_rows,
    write_docstore,
)
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
    assert hashes == HASHES == [h for _, h in read_chunk_hashes(store)]
    assert read_rows(store) == [0, 1, 2]


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


def test_rows_with_gaps_read_back_in_row_order(store):
    # An index added to row by row leaves gaps where changed documents' chunks were.
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("UPDATE chunks SET \"row\" = 7 WHERE chunk_id = 'b.md#0'")
    conn.close()
    _, chunks, hashes = read_docstore(store)
    assert [c.chunk_id for c in chunks] == ["b.md#1", "a.md#0", "b.md#0"]
    assert read_rows(store) == [1, 2, 7]
    assert hashes == [HASHES[1], HASHES[2], HASHES[0]]


def test_index_files_hold_no_pickles(tiny_index):
    # Every array file must load with pickling disabled.
    files = sorted(tiny_index.path.rglob("*.npy"))
    assert files
    for path in files:
        np.load(path, allow_pickle=False)
    for path in tiny_index.path.rglob("*"):
        if path.is_file():
            assert not path.read_bytes().startswith(b"\x80"), f"{path} looks like a pickle"


def test_each_document_file_has_room_for_an_offset_map(tmp_path):
    path = tmp_path / "docstore.sqlite"
    write_docstore(path, DOCS, CHUNKS, HASHES, {"a.md": "/docs/a.md"}, name_key=str.lower)
    conn = sqlite3.connect(path)
    try:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(document_files)")]
        rows = conn.execute("SELECT doc_id, path, offset_map FROM document_files").fetchall()
    finally:
        conn.close()
    assert columns == ["doc_id", "path", "offset_map"]
    assert rows == [("a.md", "/docs/a.md", None)]  # recorded by the loaders later
