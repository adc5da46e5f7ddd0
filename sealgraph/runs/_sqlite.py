"""SQLite checkpoint files: only sealgraph's own are written, in WAL mode, one transaction a write.

A file sealgraph creates is stamped with ``PRAGMA application_id`` =
:data:`APPLICATION_ID` (:func:`connect_sqlite`); an existing file is inspected
read-only first (:func:`check_sqlite_file`) and refused, untouched, unless it is a
checkpoint store. :class:`GuardedSqliteSaver` turns database errors into
:class:`~sealgraph.errors.CheckpointError` and rolls back a failed write.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from langgraph.checkpoint.sqlite import SqliteSaver

from sealgraph.errors import CheckpointError
from sealgraph.outputs import enclosing_index
from sealgraph.runs._claims import ThreadFileLock
from sealgraph.runs._serde import ReadGuard, StrictCheckpointSerializer, strict_serializer

DEFAULT_TIMEOUT_S = 30.0
"""Seconds to wait for a locked SQLite database (or a PostgreSQL connection)."""

APPLICATION_ID = 0x5345414C
"""``PRAGMA application_id`` of sealgraph's SQLite checkpoint files (ASCII ``SEAL``)."""

LANGGRAPH_TABLES = frozenset({"checkpoints", "writes"})
"""Tables LangGraph's ``SqliteSaver`` creates: a file holding only these is a checkpoint store."""

_SQLITE_MAGIC = b"SQLite format 3\x00"
_APPLICATION_ID_OFFSET = 68  # byte offset of the application id in the SQLite header
_INDEX_FORMAT = "sealgraph-index"  # a folder index manifest's "format" (index/folder/_manifest.py)
_INDEX_MANIFEST = "manifest.json"
_CHECKPOINT_COLUMNS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint"})


def connect_sqlite(path: Path, *, timeout_s: float, create: bool = True) -> sqlite3.Connection:
    """Open a SQLite checkpoint file in WAL mode with a busy timeout.

    A missing file is created as a sealgraph database (stamped with
    :data:`APPLICATION_ID`). An existing file is first checked read-only by
    :func:`check_sqlite_file`, so a file that is not sealgraph's is refused before
    anything could write to it; a file holding only LangGraph's checkpoint tables
    is accepted and stamped.

    Raises:
        CheckpointError: Missing (with ``create=False``), inside a sealgraph index,
            not sealgraph's, not a database, locked, or unwritable.

    """
    if path.is_dir():
        raise CheckpointError(f"the checkpoint database {path} is a directory; give a file path")
    index = enclosing_index(path)
    if index is not None:
        raise CheckpointError(_index_message(path, index))
    if not path.exists():
        if not create:
            raise CheckpointError(f"no checkpoint database at {path} (give the --db used by `ask`)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(
                f"cannot create the directory of {path}: {exc.strerror}"
            ) from None
        _create_database(path, timeout_s)
    origin = check_sqlite_file(path, timeout_s=timeout_s)
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
    if origin == "langgraph":
        # Mark it as sealgraph's from now on. Best effort: a read-only file stays
        # usable, since it is recognised by its tables anyway.
        with suppress(sqlite3.Error):
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    return conn


def check_sqlite_file(
    path: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> Literal["sealgraph", "langgraph"]:
    """Check, without writing anything, that the existing file ``path`` is a checkpoint store.

    The header is read first (a file sealgraph created carries
    :data:`APPLICATION_ID`); otherwise the schema is read through a read-only
    SQLite connection that takes no lock and creates no side file.

    Returns:
        ``"sealgraph"`` for a file sealgraph created, ``"langgraph"`` for an
        unstamped file holding only LangGraph's checkpoint tables.

    Raises:
        CheckpointError: The file is empty, not SQLite, another application's
            database, or unreadable; the message says which, and that it was
            left untouched.

    """
    if not path.is_file():  # a FIFO or a device: opening it could block or consume input
        raise CheckpointError(
            f"{path} is not a regular file, not a checkpoint database; it was left untouched"
        )
    try:
        with open(path, "rb") as f:
            header = f.read(100)
    except OSError as exc:
        raise CheckpointError(
            f"cannot read the checkpoint database {path}: {exc.strerror}"
        ) from None
    if not header:
        raise CheckpointError(
            f"{path} is an empty file that sealgraph did not create, not a checkpoint "
            "database; it was left untouched: remove it or pass another --db"
        )
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise CheckpointError(
            f"the checkpoint database {path} is damaged or not a SQLite database; "
            "it was left untouched: move it away or pass another --db"
        )
    offset = _APPLICATION_ID_OFFSET
    if int.from_bytes(header[offset : offset + 4], "big") == APPLICATION_ID:
        return "sealgraph"
    app_id, entries, columns = _read_schema(path, timeout_s)
    if app_id == APPLICATION_ID:  # stamped in a WAL not yet checkpointed into the file
        return "sealgraph"
    refused = f"{path} is not a sealgraph checkpoint database"
    untouched = "it was left untouched: pass a new --db path (sealgraph creates the file)"
    if app_id != 0:
        raise CheckpointError(
            f"{refused}: it belongs to another application (SQLite application id "
            f"{app_id & 0xFFFFFFFF:#010x}); {untouched}"
        )
    user_entries = [(kind, name) for kind, name in entries if not name.startswith("sqlite_")]
    tables = {name for kind, name in user_entries if kind == "table"}
    if not user_entries:
        raise CheckpointError(
            f"{refused}: it is an empty SQLite database sealgraph did not create; {untouched}"
        )
    if (
        "checkpoints" in tables
        and tables <= LANGGRAPH_TABLES
        and len(tables) == len(user_entries)  # no views, triggers or indexes of anyone else
        and columns >= _CHECKPOINT_COLUMNS
    ):
        return "langgraph"
    names = sorted(name for _, name in user_entries)
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise CheckpointError(
        f"{refused}: it holds another application's tables ({shown}); {untouched}"
    )


def _read_schema(path: Path, timeout_s: float) -> tuple[int, list[tuple[str, str]], set[str]]:
    """Return the application id, the ``sqlite_master`` entries and the ``checkpoints`` columns."""
    # A plain read-only open of a WAL database leaves -wal and -shm files behind;
    # immutable=1 takes no lock and creates nothing. It ignores a live WAL, so when
    # another process has the file open (both side files exist) read through them.
    live = Path(f"{path}-wal").exists() and Path(f"{path}-shm").exists()
    query = "mode=ro" if live else "mode=ro&immutable=1"
    uri = f"file:{quote(str(path.resolve()))}?{query}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=timeout_s)
    except sqlite3.Error as exc:
        raise CheckpointError(_sqlite_message(exc, str(path), timeout_s)) from None
    try:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        entries = [
            (str(k), str(n)) for k, n in conn.execute("SELECT type, name FROM sqlite_master")
        ]
        columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(checkpoints)")}
    except sqlite3.Error as exc:
        raise CheckpointError(_sqlite_message(exc, str(path), timeout_s)) from None
    finally:
        conn.close()
    return app_id, entries, columns


def _index_message(path: Path, index: Path) -> str:
    if path.exists():
        what = f"{path} is a file of the sealgraph index at {index}, not a checkpoint database"
    else:
        what = f"{path} is inside the sealgraph index at {index}"
    return (
        f"{what}; it was left untouched: keep checkpoints outside the index folder "
        "(pass another --db, e.g. runs.sqlite next to it)"
    )


def _create_database(path: Path, timeout_s: float) -> None:
    """Create ``path`` as an empty sealgraph database: stamped, in WAL mode."""
    # The file is built under a temporary name and hard-linked into place: the link
    # is atomic and never replaces an existing file, so a file at ``path`` is either
    # complete and stamped or was not made by sealgraph, and of two processes
    # creating the same database at once, both use the winner's file.
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.new")
    try:
        conn = sqlite3.connect(str(tmp), timeout=timeout_s)
        try:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process created it first; it is checked like any existing file
        except OSError:
            _copy_exclusive(tmp, path)  # a file system without hard links
    except sqlite3.Error as exc:
        raise CheckpointError(_sqlite_message(exc, str(path), timeout_s)) from None
    except OSError as exc:
        raise CheckpointError(
            f"cannot create the checkpoint database {path}: {exc.strerror or exc}"
        ) from None
    finally:
        for leftover in (tmp, *(Path(f"{tmp}{end}") for end in ("-wal", "-shm", "-journal"))):
            with suppress(OSError):
                leftover.unlink()


def _copy_exclusive(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` unless ``target`` exists (then leave it alone)."""
    data = source.read_bytes()
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return
    with os.fdopen(fd, "wb") as f:
        f.write(data)


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


class GuardedSqliteSaver(ReadGuard, SqliteSaver):
    """A :class:`SqliteSaver` whose database errors become :class:`CheckpointError`.

    Every statement of the saver runs through :meth:`cursor`; a write is
    committed only when all its statements succeeded and rolled back otherwise,
    so a failure (for example a lock held past the timeout) never leaves part of
    a checkpoint behind. Stored values are read with :func:`strict_serializer`.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        label: str,
        timeout_s: float,
        serde: StrictCheckpointSerializer | None = None,
        path: Path | None = None,
    ):
        super().__init__(conn, serde=serde or strict_serializer(label))
        # SqliteSaver keeps a second, permissive serializer; make it the strict one.
        self.jsonplus_serde = self.serde
        self.label = label
        self.timeout_s = timeout_s
        self.path = path
        self._claims: dict[str, ThreadFileLock] = {}

    def claim_thread(self, thread_id: str) -> None:
        """Hold ``thread_id`` until :meth:`release_threads` (see :func:`claim_thread`).

        The claim is an exclusive lock on a file of its own (``fcntl.flock``) in
        the database's lock folder, :func:`thread_lock_folder`: the operating
        system drops it when the process ends, however it ends.

        Raises:
            CheckpointError: Another run holds the thread.

        """
        if thread_id in self._claims or self.path is None:
            return
        self._claims[thread_id] = ThreadFileLock.acquire(self.path, thread_id, self.label)

    def release_threads(self) -> None:
        """Release every thread this saver claimed."""
        claims, self._claims = self._claims, {}
        for claim in claims.values():
            claim.release()

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
