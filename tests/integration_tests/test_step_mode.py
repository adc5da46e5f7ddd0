"""``ask --step``: pause before every node; Enter runs it, ``s`` shows the state, ``q`` stops."""

import io
import json
import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sealgraph.cli import main

QUESTION = "In which province is the town where Northwind Studio was founded?"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("SEALGRAPH_TEST_SLOW_NODE", raising=False)


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "runs.sqlite")


def with_stdin(monkeypatch, text):
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))


def event_keys(events):
    return [(e["step"], e["node"], e["kind"], e["message"]) for e in events]


def trace_events(db, thread, capsys):
    assert main(["trace", thread, "--db", db, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_piped_enter_show_and_quit_leave_a_resumable_checkpoint(
    tiny_index, db, capsys, monkeypatch
):
    with_stdin(monkeypatch, "\n\ns\nq\n")
    args = [
        "ask",
        QUESTION,
        "--index",
        str(tiny_index.path),
        "--db",
        db,
        "--thread",
        "st",
        "--k",
        "2",
    ]
    assert main([*args, "--step"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""  # stopped: no answer printed
    err = captured.err
    # paused before search, extract, assess: showed the node and what it reads
    assert "next: search (step 1) will read:" in err
    assert "next: extract (step 2) will read:" in err
    assert "evidence E_t: " in err
    assert "next: assess (step 3) will read:" in err
    assert err.count("[enter] run it  [s] show state  [q] stop > ") == 4
    # `s` printed the full state as JSON (it holds both finished nodes' events)
    state = json.loads(err[err.index("\n{") : err.index("\n}\n") + 2])
    assert [e["node"] for e in state["seal_log"]][-1] == "extract"
    assert "stopped before assess; thread: st" in err
    assert f"resume with: sealgraph resume st --db {db}" in err
    # only search and extract ran
    events = trace_events(db, "st", capsys)
    assert {e["node"] for e in events} == {"search", "extract"}
    assert main(["trace", "st", "--db", db]) == 0
    assert "stopped before assess" in capsys.readouterr().out


def test_resume_after_quit_finishes_without_duplicates(tiny_index, db, capsys, monkeypatch):
    index = str(tiny_index.path)
    with_stdin(monkeypatch, "\nq\n")
    assert (
        main(
            ["ask", QUESTION, "--index", index, "--db", db, "--thread", "st", "--k", "2", "--step"]
        )
        == 0
    )
    capsys.readouterr()
    # resume stepwise: one more node by hand, then end of input runs to the end
    with_stdin(monkeypatch, "\n")
    assert main(["resume", "st", "--db", db, "--step", "--json"]) == 0
    captured = capsys.readouterr()
    assert "next: extract (step 2) will read:" in captured.err
    assert "end of input: running to the end" in captured.err
    result = json.loads(captured.out)
    assert result["thread_id"] == "st"
    stepped = trace_events(db, "st", capsys)
    keys = event_keys(stepped)
    assert len(keys) == len(set(keys))
    # the same events, in the same order, as the same run without stepping
    assert (
        main(
            [
                "ask",
                QUESTION,
                "--index",
                index,
                "--db",
                db,
                "--thread",
                "plain",
                "--k",
                "2",
                "--json",
            ]
        )
        == 0
    )
    plain = json.loads(capsys.readouterr().out)
    assert keys == event_keys(trace_events(db, "plain", capsys))
    assert result["answer"] == plain["answer"]
    assert result["evidence"] == plain["evidence"]


def test_end_of_input_runs_to_the_end(tiny_index, db, capsys, monkeypatch):
    with_stdin(monkeypatch, "")
    args = [
        "ask",
        QUESTION,
        "--index",
        str(tiny_index.path),
        "--db",
        db,
        "--thread",
        "eof",
        "--json",
    ]
    assert main([*args, "--step"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["answer"]
    assert captured.err.count("[enter] run it") == 1


def test_quit_with_json_prints_a_stopped_status(tiny_index, db, capsys, monkeypatch):
    with_stdin(monkeypatch, "q\n")
    args = [
        "ask",
        QUESTION,
        "--index",
        str(tiny_index.path),
        "--db",
        db,
        "--thread",
        "jq",
        "--json",
    ]
    assert main([*args, "--step"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status == {
        "thread_id": "jq",
        "status": "stopped",
        "next": "search",
        "resume": f"sealgraph resume jq --db {db}",
    }


def test_unknown_commands_are_reported_and_asked_again(tiny_index, db, capsys, monkeypatch):
    with_stdin(monkeypatch, "x\nq\n")
    args = ["ask", QUESTION, "--index", str(tiny_index.path), "--db", db, "--thread", "unk"]
    assert main([*args, "--step"]) == 0
    err = capsys.readouterr().err
    assert "unknown command 'x'" in err
    assert "stopped before search" in err


def _read_until(stream_buffer, needle, lock, deadline):
    while time.monotonic() < deadline:
        with lock:
            if needle in stream_buffer[0]:
                return True
        time.sleep(0.05)
    return False


def test_step_mode_in_a_real_terminal(tiny_index, db, tmp_path):
    """stdin is a pseudo-terminal: answers are typed after each prompt appears."""
    master, slave = pty.openpty()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
        ),
        "SEALGRAPH_DATA_DIR": str(tmp_path / "data"),
    }
    command = [sys.executable, "-m", "sealgraph", "ask", QUESTION, "--index", str(tiny_index.path)]
    proc = subprocess.Popen(
        [*command, "--db", db, "--thread", "tty", "--step"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(slave)
    buffer = [""]
    lock = threading.Lock()

    def pump():
        for chunk in iter(lambda: proc.stderr.read1(4096), b""):
            with lock:
                buffer[0] += chunk.decode("utf-8", "replace")

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        assert _read_until(buffer, "next: search", lock, deadline), buffer[0]
        os.write(master, b"\n")
        assert _read_until(buffer, "next: extract", lock, deadline), buffer[0]
        os.write(master, b"q\n")
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    reader.join(timeout=10)
    assert proc.returncode == 0, buffer[0]
    assert "[1] search: " in buffer[0]
    assert "stopped before extract; thread: tty" in buffer[0]
    # on a terminal the prompt is not followed by an extra newline (the user's Enter ends it)
    assert "[q] stop > \n" not in buffer[0]


def test_resume_continues_the_run_not_a_newer_replay(tiny_index, db, capsys, monkeypatch):
    index = str(tiny_index.path)
    with_stdin(monkeypatch, "\n\nq\n")  # run search and extract, stop before assess
    args = ["ask", QUESTION, "--index", index, "--db", db, "--thread", "mixed", "--k", "2"]
    assert main([*args, "--step"]) == 0
    capsys.readouterr()
    # a replay forks the stopped run and runs the fork to its end
    assert main(["replay", "mixed", "--db", db, "--from", "0", "--set", "k=1", "--json"]) == 0
    fork = json.loads(capsys.readouterr().out)
    assert len(fork["evidence_after"]) == 1
    # resume finishes the original run (k=2) from where it stopped
    assert main(["resume", "mixed", "--db", db, "--json"]) == 0
    captured = capsys.readouterr()
    assert "] search: " not in captured.err
    assert "] assess: " in captured.err
    resumed = json.loads(captured.out)
    assert len(resumed["evidence"]) == 2
    assert (
        main(
            ["ask", QUESTION, "--index", index, "--db", db, "--thread", "ref", "--k", "2", "--json"]
        )
        == 0
    )
    reference = json.loads(capsys.readouterr().out)
    assert resumed["answer"] == reference["answer"]
    assert resumed["evidence"] == reference["evidence"]
