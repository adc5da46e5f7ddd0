"""Corpus tables (word and name frequencies) are built with the index and used by the reasoner."""

from __future__ import annotations

import json

import pytest

from sealgraph.errors import IndexCorruptError
from sealgraph.index import load_index
from sealgraph.index._manifest import MANIFEST_FILE, write_manifest
from sealgraph.ledger.knowledge import (
    TABLES_FILE,
    CorpusKnowledge,
    corpus_tables,
    name_document_frequencies,
)
from sealgraph.text import stem
from sealgraph.types import Chunk


def chunk(i: int, text: str) -> Chunk:
    return Chunk(f"c{i}", f"d{i}", f"Doc {i}", (), 0, 0, len(text), text, 10, ())


def test_tables_count_words_per_chunk_and_keep_only_frequent_names():
    chunks = [chunk(i, f"Ada Quill met Bo Ray in Paris. Paris again {i}.") for i in range(7)]
    chunks.append(chunk(7, "Cy Dee stayed home."))
    tables = corpus_tables(chunks)
    assert tables["n_chunks"] == 8
    assert tables["term_df"][stem("paris")] == 7  # once per chunk, however often it repeats
    assert name_document_frequencies(chunks)["cy dee"] == 1
    # Rare names are distinctive at any corpus size, so the table need not list them.
    assert tables["name_df"] == {"ada quill": 7, "bo ray": 7}


def test_index_build_stores_the_tables_and_knowledge_uses_them(tiny_index, monkeypatch):
    index = load_index(tiny_index.path)
    assert TABLES_FILE in index.manifest["files"]
    expected = CorpusKnowledge(index)
    idf = {t: expected.idf(t) for t in ("mara", "lindqvist", "unseen")}

    # With stored tables, no pass over the chunks is needed.
    def no_scan():
        raise AssertionError("the stored tables should have been used")

    monkeypatch.setattr(index, "iter_chunks", no_scan)
    kn = CorpusKnowledge(index)
    assert {t: kn.idf(t) for t in idf} == idf
    assert kn.distinctive_name("no such name")


def test_an_index_without_tables_computes_them_on_first_use(tiny_index, tmp_path):
    import shutil

    copy = tmp_path / "index"
    shutil.copytree(tiny_index.path, copy)
    (copy / TABLES_FILE).unlink()
    manifest = json.loads((copy / MANIFEST_FILE).read_text(encoding="utf-8"))
    del manifest["files"][TABLES_FILE]
    write_manifest(copy, manifest)
    index = load_index(copy)
    reference = CorpusKnowledge(load_index(tiny_index.path))
    kn = CorpusKnowledge(index)
    assert kn.idf("lindqvist") == reference.idf("lindqvist")


def test_tables_of_another_version_are_recomputed(tiny_index, tmp_path, monkeypatch):
    import sealgraph.ledger.knowledge as knowledge

    index = load_index(tiny_index.path)
    monkeypatch.setattr(knowledge, "TABLES_VERSION", knowledge.TABLES_VERSION + 1)
    scanned = []
    original = index.iter_chunks

    def counting():
        scanned.append(1)
        return original()

    monkeypatch.setattr(index, "iter_chunks", counting)
    CorpusKnowledge(index).idf("lindqvist")
    assert scanned


def test_a_changed_tables_file_is_a_damaged_index(tiny_index, tmp_path):
    import shutil

    copy = tmp_path / "index"
    shutil.copytree(tiny_index.path, copy)
    (copy / TABLES_FILE).write_text("{}", encoding="utf-8")
    with pytest.raises(IndexCorruptError, match=TABLES_FILE):
        load_index(copy)
