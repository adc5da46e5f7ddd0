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

Two safety rules hold for every store sealgraph opens:

* **Only sealgraph's own SQLite files are written.** A file sealgraph creates is
  stamped with ``PRAGMA application_id`` = :data:`APPLICATION_ID`. An existing file
  is inspected read-only (its header, then its schema without locks or side
  files) before anything could write to it, even the WAL pragma; a file of a
  sealgraph index, another application's database, or a file that is not SQLite
  at all is refused and left byte-for-byte untouched. A file holding only
  LangGraph's checkpoint tables (made by earlier sealgraph versions, or by
  LangGraph's ``SqliteSaver``) is accepted and stamped.
* **Nothing is deserialised without an allow-list.** Every saver gets a
  :class:`StrictCheckpointSerializer`: a stored value may only be rebuilt as one
  of the types in :data:`CHECKPOINT_TYPES`. A stored value naming any other
  type (LangGraph's default serializer would import and call it, so a crafted
  row naming ``os.system`` runs a command) is never imported or called: reading
  it raises :class:`~sealgraph.errors.CheckpointError` naming the type.

This module is the public face; the implementation is in private modules:
:mod:`~sealgraph.runs._sqlite` (SQLite files and their saver),
:mod:`~sealgraph.runs._postgres` (PostgreSQL), :mod:`~sealgraph.runs._serde` (the
strict serializer), :mod:`~sealgraph.runs._claims` (one run per thread) and
:mod:`~sealgraph.runs._secrets` (connection strings shown without their secrets).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver

from sealgraph.errors import CheckpointError
from sealgraph.paths import default_db_path
from sealgraph.runs._claims import THREAD_LOCK_FOLDER as THREAD_LOCK_FOLDER
from sealgraph.runs._claims import claim_thread, thread_lock_folder
from sealgraph.runs._postgres import open_postgres
from sealgraph.runs._secrets import MASK as MASK
from sealgraph.runs._secrets import (
    describe_db,
    is_postgres_conninfo,
    is_postgres_url,
    scrub_secrets,
)
from sealgraph.runs._serde import (
    CHECKPOINT_TYPES,
    StrictCheckpointSerializer,
    strict_serializer,
)
from sealgraph.runs._sqlite import (
    APPLICATION_ID,
    DEFAULT_TIMEOUT_S,
    LANGGRAPH_TABLES,
    GuardedSqliteSaver,
    check_sqlite_file,
    connect_sqlite,
)

__all__ = [
    "APPLICATION_ID",
    "CHECKPOINT_TYPES",
    "DEFAULT_TIMEOUT_S",
    "LANGGRAPH_TABLES",
    "TIMEOUT_ENV",
    "GuardedSqliteSaver",
    "StrictCheckpointSerializer",
    "check_sqlite_file",
    "claim_thread",
    "connect_sqlite",
    "describe_db",
    "is_postgres_url",
    "open_checkpointer",
    "scrub_secrets",
    "strict_serializer",
    "thread_lock_folder",
]

TIMEOUT_ENV = "SEALGRAPH_DB_TIMEOUT"
"""Environment variable overriding :data:`DEFAULT_TIMEOUT_S` (seconds)."""


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
    if is_postgres_conninfo(db):
        raise CheckpointError(
            f"--db {describe_db(db)!r} is a PostgreSQL key=value connection string; give it "
            "as a postgresql://USER@HOST:PORT/DB URL (or a SQLite file path)"
        )
    if is_postgres_url(db):
        with open_postgres(str(db), timeout) as saver:
            yield saver
        return
    path = Path(db).expanduser() if db is not None else default_db_path()
    conn = connect_sqlite(path, timeout_s=timeout, create=create)
    saver = None
    try:
        saver = GuardedSqliteSaver(conn, label=str(path), timeout_s=timeout, path=path)
        with saver.cursor(transaction=False):
            pass  # creates the schema now, so a read-only or locked file fails here
        yield saver
    finally:
        if saver is not None:
            saver.release_threads()
        conn.close()
