"""A large build's per-document work in worker processes gives the same index as one process."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from sealgraph.errors import ConfigError
from sealgraph.index import build_index
from sealgraph.index._parallel import WORKERS_ENV, build_workers
from sealgraph.types import Document

DOCS = [
    Document(
        f"d{i:03d}.md",
        f"Note {i}",
        f"# Note {i}\n\nAda Quill met Bo Ray in Port {i % 7}. The harbour holds {i} ships.\n\n"
        f"## Details\n\nCy Dee wrote chapter {i} of Salt and Iron.\nWas this page helpful?\n",
    )
    for i in range(300)
]


def dump(path) -> list:
    conn = sqlite3.connect(path / "docstore.sqlite")
    try:
        tables = (
            *("documents", "chunks", "names", "name_df", "line_df", "document_files"),
            *("gazetteer", "title_words", "gazetteer_keys"),
        )
        return [sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in tables]
    finally:
        conn.close()


def test_workers_build_the_same_index_as_one_process(tmp_path, monkeypatch):
    monkeypatch.setenv(WORKERS_ENV, "1")
    one = build_index(DOCS, tmp_path / "one", embedder="none", warn=lambda m: None)
    monkeypatch.setenv(WORKERS_ENV, "2")
    two = build_index(DOCS, tmp_path / "two", embedder="none", warn=lambda m: None)
    assert dump(tmp_path / "one") == dump(tmp_path / "two")
    for name in ("rows.npy", "tfs.npy", "indptr.npy", "lengths.npy"):
        a = np.load(tmp_path / "one" / "lexical" / "seg-000001" / name)
        b = np.load(tmp_path / "two" / "lexical" / "seg-000001" / name)
        np.testing.assert_array_equal(a, b)
    assert one.manifest["files"] == two.manifest["files"]
    assert [h.chunk_id for h in one.search_lexical("Salt and Iron chapter 7", 5)] == [
        h.chunk_id for h in two.search_lexical("Salt and Iron chapter 7", 5)
    ]


def test_the_number_of_workers_follows_the_size_and_the_environment(monkeypatch):
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert build_workers(10) == 1
    assert build_workers(1_000_000) >= 1
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert build_workers(10) == 3
    monkeypatch.setenv(WORKERS_ENV, "none")
    with pytest.raises(ConfigError, match=WORKERS_ENV):
        build_workers(10)
