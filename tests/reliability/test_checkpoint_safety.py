"""Checkpoint stores are safe to read and only sealgraph's own files are ever written.

Two rules, each checked through the CLI as a user would meet them:

* A crafted checkpoint (a stored value naming ``os.system`` and friends, which
  LangGraph's default serializer imports and calls) runs nothing on ``trace``,
  ``resume`` or ``replay``: it is a clear one-line error naming the type.
* ``--db`` naming a file that is not sealgraph's (an index file, another
  application's SQLite database, a text file) is refused with a clear error and
  the file is left byte-for-byte untouched (no WAL switch, no side files).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from support.cli import assert_clear_error, run_cli, snapshot
from support.fakes import FakeOpenAI, requested_tool, tool_call_message, write_tiny_docs

from sealgraph.cli import main
from sealgraph.errors import CheckpointError
from sealgraph.runs.checkpointers import (
    APPLICATION_ID,
    CHECKPOINT_TYPES,
    GuardedSqliteSaver,
    StrictCheckpointSerializer,
    check_sqlite_file,
    connect_sqlite,
    describe_db,
    strict_serializer,
)

QUESTION = "In which province is the town where Northwind Studio was founded?"

# LangGraph's msgpack extension codes (langgraph.checkpoint.serde.jsonplus).
EXT_CONSTRUCTOR_SINGLE_ARG = 0
EXT_CONSTRUCTOR_POS_ARGS = 1
EXT_CONSTRUCTOR_KW_ARGS = 2
EXT_METHOD_SINGLE_ARG = 3
EXT_PYDANTIC_V2 = 5


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("SEALGRAPH_TEST_SLOW_NODE", raising=False)


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("safety")
    build_index(
        write_tiny_docs(root / "docs"), root / "index", embedder="none", warn=lambda _: None
    )
    return root / "index"


def ask(index: Path, db: Path | str, thread: str, *extra: str) -> dict[str, Any]:
    """Make a run to work on (in-process: only the commands under test pay a subprocess)."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["ask", QUESTION, "--index", str(index), "--db", str(db), "--thread", thread, "--json"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, *extra])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


# --- crafted checkpoints -------------------------------------------------------------


def evil(marker: Path, code: int = EXT_CONSTRUCTOR_SINGLE_ARG) -> ormsgpack.Ext:
    """A msgpack extension that, rebuilt by a permissive serializer, creates ``marker``."""
    command = f"touch '{marker}'"
    payload: tuple[Any, ...] = {
        EXT_CONSTRUCTOR_SINGLE_ARG: ("os", "system", command),
        EXT_CONSTRUCTOR_POS_ARGS: ("os", "system", [command]),
        EXT_CONSTRUCTOR_KW_ARGS: ("subprocess", "check_call", {"args": ["touch", str(marker)]}),
        EXT_METHOD_SINGLE_ARG: ("os", "system", command, "__call__"),
        EXT_PYDANTIC_V2: (
            "subprocess",
            "check_call",
            {"args": ["touch", str(marker)]},
            "model_validate_json",
        ),
    }[code]
    return ormsgpack.Ext(code, ormsgpack.packb(payload))


def _unpack(blob: bytes) -> Any:
    return ormsgpack.unpackb(blob, option=ormsgpack.OPT_NON_STR_KEYS)


def _pack(value: Any) -> bytes:
    return ormsgpack.packb(value, option=ormsgpack.OPT_NON_STR_KEYS)


def poison_checkpoints(db: Path, thread: str, ext: ormsgpack.Ext, *, nested: bool = False) -> int:
    """Put ``ext`` into the state of every checkpoint of ``thread``; return how many."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ?",
            (thread,),
        ).fetchall()
        for ns, checkpoint_id, blob in rows:
            checkpoint = _unpack(blob)
            values = checkpoint["channel_values"]
            if nested:  # deep inside ordinary data: an event's details
                values["seal_log"] = [{"kind": "x", "data": {"deep": [1, {"x": ext}]}}]
            else:
                values["question"] = ext
            conn.execute(
                "UPDATE checkpoints SET checkpoint = ? "
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                (_pack(checkpoint), thread, ns, checkpoint_id),
            )
    return len(rows)


def poison_writes(db: Path, thread: str, ext: ormsgpack.Ext) -> int:
    """Replace every pending write of ``thread`` (the node updates) with ``ext``."""
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "UPDATE writes SET type = 'msgpack', value = ? WHERE thread_id = ?",
            (_pack([ext]), thread),
        ).rowcount


@pytest.mark.parametrize(
    "code",
    [
        EXT_CONSTRUCTOR_SINGLE_ARG,
        EXT_CONSTRUCTOR_POS_ARGS,
        EXT_CONSTRUCTOR_KW_ARGS,
        EXT_PYDANTIC_V2,
    ],
)
def test_the_crafted_payloads_do_run_code_with_langgraphs_default_serializer(tmp_path, code):
    # Control: without sealgraph's serializer these payloads are live, so the tests
    # below (the marker is never created) are not vacuous.
    marker = tmp_path / "control-marker"
    JsonPlusSerializer(allowed_msgpack_modules=True).loads_typed(
        ("msgpack", _pack({"question": evil(marker, code)}))
    )
    assert marker.exists()


def test_crafted_checkpoint_runs_nothing_on_trace_resume_or_replay(index_dir, tmp_path):
    db = tmp_path / "runs.sqlite"
    ask(index_dir, db, "victim")
    ask(index_dir, db, "bystander")
    marker = tmp_path / "pwned"
    assert poison_checkpoints(db, "victim", evil(marker)) > 0
    for command in (
        ("trace", "victim"),
        ("trace", "victim", "--json"),
        ("trace", "victim", "--at", "1"),
        ("resume", "victim"),
        ("replay", "victim", "--from", "1", "--set", "k=1"),
    ):
        result = run_cli(*command, "--db", str(db))
        assert_clear_error(result, "os.system", "never writes", "tampered", str(db))
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert not marker.exists(), command
    # The other run in the same database is still readable.
    result = run_cli("trace", "bystander", "--db", str(db), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)[-1]["kind"] == "answer"


@pytest.mark.parametrize(
    ("code", "named"),
    [
        (EXT_CONSTRUCTOR_POS_ARGS, "os.system"),
        (EXT_CONSTRUCTOR_KW_ARGS, "subprocess.check_call"),
        (EXT_METHOD_SINGLE_ARG, "os.system.__call__"),
        (EXT_PYDANTIC_V2, "subprocess.check_call"),
    ],
)
def test_every_constructor_kind_nested_in_the_state_is_refused(index_dir, tmp_path, code, named):
    db = tmp_path / "runs.sqlite"
    ask(index_dir, db, "victim")
    marker = tmp_path / "pwned"
    poison_checkpoints(db, "victim", evil(marker, code), nested=True)
    result = run_cli("trace", "victim", "--db", str(db))
    assert_clear_error(result, named, "was not loaded")
    assert not marker.exists()


def test_crafted_pending_writes_run_nothing(index_dir, tmp_path):
    db = tmp_path / "runs.sqlite"
    ask(index_dir, db, "victim")
    marker = tmp_path / "pwned"
    assert poison_writes(db, "victim", evil(marker)) > 0
    for command in (("trace", "victim"), ("resume", "victim")):
        result = run_cli(*command, "--db", str(db))
        assert_clear_error(result, "os.system")
        assert not marker.exists()


def test_legacy_json_and_pickle_values_are_refused(index_dir, tmp_path):
    db = tmp_path / "runs.sqlite"
    ask(index_dir, db, "json-row")
    envelope = {"lc": 2, "type": "constructor", "id": ["os", "system"], "args": ["true"]}
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE checkpoints SET type = 'json', checkpoint = ? WHERE thread_id = 'json-row'",
            (json.dumps({"v": 1, "channel_values": {"question": envelope}}).encode(),),
        )
    assert_clear_error(run_cli("trace", "json-row", "--db", str(db)), "os.system", "not loaded")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE checkpoints SET type = 'pickle' WHERE thread_id = 'json-row'")
    assert_clear_error(run_cli("trace", "json-row", "--db", str(db)), "'pickle'", "not loaded")


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("metadata", b"{not json"),  # LangGraph's metadata JSON
        ("checkpoint", ormsgpack.packb(5)),  # decodes, but is not a checkpoint
        ("checkpoint", b"\xff\x00garbage"),
    ],
)
def test_a_damaged_checkpoint_row_is_a_clear_error(index_dir, tmp_path, column, value):
    db = tmp_path / "runs.sqlite"
    ask(index_dir, db, "damaged")
    ask(index_dir, db, "fine")
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE checkpoints SET {column} = ? WHERE thread_id = 'damaged'", (value,))
    for command in (("trace", "damaged"), ("resume", "damaged")):
        result = run_cli(*command, "--db", str(db))
        assert_clear_error(result, "damaged checkpoint of thread 'damaged'", str(db))
        assert "Exception ignored" not in result.err
    assert run_cli("trace", "fine", "--db", str(db)).code == 0


def test_strict_serializer_round_trips_plain_state_and_refuses_every_typed_value(tmp_path):
    serde = strict_serializer("test.sqlite")
    state = {"question": "q?", "loops": 2, "ok": True, "x": None, "e": [{"data": {"s": 0.5}}]}
    assert serde.loads_typed(serde.dumps_typed(state)) == state
    marker = tmp_path / "pwned"
    for code in (0, 1, 2, 3, 5):
        with pytest.raises(CheckpointError, match=r"test\.sqlite.*never writes"):
            serde.loads_typed(("msgpack", _pack({"v": evil(marker, code)})))
    # Types LangGraph itself deems safe are still not types sealgraph writes.
    with pytest.raises(CheckpointError, match=r"datetime\.datetime"):
        from datetime import datetime

        serde.loads_typed(JsonPlusSerializer().dumps_typed({"t": datetime(2020, 1, 1)}))
    with pytest.raises(CheckpointError, match="damaged"):
        serde.loads_typed(("msgpack", b"\xc1\xc1\xc1"))
    assert not marker.exists()


def test_a_type_on_the_allow_list_is_rebuilt(tmp_path):
    from datetime import date

    serde = StrictCheckpointSerializer(label="x", allowed_types=frozenset({("datetime", "date")}))
    assert serde.loads_typed(serde.dumps_typed({"d": date(2020, 1, 2)})) == {"d": date(2020, 1, 2)}
    with pytest.raises(CheckpointError, match=r"os\.system"):
        serde.loads_typed(("msgpack", _pack([date(2020, 1, 2), evil(tmp_path / "m")])))


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    """A fake LLM giving schema-valid structured replies, so LLM mode really runs."""
    tool = requested_tool(body)
    args: dict[str, Any] = {
        "NeedsReading": {
            "answer_type": "place",
            "hops": 2,
            "structure": "bridge",
            "entities": ["Northwind Studio"],
            "options": [],
            "answer_modifiers": [],
            "compared_attribute": "",
        },
        "Extraction": {
            "entities": [{"name": "Northwind Studio", "aliases": [], "passage": 1}],
            "relations": [
                {
                    "subject": "Northwind Studio",
                    "relation": "founded in",
                    "object": "Port Ellis",
                    "passage": 1,
                }
            ],
            "qualifiers": [
                {"entity": "Port Ellis", "type": "place", "value": "Valmora", "passage": 1}
            ],
        },
        "Assessment": {"sufficient": True, "gaps": [], "supporting": [1]},
        "QueryPlan": {"queries": []},
        "AnswerOut": {"answer": "Valmora [1]", "citations": [1], "insufficient": False},
    }.get(tool, {})
    return tool_call_message(tool, args)


def test_real_runs_store_no_typed_values_so_the_allow_list_is_empty(
    index_dir, tmp_path, monkeypatch, capsys
):
    # How CHECKPOINT_TYPES was established, kept as a regression test: every value
    # sealgraph stores (offline, LLM mode, step mode, resume, replay) is plain msgpack.
    assert frozenset() == CHECKPOINT_TYPES
    db = tmp_path / "runs.sqlite"
    ask(index_dir, db, "offline", "--set", "utility.novelty=0.2")
    # LLM mode runs in a subprocess: an in-process client would keep its pooled
    # connection open, and the fake server waits for its connections when it stops.
    with FakeOpenAI("reply", respond=_reply) as server:
        llm = run_cli(
            "ask", QUESTION, "--index", str(index_dir), "--db", str(db), "--thread", "llm",
            "--json", "--llm",
            "--set", f"llm.base_url={server.url}",
            "--set", "llm.structured_output_method=function_calling",
        )  # fmt: skip
        assert llm.code == 0, llm.err
        assert server.requests > 0
    assert "Valmora [1]" in json.loads(llm.out)["answer"]  # the fake LLM's answer: LLM mode ran
    # step mode (in-process, answering the prompts on stdin), then resume it
    monkeypatch.setattr(sys, "stdin", io.StringIO("\ns\nq\n"))
    args = ["ask", QUESTION, "--index", str(index_dir), "--db", str(db), "--thread", "step"]
    assert main([*args, "--step"]) == 0
    capsys.readouterr()
    assert run_cli("resume", "step", "--db", str(db)).code == 0
    assert run_cli("replay", "offline", "--db", str(db), "--from", "1", "--set", "k=1").code == 0

    codes: list[int] = []

    def record(code: int, data: bytes) -> None:
        codes.append(code)

    with sqlite3.connect(db) as conn:
        blobs = conn.execute("SELECT type, checkpoint FROM checkpoints").fetchall()
        blobs += conn.execute("SELECT type, value FROM writes").fetchall()
    assert {kind for kind, _ in blobs} <= {"msgpack", "null"}
    for kind, blob in blobs:
        if kind == "msgpack":
            ormsgpack.unpackb(blob, ext_hook=record, option=ormsgpack.OPT_NON_STR_KEYS)
    assert codes == []
    assert len(blobs) > 20


def test_every_sealgraph_saver_uses_the_strict_serializer(tmp_path):
    from sealgraph.runs._postgres import _postgres_saver
    from sealgraph.runs.checkpointers import open_checkpointer

    with open_checkpointer(tmp_path / "runs.sqlite") as saver:
        assert isinstance(saver.serde, StrictCheckpointSerializer)
        assert saver.jsonplus_serde is saver.serde  # SqliteSaver's second serializer too
    conn = connect_sqlite(tmp_path / "direct.sqlite", timeout_s=1.0)
    try:
        direct = GuardedSqliteSaver(conn, label="direct", timeout_s=1.0)
        assert isinstance(direct.serde, StrictCheckpointSerializer)
        # LangGraph may derive a saver with a wider allow-list when a graph is compiled;
        # sealgraph's check keeps its own list.
        derived = direct.with_allowlist({("os", "system")})
        assert isinstance(derived.serde, StrictCheckpointSerializer)
        with pytest.raises(CheckpointError, match=r"os\.system"):
            derived.serde.loads_typed(("msgpack", _pack([evil(tmp_path / "m")])))
    finally:
        conn.close()
    pytest.importorskip("langgraph.checkpoint.postgres")
    pg = _postgres_saver(object(), "postgresql://u:***@host/db")
    assert isinstance(pg.serde, StrictCheckpointSerializer)
    assert pg.serde.label == "postgresql://u:***@host/db"
    assert not (tmp_path / "m").exists()


def test_the_strict_serializer_works_with_an_in_memory_saver(index_dir):
    from langgraph.checkpoint.memory import InMemorySaver

    from sealgraph.graph.builder import build_graph

    saver = InMemorySaver(serde=strict_serializer())
    graph = build_graph(index_dir, checkpointer=saver)
    config = {"configurable": {"thread_id": "mem"}}
    out = graph.invoke({"question": QUESTION}, config)
    assert out["answer"]
    assert graph.get_state(config).values["answer"] == out["answer"]


# --- databases that are not sealgraph's ------------------------------------------------


def _fresh_index(root: Path) -> Path:
    from sealgraph.index import build_index

    build_index(write_tiny_docs(root / "docs"), root / "idx", embedder="none", warn=lambda _: None)
    return root / "idx"


def test_an_index_file_as_db_is_refused_and_the_index_still_works(tmp_path):
    index = _fresh_index(tmp_path)
    before = snapshot(index)
    for command in (
        ("ask", QUESTION, "--index", str(index)),
        ("trace", "t"),
        ("resume", "t"),
        ("replay", "t", "--from", "0"),
    ):
        result = run_cli(*command, "--db", str(index / "docstore.sqlite"))
        assert_clear_error(result, "is a file of the sealgraph index", "left untouched")
        assert snapshot(index) == before
    # a new file inside the index folder is refused too (and not created)
    result = run_cli("ask", QUESTION, "--index", str(index), "--db", str(index / "runs.sqlite"))
    assert_clear_error(result, "inside the sealgraph index")
    assert snapshot(index) == before
    ask(index, tmp_path / "runs.sqlite", "after")  # the index is intact


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_another_applications_database_is_refused_untouched(index_dir, tmp_path, journal):
    app = tmp_path / "app"
    app.mkdir()
    db = app / "myapp.db"
    with sqlite3.connect(db) as conn:
        conn.execute(f"PRAGMA journal_mode={journal}")
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO users (name) VALUES ('ada')")
    conn.close()
    before = snapshot(app)
    for command in (
        ("ask", QUESTION, "--index", str(index_dir)),
        ("trace", "t"),
        ("resume", "t"),
        ("replay", "t", "--from", "0"),
    ):
        result = run_cli(*command, "--db", str(db))
        assert_clear_error(result, str(db), "not a sealgraph checkpoint database", "users")
        assert snapshot(app) == before  # same bytes, no -wal/-shm/-journal left behind
    assert db.read_bytes()[18] == (2 if journal == "wal" else 1)  # header: still its journal mode


@pytest.mark.parametrize(
    "setup",
    [
        "PRAGMA application_id = 12345",  # another application's stamp, no tables yet
        "CREATE TABLE checkpoints (step INTEGER, loss REAL)",  # a 'checkpoints' table of ML runs
        "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
        "checkpoint BLOB); CREATE TABLE notes (t TEXT)",  # LangGraph's table plus others
        "PRAGMA user_version = 1",  # an empty database sealgraph did not create
    ],
)
def test_look_alike_databases_are_refused_untouched(tmp_path, setup):
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.executescript(setup)
    conn.close()
    before = snapshot(tmp_path)
    assert_clear_error(run_cli("trace", "t", "--db", str(db)), "not a sealgraph checkpoint")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("content", "fragment"),
    [(b"name,score\nada,3\n" * 50, "not a SQLite database"), (b"", "empty file")],
)
def test_a_file_that_is_not_sqlite_is_refused_untouched(index_dir, tmp_path, content, fragment):
    db = tmp_path / "notes.csv"
    db.write_bytes(content)
    before = snapshot(tmp_path)
    for command in (("ask", QUESTION, "--index", str(index_dir)), ("trace", "t")):
        assert_clear_error(run_cli(*command, "--db", str(db)), fragment, "left untouched")
        assert snapshot(tmp_path) == before


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    result = run_cli("trace", "t", "--db", str(fifo), timeout=60)
    assert_clear_error(result, "not a regular file")


def test_a_new_database_is_created_stamped_and_accepted_on_reuse(index_dir, tmp_path):
    home = tmp_path / "runs"
    db = home / "runs.sqlite"
    ask(index_dir, db, "first")
    assert sorted(p.name for p in home.iterdir()) == ["runs.sqlite"]  # no temporary left
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert check_sqlite_file(db) == "sealgraph"
    ask(index_dir, db, "second")
    for thread in ("first", "second"):
        result = run_cli("trace", thread, "--db", str(db), "--json")
        assert result.code == 0, result.err


def test_a_database_made_by_langgraph_is_accepted_and_stamped(index_dir, tmp_path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    db = tmp_path / "legacy.sqlite"
    with SqliteSaver.from_conn_string(str(db)) as saver:
        saver.setup()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == 0
    assert check_sqlite_file(db) == "langgraph"
    ask(index_dir, db, "t1")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert check_sqlite_file(db) == "sealgraph"
    result = run_cli("trace", "t1", "--db", str(db), "--json")
    assert result.code == 0, result.err


def test_creating_a_database_never_replaces_an_existing_file(tmp_path):
    from sealgraph.runs._sqlite import _create_database

    db = tmp_path / "runs.sqlite"
    _create_database(db, 1.0)
    conn = connect_sqlite(db, timeout_s=1.0)
    conn.execute(
        "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, "
        "checkpoint_id TEXT, checkpoint BLOB)"
    )
    conn.commit()
    conn.close()
    before = snapshot(tmp_path)
    _create_database(db, 1.0)  # a second process losing the creation race
    assert snapshot(tmp_path) == before
    other = tmp_path / "other.txt"
    other.write_text("mine", encoding="utf-8")
    _create_database(other, 1.0)
    assert other.read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt", "runs.sqlite"]


# --- secrets in --db ----------------------------------------------------------------


SECRET = "S3cret"

LEAKY_DBS = {
    # The user part was masked before; the rest of these printed the password.
    "user part": f"postgresql://admin:{SECRET}@127.0.0.1:1/db",
    "query password": f"postgresql://admin@127.0.0.1:1/db?password={SECRET}",
    "query sslpassword": f"postgresql://admin@127.0.0.1:1/db?sslmode=disable&sslpassword={SECRET}",
    "a key, a token": f"postgresql://admin@127.0.0.1:1/db?api_key={SECRET}1&auth_token={SECRET}2",
    "psycopg echoes the URL": f"postgresql://admin:{SECRET}@[::1/db",
    "psycopg echoes a token": f"postgresql://admin@127.0.0.1:1/db?password={SECRET}%zz",
    "several hosts": f"postgresql://admin:{SECRET}@127.0.0.1:1,127.0.0.1:2/db",
    "libpq key=value": f"host=127.0.0.1 port=1 dbname=db password={SECRET}",
}


@pytest.mark.parametrize("db", list(LEAKY_DBS.values()), ids=list(LEAKY_DBS))
def test_a_password_anywhere_in_db_is_never_printed(db, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DB_TIMEOUT", "2")
    result = run_cli("trace", "t1", "--db", db)
    assert_clear_error(result, "***")
    assert SECRET not in result.err + result.out, result.err
    assert describe_db(db).count("***") >= 1 and SECRET not in describe_db(db)


def test_describe_db_masks_only_the_secrets():
    assert (
        describe_db("postgresql://u:pw@h:5/db?sslmode=require&password=x&passfile=/p#f")
        == "postgresql://u:***@h:5/db?sslmode=require&password=***&passfile=***#f"
    )
    assert describe_db("postgresql://u@h/db?application_name=a") == (
        "postgresql://u@h/db?application_name=a"
    )
    assert describe_db("host=h password='a b\\'c' user=u") == "host=h password=*** user=u"
    assert describe_db("runs=1.sqlite") == "runs=1.sqlite"  # a file name, not a conninfo
    assert describe_db(Path("a/runs.sqlite")) == str(Path("a/runs.sqlite"))
