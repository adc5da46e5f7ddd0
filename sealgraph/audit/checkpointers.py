"""Open the checkpoint store named by ``--db``: a SQLite file or a PostgreSQL URL.

Every ``sealgraph ask`` run is checkpointed after each node, which is what makes
``trace``, ``replay`` and ``resume`` possible. Two stores are supported:

* **SQLite** (the default, ``<user data dir>/runs.sqlite``): the connection runs
  in WAL mode with a busy timeout, so several ``ask`` processes can share one file
  (readers never block, writers queue). Each checkpoint write is one SQLite
  transaction: it is committed whole or rolled back, never half-written.
* **PostgreSQL** (``--db postgresql://...``): for many workers sharing one store.
  The schema is created on first use under an advisory lock, so workers that
  start together do not race on it.

Database failures (locked, damaged, unreachable, read-only) are raised as
:class:`~sealgraph.errors.CheckpointError` with one clear line; a store that
cannot be opened is never modified.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from sealgraph.audit.paths import default_db_path
from sealgraph.errors import CheckpointError

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "TIMEOUT_ENV",
    "GuardedSqliteSaver",
    "connect_sqlite",
    "describe_db",
    "is_postgres_url",
    "open_checkpointer",
]

DEFAULT_TIMEOUT_S = 30.0
"""Seconds to wait for a locked SQLite database (or a PostgreSQL connection)."""

TIMEOUT_ENV = "SEALGRAPH_DB_TIMEOUT"
"""Environment variable overriding :data:`DEFAULT_TIMEOUT_S` (seconds)."""

_PG_SCHEMES = ("postgresql://", "postgres://")
_PG_SETUP_LOCK = 0x5EA16A9  # advisory-lock key serialising schema setup across workers


def is_postgres_url(db: str | os.PathLike[str] | None) -> bool:
    """Return True when ``db`` is a PostgreSQL connection URL rather than a file path."""
    return isinstance(db, str) and db.lower().startswith(_PG_SCHEMES)


def describe_db(db: str | os.PathLike[str] | None) -> str:
    """Return ``db`` as shown to users: the file path, or the URL without its password."""
    if db is None:
        return str(default_db_path())
    if not is_postgres_url(db):
        return str(db)
    parts = urlsplit(str(db))
    if parts.password is None:
        return str(db)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    netloc = f"{parts.username}:***@{host}" if parts.username else f"***@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def default_timeout() -> float:
    """Return the database timeout in seconds (``$SEALGRAPH_DB_TIMEOUT`` or 30)."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise CheckpointError(f"{TIMEOUT_ENV} must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise CheckpointError(f"{TIMEOUT_ENV} must be positive, got {raw!r}")
    return value


@contextmanager
def open_checkpointer(
    db: str | os.PathLike[str] | None = None,
    *,
    create: bool = True,
    timeout_s: float | None = None,
) -> Iterator[BaseCheckpointSaver]:
    """Open the checkpoint store ``db`` and close it on exit.

    Args:
        db: A SQLite file path, a ``postgresql://`` URL, or None for the default
            SQLite file in the user data directory.
        create: Create a missing SQLite file (and its directory). Commands that
            only read runs pass False so that a mistyped path is reported instead
            of silently creating an empty database.
        timeout_s: How long to wait for a locked database or a connection;
            defaults to :func:`default_timeout`.

    Yields:
        A ready LangGraph checkpointer (schema created).

    Raises:
        CheckpointError: The store is missing, locked, damaged, unreachable or read-only.

    """
    timeout = default_timeout() if timeout_s is None else timeout_s
    if is_postgres_url(db):
        with _open_postgres(str(db), timeout) as saver:
            yield saver
        return
    path = Path(db).expanduser() if db is not None else default_db_path()
    conn = connect_sqlite(path, timeout_s=timeout, create=create)
    try:
        saver = GuardedSqliteSaver(conn, label=str(path), timeout_s=timeout)
        with saver.cursor(transaction=False):
            pass  # creates the schema now, so a read-only or locked file fails here
        yield saver
    finally:
        conn.close()


def connect_sqlite(path: Path, *, timeout_s: float, create: bool = True) -> sqlite3.Connection:
    """Open a SQLite checkpoint file in WAL mode with a busy timeout.

    Raises:
        CheckpointError: Missing (with ``create=False``), not a database, locked, or unwritable.

    """
    if path.is_dir():
        raise CheckpointError(f"the checkpoint database {path} is a directory; give a file path")
    if not path.exists():
        if not create:
            raise CheckpointError(f"no checkpoint database at {path} (give the --db used by `ask`)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(
                f"cannot create the directory of {path}: {exc.strerror}"
            ) from None
    try:
        # check_same_thread=False: LangGraph writes checkpoints from a worker
        # thread; SqliteSaver serialises all use of the connection with a lock.
        conn = sqlite3.connect(str(path), timeout=timeout_s, check_same_thread=False)
    except sqlite3.Error as exc:
        raise CheckpointError(_sqlite_message(exc, str(path), timeout_s)) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        _enable_wal(conn, timeout_s)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        conn.close()
        raise CheckpointError(_sqlite_message(exc, str(path), timeout_s)) from None
    return conn


def _enable_wal(conn: sqlite3.Connection, timeout_s: float) -> None:
    # Switching a fresh file to WAL needs a moment of exclusive access; when two
    # processes create the database together the loser can get SQLITE_BUSY
    # without the busy handler being consulted, so retry until the timeout.
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
            continue
        if mode and str(mode[0]).lower() == "wal":
            return
        if time.monotonic() >= deadline:
            raise sqlite3.OperationalError("database is locked")
        time.sleep(0.05)


def _sqlite_message(exc: sqlite3.Error, label: str, timeout_s: float) -> str:
    text = str(exc)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return (
            f"the checkpoint database {label} is locked by another process "
            f"(waited {timeout_s:g}s); try again when it is free"
        )
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return (
            f"the checkpoint database {label} is damaged or not a SQLite database ({text}); "
            "it was left untouched: move it away or pass another --db"
        )
    if "readonly" in lowered or "read-only" in lowered:
        return f"the checkpoint database {label} is read-only ({text})"
    if "unable to open" in lowered:
        return f"cannot open the checkpoint database {label} ({text})"
    return f"checkpoint database {label}: {text}"


class GuardedSqliteSaver(SqliteSaver):
    """A :class:`SqliteSaver` whose database errors become :class:`CheckpointError`.

    Every statement of the saver runs through :meth:`cursor`; a write is
    committed only when all its statements succeeded and rolled back otherwise,
    so a failure (for example a lock held past the timeout) never leaves part of
    a checkpoint behind.
    """

    def __init__(self, conn: sqlite3.Connection, *, label: str, timeout_s: float, **kwargs: Any):
        super().__init__(conn, **kwargs)
        self.label = label
        self.timeout_s = timeout_s

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """Yield a cursor; commit on success (when ``transaction``), roll back on any error."""
        with self.lock:
            try:
                self.setup()
                cur = self.conn.cursor()
            except sqlite3.Error as exc:
                raise CheckpointError(_sqlite_message(exc, self.label, self.timeout_s)) from None
            try:
                yield cur
                if transaction:
                    self.conn.commit()
            except sqlite3.Error as exc:
                self._rollback()
                raise CheckpointError(_sqlite_message(exc, self.label, self.timeout_s)) from None
            except BaseException:
                self._rollback()
                raise
            finally:
                cur.close()

    def _rollback(self) -> None:
        # A connection too broken to roll back has lost the transaction anyway.
        with suppress(sqlite3.Error):
            self.conn.rollback()


def _acquire_setup_lock(conn: Any, timeout_s: float, label: str) -> None:
    # Poll with pg_try_advisory_lock instead of blocking in pg_advisory_lock: the
    # schema setup creates indexes CONCURRENTLY, which waits for every open
    # transaction, including a worker blocked on the lock: that would deadlock.
    deadline = time.monotonic() + timeout_s
    while True:
        row = conn.execute(
            "SELECT pg_try_advisory_lock(%s) AS locked", (_PG_SETUP_LOCK,)
        ).fetchone()
        if row and row["locked"]:
            return
        if time.monotonic() >= deadline:
            raise CheckpointError(
                f"the PostgreSQL checkpoint database {label} is being set up by another "
                f"worker (waited {timeout_s:g}s); try again"
            )
        time.sleep(0.1)


@contextmanager
def _open_postgres(url: str, timeout_s: float) -> Iterator[BaseCheckpointSaver]:
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ModuleNotFoundError:
        raise CheckpointError(
            "PostgreSQL checkpoints need the postgres extra: pip install 'sealgraph[postgres]'"
        ) from None

    label = describe_db(url)

    def message(exc: Exception) -> str:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"cannot use the PostgreSQL checkpoint database {label}: {first}"

    class GuardedPostgresSaver(PostgresSaver):
        """A :class:`PostgresSaver` whose database errors become :class:`CheckpointError`."""

        @contextmanager
        def _cursor(self, *, pipeline: bool = False):
            try:
                with super()._cursor(pipeline=pipeline) as cur:
                    yield cur
            except psycopg.Error as exc:
                raise CheckpointError(message(exc)) from None

    try:
        conn = psycopg.Connection.connect(
            url,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=max(1, int(timeout_s)),
        )
    except (psycopg.Error, ValueError) as exc:
        raise CheckpointError(message(exc)) from None
    try:
        saver = GuardedPostgresSaver(conn)
        try:
            _acquire_setup_lock(conn, timeout_s, label)
            try:
                saver.setup()
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_PG_SETUP_LOCK,))
        except psycopg.Error as exc:
            raise CheckpointError(message(exc)) from None
        yield saver
    finally:
        conn.close()
