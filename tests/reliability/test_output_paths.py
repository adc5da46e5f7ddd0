"""Untrusted inputs, round 3: an output path never replaces what a command reads.

Every file a command writes on request (``trace --html``, ``eval --out``,
``--records``, ``--plot``, ``--html``) goes through one writer
(:mod:`sealgraph.outputs`). Each case names a target that must not be written and
checks the clear one-line error and that nothing changed; the CLI runs in-process
(an exception escaping ``main`` fails the test).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest
from support.cli import eval_argv, run_main, small_tmpfs, snapshot
from support.fakes import write_tiny_docs

from sealgraph.cli import main
from sealgraph.errors import InputError
from sealgraph.outputs import Inputs, Output, write_output, write_outputs

QUESTION = "In which province is the town where Northwind Studio was founded?"


def assert_error(code: int, err: str, *fragments: str) -> None:
    assert code != 0
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("sealgraph: error:"), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def digest(path: Path) -> bytes:
    return path.read_bytes()


@pytest.fixture(scope="module")
def run_db(tmp_path_factory) -> tuple[Path, Path]:
    """An index and a run database holding thread ``t1`` (asked over that index)."""
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("outputs")
    build_index(write_tiny_docs(root / "docs"), root / "idx", embedder="none", warn=print)
    db = root / "runs.sqlite"
    argv = ["ask", QUESTION, "--index", str(root / "idx"), "--db", str(db), "--thread", "t1"]
    assert main([*argv, "--json"]) == 0
    return root / "idx", db


# --- 1. trace --html onto the run database it reads ---------------------------------------


def test_trace_html_onto_its_own_run_database_is_refused(capsys, run_db, tmp_path):
    _, db = run_db
    before = {p.name: digest(p) for p in db.parent.iterdir() if p.is_file()}
    link = tmp_path / "another-name.sqlite"
    os.link(db, link)  # a hard link: the same file under another name
    for target in (
        str(db),
        f"{db.parent}/./../{db.parent.name}/{db.name}",
        str(link),
        f"{db}-wal",
        str(db.parent / f".{db.name}.threads" / "page.html"),
    ):
        code, _, err = run_main(capsys, "trace", "t1", "--db", str(db), "--html", target)
        assert_error(code, err, "--html", "this command reads" if "threads" not in target else "")
    after = {p.name: digest(p) for p in db.parent.iterdir() if p.is_file()}
    assert after == before
    code, out, _ = run_main(capsys, "trace", "t1", "--db", str(db), "--json")
    assert code == 0 and json.loads(out)  # the database still reads


# --- 2. trace --html onto a file of an index ----------------------------------------------


def test_trace_html_inside_an_index_is_refused(capsys, run_db, tmp_path):
    index_dir, db = run_db
    before = snapshot(index_dir)
    for target in (index_dir / "docstore.sqlite", index_dir / "new-page.html"):
        code, _, err = run_main(capsys, "trace", "t1", "--db", str(db), "--html", str(target))
        assert_error(code, err, "inside", str(index_dir.resolve()))
    assert snapshot(index_dir) == before
    code, _, err = run_main(
        capsys, "ask", QUESTION, "--index", str(index_dir), "--db", str(tmp_path / "r.sqlite")
    )
    assert code == 0, err  # the index still answers
    # Beside the index, the page is written.
    code, _, err = run_main(
        capsys, "trace", "t1", "--db", str(db), "--html", str(tmp_path / "p.html")
    )
    assert code == 0, err
    assert (tmp_path / "p.html").read_text().startswith("<!DOCTYPE html>")


# --- 3. and 4. eval outputs onto its questions, pool files, corpus or index ---------------


def qa_line(title: str = "Alpha") -> str:
    return json.dumps(
        {
            "id": "q1",
            "question": "In which province does Alpha lie?",
            "answer": "Beta",
            "paragraphs": [
                {"title": title, "sentences": ["Alpha is a town.", "It lies in Beta."]},
                {"title": "Beta", "sentences": ["Beta is a province."]},
            ],
            "supporting_facts": [[title, 1], ["Beta", 0]],
        }
    )


def test_eval_outputs_onto_the_questions_or_a_pool_file_are_refused(capsys, tmp_path):
    questions = tmp_path / "q.jsonl"
    pool = tmp_path / "pool.jsonl"
    questions.write_text(qa_line() + "\n")
    pool.write_text(qa_line("Gamma") + "\n")
    before = (digest(questions), digest(pool))
    for extra in (
        ["--out", str(questions)],
        ["--out", str(tmp_path / "r.json"), "--records", str(questions)],
        ["--out", str(tmp_path / "r.json"), "--html", str(pool)],
        ["--out", str(tmp_path / "r.json"), "--records", str(tmp_path / "r.json")],
    ):
        code, _, err = run_main(capsys, *eval_argv(questions, "--pool", str(pool), *extra))
        assert_error(code, err, extra[-1])
    assert (digest(questions), digest(pool)) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool.jsonl", "q.jsonl"]


CORPUS_QUESTION = {
    "id": "lamp",
    "question": "Who designed the Lumen Lamp?",
    "answer": "Ada Brightwater",
    "type": "factual",
    "gold_documents": ["lumen_lamp.md"],
    "gold_spans": [],
}


def test_eval_outputs_inside_the_corpus_or_the_index_folder_are_refused(capsys, tmp_path):
    corpus = write_tiny_docs(tmp_path / "corpus")
    questions = tmp_path / "cq.jsonl"
    questions.write_text(json.dumps(CORPUS_QUESTION) + "\n")
    page = corpus / next(p.name for p in corpus.iterdir() if p.suffix == ".md")
    new_index = tmp_path / "new-idx"
    argv = eval_argv(questions, "--corpus", str(corpus), "--index", str(new_index))
    for extra in (
        ["--out", str(tmp_path / "r.json"), "--html", str(page)],
        ["--out", str(corpus / "report.json")],
        ["--out", str(new_index / "report.json")],  # the index eval would build
    ):
        code, _, err = run_main(capsys, *argv, *extra)
        assert_error(code, err, extra[-1], "lies inside")
    assert not new_index.exists()  # refused before any work
    # An index built already, named with --index or found by its manifest.
    from sealgraph.index import build_index

    index_dir = build_index(corpus, tmp_path / "idx", embedder="none", warn=print).path
    before = snapshot(corpus), snapshot(index_dir)
    for argv in (
        eval_argv(questions, "--index", str(index_dir)),
        eval_argv(questions, "--corpus", str(corpus), "--index", str(tmp_path / "other")),
    ):
        code, _, err = run_main(capsys, *argv, "--out", str(index_dir / "docstore.sqlite"))
        assert_error(code, err, "docstore.sqlite", "lies inside")
    assert (snapshot(corpus), snapshot(index_dir)) == before


# --- 5. a target that is not a regular file, or a link --------------------------------------


def test_outputs_onto_a_fifo_a_device_or_a_link_are_refused(capsys, run_db, tmp_path):
    _, db = run_db
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    mine = tmp_path / "mine.txt"
    mine.write_text("my own notes\n")
    link = tmp_path / "link.html"
    link.symlink_to(mine)
    folder = tmp_path / "folder.html"
    folder.mkdir()
    for target, what in (
        (fifo, "a FIFO"),
        (Path("/dev/null"), "a device"),
        (link, "symbolic link"),
        (folder, "a folder"),
    ):
        code, _, err = run_main(capsys, "trace", "t1", "--db", str(db), "--html", str(target))
        assert_error(code, err, what)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert link.is_symlink() and mine.read_text() == "my own notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["pipe.html", "mine.txt", "link.html", "folder.html"]
    )


def test_a_regular_file_is_replaced_atomically_with_ordinary_permissions(tmp_path):
    target = tmp_path / "page.html"
    target.write_text("old")
    write_output(target, "new")
    assert target.read_text() == "new"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]  # no temporary file left


# --- 8. a full disk while writing eval outputs ----------------------------------------------


def test_a_failed_write_changes_no_output_and_leaves_no_temporary_file(tmp_path):
    report, page = tmp_path / "r.json", tmp_path / "p.html"
    report.write_text("old report")

    def full(_handle):
        raise OSError(errno.ENOSPC, "No space left on device")

    outputs = [
        Output(report, "--out", lambda f: f.write(b"new report")),
        Output(page, "--html", full),
    ]
    with pytest.raises(InputError, match=r"--html .*p\.html: no space left in .* free"):
        write_outputs(outputs, Inputs())
    assert report.read_text() == "old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (needs root and mount rights: skipped elsewhere)."""
    with small_tmpfs(tmp_path / "disk", "64k") as mount:
        yield mount


def test_eval_html_on_a_full_disk_is_a_clear_error(capsys, tmp_path, tiny_disk):
    questions = tmp_path / "q.jsonl"
    questions.write_text(qa_line() + "\n")
    fd = os.open(tiny_disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # fill the disk
        while os.write(fd, b"x" * 1024):
            pass
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    before = sorted(p.name for p in tiny_disk.iterdir())
    code, _, err = run_main(
        capsys,
        *eval_argv(questions, "--out", str(tmp_path / "r.json")),
        "--html",
        str(tiny_disk / "page.html"),
    )
    assert_error(code, err, "--html", "no space left", str(tiny_disk))
    assert sorted(p.name for p in tiny_disk.iterdir()) == before
    assert not (tmp_path / "r.json").exists()  # all or nothing
