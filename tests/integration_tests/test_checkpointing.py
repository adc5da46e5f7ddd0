"""Every ``ask`` run is checkpointed; ``trace`` reads it back; database faults are clear errors."""

import json
import socket
import sqlite3

import pytest

from sealgraph.cli import main
from sealgraph.errors import CheckpointError
from sealgraph.runs.checkpointers import (
    APPLICATION_ID,
    GuardedSqliteSaver,
    StrictCheckpointSerializer,
    connect_sqlite,
    open_checkpointer,
)

QUESTION = "In which province is the town where Northwind Studio was founded?"
NODES = {"search", "extract", "assess", "micro_query", "replace", "pack", "generate"}


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("SEALGRAPH_TEST_SLOW_NODE", raising=False)


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "runs.sqlite")


def ask(index, db, thread, capsys, *extra):
    code = main(
        [
            "ask",
            QUESTION,
            "--index",
            str(index.path),
            "--db",
            db,
            "--thread",
            thread,
            "--json",
            *extra,
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def trace_json(db, thread, capsys):
    code = main(["trace", thread, "--db", db, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def error_line(capsys, code):
    captured = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def checkpoint_rows(db):
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT thread_id, checkpoint_id, checkpoint, metadata FROM checkpoints ORDER BY thread_id, checkpoint_id"
        ).fetchall()


def test_run_is_checkpointed_per_node_and_trace_reads_it_back(tiny_index, db, capsys):
    out = ask(tiny_index, db, "t1", capsys, "--k", "2")
    events = trace_json(db, "t1", capsys)
    assert events, "the trace has events"
    assert all({"step", "node", "kind", "message"} <= set(e) for e in events)
    assert {e["node"] for e in events} <= NODES
    assert events[-1]["kind"] == "answer"
    assert events[-1]["message"] == out["answer"]
    keys = [(e["step"], e["node"], e["kind"], e["message"]) for e in events]
    assert len(keys) == len(set(keys))
    # one checkpoint per super-step, plus the input checkpoint
    with sqlite3.connect(db) as conn:
        n = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 't1'").fetchone()[0]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    assert n == max(e["step"] for e in events) + 2
    assert mode == "wal"
    assert app_id == APPLICATION_ID  # marked as sealgraph's own file


def test_trace_timeline_lists_every_node_call(tiny_index, db, capsys):
    ask(tiny_index, db, "t2", capsys, "--k", "2")
    events = trace_json(db, "t2", capsys)
    assert main(["trace", "t2", "--db", db]) == 0
    text = capsys.readouterr().out
    assert text.startswith("thread t2: run, finished")
    for step, node in sorted({(e["step"], e["node"]) for e in events}):
        assert f"step {step} · {node} (" in text
    assert "question: " + QUESTION in text
    assert "final answer: " in text


def test_trace_at_step_shows_the_full_state_of_that_checkpoint(tiny_index, db, capsys):
    ask(tiny_index, db, "t3", capsys, "--k", "2")
    events = trace_json(db, "t3", capsys)
    assert main(["trace", "t3", "--db", db, "--at", "1"]) == 0
    view = json.loads(capsys.readouterr().out)
    assert view["step"] == 1
    assert view["next"] == ["extract"]
    assert [s["chunk_id"] for s in view["values"]["slots"]] == events[1]["message"].split(": ", 1)[
        1
    ].split(", ")
    assert {e["node"] for e in view["values"]["seal_log"]} == {"search"}
    last = max(e["step"] for e in events)
    assert main(["trace", "t3", "--db", db, "--at", str(last)]) == 0
    final = json.loads(capsys.readouterr().out)
    assert final["next"] == []
    assert final["values"]["seal_log"] == events


@pytest.mark.parametrize("step", ["99", "-2"])
def test_trace_step_out_of_range_is_a_clear_error(tiny_index, db, capsys, step):
    ask(tiny_index, db, "t4", capsys)
    code = main(["trace", "t4", "--db", db, "--at", step])
    line = error_line(capsys, code)
    assert f"step {step} is out of range" in line
    assert "steps -1.." in line


def test_unknown_thread_and_missing_db_are_clear_errors(tiny_index, db, tmp_path, capsys):
    ask(tiny_index, db, "t5", capsys)
    assert "unknown thread 'nope'" in error_line(capsys, main(["trace", "nope", "--db", db]))
    missing = str(tmp_path / "missing.sqlite")
    assert "no checkpoint database" in error_line(capsys, main(["trace", "t5", "--db", missing]))
    assert not (tmp_path / "missing.sqlite").exists()  # reading never creates a database


def test_corrupt_database_is_a_clear_error_and_left_untouched(tiny_index, tmp_path, capsys):
    bad = tmp_path / "bad.sqlite"
    garbage = b"this is not a SQLite database\n" * 200
    bad.write_bytes(garbage)
    code = main(["ask", QUESTION, "--index", str(tiny_index.path), "--db", str(bad)])
    line = error_line(capsys, code)
    assert "damaged or not a SQLite database" in line
    assert str(bad) in line
    code = main(["trace", "x", "--db", str(bad)])
    assert "damaged" in error_line(capsys, code)
    assert bad.read_bytes() == garbage


def test_locked_database_is_a_clear_error_and_loses_nothing(tiny_index, db, capsys, monkeypatch):
    ask(tiny_index, db, "kept", capsys)
    before = checkpoint_rows(db)
    monkeypatch.setenv("SEALGRAPH_DB_TIMEOUT", "0.3")
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        code = main(
            ["ask", QUESTION, "--index", str(tiny_index.path), "--db", db, "--thread", "blocked"]
        )
        line = error_line(capsys, code)
        assert "is locked by another process" in line
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert checkpoint_rows(db) == before  # the earlier run is intact, nothing half-written
    assert trace_json(db, "kept", capsys)[-1]["kind"] == "answer"
    # once the lock is gone the same command works
    monkeypatch.setenv("SEALGRAPH_DB_TIMEOUT", "5")
    ask(tiny_index, db, "blocked", capsys)


def test_unreachable_databases_are_clear_errors(tiny_index, tmp_path, capsys):
    a_file = tmp_path / "plain-file"
    a_file.write_text("x", encoding="utf-8")
    code = main(
        ["ask", QUESTION, "--index", str(tiny_index.path), "--db", str(a_file / "runs.sqlite")]
    )
    assert "cannot create the directory" in error_line(capsys, code)
    code = main(["ask", QUESTION, "--index", str(tiny_index.path), "--db", str(tmp_path)])
    assert "is a directory" in error_line(capsys, code)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://someone:secret@127.0.0.1:{port}/runs"
    code = main(["ask", QUESTION, "--index", str(tiny_index.path), "--db", url])
    line = error_line(capsys, code)
    try:
        import langgraph.checkpoint.postgres  # noqa: F401
    except ImportError:  # without the postgres extra, the error names it
        assert "need the postgres extra: pip install 'sealgraph[postgres]'" in line
    else:
        assert "cannot use the PostgreSQL checkpoint database" in line
    assert "secret" not in line  # the password is never printed


def test_a_failed_write_is_rolled_back_whole(tmp_path):
    path = tmp_path / "atomic.sqlite"
    conn = connect_sqlite(path, timeout_s=1.0)
    saver = GuardedSqliteSaver(conn, label=str(path), timeout_s=1.0)
    try:
        with pytest.raises(CheckpointError, match="no such table"), saver.cursor() as cur:
            cur.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) VALUES ('t', '', 'c1')"
            )
            cur.execute("INSERT INTO no_such_table VALUES (1)")  # fails mid-transaction
        with saver.cursor(transaction=False) as cur:
            assert cur.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == 0
        with saver.cursor() as cur:
            cur.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) VALUES ('t', '', 'c2')"
            )
    finally:
        conn.close()
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT checkpoint_id FROM checkpoints").fetchall() == [("c2",)]


def test_savers_read_with_the_strict_serializer(tmp_path):
    with open_checkpointer(tmp_path / "runs.sqlite") as saver:
        assert isinstance(saver.serde, StrictCheckpointSerializer)
        assert saver.serde.label == str(tmp_path / "runs.sqlite")


def test_open_checkpointer_for_reading_never_creates_a_file(tmp_path):
    with (
        pytest.raises(CheckpointError, match="no checkpoint database"),
        open_checkpointer(tmp_path / "none.sqlite", create=False),
    ):
        pass
    assert not (tmp_path / "none.sqlite").exists()


def test_run_origin_is_recorded_before_any_node_runs(tiny_index, db, capsys, monkeypatch):
    import io
    import sys
    from pathlib import Path

    from sealgraph.runs.threads import read_origin

    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))  # stop before the first node
    args = ["ask", QUESTION, "--index", str(tiny_index.path), "--db", db, "--thread", "early"]
    assert main([*args, "--step", "--set", "k=1", "--set", "utility.novelty=0.2"]) == 0
    capsys.readouterr()
    with open_checkpointer(db, create=False) as saver:
        origin = read_origin(saver, "early")
    assert origin.index == str(Path(tiny_index.path).resolve())
    assert origin.llm is False
    assert origin.overrides == {"k": 1, "utility.novelty": 0.2}
    assert main(["trace", "early", "--db", db]) == 0
    text = capsys.readouterr().out
    assert "stopped before search" in text
    assert 'config overrides: {"k": 1, "utility.novelty": 0.2}' in text
    assert "(no events)" in text
    # resume applies the recorded overrides: k=1 gives one passage
    assert main(["resume", "early", "--db", db, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["evidence"]) == 1
