"""PostgreSQL checkpoint stores: guarded ``PostgresSaver``, schema set up under a lock.

:func:`open_postgres` connects to a ``postgresql://`` URL (the ``postgres`` extra
must be installed) and creates the schema under an advisory lock, so workers that
start together do not race on it. Every error message has the URL's secrets masked.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from sealgraph.errors import CheckpointError
from sealgraph.runs._claims import thread_in_use, thread_lock_key
from sealgraph.runs._secrets import describe_db, scrub_secrets
from sealgraph.runs._serde import ReadGuard, strict_serializer

_PG_SETUP_LOCK = 0x5EA16A9  # advisory-lock key serialising schema setup across workers


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


def _pg_message(exc: Exception, label: str, url: str | None = None) -> str:
    """One line for a psycopg error, with every secret of ``url`` masked (psycopg can echo it)."""
    text = scrub_secrets(str(exc), url).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return f"cannot use the PostgreSQL checkpoint database {label}: {first}"


def _postgres_saver(conn: Any, label: str, url: str | None = None) -> BaseCheckpointSaver:
    """Wrap a psycopg connection in a guarded ``PostgresSaver`` with the strict serializer."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    class GuardedPostgresSaver(ReadGuard, PostgresSaver):
        """A :class:`PostgresSaver` whose database errors become :class:`CheckpointError`."""

        @contextmanager
        def _cursor(self, *, pipeline: bool = False):
            try:
                with super()._cursor(pipeline=pipeline) as cur:
                    yield cur
            except psycopg.Error as exc:
                raise CheckpointError(_pg_message(exc, label, url)) from None

        def claim_thread(self, thread_id: str) -> None:
            """Hold ``thread_id`` while the connection lasts (see :func:`claim_thread`)."""
            try:
                with self.lock:
                    row = self.conn.execute(
                        "SELECT pg_try_advisory_lock(%s) AS locked", (thread_lock_key(thread_id),)
                    ).fetchone()
            except psycopg.Error as exc:
                raise CheckpointError(_pg_message(exc, label, url)) from None
            if not (row and row["locked"]):
                raise thread_in_use(thread_id, label)

    saver = GuardedPostgresSaver(conn, serde=strict_serializer(label))
    saver.label = label
    return saver


@contextmanager
def open_postgres(url: str, timeout_s: float) -> Iterator[BaseCheckpointSaver]:
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver  # noqa: F401  (the extra is installed)
        from psycopg.rows import dict_row
    except ModuleNotFoundError:
        raise CheckpointError(
            "PostgreSQL checkpoints need the postgres extra: pip install 'sealgraph[postgres]'"
        ) from None

    label = describe_db(url)
    try:
        conn = psycopg.Connection.connect(
            url,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=max(1, int(timeout_s)),
        )
    except (psycopg.Error, ValueError) as exc:
        raise CheckpointError(_pg_message(exc, label, url)) from None
    try:
        saver = _postgres_saver(conn, label, url)
        try:
            _acquire_setup_lock(conn, timeout_s, label)
            try:
                saver.setup()
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_PG_SETUP_LOCK,))
        except psycopg.Error as exc:
            raise CheckpointError(_pg_message(exc, label, url)) from None
        yield saver
    finally:
        conn.close()
