"""Index lifecycle: add, update, remove and prune documents; resume a killed dense build;
progress lines off a terminal.

Every index here is lexical-only or uses a fake embedder that counts what it embeds,
so nothing loads a model.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from support.fakes import HashEmbedder, write_tiny_docs
from support.old_index import as_earlier_index

import sealgraph.index._embed as embed_module
import sealgraph.index._progress as progress_module
import sealgraph.index.folder._build as build_module
import sealgraph.index.folder._remove as remove_module
from sealgraph.cli import main
from sealgraph.errors import IndexCorruptError, InputError, SealgraphError
from sealgraph.index import build_index, load_index, remove_documents
from sealgraph.types import Document

REPO = Path(__file__).resolve().parents[3]


def quiet(_: str) -> None:
    pass


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


class TextCountingEmbedder(HashEmbedder):
    """A :class:`HashEmbedder` that also records every text it embedded."""

    def __init__(self, name: str = "test:hash-64") -> None:
        super().__init__(name=name)
        self.texts: list[str] = []
        self.calls = 0

    def embed_documents(self, texts):
        self.calls += 1
        self.texts.extend(texts)
        return super().embed_documents(texts)


class InterruptedEmbedder(TextCountingEmbedder):
    """Embeds ``batches`` blocks, then is interrupted (Ctrl-C) during the next one."""

    def __init__(self, batches: int) -> None:
        super().__init__()
        self.batches = batches

    def embed_documents(self, texts):
        if self.calls >= self.batches:
            raise KeyboardInterrupt
        return super().embed_documents(texts)


# --- add and update: what already worked, checked ------------------------------------------------


def test_adding_a_file_embeds_only_its_chunks(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    embedder = TextCountingEmbedder()
    first = build_index(docs, idx, embedder=embedder, warn=quiet)
    assert embedder.documents_embedded == first.n_chunks == 10
    note = tmp_path / "zebra.md"
    note.write_text("# Zebra Crossing\n\nThe zebra crossing in Port Ellis was painted in 1999.\n")
    added = build_index(note, idx, embedder=embedder, warn=quiet)
    assert embedder.documents_embedded == 11  # the note's one chunk, nothing else
    assert "zebra crossing" in embedder.texts[-1].lower()
    counts = added.manifest["counts"]
    assert (counts["documents_added"], counts["documents_updated"], counts["documents_kept"]) == (
        1,
        0,
        5,
    )
    assert (counts["vectors_reused"], counts["vectors_new"]) == (10, 1)
    assert added.search_lexical("zebra", 1)[0].chunk_id == "zebra.md#0"
    assert np.array_equal(
        added.chunk_vectors(["handbook.md#0"]), first.chunk_vectors(["handbook.md#0"])
    )


def test_a_changed_file_is_chunked_again_and_only_new_text_embedded(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    embedder = TextCountingEmbedder()
    first = build_index(docs, idx, embedder=embedder, warn=quiet)
    lamp = docs / "products" / "lumen_lamp.md"
    lamp.write_text(
        lamp.read_text()
        + "\n## Sales\n\nThe lamp sold 12,000 units in its first year. It is still in production.\n"
    )
    before = embedder.documents_embedded
    updated = build_index(docs, idx, embedder=embedder, warn=quiet)
    counts = updated.manifest["counts"]
    # One file changed: one document updated, the four others given again unchanged.
    assert (counts["documents_added"], counts["documents_updated"]) == (0, 1)
    assert counts["documents_unchanged"] == 4
    lamp_chunks = updated.doc_chunks("products/lumen_lamp.md")
    assert len(lamp_chunks) == len(first.doc_chunks("products/lumen_lamp.md")) + 1
    assert "12,000 units" in lamp_chunks[-1].text
    # Embedded again: exactly the chunks whose text changed (the section before the new
    # one gained a blank line, and the new section); every other vector is reused.
    old_texts = {build_module.indexed_text(c) for c in first.iter_chunks()}
    changed = [
        build_module.indexed_text(c)
        for c in updated.iter_chunks()
        if build_module.indexed_text(c) not in old_texts
    ]
    assert sorted(embedder.texts[before:]) == sorted(changed) and len(changed) == 2
    assert counts["vectors_new"] == 2 and counts["vectors_reused"] == updated.n_chunks - 2


def test_indexing_the_same_folder_again_embeds_nothing(tmp_path, capsys):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    embedder = TextCountingEmbedder()
    build_index(docs, idx, embedder=embedder, warn=quiet)
    again = build_index(docs, idx, embedder=embedder, warn=quiet)
    assert embedder.documents_embedded == 10
    counts = again.manifest["counts"]
    assert (counts["documents_updated"], counts["vectors_reused"], counts["vectors_new"]) == (
        0,
        10,
        0,
    )
    assert (counts["documents_unchanged"], counts["documents_added"]) == (5, 0)


def test_replace_rebuilds_from_the_given_files_only(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    embedder = TextCountingEmbedder()
    build_index(docs, idx, embedder=embedder, warn=quiet)
    rebuilt = build_index(docs / "port_ellis.md", idx, embedder=embedder, warn=quiet, replace=True)
    assert [doc_id for doc_id, _ in rebuilt.titles()] == ["port_ellis.md"]
    counts = rebuilt.manifest["counts"]
    assert (counts["documents_updated"], counts["documents_removed"]) == (1, 4)
    assert embedder.documents_embedded == 10  # its chunk's vector was reused


# --- remove ---------------------------------------------------------------------------------------


def test_remove_a_file_keeps_the_other_vectors_without_embedding(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    embedder = TextCountingEmbedder()
    first = build_index(docs, idx, embedder=embedder, warn=quiet)
    first_sources = first.source_files()
    assert "sources" not in first.manifest  # recorded in the docstore, not the manifest
    index = remove_documents(idx, docs / "handbook.md", embedder=embedder, warn=quiet)
    assert embedder.documents_embedded == 10  # nothing embedded again
    assert "handbook.md" not in {doc_id for doc_id, _ in index.titles()}
    assert index.n_docs == 4 and index.n_chunks == first.n_chunks - len(
        first.doc_chunks("handbook.md")
    )
    counts = index.manifest["counts"]
    assert (counts["documents_removed"], counts["documents_kept"], counts["vectors_new"]) == (
        1,
        4,
        0,
    )
    assert [s["path"] for s in index.source_files()] == [
        s["path"] for s in first_sources if not s["path"].endswith("/handbook.md")
    ]
    ids = [c.chunk_id for c in index.iter_chunks()]
    assert np.array_equal(index.chunk_vectors(ids), first.chunk_vectors(ids))
    assert index.search_lexical("receipt", 3) == []
    assert index.search_dense("harbour town lighthouse", 1)[0].chunk_id == "port_ellis.md#0"
    assert load_index(idx).n_docs == 4  # what is on disk verifies and loads
    assert siblings(idx) == ["docs", "idx"]  # nothing left beside it


def test_remove_a_deleted_file_a_folder_and_a_document_id(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    (docs / "port_ellis.md").unlink()  # gone from disk: still removable by its path
    index = remove_documents(idx, [docs / "port_ellis.md", docs / "products"], warn=quiet)
    assert sorted(doc_id for doc_id, _ in index.titles()) == [
        "ada_brightwater.txt",
        "handbook.md",
        "northwind_studio.md",
    ]
    index = remove_documents(idx, "northwind_studio.md", warn=quiet)  # a document id
    assert sorted(doc_id for doc_id, _ in index.titles()) == ["ada_brightwater.txt", "handbook.md"]
    # A relative path is taken from the current folder, like any path given.
    os.chdir(docs)
    try:
        index = remove_documents(idx, ["./ada_brightwater.txt"], warn=quiet)
    finally:
        os.chdir(REPO)
    assert [doc_id for doc_id, _ in index.titles()] == ["handbook.md"]
    assert len(index.source_files()) == 1


def test_remove_a_path_that_matches_nothing_is_an_error_and_changes_nothing(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    before = snapshot(idx)
    with pytest.raises(InputError, match=r"came from .*elsewhere\.md.*nothing was removed"):
        remove_documents(idx, [docs / "handbook.md", tmp_path / "elsewhere.md"], warn=quiet)
    with pytest.raises(InputError, match=r"would leave the index .* empty"):
        remove_documents(idx, [docs], warn=quiet)
    assert snapshot(idx) == before
    with pytest.raises(IndexCorruptError, match="no sealgraph index"):
        remove_documents(tmp_path / "nowhere", [docs], warn=quiet)
    assert not (tmp_path / "nowhere").exists()


def test_remove_from_jsonl_records_by_file_and_by_id(tmp_path):
    corpus = tmp_path / "notes.jsonl"
    corpus.write_text(
        '{"id": "a", "title": "A", "text": "Alpha is the first letter."}\n'
        '{"id": "b", "title": "B", "text": "Beta is the second letter."}\n'
    )
    other = tmp_path / "other.md"
    other.write_text("# Other\n\nSomething else entirely.\n")
    idx = tmp_path / "idx"
    build_index([corpus, other], idx, embedder="none", warn=quiet)
    assert remove_documents(idx, ["b"], warn=quiet).n_docs == 2
    index = remove_documents(idx, [corpus], warn=quiet)
    assert [doc_id for doc_id, _ in index.titles()] == ["other.md"]


def test_remove_works_on_an_index_that_predates_recorded_files(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    # An index of an earlier sealgraph: no document_files table in its docstore, and
    # its source files listed in the manifest.
    as_earlier_index(idx, drop_document_files=True)
    index = remove_documents(idx, [docs / "products"], warn=quiet)
    assert "products/lumen_lamp.md" not in {doc_id for doc_id, _ in index.titles()}
    # The files found are recorded from now on.
    from sealgraph.index.folder._store import read_document_files

    recorded = read_document_files(idx / "docstore.sqlite")
    assert recorded is not None and len(recorded) == 4
    assert "sources" not in index.manifest and len(index.source_files()) == 4


def test_cli_remove(tmp_path, capsys):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = str(tmp_path / "idx")
    assert run_cli(capsys, "index", str(docs), "--index", idx, "--embedder", "none")[0] == 0
    code, out, err = run_cli(capsys, "index", "--remove", str(docs / "handbook.md"), "--index", idx)
    assert code == 0, err
    assert out.startswith(f"removed 1 documents from {idx}: 4 documents, ")
    assert "nothing embedded again" in out
    code, _, err = run_cli(capsys, "index", "--remove", str(tmp_path / "nope.md"), "--index", idx)
    assert code != 0 and "sealgraph: error:" in err and "nope.md" in err
    code, _, err = run_cli(capsys, "index", "--remove", "--index", idx)
    assert code != 0 and "give the files, folders or document ids to remove" in err
    code, _, err = run_cli(
        capsys, "index", "--remove", str(docs / "port_ellis.md"), "--index", idx, "--replace"
    )
    assert code != 0 and "--replace" in err
    assert load_index(idx).n_docs == 4


def test_a_failed_remove_keeps_the_index(tmp_path, monkeypatch):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder=HashEmbedder(), warn=quiet)
    before = snapshot(idx)

    def boom(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(remove_module, "write_manifest", boom)
    with pytest.raises(OSError, match="disk full"):
        remove_documents(idx, [docs / "handbook.md"], warn=quiet)
    assert snapshot(idx) == before
    assert siblings(idx) == ["docs", "idx"]


def test_remove_takes_its_turn_on_the_build_lock(tmp_path):
    from filelock import FileLock

    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    warnings: list[str] = []
    with FileLock(tmp_path / ".idx.lock"), pytest.raises(SealgraphError, match="holds its lock"):
        remove_documents(idx, [docs / "handbook.md"], lock_timeout=0.2, warn=warnings.append)
    assert any("waiting for another sealgraph build" in w for w in warnings)
    assert load_index(idx).n_docs == 5


# --- prune: files deleted from a folder indexed again ----------------------------------------------


def test_deleted_files_stay_with_a_warning_unless_pruned(tmp_path, capsys):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nA note kept outside the folder.\n")
    build_index(outside, idx, embedder="none", warn=quiet)
    (docs / "port_ellis.md").unlink()
    warnings: list[str] = []
    kept = build_index(docs, idx, embedder="none", warn=warnings.append)
    assert kept.n_docs == 6
    assert any("port_ellis.md" in w and "--prune" in w for w in warnings), warnings

    code, out, err = run_cli(capsys, "index", str(docs), "--index", str(idx), "--prune")
    assert code == 0, err
    assert "(0 added, 0 updated, 4 unchanged, 1 kept, 1 removed)" in out
    index = load_index(idx)
    assert "port_ellis.md" not in {doc_id for doc_id, _ in index.titles()}
    assert "outside.md" in {doc_id for doc_id, _ in index.titles()}  # not under docs/: kept
    assert not any(s["path"].endswith("/port_ellis.md") for s in index.source_files())


def test_prune_removes_records_a_jsonl_file_no_longer_holds(tmp_path):
    corpus = tmp_path / "notes.jsonl"
    corpus.write_text(
        '{"id": "a", "title": "A", "text": "Alpha is the first letter."}\n'
        '{"id": "b", "title": "B", "text": "Beta is the second letter."}\n'
    )
    idx = tmp_path / "idx"
    build_index(corpus, idx, embedder="none", warn=quiet)
    corpus.write_text('{"id": "a", "title": "A", "text": "Alpha is the first letter."}\n')
    assert build_index(corpus, idx, embedder="none", warn=quiet).n_docs == 2
    pruned = build_index(corpus, idx, embedder="none", warn=quiet, prune=True)
    assert [doc_id for doc_id, _ in pruned.titles()] == ["a"]
    with pytest.raises(InputError, match="pruning needs"):
        build_index([Document("x", "X", "Some text.")], idx, embedder="none", prune=True)


def test_a_skipped_file_keeps_its_documents_when_pruning(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    (docs / "ada_brightwater.txt").write_bytes(b"\x00\x01 now binary")  # skipped, with a warning
    index = build_index(docs, idx, embedder="none", warn=quiet, prune=True)
    assert "ada_brightwater.txt" in {doc_id for doc_id, _ in index.titles()}


# --- resumable dense builds -----------------------------------------------------------------------


def partial_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.name.startswith(".idx.partial-"))


def interrupted_build(tmp_path: Path, monkeypatch, batches: int = 2) -> tuple[Path, Path, list]:
    """Build tiny docs 2 chunks per batch, interrupted after ``batches`` batches."""
    monkeypatch.setattr(embed_module, "_EMBED_BLOCK", 2)
    monkeypatch.setattr(embed_module, "_KEEP_EVERY_S", 0.0)  # keep every batch
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    first = InterruptedEmbedder(batches=batches)
    with pytest.raises(KeyboardInterrupt):
        build_index(docs, idx, embedder=first, warn=quiet)
    assert not idx.exists()
    return docs, idx, first.texts


def test_an_interrupted_dense_build_resumes_where_it_stopped(tmp_path, monkeypatch):
    docs, idx, done_before = interrupted_build(tmp_path, monkeypatch)
    assert len(done_before) == 4
    [partial] = partial_folders(tmp_path)
    assert sorted(p.name for p in partial.iterdir()) == [
        "partial.json",
        "shard-000001.json",
        "shard-000001.npy",
        "shard-000002.json",
        "shard-000002.npy",
    ]
    warnings: list[str] = []
    embedder = TextCountingEmbedder()
    index = build_index(docs, idx, embedder=embedder, warn=warnings.append)
    assert embedder.documents_embedded == 6  # 10 chunks, 4 embedded before the interruption
    assert not set(embedder.texts) & set(done_before)
    counts = index.manifest["counts"]
    assert (counts["vectors_new"], counts["vectors_resumed"], counts["vectors_reused"]) == (
        10,
        4,
        0,
    )
    assert any("resuming an interrupted build: 4 of the 10 chunks" in w for w in warnings)
    assert siblings(idx) == ["docs", "idx"]  # the kept batches are gone
    clean = build_index(docs, tmp_path / "clean", embedder=HashEmbedder(), warn=quiet)
    ids = [c.chunk_id for c in clean.iter_chunks()]
    assert [c.chunk_id for c in index.iter_chunks()] == ids
    assert np.array_equal(index.chunk_vectors(ids), clean.chunk_vectors(ids))


def test_a_build_killed_with_sigkill_resumes(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    script = textwrap.dedent(
        """
        import os, signal, sys
        sys.path.insert(0, sys.argv[3])
        from support.fakes import HashEmbedder
        import sealgraph.index._embed as embed_module
        from sealgraph.index import build_index

        embed_module._EMBED_BLOCK = 2
        embed_module._KEEP_EVERY_S = 0.0

        class Killed(HashEmbedder):
            calls = 0

            def embed_documents(self, texts):
                if self.calls == 3:
                    os.kill(os.getpid(), signal.SIGKILL)
                self.calls += 1
                return super().embed_documents(texts)

        build_index(sys.argv[1], sys.argv[2], embedder=Killed(), warn=lambda _: None)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(docs), str(idx), str(REPO / "tests")],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert not idx.exists()
    [partial] = partial_folders(tmp_path)
    assert len(list(partial.glob("shard-*.json"))) == 3
    assert any(p.name.startswith(".idx.building-") for p in tmp_path.iterdir())
    warnings: list[str] = []
    embedder = TextCountingEmbedder()
    index = build_index(docs, idx, embedder=embedder, warn=warnings.append)
    assert embedder.documents_embedded == 4 and index.n_chunks == 10
    assert index.manifest["counts"]["vectors_resumed"] == 6
    assert siblings(idx) == ["docs", "idx"]
    assert any("interrupted build" in w for w in warnings)


def test_damaged_batches_are_ignored_with_a_warning(tmp_path, monkeypatch):
    docs, idx, _ = interrupted_build(tmp_path, monkeypatch, batches=3)
    [partial] = partial_folders(tmp_path)
    # Batch 1: bytes changed after it was written. Batch 2: an object array (pickle) whose
    # checksum was updated to match; it must never be unpickled. Batch 3 stays good.
    shard = partial / "shard-000001.npy"
    shard.write_bytes(shard.read_bytes()[:-8] + b"\x00" * 8)
    evil = partial / "shard-000002.npy"
    np.save(evil, np.array([{"x": 1}, {"y": 2}], dtype=object), allow_pickle=True)
    meta = json.loads((partial / "shard-000002.json").read_text())
    meta["sha256"] = hashlib.sha256(evil.read_bytes()).hexdigest()
    (partial / "shard-000002.json").write_text(json.dumps(meta))
    (partial / "shard-000004.npy.tmp").write_bytes(b"half")  # a write the kill cut short
    warnings: list[str] = []
    embedder = TextCountingEmbedder()
    index = build_index(docs, idx, embedder=embedder, warn=warnings.append)
    assert embedder.documents_embedded == 8  # only batch 3 was trusted
    assert any("ignored 2 damaged batches" in w for w in warnings), warnings
    clean = build_index(docs, tmp_path / "clean", embedder=HashEmbedder(), warn=quiet)
    ids = [c.chunk_id for c in clean.iter_chunks()]
    assert np.array_equal(index.chunk_vectors(ids), clean.chunk_vectors(ids))
    assert partial_folders(tmp_path) == []


def test_kept_batches_of_another_model_are_never_used(tmp_path, monkeypatch):
    docs, idx, _ = interrupted_build(tmp_path, monkeypatch)
    [partial] = partial_folders(tmp_path)
    # Another embedder has another folder: nothing is resumed, and the folder is removed.
    warnings: list[str] = []
    other = TextCountingEmbedder(name="test:other-64")
    build_index(docs, idx, embedder=other, warn=warnings.append)
    assert other.documents_embedded == 10
    assert not partial.exists()
    assert any("another embedder" in w for w in warnings), warnings


def test_a_kept_folder_that_lies_about_its_embedder_is_not_trusted(tmp_path, monkeypatch):
    docs, idx, _ = interrupted_build(tmp_path, monkeypatch)
    [partial] = partial_folders(tmp_path)
    info = json.loads((partial / "partial.json").read_text())
    (partial / "partial.json").write_text(json.dumps({**info, "embedder": "test:other-64"}))
    warnings: list[str] = []
    embedder = TextCountingEmbedder()
    build_index(docs, idx, embedder=embedder, warn=warnings.append)
    assert embedder.documents_embedded == 10
    assert any("ignored" in w and "test:other-64" in w for w in warnings), warnings
    assert partial_folders(tmp_path) == []


def test_kept_vectors_of_another_size_are_embedded_again(tmp_path, monkeypatch):
    docs, idx, _ = interrupted_build(tmp_path, monkeypatch)  # 64 dimensions

    class Smaller(TextCountingEmbedder):  # the same name, another size: not the same model
        def __init__(self) -> None:
            super().__init__()
            self.dim = 32

    warnings: list[str] = []
    embedder = Smaller()
    index = build_index(docs, idx, embedder=embedder, warn=warnings.append)
    assert embedder.documents_embedded == 10
    assert index.manifest["embedder"]["dim"] == 32
    assert "vectors_resumed" not in index.manifest["counts"]
    assert any("they have 64 dimensions" in w for w in warnings), warnings
    assert partial_folders(tmp_path) == []


def test_a_kept_folder_holding_other_files_is_neither_used_nor_removed(tmp_path, monkeypatch):
    docs, idx, _ = interrupted_build(tmp_path, monkeypatch)
    [partial] = partial_folders(tmp_path)
    (partial / "thesis.tex").write_text("do not delete")
    warnings: list[str] = []
    embedder = TextCountingEmbedder()
    build_index(docs, idx, embedder=embedder, warn=warnings.append)
    assert embedder.documents_embedded == 10
    assert (partial / "thesis.tex").read_text() == "do not delete"
    assert any("sealgraph did not write" in w for w in warnings), warnings


def test_batches_are_gathered_before_they_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(embed_module, "_EMBED_BLOCK", 2)
    clock = [0.0]
    monkeypatch.setattr(embed_module, "_clock", lambda: clock[0])
    docs = write_tiny_docs(tmp_path / "docs")

    class Timed(InterruptedEmbedder):  # 2 s per batch: kept every 3 batches (5 s)
        def embed_documents(self, texts):
            clock[0] += 2.0
            return super().embed_documents(texts)

    with pytest.raises(KeyboardInterrupt):
        build_index(docs, tmp_path / "idx", embedder=Timed(batches=4), warn=quiet)
    [partial] = partial_folders(tmp_path)
    assert sorted(p.name for p in partial.glob("shard-*.npy")) == ["shard-000001.npy"]
    assert np.load(partial / "shard-000001.npy", allow_pickle=False).shape == (6, 64)


def test_small_builds_keep_no_batches(tmp_path, monkeypatch):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    seen: list[list[str]] = []

    class Watching(TextCountingEmbedder):
        def embed_documents(self, texts):
            seen.append(sorted(p.name for p in tmp_path.iterdir()))
            return super().embed_documents(texts)

    build_index(docs, idx, embedder=Watching(), warn=quiet)  # one batch: nothing to resume
    assert not any(name.startswith(".idx.partial-") for names in seen for name in names)


def test_a_failed_build_keeps_its_batches_for_the_next_one(tmp_path, monkeypatch):
    monkeypatch.setattr(embed_module, "_EMBED_BLOCK", 2)
    monkeypatch.setattr(embed_module, "_KEEP_EVERY_S", 0.0)
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"

    class Flaky(TextCountingEmbedder):
        def embed_documents(self, texts):
            if self.calls == 3:
                raise ConnectionError("rate limited")
            return super().embed_documents(texts)

    with pytest.raises(SealgraphError, match="rate limited"):
        build_index(docs, idx, embedder=Flaky(), warn=quiet)
    embedder = TextCountingEmbedder()
    build_index(docs, idx, embedder=embedder, warn=quiet)
    assert embedder.documents_embedded == 4


# --- progress off a terminal ------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_lines_off_a_terminal_give_rate_and_time_left():
    clock = FakeClock()
    stream = io.StringIO()  # not a terminal
    progress = progress_module._StderrProgress(stream, clock=clock)
    for done in range(1, 6):  # a quick stage: nothing at all
        clock.now += 0.1
        progress("chunking", done, 5)
    assert stream.getvalue() == ""
    # 17,440 chunks at 8 chunks/s, reported every 256 chunks (32 s).
    total = 17_440
    for done in [*range(0, total, 256), total]:
        progress("embedding", done, total)
        clock.now += 32.0
    lines = stream.getvalue().splitlines()
    assert lines[0] == "sealgraph: embedding 256/17,440 chunks (8.0 chunks/s, ETA 35m48s)"
    # The last report came 32 s after the one before, with only 32 chunks more.
    assert lines[-1] == "sealgraph: embedding 17,440/17,440 chunks (7.9 chunks/s, in 36m48s)"
    assert len(lines) == 69  # one per report: at most 30 s between lines


def test_progress_lines_every_five_percent_or_thirty_seconds():
    clock = FakeClock()
    stream = io.StringIO()
    progress = progress_module._StderrProgress(stream, clock=clock)
    for done in range(0, 101):  # 1 % a second: a line at each 5 %, 5 s apart
        progress("embedding", done, 100)
        clock.now += 1.0
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("sealgraph: embedding 10/100 chunks (1.0 chunks/s, ETA 1m30s)")
    assert [line.split()[2] for line in lines[1:4]] == ["15/100", "20/100", "25/100"]
    assert lines[-1].startswith("sealgraph: embedding 100/100 chunks")
    stream.seek(0)
    stream.truncate()
    for done in range(0, 1001):  # 0.1 % a second: 5 % takes 50 s, so a line every 30 s
        progress("chunking", done, 1000)
        clock.now += 1.0
    lines = stream.getvalue().splitlines()
    assert [line.split()[2] for line in lines[:3]] == ["10/1,000", "40/1,000", "70/1,000"]
    assert all(line.endswith(")") and " documents (" in line for line in lines)


def test_progress_rate_of_a_resumed_stage_counts_only_new_work():
    clock = FakeClock()
    stream = io.StringIO()
    progress = progress_module._StderrProgress(stream, clock=clock)
    progress("embedding", 7_680, 17_440)  # found done
    for done in range(7_680 + 160, 17_441, 160):  # 16 chunks/s from here
        clock.now += 10.0
        progress("embedding", done, 17_440)
    first = stream.getvalue().splitlines()[0]
    assert first == "sealgraph: embedding 7,840/17,440 chunks (16.0 chunks/s, ETA 10m00s)"


def test_progress_on_a_terminal_is_a_bar_redrawn_in_place():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    clock = FakeClock()
    stream = Terminal()
    progress = progress_module._StderrProgress(stream, clock=clock)
    for done in range(0, 101, 10):
        progress("embedding", done, 100)
        clock.now += 1.0
    text = stream.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")
    assert "\rembedding  [" in text and "100/100" in text and "ETA" in text


def test_cli_prints_progress_lines_when_stderr_is_not_a_terminal(tmp_path, capsys, monkeypatch):
    docs = write_tiny_docs(tmp_path / "docs")
    monkeypatch.setattr(progress_module, "_LOG_DELAY_S", 0.0)  # as if the build were slow
    monkeypatch.setattr(progress_module, "_LOG_MIN_GAP_S", 0.0)
    code, out, err = run_cli(
        capsys, "index", str(docs), "--index", str(tmp_path / "idx"), "--embedder", "none"
    )
    assert code == 0 and "indexed 5 documents" in out
    assert "sealgraph: chunking 5/5 documents" in err
    assert "\r" not in err
