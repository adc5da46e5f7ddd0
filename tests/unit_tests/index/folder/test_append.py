"""Adding to an index row by row: only the given documents are read, the old rows stay,
and the index answers as a fresh build of the same documents does."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

import sealgraph.index.folder._build as build_module
from sealgraph.index import build_index, load_index, refresh_lexical, remove_documents
from sealgraph.index.folder._store import DOCSTORE_FILE
from sealgraph.types import Document


def quiet(_message: str) -> None:
    pass


def doc(name: str, title: str, text: str) -> Document:
    return Document(f"{name}.md", title, text)


FIRST = [
    doc("a", "Ada Quill", "Ada Quill met Bo Ray in Paris. She painted the harbour at dawn."),
    doc("b", "Bo Ray", "Bo Ray wrote Salt and Iron in Paris in 1921, about the harbour."),
    doc("c", "Harbour Works", "The Harbour Works were founded by Cy Dee in 1899."),
    doc("d", "Cy Dee", "Cy Dee stayed home and met Ada Quill again in Lisbon."),
]
MORE = [
    doc("e", "Lisbon Port", "Lisbon Port ships salt and iron; Bo Ray sailed from it."),
    doc("f", "Salt and Iron", "Salt and Iron is a novel by Bo Ray set in a harbour town."),
]
CHANGED_C = doc("c", "Harbour Works", "The Harbour Works closed in 1950 when Cy Dee retired.")
QUERIES = ["harbour Paris", "Bo Ray novel salt", "Cy Dee founded", "Lisbon", "Ada Quill dawn"]


def evidence(index, embedder_used: bool) -> list:
    out = []
    for query in QUERIES:
        out.append([(h.chunk_id, round(h.score, 6)) for h in index.search_lexical(query, 5)])
        if embedder_used:
            out.append([(h.chunk_id, round(h.score, 6)) for h in index.search_dense(query, 5)])
    return out


@pytest.fixture
def no_full_rebuild(monkeypatch):
    """Fail if an add to an existing index reads and rewrites the whole corpus."""
    original = build_module.merge_documents

    def refuse(index_dir, existing, *args, **kwargs):
        if existing is not None:
            raise AssertionError("the add went through the full rebuild")
        return original(index_dir, existing, *args, **kwargs)

    monkeypatch.setattr(build_module, "merge_documents", refuse)


@pytest.mark.parametrize("dense", [False, True])
def test_an_index_grown_by_adds_answers_as_a_fresh_build(tmp_path, hash_embedder, dense, request):
    embedder = hash_embedder if dense else "none"
    grown = tmp_path / "grown"
    build_index(FIRST, grown, embedder=embedder, warn=quiet)
    request.getfixturevalue("no_full_rebuild")
    build_index(MORE, grown, embedder=embedder, warn=quiet)
    index = build_index([CHANGED_C], grown, embedder=embedder, warn=quiet)
    assert index.manifest["counts"]["documents_updated"] == 1
    assert len(index.manifest["lexical"]["segments"]) == 3  # one per add
    fresh = build_index(
        [FIRST[0], FIRST[1], FIRST[3], *MORE, CHANGED_C],
        tmp_path / "fresh",
        embedder=embedder,
        warn=quiet,
    )
    grown_index = load_index(grown, embedder=hash_embedder if dense else None)
    assert grown_index.n_chunks == fresh.n_chunks and grown_index.n_docs == fresh.n_docs
    assert [c.chunk_id for c in grown_index.iter_chunks()] == [
        c.chunk_id for c in fresh.iter_chunks()
    ]
    assert evidence(grown_index, dense) == evidence(fresh, dense)
    assert "1950" in grown_index.doc_chunks("c.md")[0].text
    assert grown_index.lookup_title("Harbour Works") == fresh.lookup_title("Harbour Works")
    stats, expected = grown_index.statistics(), fresh.statistics()
    for name in ("cy dee", "bo ray", "ada quill", "salt and iron"):
        assert stats.names.get(name) == expected.names.get(name)


def test_an_unchanged_document_given_again_changes_nothing(tmp_path, no_full_rebuild):
    build_index(FIRST, tmp_path / "idx", embedder="none", warn=quiet)
    before = (tmp_path / "idx" / DOCSTORE_FILE).read_bytes()
    index = build_index(FIRST[:2], tmp_path / "idx", embedder="none", warn=quiet)
    assert len(index.manifest["lexical"]["segments"]) == 2  # an empty segment, no rows
    assert index.n_chunks == 4
    assert not (tmp_path / "idx" / "lexical" / "deleted.npy").exists()
    conn = sqlite3.connect(tmp_path / "idx" / DOCSTORE_FILE)
    assert conn.execute('SELECT MAX("row") FROM chunks').fetchone() == (3,)
    conn.close()
    assert len(before) > 0


def test_documents_given_again_unchanged_are_not_chunked_again(tmp_path, monkeypatch):
    build_index(FIRST, tmp_path / "idx", embedder="none", warn=quiet)
    chunked: list[str] = []
    original = build_module.chunk_document

    def counting(document, *args, **kwargs):
        chunked.append(document.doc_id)
        return original(document, *args, **kwargs)

    monkeypatch.setattr(build_module, "chunk_document", counting)
    index = build_index([*FIRST[:2], CHANGED_C, FIRST[3]], tmp_path / "idx", embedder="none")
    assert chunked == ["c.md"]  # only the changed document
    assert index.search_lexical("closed 1950", 1)[0].chunk_id.startswith("c.md#")
    counts = index.manifest["counts"]
    assert (counts["documents_updated"], counts["documents_unchanged"]) == (1, 3)


def test_removal_and_refresh_work_on_an_index_with_deleted_rows(tmp_path, hash_embedder):
    path = tmp_path / "idx"
    build_index([*FIRST, *MORE], path, embedder=hash_embedder, warn=quiet)
    build_index([CHANGED_C], path, embedder=hash_embedder, warn=quiet)
    assert (path / "lexical" / "deleted.npy").is_file()
    before = evidence(load_index(path, embedder=hash_embedder), True)
    refreshed = refresh_lexical(path, embedder=hash_embedder, warn=quiet)
    assert evidence(refreshed, True) == before
    removed = remove_documents(path, ["e.md"], embedder=hash_embedder, warn=quiet)
    fresh = build_index(
        [FIRST[0], FIRST[1], FIRST[3], MORE[1], CHANGED_C],
        tmp_path / "fresh",
        embedder=hash_embedder,
        warn=quiet,
    )
    assert evidence(removed, True) == evidence(fresh, True)
    ids = [c.chunk_id for c in removed.iter_chunks()]
    np.testing.assert_array_equal(removed.chunk_vectors(ids), fresh.chunk_vectors(ids))


def test_an_add_with_other_settings_rebuilds(tmp_path):
    build_index(FIRST, tmp_path / "idx", embedder="none", warn=quiet)
    index = build_index(
        MORE, tmp_path / "idx", embedder="none", max_chunk_tokens=64, warn=quiet, replace=False
    )
    assert len(index.manifest["lexical"]["segments"]) == 1  # rewritten whole


def test_small_segments_of_many_adds_are_merged_and_answer_the_same(tmp_path):
    path = tmp_path / "idx"
    build_index(FIRST, path, embedder="none", warn=quiet)
    extra = [
        doc(f"n{i}", f"Note {i}", f"Note {i} mentions the harbour and Bo Ray.") for i in range(12)
    ]
    for note in extra:
        index = build_index([note], path, embedder="none", warn=quiet)
    build_index([CHANGED_C], path, embedder="none", warn=quiet)
    index = load_index(path)
    names = [s["name"] for s in index.manifest["lexical"]["segments"]]
    assert len(names) <= 10 and len(set(names)) == len(names)
    on_disk = sorted(p.name for p in (path / "lexical").iterdir() if p.is_dir())
    assert on_disk == sorted(names)  # merged segments left no folder behind
    fresh = build_index(
        [FIRST[0], FIRST[1], FIRST[3], *extra, CHANGED_C], tmp_path / "fresh", embedder="none"
    )
    assert evidence(index, False) == evidence(fresh, False)


def test_the_lexical_field_weight_is_recorded_kept_by_adds_and_renewed_by_a_refresh(tmp_path):
    import json

    from support.fakes import write_tiny_docs

    from sealgraph.cli import main
    from sealgraph.index import build_index
    from sealgraph.index.folder._lexical import field_weight_of
    from sealgraph.text.chunking import FIELD_WEIGHT

    docs = write_tiny_docs(tmp_path / "docs")
    index_dir = tmp_path / "index"
    build_index(docs, index_dir, embedder="none", warn=lambda _: None)
    manifest_path = index_dir / "manifest.json"
    assert json.loads(manifest_path.read_text())["lexical"]["field_weight"] == FIELD_WEIGHT == 2
    # An index from before the weight was recorded reads as weight 1, and an add keeps it.
    manifest = json.loads(manifest_path.read_text())
    del manifest["lexical"]["field_weight"]
    manifest_path.write_text(json.dumps(manifest))
    assert field_weight_of(manifest) == 1
    extra = tmp_path / "extra.md"
    extra.write_text("# Harbour Cafe\n\nThe Harbour Cafe opens at seven.\n", encoding="utf-8")
    build_index([extra], index_dir, warn=lambda _: None)
    assert field_weight_of(json.loads(manifest_path.read_text())) == 1
    # Rebuilding the lexical part writes and records the current weight.
    assert main(["index", "--index", str(index_dir)]) == 0
    assert json.loads(manifest_path.read_text())["lexical"]["field_weight"] == FIELD_WEIGHT
