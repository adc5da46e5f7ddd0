"""Index lifecycle: never touch what is not sealgraph's, add instead of replace,
walk the corpus without silent gaps, serialise builds, recover from crashes, and
fail with one clear line instead of a traceback.

Each test is one case of the reliability issue; fixtures are written here and
every index is lexical-only or uses the fake hash embedder.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from support.cli import assert_clear_error, run_cli, snapshot
from support.fakes import write_tiny_docs

from sealgraph.errors import ConfigError, IngestError
from sealgraph.index import build_index, load_index
from sealgraph.index._progress import _StderrProgress
from sealgraph.ingest import load_documents, load_qa_records

QUESTION = "In which province is the town where Northwind Studio was founded?"


def quiet(_: str) -> None:
    pass


def make_webapp(root: Path) -> Path:
    """An unrelated folder that happens to hold a manifest.json."""
    app = root / "webapp"
    (app / "static").mkdir(parents=True)
    (app / "manifest.json").write_text(json.dumps({"name": "My App", "start_url": "/"}))
    (app / "index.html").write_text("<html>hello</html>")
    (app / "static" / "app.js").write_text("console.log('hi')")
    return app


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# --- 1. never delete a folder that is not sealgraph's -----------------------------------


def test_foreign_folder_with_a_manifest_is_refused_and_untouched(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    app = make_webapp(tmp_path)
    before, around = snapshot(app), listing(tmp_path)
    result = run_cli("index", str(docs), "--index", str(app), "--embedder", "none", "--force")
    assert_clear_error(result, "webapp", "not a sealgraph index")
    assert snapshot(app) == before
    assert listing(tmp_path) == around  # not even a lock file beside it


def test_index_dot_inside_a_foreign_folder_is_refused_and_untouched(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    app = make_webapp(tmp_path)
    before = snapshot(app)
    result = run_cli("index", str(docs), "--index", ".", "--embedder", "none", cwd=app)
    assert_clear_error(result, "not a sealgraph index")
    assert snapshot(app) == before


def test_own_index_holding_user_files_is_not_swapped_away(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    (idx / "my-notes.txt").write_text("mine")
    (idx / "lexical" / "extra.json").write_text("{}")
    before = snapshot(idx)
    for flag in ("--replace", "--force"):
        result = run_cli("index", str(docs), "--index", str(idx), "--embedder", "none", flag)
        assert_clear_error(result, "my-notes.txt", "lexical/extra.json", "did not write")
        assert snapshot(idx) == before


def test_damaged_own_index_can_still_be_rebuilt(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    (idx / "docstore.sqlite").write_bytes(b"garbage")
    # Adding needs the old documents: refused, pointing at --replace; nothing changes.
    before = snapshot(idx)
    result = run_cli("index", str(docs), "--index", str(idx), "--embedder", "none")
    assert_clear_error(result, "--replace")
    assert snapshot(idx) == before
    result = run_cli("index", str(docs), "--index", str(idx), "--embedder", "none", "--replace")
    assert result.code == 0, result.err
    assert load_index(idx).n_docs == 5


# --- 2. indexing into an existing index adds ----------------------------------------------


def test_indexing_a_new_file_adds_it_to_the_index(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    note = tmp_path / "newnote.md"
    note.write_text("# Zebra Crossing\n\nThe zebra crossing in Port Ellis was painted in 1999.\n")
    result = run_cli("index", str(note), "--index", str(idx), "--embedder", "none")
    assert result.code == 0, result.err
    assert "indexed 6 documents" in result.out
    assert "(1 added, 0 updated, 0 unchanged, 5 kept)" in result.out
    index = load_index(idx)
    assert index.n_docs == 6
    assert index.search_lexical("zebra", 1)[0].chunk_id == "newnote.md#0"
    assert index.search_lexical("brass lamp", 1)[0].chunk_id.startswith("products/lumen_lamp.md")
    assert len(index.source_files()) == 6


def test_indexing_a_known_document_updates_it_and_reuses_vectors(tmp_path, hash_embedder):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    first = build_index(docs, idx, embedder=hash_embedder, warn=quiet)
    embedded = hash_embedder.documents_embedded
    port = docs / "port_ellis.md"
    port.write_text(port.read_text().replace("lighthouse", "observatory"))
    # The same folder again: the changed document is updated, the others are unchanged,
    # only the changed chunk is embedded.
    index = build_index(docs, idx, embedder=hash_embedder, warn=quiet)
    counts = index.manifest["counts"]
    assert (counts["documents_added"], counts["documents_updated"], counts["documents_kept"]) == (
        0,
        1,
        0,
    )
    assert counts["documents_unchanged"] == 4
    assert hash_embedder.documents_embedded == embedded + 1
    assert counts["vectors_reused"] == first.n_chunks - 1
    assert index.search_lexical("observatory", 1)[0].chunk_id == "port_ellis.md#0"
    assert index.search_lexical("lighthouse", 1) == []


def test_replace_flag_keeps_only_the_given_documents(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    result = run_cli(
        "index",
        str(docs / "port_ellis.md"),
        "--index",
        str(idx),
        "--embedder",
        "none",
        "--replace",
    )
    assert result.code == 0, result.err
    assert "indexed 1 documents" in result.out and "4 removed" in result.out
    assert [doc_id for doc_id, _ in load_index(idx).titles()] == ["port_ellis.md"]


# --- 3. symlinked and unreadable folders are not skipped silently --------------------------


def _linked_docs(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "glossary.md").write_text("# Glossary\n\nA lumen is a unit of light.\n")
    docs = tmp_path / "docs"
    (docs / "real").mkdir(parents=True)
    (docs / "real" / "a.md").write_text("# A\n\nAlpha text.\n")
    (docs / "linked").symlink_to(shared, target_is_directory=True)  # outside docs/
    (docs / "again").symlink_to(docs / "real", target_is_directory=True)  # duplicate
    (docs / "real" / "loop").symlink_to(docs, target_is_directory=True)  # cycle
    return docs


def test_symlinked_folders_are_followed_once_and_loops_broken(tmp_path):
    docs = _linked_docs(tmp_path)
    warnings: list[str] = []
    ids = [d.doc_id for d in load_documents(docs, warn=warnings.append, follow_links=True)]
    assert ids == ["linked/glossary.md", "real/a.md"]
    assert len(warnings) == 1
    assert "real/loop" in warnings[0] and "points back" in warnings[0]


def test_symlinks_out_of_the_given_paths_are_skipped_with_a_warning(tmp_path):
    docs = _linked_docs(tmp_path)
    (docs / "passwd.md").symlink_to(tmp_path / "shared" / "glossary.md")
    warnings: list[str] = []
    ids = [d.doc_id for d in load_documents(docs, warn=warnings.append)]
    assert ids == ["real/a.md"]
    outside = [w for w in warnings if "outside the paths given" in w]
    assert len(outside) == 2, warnings
    assert any("docs/linked" in w for w in outside) and any("passwd.md" in w for w in outside)
    # Links inside the given paths are still read (each real file once), and a link
    # named as one of the paths is the user's own choice.
    ids = [d.doc_id for d in load_documents([docs, tmp_path / "shared"], warn=warnings.append)]
    assert ids == ["linked/glossary.md", "real/a.md"]


def test_unreadable_folder_is_named_in_a_warning(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    locked = docs / "private"
    locked.mkdir()
    (locked / "secret.md").write_text("# Secret\n\nHidden.\n")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as root: chmod 000 does not make a folder unreadable")
        warnings: list[str] = []
        documents = load_documents(docs, warn=warnings.append)
    finally:
        locked.chmod(0o755)
    assert len(documents) == 5
    assert any("unreadable folder" in w and "private" in w for w in warnings), warnings


def test_unreadable_folder_and_file_are_named_in_warnings(tmp_path, monkeypatch):
    # The same case when chmod cannot make anything unreadable (tests run as root):
    # the operating system's refusal is simulated where sealgraph meets it.
    docs = write_tiny_docs(tmp_path / "docs")
    (docs / "private").mkdir()
    (docs / "private" / "secret.md").write_text("# Secret\n\nHidden.\n")
    real_scandir, real_open = os.scandir, os.open

    def scandir(path="."):
        if Path(path).name == "private":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    def open_(path, *args, **kwargs):
        if Path(path).name == "port_ellis.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "open", open_)
    warnings: list[str] = []
    documents = load_documents(docs, warn=warnings.append)
    assert sorted(d.doc_id for d in documents) == [
        "ada_brightwater.txt",
        "handbook.md",
        "northwind_studio.md",
        "products/lumen_lamp.md",
    ]
    assert any("unreadable folder" in w and "private" in w for w in warnings), warnings
    assert any("unreadable file" in w and "port_ellis.md" in w for w in warnings), warnings


# --- 4. concurrent builds of one index take turns --------------------------------------------


def test_concurrent_builds_take_turns_and_report_their_own_result(tmp_path):
    a = tmp_path / "a.md"
    a.write_text("# Alpha\n\nAlpha is the first letter.\n")
    b = tmp_path / "b.md"
    b.write_text("# Beta\n\nBeta is the second letter.\n")
    idx = tmp_path / "idx"
    a_inside = threading.Event()
    results: dict[str, object] = {}
    b_warnings: list[str] = []

    def slow_progress(stage: str, done: int, total: int) -> None:
        if not a_inside.is_set():
            a_inside.set()
            time.sleep(0.5)  # hold the lock while the other build starts

    def build(name: str, path: Path, **kwargs) -> None:
        try:
            results[name] = build_index(path, idx, embedder="none", **kwargs)
        except BaseException as exc:  # pragma: no cover - reported below
            results[name] = exc

    first = threading.Thread(
        target=build, args=("a", a), kwargs={"progress": slow_progress, "warn": quiet}
    )
    first.start()
    assert a_inside.wait(10)
    second = threading.Thread(target=build, args=("b", b), kwargs={"warn": b_warnings.append})
    second.start()
    first.join(20)
    second.join(20)
    index_a, index_b = results["a"], results["b"]
    assert index_a.n_docs == 1 and index_a.manifest["counts"]["documents_added"] == 1
    assert index_b.n_docs == 2 and index_b.manifest["counts"]["documents_kept"] == 1
    assert any("waiting for another sealgraph build" in w for w in b_warnings), b_warnings
    assert sorted(doc_id for doc_id, _ in load_index(idx).titles()) == ["a.md", "b.md"]


def test_lock_held_too_long_is_a_clear_error(tmp_path):
    from filelock import FileLock

    docs = write_tiny_docs(tmp_path / "docs")
    with FileLock(tmp_path / ".idx.lock"):
        result = run_cli(
            "index",
            str(docs),
            "--index",
            str(tmp_path / "idx"),
            "--embedder",
            "none",
            "--lock-timeout",
            "0.2",
        )
    assert_clear_error(result, "still holds its lock", "--lock-timeout")
    assert "waiting for another sealgraph build" in result.err
    assert not (tmp_path / "idx").exists()


# --- 5. leftovers of interrupted builds ----------------------------------------------------------


def test_killed_build_leftover_is_removed_by_the_next_build(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    stale = tmp_path / ".idx.building-k1ll3d_x"  # what a killed build leaves
    (stale / "lexical").mkdir(parents=True)
    (stale / "docstore.sqlite").write_bytes(b"half written")
    not_ours = [tmp_path / ".idx.building", tmp_path / ".other.building-abcdefgh"]
    for folder in not_ours:
        folder.mkdir()
    warnings: list[str] = []
    build_index(docs, tmp_path / "idx", embedder="none", warn=warnings.append)
    assert not stale.exists()
    assert all(folder.is_dir() for folder in not_ours)
    assert any("interrupted build" in w for w in warnings)


def test_crash_between_the_swap_renames_is_recovered_by_the_next_build(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    # The first rename of a swap happened, the second did not: the index is parked.
    parked = tmp_path / ".idx.old-x1y2z3w4"
    os.replace(idx, parked)
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nA short note.\n")
    warnings: list[str] = []
    index = build_index(note, idx, embedder="none", warn=warnings.append)
    assert index.n_docs == 6  # the five restored documents plus the note
    assert not parked.exists()
    assert any("restored the index" in w for w in warnings), warnings


def test_crash_after_the_swap_leftover_is_removed(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    parked = tmp_path / ".idx.old-a1b2c3d4"  # the swap finished, the cleanup did not
    shutil.copytree(idx, parked)
    foreign = tmp_path / ".idx.old-e5f6g7h8"  # our naming but not our content: kept
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("do not delete")
    build_index(docs, idx, embedder="none", warn=quiet)
    assert not parked.exists()
    assert (foreign / "thesis.tex").read_text() == "do not delete"


def test_load_index_restores_an_index_parked_by_a_crashed_build(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder="none", warn=quiet)
    os.replace(idx, tmp_path / ".idx.old-q9w8e7r6")
    warnings: list[str] = []
    assert load_index(idx, warn=warnings.append).n_docs == 5
    assert any("restored the index" in w for w in warnings), warnings
    assert listing(tmp_path) == ["docs", "idx"]


# --- 6. tracebacks become clear errors -------------------------------------------------------------


def deep_json(depth: int) -> str:
    return '{"id": "x", "text": "t", "extra": ' + "[" * depth + "]" * depth + "}"


def test_deeply_nested_jsonl_is_a_clear_error_when_indexing(tmp_path):
    corpus = tmp_path / "deep.jsonl"
    corpus.write_text('{"id": "ok", "text": "fine"}\n' + deep_json(100_000) + "\n")
    result = run_cli("index", str(corpus), "--index", str(tmp_path / "idx"), "--embedder", "none")
    assert_clear_error(result, "deep.jsonl:2", "nested too deeply")
    assert not (tmp_path / "idx").exists()
    # Deep enough to be refused, shallow enough for the parser: the same error.
    corpus.write_text(deep_json(500) + "\n")
    with pytest.raises(IngestError, match=r"deep.jsonl:1: JSON nested too deeply"):
        load_documents(corpus)


def deep_questions(tmp_path: Path) -> Path:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"question": "Q?", "paragraphs": [], "extra": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    )
    return questions


def test_deeply_nested_questions_file_is_a_clear_error_when_loading(tmp_path):
    from sealgraph.eval.dataset import load_questions

    questions = deep_questions(tmp_path)
    with pytest.raises(IngestError, match=r"q.jsonl:1: JSON nested too deeply"):
        load_questions(questions)
    with pytest.raises(IngestError, match=r"q.jsonl:1: JSON nested too deeply"):
        load_qa_records(questions)


def test_deeply_nested_questions_file_is_a_clear_error_in_eval(tmp_path):
    questions = deep_questions(tmp_path)
    result = run_cli(
        "eval",
        "--questions",
        str(questions),
        "--k",
        "2",
        "--methods",
        "flat-bm25",
        "--embedder",
        "none",
        "--index",
        str(tmp_path / "eval-idx"),
        "--no-progress",
        "--out",
        str(tmp_path / "r.json"),
    )
    assert_clear_error(result, "q.jsonl:1", "nested too deeply")
    assert not (tmp_path / "r.json").exists()


def test_openai_index_without_api_key_is_a_clear_error_at_load(
    tmp_path, hash_embedder, monkeypatch
):
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    build_index(docs, idx, embedder=hash_embedder, warn=quiet)
    # The manifest checksums every other file, not itself: renaming the embedder
    # yields an index that loads like one built with OpenAI embeddings of dim 64.
    manifest = json.loads((idx / "manifest.json").read_text())
    manifest["embedder"]["name"] = "openai:text-embedding-3-small"
    (idx / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        load_index(idx)
    result = run_cli(
        "ask",
        QUESTION,
        "--index",
        str(idx),
        "--db",
        str(tmp_path / "runs.sqlite"),
        env={"OPENAI_API_KEY": ""},
    )
    assert_clear_error(result, "openai:text-embedding-3-small", "OPENAI_API_KEY")


# --- 7. progress is visible off a terminal -----------------------------------------------------------


def test_progress_off_a_terminal_prints_a_plain_line_every_interval():
    now = [0.0]
    stream = io.StringIO()  # not a terminal
    progress = _StderrProgress(stream, clock=lambda: now[0], log_interval_s=10.0)
    for done in range(1, 6):  # a quick stage: nothing at all
        now[0] += 0.1
        progress("chunking", done, 5)
    assert stream.getvalue() == ""
    for done in range(0, 5001, 100):  # a slow one: 4 s per 100 chunks
        progress("embedding", done, 5000)
        now[0] += 4.0
    lines = stream.getvalue().splitlines()
    assert lines[0] == "sealgraph: embedding 300/5,000 chunks (25.0 chunks/s, ETA 3m08s)"
    assert lines[-1] == "sealgraph: embedding 5,000/5,000 chunks (25.0 chunks/s, in 3m20s)"
    assert 15 <= len(lines) <= 20  # about one per 10 s of a 200 s stage
    assert all(line.startswith("sealgraph: embedding ") for line in lines)
