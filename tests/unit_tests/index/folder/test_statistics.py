"""The corpus counts an index keeps (proper names; words are BM25's own document
frequencies): counted at build, updated by add and removal, recounted by a refresh when
other code counted them; read on demand."""

from __future__ import annotations

import json
import sqlite3

import pytest

import sealgraph.index.folder._append as append_module
import sealgraph.index.folder._statistics as statistics_module
from sealgraph.index import build_index, load_index, refresh_lexical, remove_documents
from sealgraph.index.folder._manifest import MANIFEST_FILE, write_manifest
from sealgraph.index.folder._store import DOCSTORE_FILE
from sealgraph.text.names import stem
from sealgraph.text.statistics import CorpusCounts
from sealgraph.types import Document

DOCS = [
    Document("a.md", "Ada Quill", "Ada Quill met Bo Ray in Paris. She painted the harbour."),
    Document("b.md", "Bo Ray", "Bo Ray wrote Salt and Iron in Paris in 1921."),
    Document("c.md", "Harbour Works", "The Harbour Works were founded by Cy Dee."),
    Document("d.md", "Cy Dee", "Cy Dee stayed home and met Ada Quill again."),
]


def quiet(_message: str) -> None:
    pass


def stored(index_dir) -> dict[str, int]:
    conn = sqlite3.connect(index_dir / DOCSTORE_FILE)
    try:
        return dict(conn.execute('SELECT "key", n FROM name_df'))
    finally:
        conn.close()


def counted(index_dir) -> dict[str, int]:
    counts = CorpusCounts()
    counts.add(c.text for c in load_index(index_dir).iter_chunks())
    return dict(counts.names)


def build(docs, index_dir, **kwargs):
    return build_index(docs, index_dir, embedder="none", warn=quiet, **kwargs)


def test_a_build_stores_the_full_counts_of_its_chunks(tmp_path):
    index = build(DOCS, tmp_path / "idx")
    assert stored(tmp_path / "idx") == counted(tmp_path / "idx")
    stats = index.statistics()
    assert stats is not None and stats.n_chunks == index.n_chunks
    assert stats.names.get("cy dee") == 2 and stats.names.get("nobody here") == 0
    assert "bo ray" in stats.names and "nobody here" not in stats.names
    assert index.manifest["statistics"]["n_chunks"] == index.n_chunks


@pytest.fixture
def added_chunks(monkeypatch):
    """Record how many chunks each CorpusCounts.add call counts."""
    sizes: list[int] = []
    original = CorpusCounts.add

    def add(self, chunks):
        chunks = list(chunks)
        sizes.append(len(chunks))
        original(self, chunks)

    monkeypatch.setattr(statistics_module.CorpusCounts, "add", add)
    return sizes


def test_adding_documents_updates_the_counts_by_the_new_chunks_only(tmp_path, monkeypatch):
    build(DOCS[:3], tmp_path / "idx")
    read: list[str] = []
    original = append_module.chunk_names

    def reading(text):
        read.append(text)
        return original(text)

    monkeypatch.setattr(append_module, "chunk_names", reading)
    build(DOCS[3:], tmp_path / "idx")
    assert read == [DOCS[3].text]  # the new document's chunk, not the corpus
    build(DOCS, tmp_path / "fresh")
    assert stored(tmp_path / "idx") == stored(tmp_path / "fresh") == counted(tmp_path / "fresh")


def test_changing_and_removing_documents_takes_their_old_counts_back(tmp_path):
    build(DOCS, tmp_path / "idx")
    changed = Document("b.md", "Bo Ray", "Bo Ray moved to Lisbon.")
    build([changed], tmp_path / "idx")
    remove_documents(tmp_path / "idx", ["c.md"], warn=quiet)
    build([DOCS[0], changed, DOCS[3]], tmp_path / "fresh")
    assert stored(tmp_path / "idx") == stored(tmp_path / "fresh")
    index = load_index(tmp_path / "idx")
    assert index.document_frequency(stem("lisbon")) == 1  # the lexical part, current too
    assert index.document_frequency(stem("founded")) == 0
    assert index.document_frequency(stem("paris")) == 1


def test_counts_of_other_code_are_not_read_and_a_refresh_recounts_them(tmp_path):
    build(DOCS, tmp_path / "idx")
    manifest = json.loads((tmp_path / "idx" / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest["statistics"]["version"] = -1  # counted by a sealgraph that counted otherwise
    write_manifest(tmp_path / "idx", manifest)
    assert load_index(tmp_path / "idx").statistics() is None  # the reader counts itself
    index = refresh_lexical(tmp_path / "idx", warn=quiet)
    assert index.statistics() is not None
    assert stored(tmp_path / "idx") == counted(tmp_path / "idx")


def test_an_add_to_an_index_with_stale_counts_counts_them_all_again(tmp_path):
    build(DOCS[:3], tmp_path / "idx")
    manifest = json.loads((tmp_path / "idx" / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest["statistics"]["lexicon"] = "another lexicon"
    write_manifest(tmp_path / "idx", manifest)
    index = build(DOCS[3:], tmp_path / "idx")  # not row by row: the whole index again
    assert index.statistics() is not None
    assert stored(tmp_path / "idx") == counted(tmp_path / "idx")


def footer_docs(n: int) -> list[Document]:
    footer = "Was this page helpful? Tell us on the forum."
    return [
        Document(
            f"p{i}.md", f"Page {i}", f"Page {i} explains topic {i}.\n{footer}\nEdit this page."
        )
        for i in range(n)
    ]


def test_repeated_lines_are_counted_at_build_and_kept_by_adds_and_removals(tmp_path):
    from sealgraph.packing.scoring import line_key, repeated_lines

    docs = footer_docs(6)
    index = build(docs, tmp_path / "idx")
    lines = index.statistics().repeated_lines()
    expected = repeated_lines(index.iter_chunks())
    assert line_key("Was this page helpful? Tell us on the forum.") in lines
    assert line_key("Page 1 explains topic 1.") not in lines
    assert len(lines) == len(expected) and all(k in lines for k in expected)
    # Grown by adds, changed and shrunk: the same lines as counting the chunks again.
    build(footer_docs(9)[6:], tmp_path / "idx")
    build([Document("p0.md", "Page 0", "Page 0 now says something else.")], tmp_path / "idx")
    remove_documents(tmp_path / "idx", ["p1.md"], warn=quiet)
    index = load_index(tmp_path / "idx")
    expected = repeated_lines(index.iter_chunks())
    lines = index.statistics().repeated_lines()
    assert len(lines) == len(expected) and all(k in lines for k in expected)
    conn = sqlite3.connect(tmp_path / "idx" / DOCSTORE_FILE)
    footer = conn.execute("SELECT MAX(n) FROM line_df").fetchone()[0]
    conn.close()
    assert footer == 7  # 9 pages, p0 changed (no footer now), p1 removed
