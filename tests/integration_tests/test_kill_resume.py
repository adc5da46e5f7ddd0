"""Kill ``sealgraph ask`` mid-loop with SIGKILL; ``sealgraph resume`` completes it without duplicates."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sealgraph.cli import main

QUESTION = "In which province is the town where Northwind Studio was founded?"
REPO = Path(__file__).resolve().parents[2]
SEALGRAPH = (sys.executable, "-m", "sealgraph")


def cli_env(tmp_path, **extra):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("SEALGRAPH_TEST_SLOW_NODE", "SEALGRAPH_TEST_SLOW_SECONDS")
    }
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
    )
    env["SEALGRAPH_DATA_DIR"] = str(tmp_path / "data")
    env.update(extra)
    return env


def cli(capsys, *args):
    """Run the CLI in this process (only the killed run needs its own process)."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def event_keys(events):
    return [(e["step"], e["node"], e["kind"], e["message"]) for e in events]


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("SEALGRAPH_TEST_SLOW_NODE", raising=False)


def test_killed_run_resumes_to_the_same_result_without_duplicated_events(
    tiny_index, tmp_path, capsys
):
    db = str(tmp_path / "runs.sqlite")
    index = str(tiny_index.path)
    # The hook makes `replace` sleep before it runs, so the kill lands mid-loop:
    # after search/extract/assess/micro_query were checkpointed, inside replace.
    proc = subprocess.Popen(
        [
            *SEALGRAPH,
            "ask",
            QUESTION,
            "--index",
            index,
            "--k",
            "2",
            "--db",
            db,
            "--thread",
            "victim",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(
            tmp_path, SEALGRAPH_TEST_SLOW_NODE="replace", SEALGRAPH_TEST_SLOW_SECONDS="120"
        ),
    )
    seen: list[str] = []
    reached = threading.Event()

    def watch():
        for line in proc.stderr:
            seen.append(line)
            if "] micro_query: " in line:
                reached.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        assert reached.wait(timeout=180), "".join(seen)
        time.sleep(0.5)  # replace is now asleep inside the node
        assert proc.poll() is None, "the run must still be going when it is killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    watcher.join(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    assert proc.stdout.read() == ""  # no answer was printed

    # The killed run left a resumable checkpoint: stopped before replace.
    code, out, err = cli(capsys, "trace", "victim", "--db", db)
    assert code == 0, err
    assert "stopped before replace" in out.splitlines()[0]
    partial = json.loads(cli(capsys, "trace", "victim", "--db", db, "--json")[1])
    assert [e["node"] for e in partial][-1] == "micro_query"

    code, out, err = cli(capsys, "resume", "victim", "--db", db, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["thread_id"] == "victim"
    assert "] replace: " in err  # the interrupted node ran on resume
    assert "] search: " not in err  # finished nodes were not run again

    events = json.loads(cli(capsys, "trace", "victim", "--db", db, "--json")[1])
    keys = event_keys(events)
    assert len(keys) == len(set(keys)), "a resumed run must not duplicate events"
    assert event_keys(events[: len(partial)]) == event_keys(partial)

    # Same events and result as a run that was never interrupted.
    code, out, err = cli(
        capsys,
        "ask",
        QUESTION,
        "--index",
        index,
        "--k",
        "2",
        "--db",
        db,
        "--thread",
        "clean",
        "--json",
    )
    assert code == 0, err
    clean_events = json.loads(cli(capsys, "trace", "clean", "--db", db, "--json")[1])
    assert keys == event_keys(clean_events)
    expected = json.loads(out)
    for key in ("answer", "citations", "evidence", "context", "loops", "gaps"):
        assert result[key] == expected[key], key


@pytest.mark.parametrize("kept", [1, 2], ids=["input-only", "after-the-first-step"])
def test_a_run_killed_between_a_nodes_writes_and_its_checkpoint_resumes(
    tiny_index, tmp_path, capsys, monkeypatch, kept
):
    # A kill can land after a node's writes are saved and before the checkpoint that
    # applies them: the last checkpoint then shows no next node, only a task whose
    # writes wait. Cut a finished run's database back to that moment.
    import sqlite3

    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    db = tmp_path / "runs.sqlite"
    code, out, err = cli(
        capsys, "ask", QUESTION, "--index", str(tiny_index.path), "--db", str(db),
        "--thread", "t", "--json",
    )  # fmt: skip
    assert code == 0, err
    finished = json.loads(out)
    with sqlite3.connect(db) as conn:
        ids = [r[0] for r in conn.execute("SELECT checkpoint_id FROM checkpoints ORDER BY 1")]
        for gone in ids[kept:]:
            conn.execute("DELETE FROM checkpoints WHERE checkpoint_id = ?", (gone,))
            conn.execute("DELETE FROM writes WHERE checkpoint_id = ?", (gone,))
    code, out, err = cli(capsys, "resume", "t", "--db", str(db), "--json")
    assert code == 0, err
    resumed = json.loads(out)
    assert resumed["answer"] and resumed["answer"] == finished["answer"]
    assert resumed["evidence"] == finished["evidence"]
