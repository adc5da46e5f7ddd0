from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from support.old_index import as_earlier_index

import sealgraph.index.embedders as embedders_module
import sealgraph.index.folder._append as append_module
import sealgraph.index.folder._build as build_module
from sealgraph.errors import EmbedderMismatchError, IndexCorruptError, InputError
from sealgraph.index import build_index, load_index
from sealgraph.types import Document


def quiet(_: str) -> None:
    pass


def test_manifest_describes_the_build(tmp_path, tiny_docs_dir, hash_embedder):
    index = build_index(tiny_docs_dir, tmp_path / "idx", embedder=hash_embedder, warn=quiet)
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest == index.manifest
    assert manifest["format_version"] == 3
    assert manifest["embedder"] == {"name": "test:hash-64", "dim": 64}
    assert manifest["tokenizer"] == {"encoding": "o200k_base"}
    assert manifest["chunker"]["max_tokens"] == 256
    assert manifest["counts"] == {
        "documents": 5,
        "chunks": 10,
        "vectors_reused": 0,
        "vectors_new": 10,
        "documents_added": 5,
        "documents_updated": 0,
        "documents_kept": 0,
        "documents_removed": 0,
    }
    assert "sources" not in manifest  # the docstore records them (a large index has many)
    assert len(load_index(tmp_path / "idx").source_files()) == 5
    listed = set(manifest["files"])
    assert {"docstore.sqlite", "vectors.npy"} <= listed and "dense.faiss" not in listed
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((tmp_path / "idx" / name).read_bytes()).hexdigest() == digest


def test_build_from_documents_and_reload(tmp_path):
    docs = [Document("one", "One", "First doc. It is short."), Document("two", "Two", "Second.")]
    built = build_index(docs, tmp_path / "idx", embedder="none")
    loaded = load_index(tmp_path / "idx")
    assert [c.text for c in loaded.iter_chunks()] == [c.text for c in built.iter_chunks()]
    assert loaded.search_lexical("first", 2) == built.search_lexical("first", 2)
    assert loaded.source_files() == []


def test_builds_are_deterministic(tmp_path, tiny_docs_dir, hash_embedder):
    a = build_index(tiny_docs_dir, tmp_path / "a", embedder=hash_embedder)
    b = build_index(tiny_docs_dir, tmp_path / "b", embedder=hash_embedder)
    assert a.manifest["files"] == b.manifest["files"]


def test_missing_index_message(tmp_path):
    with pytest.raises(IndexCorruptError, match=r"no sealgraph index at .*sealgraph index PATH"):
        load_index(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IndexCorruptError, match="no sealgraph index"):
        load_index(tmp_path / "empty")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("truncate_vectors", "vectors.npy does not match its checksum"),
        ("flip_docstore", "docstore.sqlite does not match its checksum"),
        ("delete_lexical", "lexical/seg-000001/rows.npy is missing"),
        ("bad_manifest", "manifest.json is not valid JSON"),
        ("unlisted", "does not list vectors.npy"),
        ("version", "format version 99"),
        ("tokenizer", "built with lexical tokenizer old-1"),
        ("counts", "does not match the manifest counts"),
    ],
)
def test_damaged_index_is_detected(tmp_path, tiny_docs_dir, hash_embedder, damage, message):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder=hash_embedder)
    manifest = json.loads((path / "manifest.json").read_text())
    if damage == "truncate_vectors":
        data = (path / "vectors.npy").read_bytes()
        (path / "vectors.npy").write_bytes(data[: len(data) // 2])
    elif damage == "flip_docstore":
        data = bytearray((path / "docstore.sqlite").read_bytes())
        data[-10] ^= 0xFF
        (path / "docstore.sqlite").write_bytes(bytes(data))
    elif damage == "delete_lexical":
        (path / "lexical" / "seg-000001" / "rows.npy").unlink()
    elif damage == "bad_manifest":
        (path / "manifest.json").write_text("{ nope")
    elif damage == "unlisted":
        del manifest["files"]["vectors.npy"]
        (path / "manifest.json").write_text(json.dumps(manifest))
    elif damage == "version":
        manifest["format_version"] = 99
        (path / "manifest.json").write_text(json.dumps(manifest))
    elif damage == "tokenizer":
        manifest["lexical"]["tokenizer_version"] = "old-1"
        (path / "manifest.json").write_text(json.dumps(manifest))
    elif damage == "counts":
        manifest["counts"]["chunks"] = 3
        (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexCorruptError, match=message):
        load_index(path, embedder=hash_embedder)


def test_failed_build_keeps_the_old_index(tmp_path, tiny_docs_dir, monkeypatch):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder="none")
    before = (path / "manifest.json").read_bytes()
    (tiny_docs_dir / "new.md").write_text("# New\n\nFresh words.\n")

    def crash(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(build_module.LexicalWriter, "finish", crash)
    monkeypatch.setattr(append_module, "write_lexical", crash)  # an add goes row by row
    with pytest.raises(RuntimeError, match="disk on fire"):
        build_index(tiny_docs_dir, path, embedder="none")
    monkeypatch.undo()
    assert (path / "manifest.json").read_bytes() == before
    assert load_index(path).n_docs == 5
    # No temporary folder left; the lock file stays (removing it would break the lock).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "idx"]


def test_failed_first_build_leaves_nothing_that_loads(tmp_path, tiny_docs_dir, monkeypatch):
    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(build_module, "write_manifest", crash)
    with pytest.raises(KeyboardInterrupt):
        build_index(tiny_docs_dir, tmp_path / "idx", embedder="none")
    assert not (tmp_path / "idx").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_rebuild_swaps_in_new_content(tmp_path, tiny_docs_dir):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder="none")
    (tiny_docs_dir / "new.md").write_text("# Zebra Facts\n\nZebras have stripes.\n")
    index = build_index(tiny_docs_dir, path, embedder="none")
    assert index.n_docs == 6 and index.search_lexical("zebra", 1)[0].chunk_id == "new.md#0"


def test_embedder_mismatch_is_refused_without_force(tmp_path, tiny_docs_dir, hash_embedder):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder="none")
    with pytest.raises(EmbedderMismatchError, match="--force"):
        build_index(tiny_docs_dir, path, embedder=hash_embedder)
    index = build_index(tiny_docs_dir, path, embedder=hash_embedder, force=True)
    assert index.embedder_name == "test:hash-64"
    with pytest.raises(EmbedderMismatchError):
        build_index(tiny_docs_dir, path, embedder="none")


def test_query_embedder_must_match(tmp_path, tiny_docs_dir, hash_embedder):
    build_index(tiny_docs_dir, tmp_path / "idx", embedder=hash_embedder)
    with pytest.raises(EmbedderMismatchError):
        load_index(tmp_path / "idx", embedder=type(hash_embedder)(name="other"))
    assert not load_index(tmp_path / "idx", embedder="none").has_dense


def test_unchanged_chunks_are_not_embedded_again(tmp_path, tiny_docs_dir, hash_embedder):
    path = tmp_path / "idx"
    first = build_index(tiny_docs_dir, path, embedder=hash_embedder)
    assert hash_embedder.documents_embedded == 10
    old_vectors = first.chunk_vectors(["port_ellis.md#0"])

    second = build_index(tiny_docs_dir, path, embedder=hash_embedder)
    assert hash_embedder.documents_embedded == 10  # nothing new
    assert second.manifest["counts"]["vectors_reused"] == 10
    assert second.manifest["counts"]["vectors_new"] == 0

    port = tiny_docs_dir / "port_ellis.md"
    port.write_text(port.read_text() + "\nIt also has a ferry.\n")
    third = build_index(tiny_docs_dir, path, embedder=hash_embedder)
    assert hash_embedder.documents_embedded == 11  # only the changed chunk
    assert third.manifest["counts"]["vectors_reused"] == 9
    changed = third.chunk_vectors(["port_ellis.md#0"])
    assert not np.allclose(changed, old_vectors)
    assert np.array_equal(
        third.chunk_vectors(["handbook.md#2"]), first.chunk_vectors(["handbook.md#2"])
    )


def test_refuses_to_replace_a_foreign_directory(tmp_path, tiny_docs_dir):
    target = tmp_path / "precious"
    target.mkdir()
    (target / "thesis.tex").write_text("do not delete")
    with pytest.raises(InputError, match="not a sealgraph index"):
        build_index(tiny_docs_dir, target, embedder="none", force=True)
    assert (target / "thesis.tex").read_text() == "do not delete"
    with pytest.raises(InputError, match="is a file"):
        build_index(tiny_docs_dir, target / "thesis.tex", embedder="none")


def test_bad_arguments(tmp_path, tiny_docs_dir):
    with pytest.raises(InputError, match="at least"):
        build_index(tiny_docs_dir, tmp_path / "idx", embedder="none", max_chunk_tokens=2)
    with pytest.raises(InputError, match="unknown embedder"):
        build_index(tiny_docs_dir, tmp_path / "idx", embedder="bogus")
    with pytest.raises(InputError, match="nothing to index"):
        build_index([Document("e", "E", "")], tmp_path / "idx", embedder="none")
    assert not (tmp_path / "idx").exists()


def test_progress_callback_sees_each_stage(tmp_path, tiny_docs_dir, hash_embedder):
    events: list[tuple[str, int, int]] = []
    build_index(
        tiny_docs_dir,
        tmp_path / "idx",
        embedder=hash_embedder,
        progress=lambda *e: events.append(e),
    )
    assert ("chunking", 5, 5) in events
    assert events[-1] == ("embedding", 10, 10)


def test_auto_without_local_model_warns_once_and_goes_lexical(tmp_path, tiny_docs_dir, monkeypatch):
    monkeypatch.setattr(embedders_module, "local_embedder_available", lambda: False)
    warnings: list[str] = []
    index = build_index(tiny_docs_dir, tmp_path / "idx", embedder="auto", warn=warnings.append)
    assert not index.has_dense and index.embedder_name is None
    assert len(warnings) == 1
    assert "pip install 'sealgraph[local]'" in warnings[0]
    with pytest.raises(InputError, match=r"sealgraph\[local\]"):
        build_index(tiny_docs_dir, tmp_path / "idx2", embedder="local")


def test_index_of_unavailable_embedder_loads_lexical_only(tmp_path, tiny_docs_dir, hash_embedder):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder=type(hash_embedder)(name="elsewhere:unknown"))
    warnings: list[str] = []
    index = load_index(path, warn=warnings.append)
    assert not index.has_dense and index.embedder_name == "elsewhere:unknown"
    assert index.chunk_vectors(["handbook.md#0"]).shape == (1, 64)  # stored vectors stay usable
    assert len(warnings) == 1 and "lexical (BM25) only" in warnings[0]
    load_index(path, warn=warnings.append)
    assert len(warnings) == 1  # said once


def test_building_into_an_index_adds_and_replace_replaces(tmp_path, tiny_docs_dir):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder="none")
    extra = [Document("extra", "Extra", "An extra document about zebras.")]
    added = build_index(extra, path, embedder="none")
    assert added.n_docs == 6 and added.search_lexical("zebras", 1)[0].chunk_id == "extra#0"
    counts = added.manifest["counts"]
    assert (counts["documents_added"], counts["documents_kept"]) == (1, 5)
    assert len(added.source_files()) == 5  # the kept files' sources stay listed

    replaced = build_index(extra, path, embedder="none", replace=True)
    assert [doc_id for doc_id, _ in replaced.titles()] == ["extra"]
    counts = replaced.manifest["counts"]
    assert (counts["documents_updated"], counts["documents_removed"]) == (1, 5)
    assert replaced.source_files() == []


def test_adding_keeps_the_index_settings_unless_given(tmp_path, tiny_docs_dir, monkeypatch):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder="none", max_chunk_tokens=12)
    # "auto" would pick the local model here; adding follows the index (lexical only).
    monkeypatch.setattr(embedders_module, "local_embedder_available", lambda: True)
    index = build_index([Document("n", "N", "A note.")], path)
    assert index.embedder_name is None
    assert index.manifest["chunker"]["max_tokens"] == 12
    index = build_index([Document("n", "N", "A note.")], path, max_chunk_tokens=64, embedder=None)
    assert index.manifest["chunker"]["max_tokens"] == 64  # given: everything chunked again


def test_force_rebuilds_from_the_given_documents_only(tmp_path, tiny_docs_dir, hash_embedder):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder="none")
    index = build_index([Document("n", "N", "A note.")], path, embedder=hash_embedder, force=True)
    assert index.n_docs == 1 and index.embedder_name == "test:hash-64"


def test_source_files_an_earlier_version_listed_in_the_manifest_move_to_the_docstore(
    tmp_path, tiny_docs_dir
):
    path = tmp_path / "idx"
    build_index(tiny_docs_dir, path, embedder="none")
    rows = [(s["path"], s["sha256"], s["documents"]) for s in load_index(path).source_files()]
    as_earlier_index(path)
    old = load_index(path)
    assert [s["path"] for s in old.source_files()] == sorted(p for p, _, _ in rows)
    more = tmp_path / "more"
    more.mkdir()
    (more / "zebra.md").write_text("# Zebra\n\nZebras have stripes.\n", encoding="utf-8")
    added = build_index(more, path, embedder="none")  # added row by row
    assert "sources" not in added.manifest
    assert len(added.source_files()) == 6
    assert any(s["path"].endswith("/zebra.md") for s in added.source_files())
