"""One run per thread at a time, on SQLite: concurrent runs of one thread id are refused.

Sequential reuse of a thread id was refused ("already exists"), concurrent reuse was
not: four ``sealgraph ask ... --thread shared`` started together all wrote into one
thread. ``ask``, ``resume`` and ``replay`` (step mode included) now claim the thread
they write (:func:`sealgraph.runs.checkpointers.claim_thread`): an exclusive
``flock`` on a lock file in ``.runs.sqlite.threads/`` next to the database, which
the kernel drops when the process ends, so a killed run never leaves its thread
locked. The runs here are real processes; a test hook
(``SEALGRAPH_TEST_SLOW_NODE``) keeps the first one inside a node while the others
start. The PostgreSQL side is in ``tests/integration_tests/test_postgres.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import assert_clear_error, run_cli
from support.fakes import write_tiny_docs

from sealgraph.errors import CheckpointError
from sealgraph.runs.checkpointers import claim_thread, open_checkpointer, thread_lock_folder

QUESTION = "In which province is the town where Northwind Studio was founded?"
IN_USE = "is being run by another sealgraph process"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("claims")
    build_index(
        write_tiny_docs(root / "docs"), root / "index", embedder="none", warn=lambda _: None
    )
    return root / "index"


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SEALGRAPH_TEST_")}
    return {**base, "SEALGRAPH_DATA_DIR": str(tmp_path / "data"), **extra}


def start_ask(index_dir: Path, db: Path, tmp_path: Path, *, slow_s: float) -> subprocess.Popen:
    """Start ``ask --thread shared`` that sleeps ``slow_s`` in its search node."""
    command = ["ask", QUESTION, "--index", str(index_dir), "--db", str(db), "--thread", "shared"]
    return subprocess.Popen(
        [sys.executable, "-m", "sealgraph", *command, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(
            tmp_path, SEALGRAPH_TEST_SLOW_NODE="search", SEALGRAPH_TEST_SLOW_SECONDS=str(slow_s)
        ),
    )


def wait_for_claim(db: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until ``proc`` holds its thread (its lock file) and has checkpointed its input."""
    folder = thread_lock_folder(db)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        held = any(p.read_text().startswith(f"pid {proc.pid} ") for p in folder.glob("*.lock"))
        if held and input_checkpoints(db) == 1:
            return
        time.sleep(0.05)
    raise AssertionError("the run never claimed its thread")


def input_checkpoints(db: Path) -> int:
    """Runs started in thread ``shared``: its checkpoints written from an input."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'checkpoints'").fetchone():
            return 0
        rows = conn.execute(
            "SELECT metadata FROM checkpoints WHERE thread_id = 'shared'"
        ).fetchall()
    return sum(json.loads(m)["source"] == "input" for (m,) in rows)


def test_concurrent_asks_on_one_thread_are_refused_but_one(index_dir, tmp_path):
    db = tmp_path / "same.sqlite"
    procs = [start_ask(index_dir, db, tmp_path, slow_s=20) for _ in range(4)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    winners = [r for r in results if r[0] == 0]
    assert len(winners) == 1, results
    assert json.loads(winners[0][1])["thread_id"] == "shared"
    for code, _out, err in results:
        if code != 0:
            assert "Traceback" not in err
            assert err.strip().splitlines()[-1].startswith("sealgraph: error: thread 'shared'")
            assert IN_USE in err, err
    assert input_checkpoints(db) == 1  # one run wrote the thread
    assert not thread_lock_folder(db).exists()  # released and cleaned up at the end


def test_resume_and_replay_are_refused_while_the_thread_runs(index_dir, tmp_path):
    db = tmp_path / "runs.sqlite"
    proc = start_ask(index_dir, db, tmp_path, slow_s=60)
    try:
        wait_for_claim(db, proc)
        for command in (["resume", "shared"], ["replay", "shared", "--from", "0", "--set", "k=1"]):
            result = run_cli(*command, "--db", str(db), env=env(tmp_path))
            assert_clear_error(result, IN_USE, f"pid {proc.pid} ")
        result = run_cli(
            "ask",
            QUESTION,
            "--index",
            str(index_dir),
            "--db",
            str(db),
            "--thread",
            "shared",
            "--step",
            env=env(tmp_path),
        )
        assert_clear_error(result, IN_USE)
        # Reading is not writing: trace still shows the run as it goes.
        assert run_cli("trace", "shared", "--db", str(db), env=env(tmp_path)).code == 0
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert input_checkpoints(db) == 1


def test_a_killed_run_does_not_leave_its_thread_locked(index_dir, tmp_path):
    db = tmp_path / "runs.sqlite"
    proc = start_ask(index_dir, db, tmp_path, slow_s=60)
    try:
        wait_for_claim(db, proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    result = run_cli("resume", "shared", "--db", str(db), "--json", env=env(tmp_path))
    assert result.code == 0, result.err
    assert json.loads(result.out)["answer"]
    assert not thread_lock_folder(db).exists()


def test_two_stores_open_in_one_process_cannot_claim_one_thread(tmp_path):
    db = tmp_path / "runs.sqlite"
    with open_checkpointer(db) as first, open_checkpointer(db) as second:
        claim_thread(first, "t1")
        claim_thread(first, "t1")  # the same store again: already its own
        claim_thread(second, "t2")  # another thread: free
        with pytest.raises(CheckpointError, match=IN_USE):
            claim_thread(second, "t1")
    with open_checkpointer(db) as third:  # closed stores released their threads
        claim_thread(third, "t1")
        claim_thread(third, "t2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.sqlite"]
