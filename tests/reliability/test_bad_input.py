"""The earlier issues' bad-input lists, run through the CLI as a user would.

Each case asserts a clear one-line error (or, for skippable input, a warning and a
correct result), a non-zero exit code for errors, and no half-written output. The
CLI runs in-process: an exception escaping ``main`` (a traceback for the user)
fails the test.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from support.cli import run_cli, snapshot
from support.fakes import write_tiny_docs

from sealgraph.cli import main

QUESTION = "In which province is the town where Northwind Studio was founded?"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_error(code: int, err: str, *fragments: str) -> None:
    assert code != 0
    assert "sealgraph: error:" in err, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("bad-input")
    build_index(write_tiny_docs(root / "docs"), root / "idx", embedder="none", warn=print)
    return root / "idx"


def qa_line(question: str = "Q?", answer: str = "A") -> str:
    return json.dumps(
        {
            "id": "q1",
            "question": question,
            "answer": answer,
            "paragraphs": [
                {"title": "Alpha", "sentences": ["Alpha is a town.", "It lies in Beta."]},
                {"title": "Beta", "sentences": ["Beta is a province."]},
            ],
            "supporting_facts": [["Alpha", 1], ["Beta", 0]],
        }
    )


# --- index -------------------------------------------------------------------------------


def test_index_missing_path(capsys, tmp_path):
    code, _, err = run(
        capsys,
        "index",
        str(tmp_path / "nope"),
        "--index",
        str(tmp_path / "i"),
        "--embedder",
        "none",
    )
    assert_error(code, err, "nope")
    assert not (tmp_path / "i").exists()


def test_index_empty_directory(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = run(
        capsys,
        "index",
        str(tmp_path / "empty"),
        "--index",
        str(tmp_path / "i"),
        "--embedder",
        "none",
    )
    assert_error(code, err)
    assert not (tmp_path / "i").exists()


def test_index_skips_a_binary_file_with_a_warning(capsys, tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    (docs / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    code, out, err = run(
        capsys, "index", str(docs), "--index", str(tmp_path / "i"), "--embedder", "none"
    )
    assert code == 0, err
    assert "blob.txt" in err and "binary" in err
    assert "5 documents" in out


def test_index_decodes_non_utf8_text_with_a_warning(capsys, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "latin.txt").write_bytes("Caf\xe9 Rivoli is a caf\xe9 in Port Ellis.".encode("latin-1"))
    code, out, err = run(
        capsys, "index", str(docs), "--index", str(tmp_path / "i"), "--embedder", "none"
    )
    assert code == 0, err
    assert "latin.txt" in err and "UTF-8" in err
    assert "1 documents" in out


def test_index_malformed_jsonl_line_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "a", "title": "A", "text": "A."}) + "\n{not json\n")
    code, _, err = run(
        capsys, "index", str(bad), "--index", str(tmp_path / "i"), "--embedder", "none"
    )
    assert_error(code, err, "bad.jsonl:2")
    assert not (tmp_path / "i").exists()


def test_index_with_an_empty_tiktoken_cache_and_no_network_uses_the_packaged_encoding(tmp_path):
    # An empty cache and an unreachable proxy: tiktoken could neither read nor download,
    # so the encoding shipped in the package is used and the folder is left untouched.
    docs = write_tiny_docs(tmp_path / "docs")
    (tmp_path / "cache").mkdir()
    result = run_cli(
        "index",
        str(docs),
        "--index",
        str(tmp_path / "i"),
        "--embedder",
        "none",
        env={
            "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache"),
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
        },
    )
    assert result.code == 0, result.err
    assert (tmp_path / "i").is_dir()
    assert list((tmp_path / "cache").iterdir()) == []


# --- ask ---------------------------------------------------------------------------------


def test_ask_index_that_does_not_exist(capsys, tmp_path):
    code, _, err = run(
        capsys,
        "ask",
        QUESTION,
        "--index",
        str(tmp_path / "nope"),
        "--db",
        str(tmp_path / "runs.sqlite"),
    )
    assert_error(code, err, "nope")


def test_ask_corrupt_index(capsys, tmp_path, index_dir):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(index_dir, broken)
    store = broken / "docstore.sqlite"
    store.write_bytes(store.read_bytes()[: store.stat().st_size // 2])
    before = snapshot(broken)
    code, _, err = run(
        capsys, "ask", QUESTION, "--index", str(broken), "--db", str(tmp_path / "runs.sqlite")
    )
    assert_error(code, err, "damaged")
    assert snapshot(broken) == before


@pytest.mark.parametrize("question", ["", "   \n\t "], ids=["empty", "whitespace"])
def test_ask_empty_question(capsys, tmp_path, index_dir, question):
    code, _, err = run(
        capsys, "ask", question, "--index", str(index_dir), "--db", str(tmp_path / "runs.sqlite")
    )
    assert_error(code, err, "empty")


# --- eval --------------------------------------------------------------------------------


def eval_args(tmp_path: Path, questions: Path, *extra: str) -> list[str]:
    return [
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
        "--records",
        str(tmp_path / "rec.jsonl"),
        *extra,
    ]


def assert_no_report(tmp_path: Path) -> None:
    assert not (tmp_path / "r.json").exists()
    assert not (tmp_path / "rec.jsonl").exists()


def test_eval_missing_questions_file(capsys, tmp_path):
    code, _, err = run(capsys, *eval_args(tmp_path, tmp_path / "missing.jsonl"))
    assert_error(code, err, "missing.jsonl")
    assert_no_report(tmp_path)


def test_eval_empty_questions_file(capsys, tmp_path):
    (tmp_path / "q.jsonl").write_text("")
    code, _, err = run(capsys, *eval_args(tmp_path, tmp_path / "q.jsonl"))
    assert_error(code, err, "q.jsonl")
    assert_no_report(tmp_path)


def test_eval_questions_not_in_the_schema_name_the_line(capsys, tmp_path):
    (tmp_path / "q.jsonl").write_text(qa_line() + "\n" + json.dumps({"question": 5}) + "\n")
    code, _, err = run(capsys, *eval_args(tmp_path, tmp_path / "q.jsonl"))
    assert_error(code, err, "q.jsonl:2")
    assert_no_report(tmp_path)


def test_eval_unknown_method(capsys, tmp_path):
    (tmp_path / "q.jsonl").write_text(qa_line() + "\n")
    args = eval_args(tmp_path, tmp_path / "q.jsonl")
    args[args.index("flat-bm25")] = "flat-bm25,best-rag"
    code, _, err = run(capsys, *args)
    assert_error(code, err, "best-rag")
    assert_no_report(tmp_path)


def test_eval_k_below_one(capsys, tmp_path):
    (tmp_path / "q.jsonl").write_text(qa_line() + "\n")
    args = eval_args(tmp_path, tmp_path / "q.jsonl")
    args[args.index("2")] = "0"
    code, _, err = run(capsys, *args)
    assert_error(code, err, "k")
    assert_no_report(tmp_path)


def test_eval_budget_too_small_for_any_chunk(capsys, tmp_path):
    (tmp_path / "q.jsonl").write_text(qa_line() + "\n")
    code, _, err = run(capsys, *eval_args(tmp_path, tmp_path / "q.jsonl", "--budget", "1"))
    assert_error(code, err, "budget")
    assert_no_report(tmp_path)


# --- trace / replay ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_db(tmp_path_factory, index_dir) -> Path:
    db = tmp_path_factory.mktemp("runs") / "runs.sqlite"
    assert (
        main(
            [
                "ask",
                QUESTION,
                "--index",
                str(index_dir),
                "--db",
                str(db),
                "--thread",
                "t1",
                "--json",
            ]
        )
        == 0
    )
    return db


def test_trace_unknown_thread(capsys, run_db):
    capsys.readouterr()
    code, _, err = run(capsys, "trace", "no-such-thread", "--db", str(run_db))
    assert_error(code, err, "no-such-thread")


def test_trace_step_out_of_range(capsys, run_db):
    capsys.readouterr()
    code, _, err = run(capsys, "trace", "t1", "--db", str(run_db), "--at", "999")
    assert_error(code, err, "999")


def test_trace_database_that_does_not_exist(capsys, tmp_path):
    code, _, err = run(capsys, "trace", "t1", "--db", str(tmp_path / "missing.sqlite"))
    assert_error(code, err, "missing.sqlite")
    assert not (tmp_path / "missing.sqlite").exists()


def test_trace_corrupt_database_is_left_untouched(capsys, tmp_path):
    db = tmp_path / "runs.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 600)
    before = db.read_bytes()
    code, _, err = run(capsys, "trace", "t1", "--db", str(db))
    assert_error(code, err)
    assert db.read_bytes() == before


def test_ask_into_a_locked_database(capsys, tmp_path, index_dir, run_db, monkeypatch):
    import shutil

    db = tmp_path / "locked.sqlite"
    shutil.copy(run_db, db)
    monkeypatch.setenv("SEALGRAPH_DB_TIMEOUT", "0.5")
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        code, _, err = run(capsys, "ask", QUESTION, "--index", str(index_dir), "--db", str(db))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_error(code, err, "locked")


def test_trace_unreachable_postgres(capsys, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DB_TIMEOUT", "2")
    code, _, err = run(capsys, "trace", "t1", "--db", "postgresql://nobody@127.0.0.1:1/runs")
    assert_error(code, err)


def test_a_config_value_nested_too_deeply(capsys, tmp_path, index_dir):
    deep = "[" * 100_000 + "]" * 100_000
    code, _, err = run(
        capsys,
        "ask",
        QUESTION,
        "--index",
        str(index_dir),
        "--db",
        str(tmp_path / "runs.sqlite"),
        "--set",
        f"pack.delta={deep}",
    )
    assert_error(code, err, "nested too deeply")


def test_a_server_config_nested_too_deeply(monkeypatch):
    from sealgraph import server
    from sealgraph.errors import ConfigError

    monkeypatch.setenv(server.CONFIG_ENV, "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigError, match="nested too deeply"):
        server._overrides()
