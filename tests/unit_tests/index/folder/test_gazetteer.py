"""The reasoner's gazetteer written at index time: the same names as one derived in
memory, kept current by adds, changes and removals, recomputed by a refresh, read on
demand, and refused clearly when damaged."""

from __future__ import annotations

import json
import sqlite3

import pytest

from sealgraph.errors import IndexCorruptError
from sealgraph.index import build_index, load_index, refresh_lexical, remove_documents
from sealgraph.index.folder._gazetteer import StoredGazetteer, key_hash
from sealgraph.index.folder._manifest import MANIFEST_FILE, write_manifest
from sealgraph.index.folder._store import DOCSTORE_FILE
from sealgraph.ledger.gazetteer import Gazetteer, declared_aliases
from sealgraph.ledger.knowledge import CorpusKnowledge
from sealgraph.text.lexicon import use_lexicon
from sealgraph.types import Document

DOCS = [
    Document(
        "ppt.md",
        "Payments Platform Team",
        "The Payments Platform Team (PPT), also known as Paybox, runs billing.\n\n"
        "## Mission\n\nPPT keeps money moving.\n\n## On-call\n\nAda Quill leads on-call.",
    ),
    Document("ada.md", "Ada Quill", "Ada Quill joined the Payments Platform Team in 2019."),
    Document(
        "dua.md",
        "Data Use Agreement New York City",
        "This Data Use Agreement governs access to city data.",
    ),
    Document(
        "copacc.md",
        "CopAcc_NDA-and-ToP-Mentors_2.0_2017",
        "This agreement is made between CopAcc and the mentors.",
    ),
    Document("efca.md", "EFCAConfidentialityAgreement", "EFCA keeps secrets."),
    Document("apple.md", "Apple Inc.", "Apple Inc. makes computers, usually just called Apple."),
]


def quiet(_message: str) -> None:
    pass


def build(docs, index_dir):
    return build_index(docs, index_dir, embedder="none", warn=quiet)


def in_memory(index) -> Gazetteer:
    """The gazetteer derived from the index's titles, headings and first chunks."""
    with use_lexicon(index.lexicon):
        titles = index.titles()
        title_of = dict(titles)
        aliases = [
            (doc_id, name)
            for doc_id, text in index.first_chunk_texts()
            for name in declared_aliases(title_of[doc_id], text)
        ]
        return Gazetteer(titles, index.document_headings(), aliases)


def rows(index_dir) -> list[tuple]:
    conn = sqlite3.connect(index_dir / DOCSTORE_FILE)
    try:
        entries = conn.execute('SELECT "key", doc_id, rank FROM gazetteer ORDER BY 1, 2').fetchall()
        words = conn.execute("SELECT * FROM title_words ORDER BY 1, 2, 3").fetchall()
        (blob, n_keys, longest) = conn.execute(
            "SELECT hashes, n_keys, max_words FROM gazetteer_keys"
        ).fetchone()
        return [entries, words, blob, n_keys, longest]
    finally:
        conn.close()


def assert_same(stored: Gazetteer, memory: Gazetteer, index) -> None:
    keys = list(memory._tables._entries)
    assert len(stored) == len(memory) and stored.max_words == memory.max_words
    with use_lexicon(index.lexicon):
        for key in keys:
            assert stored._tables.entry(key) == memory._tables.entry(key), key
        for doc_id, _ in index.titles():
            assert stored.title_key(doc_id) == memory.title_key(doc_id)
        for chunk in index.iter_chunks():
            assert stored.find_mentions(chunk.text) == memory.find_mentions(chunk.text)
        for name in ["PPT", "Paybox", "Data Use Agreement", "CopAcc", "EFCA", "Quill", "Nobody"]:
            assert stored.lookup(name) == memory.lookup(name), name


def test_the_stored_gazetteer_holds_the_names_derived_in_memory(tmp_path):
    index = build(DOCS, tmp_path / "idx")
    knowledge = CorpusKnowledge(index)
    assert isinstance(knowledge.gazetteer._tables, StoredGazetteer)
    assert_same(knowledge.gazetteer, in_memory(index), index)
    with use_lexicon(index.lexicon):
        found = knowledge.gazetteer
        assert found.lookup("PPT") == (("ppt.md",), "alias")  # declared in its first chunk
        assert found.lookup("Paybox") == (("ppt.md",), "alias")
        assert found.lookup("Mission") == (("ppt.md",), "heading")
        assert found.lookup("Data Use Agreement") == (("dua.md",), "partial")  # inside a title
        assert found.lookup("EFCA") == (("efca.md",), "partial")  # glued in a file name
    assert knowledge.doc_titles["ada.md"] == "Ada Quill"
    assert knowledge.doc_titles.get("nobody.md", "") == ""
    assert len(knowledge.doc_titles) == len(DOCS) and "efca.md" in knowledge.doc_titles


def test_adds_changes_and_removals_keep_the_names_of_a_fresh_build(tmp_path):
    build(DOCS[:3], tmp_path / "idx")
    build(DOCS[3:], tmp_path / "idx")  # added row by row
    changed = Document("ppt.md", "Payments Platform Team", "The team (PPT) moved to Lisbon.")
    build([changed], tmp_path / "idx")
    remove_documents(tmp_path / "idx", ["dua.md"], warn=quiet)
    fresh = [changed, *(d for d in DOCS if d.doc_id not in {"ppt.md", "dua.md"})]
    build(fresh, tmp_path / "fresh")
    assert rows(tmp_path / "idx") == rows(tmp_path / "fresh")
    index = load_index(tmp_path / "idx")
    assert_same(CorpusKnowledge(index).gazetteer, in_memory(index), index)
    with use_lexicon(index.lexicon):
        assert CorpusKnowledge(index).gazetteer.lookup("Paybox") == ((), None)


def test_a_refresh_writes_the_names_an_older_index_lacks(tmp_path):
    build(DOCS, tmp_path / "idx")
    expected = rows(tmp_path / "idx")
    manifest = json.loads((tmp_path / "idx" / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest["statistics"]["version"] = 3  # an index of the version before the gazetteer
    write_manifest(tmp_path / "idx", manifest)
    old = load_index(tmp_path / "idx")
    knowledge = CorpusKnowledge(old)  # read as before: derived in memory
    assert not isinstance(knowledge.gazetteer._tables, StoredGazetteer)
    with use_lexicon(old.lexicon):
        assert knowledge.gazetteer.lookup("PPT") == (("ppt.md",), "alias")
    refreshed = refresh_lexical(tmp_path / "idx", warn=quiet)  # names written again
    assert rows(tmp_path / "idx") == expected
    assert isinstance(CorpusKnowledge(refreshed).gazetteer._tables, StoredGazetteer)


def test_which_ngrams_may_be_names_is_one_filter_lookup(tmp_path):
    index = build(DOCS, tmp_path / "idx")
    stored = index.statistics().gazetteer()
    assert stored.known(["payments platform team", "ppt", "no such name", ""]) == {
        "payments platform team",
        "ppt",
    }
    assert stored.entry("no such name") is None
    assert key_hash("ppt") == key_hash("ppt") != key_hash("PPT")


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE gazetteer_keys SET hashes = x'0102'",  # not whole 64-bit values
        "UPDATE gazetteer_keys SET n_keys = n_keys + 1",
        "UPDATE gazetteer_keys SET max_words = 99",
        "UPDATE gazetteer_keys SET hashes = x'02000000000000000100000000000000', n_keys = 2",
    ],
)
def test_a_damaged_key_filter_is_a_clear_error(tmp_path, damage):
    index = build(DOCS, tmp_path / "idx")
    docstore = tmp_path / "copy.sqlite"
    docstore.write_bytes((tmp_path / "idx" / DOCSTORE_FILE).read_bytes())
    conn = sqlite3.connect(docstore)
    with conn:
        conn.execute(damage)
    conn.close()
    with pytest.raises(IndexCorruptError, match="damaged gazetteer"):
        len(StoredGazetteer(docstore, index.lexicon))
