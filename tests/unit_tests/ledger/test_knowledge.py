"""Corpus tables (word and name frequencies): read from the counts an index keeps; for an
index without current counts, the reasoner counts them from its chunks once and caches
them in the index's derived cache; older indexes' stored tables are still read."""

from __future__ import annotations

import json
import math
import shutil
import threading

import pytest

import sealgraph.ledger.knowledge as knowledge
from sealgraph.config import SealConfig
from sealgraph.errors import IndexCorruptError
from sealgraph.graph.context import RunContext
from sealgraph.index import load_index
from sealgraph.index.derived import DERIVED_DIR
from sealgraph.index.folder._manifest import MANIFEST_FILE, file_sha256, write_manifest
from sealgraph.ledger.knowledge import (
    TABLES_CACHE,
    TABLES_FILE,
    CorpusKnowledge,
    corpus_tables,
    name_document_frequencies,
)
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.text.names import stem
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


@pytest.fixture
def fresh_index(tiny_index, tmp_path):
    """A copy of the tiny index without derived caches (tests here write them) and
    without build-time counts, as an index counted by other code is read."""
    copy = tmp_path / "index"
    shutil.copytree(tiny_index.path, copy, ignore=shutil.ignore_patterns(DERIVED_DIR))
    manifest = json.loads((copy / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest["statistics"]["version"] = -1  # counted by a sealgraph that counted otherwise
    write_manifest(copy, manifest)
    return copy


def test_an_index_with_current_counts_is_read_not_counted(tiny_index, tmp_path, monkeypatch):
    copy = tmp_path / "index"
    shutil.copytree(tiny_index.path, copy, ignore=shutil.ignore_patterns(DERIVED_DIR))
    index = load_index(copy)
    scans = counting_scans(monkeypatch, index)
    kn = CorpusKnowledge(index)
    expected = reference_idf(load_index(copy))
    assert {t: kn.idf(t) for t in expected} == expected
    reference = name_document_frequencies(load_index(copy).iter_chunks())
    for name, count in reference.items():
        assert kn.distinctive_name(name) == (count <= 5)
    assert "no line repeats here" not in kn.common_lines  # read, though none repeats
    assert scans == []  # no pass over the chunks
    assert not (copy / DERIVED_DIR / TABLES_CACHE).exists()


def counting_scans(monkeypatch, index) -> list[int]:
    """Count the passes over ``index``'s chunks (``iter_chunks`` calls)."""
    scans: list[int] = []
    original = index.iter_chunks

    def counting():
        scans.append(1)
        return original()

    monkeypatch.setattr(index, "iter_chunks", counting)
    return scans


def reference_idf(index) -> dict[str, float]:
    # The tables as counted from the chunks, without any file.
    tables = corpus_tables(list(index.iter_chunks()))
    n = max(1, index.n_chunks)
    return {
        t: math.log(1.0 + n / (1.0 + tables["term_df"].get(t, 0)))
        for t in ("mara", "lindqvist", "unseen")
    }


def test_the_index_stores_no_tables_of_the_reasoner(fresh_index):
    index = load_index(fresh_index)
    assert TABLES_FILE not in index.manifest["files"]
    assert not (fresh_index / TABLES_FILE).exists()
    assert not (fresh_index / DERIVED_DIR).exists()


def test_tables_are_counted_once_then_read_from_the_derived_cache(fresh_index, monkeypatch):
    index = load_index(fresh_index)
    scans = counting_scans(monkeypatch, index)
    kn = CorpusKnowledge(index)
    expected = reference_idf(load_index(fresh_index))
    assert {t: kn.idf(t) for t in expected} == expected
    assert kn.distinctive_name("no such name")
    assert len(scans) == 1  # both tables from one pass, kept for the instance
    assert (fresh_index / DERIVED_DIR / TABLES_CACHE).is_file()
    # A graph's runs share one knowledge, made once (no module cache: the context holds it).
    run = RunContext.build(index, OfflineReasoner(), SealConfig())
    assert run.knowledge is run.knowledge

    # Another process (a new load of the same index) reads the cache: no pass at all.
    again = load_index(fresh_index)
    no_scans = counting_scans(monkeypatch, again)
    kn2 = CorpusKnowledge(again)
    assert {t: kn2.idf(t) for t in expected} == expected
    assert kn2.tables() == kn.tables()
    assert no_scans == []


def test_concurrent_first_uses_count_the_tables_once(fresh_index, monkeypatch):
    index = load_index(fresh_index)
    scans = counting_scans(monkeypatch, index)
    kn = CorpusKnowledge(index)
    barrier = threading.Barrier(4)

    def first_use():
        barrier.wait()
        kn.idf("lindqvist")

    threads = [threading.Thread(target=first_use) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(scans) == 1


def _with(key, value, table=None):
    # A cache file text: the good one with one entry of its data changed.
    def damage(good):
        data = good["data"]["tables"]
        (data[table] if table else data)[key] = value
        return json.dumps(good)

    return damage


STALE_OR_DAMAGED = {
    "not json": lambda good: "{not json",
    "another build": lambda good: json.dumps({**good, "index": "0" * 64}),
    "no envelope": lambda good: json.dumps(good["data"]),
    "other code": lambda good: json.dumps({**good, "data": {**good["data"], "code": "0"}}),
    "other lexicon": lambda good: json.dumps({**good, "data": {**good["data"], "lexicon": "0"}}),
    "other version": _with("version", knowledge.TABLES_VERSION + 1),
    "wrong chunk count": _with("n_chunks", -1),
    "negative count": _with("lindqvist", -1, table="term_df"),
    "boolean count": _with("lindqvist", True, table="term_df"),
    "float count": _with("lindqvist", 1.0, table="name_df"),
    "NaN": lambda good: json.dumps(good).replace('"n_chunks":', '"x": NaN, "n_chunks":'),
}


@pytest.mark.parametrize("damage", list(STALE_OR_DAMAGED))
def test_a_stale_or_damaged_cache_is_ignored_and_replaced(fresh_index, monkeypatch, damage):
    CorpusKnowledge(load_index(fresh_index)).tables()
    path = fresh_index / DERIVED_DIR / TABLES_CACHE
    written = path.read_text(encoding="utf-8")
    path.write_text(STALE_OR_DAMAGED[damage](json.loads(written)), encoding="utf-8")
    index = load_index(fresh_index)
    scans = counting_scans(monkeypatch, index)
    kn = CorpusKnowledge(index)
    assert kn.idf("lindqvist") == reference_idf(load_index(fresh_index))["lindqvist"]
    assert len(scans) == 1  # recounted...
    assert path.read_text(encoding="utf-8") == written  # ...and cached again


def test_a_cache_of_a_rebuilt_index_is_not_used(fresh_index, tmp_path, monkeypatch):
    from sealgraph.index import build_index
    from sealgraph.types import Document

    old = load_index(fresh_index)
    CorpusKnowledge(old).tables()
    # Rebuilt in place with other documents: the build drops the derived folder, and
    # a cache the old index object writes later is for the old build only.
    build_index(
        [Document("x.md", "Xenia Quill", "Xenia Quill wrote two plays.")],
        fresh_index,
        embedder="none",
        replace=True,
        warn=lambda _: None,
    )
    assert not (fresh_index / DERIVED_DIR).exists()
    assert not knowledge.write_derived(old, TABLES_CACHE, {"stale": True})
    new = load_index(fresh_index)
    scans = counting_scans(monkeypatch, new)
    assert CorpusKnowledge(new).tables()["n_chunks"] == new.n_chunks == 1
    assert scans == []  # the rebuild counted them: nothing of the old build is read
    assert CorpusKnowledge(new).idf(stem("xenia")) == math.log(1.0 + 1 / 2)


def test_a_read_only_index_still_answers(fresh_index, monkeypatch):
    index = load_index(fresh_index)
    monkeypatch.setattr(knowledge, "write_derived", lambda *a: False)
    assert CorpusKnowledge(index).idf("lindqvist") == reference_idf(index)["lindqvist"]
    assert not (fresh_index / DERIVED_DIR).exists()


def test_an_index_without_a_directory_keeps_its_tables_in_memory(tiny_index, tmp_path, monkeypatch):
    index = load_index(tiny_index.path)
    monkeypatch.setattr(type(index), "path", property(lambda self: tmp_path / "nowhere"))
    kn = CorpusKnowledge(index)
    assert kn.idf("lindqvist") == reference_idf(index)["lindqvist"]
    assert not (tmp_path / "nowhere").exists()


def legacy_index(source, target):
    """Make ``target`` an index as earlier versions built it: tables in TABLES_FILE."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(DERIVED_DIR))
    index = load_index(target)
    tables = corpus_tables(list(index.iter_chunks()))
    (target / TABLES_FILE).write_text(json.dumps(tables, sort_keys=True), encoding="utf-8")
    manifest = json.loads((target / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest["files"][TABLES_FILE] = file_sha256(target / TABLES_FILE)
    del manifest["statistics"]  # earlier versions kept no counts in the docstore
    write_manifest(target, manifest)
    return target


def test_an_index_built_with_the_old_tables_file_loads_and_uses_it(
    tiny_index, tmp_path, monkeypatch
):
    copy = legacy_index(tiny_index.path, tmp_path / "old")
    index = load_index(copy)
    scans = counting_scans(monkeypatch, index)
    kn = CorpusKnowledge(index)
    assert kn.idf("lindqvist") == reference_idf(load_index(copy))["lindqvist"]
    assert kn.distinctive_name("no such name")
    assert scans == []  # the stored tables were read
    assert not (copy / DERIVED_DIR).exists()


def test_old_tables_of_another_version_are_recomputed(tiny_index, tmp_path, monkeypatch):
    copy = legacy_index(tiny_index.path, tmp_path / "old")
    index = load_index(copy)
    monkeypatch.setattr(knowledge, "TABLES_VERSION", knowledge.TABLES_VERSION + 1)
    scans = counting_scans(monkeypatch, index)
    CorpusKnowledge(index).idf("lindqvist")
    assert len(scans) == 1


def test_a_changed_old_tables_file_is_a_damaged_index(tiny_index, tmp_path):
    copy = legacy_index(tiny_index.path, tmp_path / "old")
    (copy / TABLES_FILE).write_text("{}", encoding="utf-8")
    with pytest.raises(IndexCorruptError, match=TABLES_FILE):
        load_index(copy)


def test_an_index_with_old_tables_and_a_cache_is_still_sealgraph_s_to_replace(tiny_index, tmp_path):
    from support.fakes import write_tiny_docs

    from sealgraph.index import build_index

    copy = legacy_index(tiny_index.path, tmp_path / "old")
    CorpusKnowledge(load_index(copy)).tables()
    assert not (copy / DERIVED_DIR / TABLES_CACHE).exists()  # the old tables were used
    knowledge.write_derived(load_index(copy), "other-cache.json", {"any": 1})
    docs = write_tiny_docs(tmp_path / "docs")
    rebuilt = build_index(docs, copy, embedder="none", replace=True, warn=lambda _: None)
    assert TABLES_FILE not in rebuilt.manifest["files"]
    assert sorted(p.name for p in copy.iterdir()) == ["docstore.sqlite", "lexical", "manifest.json"]
    assert not list(tmp_path.glob(".old.*-*"))  # the previous index was removed, not kept


def test_a_foreign_folder_inside_the_derived_folder_is_refused(fresh_index, tmp_path):
    from support.fakes import write_tiny_docs

    from sealgraph.errors import InputError
    from sealgraph.index import build_index

    CorpusKnowledge(load_index(fresh_index)).tables()
    (fresh_index / DERIVED_DIR / "mine").mkdir()
    docs = write_tiny_docs(tmp_path / "docs")
    with pytest.raises(InputError, match="derived/mine/"):
        build_index(docs, fresh_index, embedder="none", replace=True, warn=lambda _: None)


def test_the_tables_fingerprint_reads_code_that_exists():
    # Files found by path move with the code: a missing one would silently leave
    # cached tables trusted after that code changed.
    sources = knowledge.fingerprint_sources()
    assert all(path.is_file() for path in sources), [p for p in sources if not p.is_file()]
    assert any(path.name == "english.py" for path in sources)
