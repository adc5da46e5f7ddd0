"""Two ``sealgraph ask`` processes share one SQLite database: both finish, both traces are whole."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sealgraph.cli import main

QUESTIONS = {
    "first": "In which province is the town where Northwind Studio was founded?",
    "second": "Who founded the studio where the Lumen Lamp was designed?",
}
REPO = Path(__file__).resolve().parents[2]
SEALGRAPH = (sys.executable, "-m", "sealgraph")


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("SEALGRAPH_TEST_SLOW_NODE", raising=False)


def test_two_concurrent_asks_on_one_database_both_complete(tiny_index, tmp_path, capsys):
    db = str(tmp_path / "shared.sqlite")  # does not exist yet: both processes race to create it
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEALGRAPH_TEST_")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
    )
    env["SEALGRAPH_DATA_DIR"] = str(tmp_path / "data")
    procs = {
        thread: subprocess.Popen(
            [
                *SEALGRAPH,
                "ask",
                question,
                "--index",
                str(tiny_index.path),
                "--k",
                "2",
                "--db",
                db,
                "--thread",
                thread,
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for thread, question in QUESTIONS.items()
    }
    outputs = {}
    for thread, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        outputs[thread] = json.loads(out)
        assert outputs[thread]["thread_id"] == thread

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        counts = dict(
            conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id")
        )
    assert set(counts) == set(QUESTIONS)

    for thread, question in QUESTIONS.items():
        assert main(["trace", thread, "--db", db, "--json"]) == 0
        events = json.loads(capsys.readouterr().out)
        keys = [(e["step"], e["node"], e["kind"], e["message"]) for e in events]
        assert len(keys) == len(set(keys))
        assert events[0]["node"] == "search"
        assert events[0]["data"]["question"] == question  # no mixing between the two runs
        assert events[-1]["kind"] == "answer"
        assert events[-1]["message"] == outputs[thread]["answer"]
        assert counts[thread] == max(e["step"] for e in events) + 2  # every checkpoint is there
