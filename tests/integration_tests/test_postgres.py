"""Checkpoints in a real PostgreSQL server: ``ask --db postgresql://...`` then ``trace``.

The test starts its own throw-away server: ``initdb`` into a temporary directory,
``pg_ctl start`` on 127.0.0.1 and a free port (Unix socket in the same directory),
one database, and ``pg_ctl stop`` at the end. PostgreSQL refuses to run as root,
so under root the server runs as the ``postgres`` user (or ``nobody``), which owns
the temporary directory. The test skips only when no server binaries exist.
"""

import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from sealgraph.cli import main

pytestmark = pytest.mark.slow

# The postgres extra (pip install 'sealgraph[postgres]'): without it these tests skip.
pytest.importorskip("psycopg", reason="the postgres extra is not installed")
pytest.importorskip("langgraph.checkpoint.postgres", reason="the postgres extra is not installed")

REPO = Path(__file__).resolve().parents[2]
SEALGRAPH = (sys.executable, "-m", "sealgraph")
QUESTIONS = {
    "pg-first": "In which province is the town where Northwind Studio was founded?",
    "pg-second": "Who founded the studio where the Lumen Lamp was designed?",
}


def find_binary(name):
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return candidates[-1] if candidates else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_user():
    """The unprivileged account that runs the server when the tests run as root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    pytest.skip("running as root and neither a 'postgres' nor a 'nobody' user exists")


def as_server_user(command, user):
    if user is None:
        return command
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", user.pw_name, "--", *command]
    return ["su", "-s", "/bin/sh", user.pw_name, "-c", " ".join(map(str, command))]


@pytest.fixture(scope="module")
def postgres_url():
    initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql"
        )
    user = server_user()
    root = Path(tempfile.mkdtemp(prefix="sealgraph-pg-"))
    data, log = root / "data", root / "server.log"
    if user is not None:
        os.chown(root, user.pw_uid, user.pw_gid)
    port = free_port()
    started = False
    try:
        subprocess.run(
            as_server_user(
                [
                    initdb,
                    "-D",
                    str(data),
                    "-U",
                    "sealgraph",
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ],
                user,
            ),
            check=True,
            capture_output=True,
            cwd=root,
        )
        options = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={root} -c fsync=off"
        start = subprocess.run(
            as_server_user(
                [pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "60", "start"],
                user,
            ),
            capture_output=True,
            text=True,
            cwd=root,
        )
        started = start.returncode == 0
        assert started, start.stderr + (log.read_text() if log.exists() else "")
        import psycopg

        admin = f"postgresql://sealgraph@127.0.0.1:{port}/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CREATE DATABASE sealgraph_runs")
        yield f"postgresql://sealgraph@127.0.0.1:{port}/sealgraph_runs"
    finally:
        if started:
            subprocess.run(
                as_server_user([pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"], user),
                capture_output=True,
                cwd=root,
            )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("SEALGRAPH_TEST_SLOW_NODE", raising=False)


def test_ask_and_trace_through_postgres(postgres_url, tiny_index, tmp_path, capsys):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEALGRAPH_TEST_")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
    )
    env["SEALGRAPH_DATA_DIR"] = str(tmp_path / "data")
    # Two workers share the store; both create the schema at start-up (serialised by a lock).
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
                postgres_url,
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
    answers = {}
    for thread, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        answers[thread] = json.loads(out)["answer"]

    for thread, question in QUESTIONS.items():
        assert main(["trace", thread, "--db", postgres_url, "--json"]) == 0
        events = json.loads(capsys.readouterr().out)
        keys = [(e["step"], e["node"], e["kind"], e["message"]) for e in events]
        assert len(keys) == len(set(keys))
        assert events[0]["node"] == "search"
        assert events[0]["data"]["question"] == question
        assert events[-1]["kind"] == "answer"
        assert events[-1]["message"] == answers[thread]

    # Replay and the full-state view work on PostgreSQL too.
    assert (
        main(["replay", "pg-first", "--db", postgres_url, "--from", "0", "--set", "k=1", "--json"])
        == 0
    )
    fork = json.loads(capsys.readouterr().out)
    assert len(fork["evidence_after"]) == 1
    assert main(["trace", "pg-first", "--db", postgres_url, "--at", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["next"] == ["extract"]
    assert main(["trace", "ghost", "--db", postgres_url]) != 0
    assert "unknown thread 'ghost'" in capsys.readouterr().err


def test_crafted_postgres_checkpoint_runs_nothing(postgres_url, tiny_index, tmp_path, capsys):
    """A stored value naming ``os.system`` is refused on trace, resume and replay."""
    import ormsgpack
    import psycopg

    question = QUESTIONS["pg-first"]
    args = ["--index", str(tiny_index.path), "--db", postgres_url, "--thread"]
    for thread in ("pg-victim", "pg-bystander"):
        assert main(["ask", question, *args, thread, "--json"]) == 0
    capsys.readouterr()
    marker = tmp_path / "pwned"
    evil = ormsgpack.Ext(0, ormsgpack.packb(("os", "system", f"touch '{marker}'")))
    blob = ormsgpack.packb([{"kind": "x", "data": {"v": evil}}])
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        poisoned = conn.execute(
            "UPDATE checkpoint_blobs SET type = 'msgpack', blob = %s "
            "WHERE thread_id = 'pg-victim' AND channel = 'seal_log'",
            (blob,),
        ).rowcount
        poisoned += conn.execute(
            "UPDATE checkpoint_writes SET type = 'msgpack', blob = %s "
            "WHERE thread_id = 'pg-victim'",
            (ormsgpack.packb([evil]),),
        ).rowcount
    assert poisoned > 0
    for command in (
        ["trace", "pg-victim"],
        ["resume", "pg-victim"],
        ["replay", "pg-victim", "--from", "1", "--set", "k=1"],
    ):
        code = main([*command, "--db", postgres_url])
        err = capsys.readouterr().err
        assert code != 0
        assert "Traceback" not in err
        assert err.startswith("sealgraph: error: refusing to read the checkpoint database")
        assert "os.system" in err
        assert not marker.exists(), command
    assert main(["trace", "pg-bystander", "--db", postgres_url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[-1]["kind"] == "answer"


def _cli_env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEALGRAPH_TEST_")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
    )
    env["SEALGRAPH_DATA_DIR"] = str(tmp_path / "data")
    return {**env, **extra}


def _start_ask(postgres_url, tiny_index, tmp_path, thread, slow_s):
    return subprocess.Popen(
        [
            *SEALGRAPH,
            "ask",
            QUESTIONS["pg-first"],
            "--index",
            str(tiny_index.path),
            "--db",
            postgres_url,
            "--thread",
            thread,
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_cli_env(
            tmp_path, SEALGRAPH_TEST_SLOW_NODE="search", SEALGRAPH_TEST_SLOW_SECONDS=str(slow_s)
        ),
    )


def _checkpoints(postgres_url, thread):
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass('checkpoints') IS NOT NULL").fetchone()[0]
        if not exists:
            return 0
        return conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,)
        ).fetchone()[0]


IN_USE = "is being run by another sealgraph process"


def test_concurrent_runs_of_one_thread_are_refused_on_postgres(postgres_url, tiny_index, tmp_path):
    # Three workers on one thread id at once: one runs it, the others are refused
    # (a session advisory lock on the thread, held by the winner's connection).
    procs = [_start_ask(postgres_url, tiny_index, tmp_path, "pg-shared", 20) for _ in range(3)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    assert [code for code, _, _ in results].count(0) == 1, results
    for code, _out, err in results:
        if code != 0:
            assert "Traceback" not in err
            assert err.strip().splitlines()[-1].startswith("sealgraph: error: thread 'pg-shared'")
            assert IN_USE in err, err
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        sources = conn.execute(
            "SELECT metadata->>'source' FROM checkpoints WHERE thread_id = 'pg-shared'"
        ).fetchall()
    assert [s for (s,) in sources].count("input") == 1  # one run wrote the thread


def test_a_killed_run_does_not_leave_its_postgres_thread_locked(postgres_url, tiny_index, tmp_path):
    proc = _start_ask(postgres_url, tiny_index, tmp_path, "pg-killed", 120)
    try:
        deadline = time.monotonic() + 120
        while _checkpoints(postgres_url, "pg-killed") == 0:  # claimed, input written
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.1)
        # While it runs, resume is refused; once it is killed, the server drops its
        # session and its lock with it, and resume finishes the run.
        busy = subprocess.run(
            [*SEALGRAPH, "resume", "pg-killed", "--db", postgres_url],
            capture_output=True,
            text=True,
            env=_cli_env(tmp_path),
            timeout=120,
        )
        assert busy.returncode != 0 and IN_USE in busy.stderr, busy.stderr
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    done = subprocess.run(
        [*SEALGRAPH, "resume", "pg-killed", "--db", postgres_url, "--json"],
        capture_output=True,
        text=True,
        env=_cli_env(tmp_path),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"]
