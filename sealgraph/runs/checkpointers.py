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
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, unquote, unquote_plus

import ormsgpack
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from sealgraph.errors import CheckpointError
from sealgraph.paths import default_db_path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

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

DEFAULT_TIMEOUT_S = 30.0
"""Seconds to wait for a locked SQLite database (or a PostgreSQL connection)."""

TIMEOUT_ENV = "SEALGRAPH_DB_TIMEOUT"
"""Environment variable overriding :data:`DEFAULT_TIMEOUT_S` (seconds)."""

APPLICATION_ID = 0x5345414C
"""``PRAGMA application_id`` of sealgraph's SQLite checkpoint files (ASCII ``SEAL``)."""

LANGGRAPH_TABLES = frozenset({"checkpoints", "writes"})
"""Tables LangGraph's ``SqliteSaver`` creates: a file holding only these is a checkpoint store."""

CHECKPOINT_TYPES: frozenset[tuple[str, str]] = frozenset()
"""``(module, name)`` of every non-builtin type a sealgraph checkpoint may hold: none.

The state (:class:`sealgraph.graph.state.SealState`) and its events are plain
dicts, lists, strings, numbers, booleans and None, which msgpack stores
natively; LangGraph's own checkpoint fields are strings, numbers and dicts of
them. This was established by recording every object the serializer had to
encode as a typed extension during real runs (offline ``ask``, ``ask --step``,
``resume``, ``replay``, and LLM mode with a fake chat model): there were none.
So any typed value in a stored checkpoint was not written by sealgraph; it is
refused (see :class:`StrictCheckpointSerializer`). A type the state gains
later must be added here, as an exact ``(module, name)`` pair.
"""

_SQLITE_MAGIC = b"SQLite format 3\x00"
_APPLICATION_ID_OFFSET = 68  # byte offset of the application id in the SQLite header
_INDEX_FORMAT = "sealgraph-index"  # the "format" of an index manifest (sealgraph.index._manifest)
_INDEX_MANIFEST = "manifest.json"
_CHECKPOINT_COLUMNS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint"})

# Msgpack extension codes of LangGraph's serializer (langgraph.checkpoint.serde.jsonplus).
_EXT_CONSTRUCTORS = frozenset({0, 1, 2, 4, 5})  # single arg, args, kwargs, pydantic v1/v2
_EXT_METHOD = 3  # calls a named method of a named type
_EXT_DELTA_SNAPSHOT = 7  # a plain container of other values

_PG_SCHEMES = ("postgresql://", "postgres://")
_PG_SETUP_LOCK = 0x5EA16A9  # advisory-lock key serialising schema setup across workers


_SECRET_KEY = re.compile(r"pass|secret|token|key", re.IGNORECASE)
"""A connection parameter whose name matches holds a secret (``password``, ``sslpassword``…)."""
_CONNINFO_PAIR = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']*)")
_LIBPQ_KEYWORDS = frozenset(
    {
        "host",
        "hostaddr",
        "port",
        "dbname",
        "user",
        "password",
        "passfile",
        "service",
        "sslmode",
        "sslpassword",
        "connect_timeout",
        "application_name",
        "options",
        "target_session_attrs",
    }
)
MASK = "***"
"""What a secret is shown as."""


def is_postgres_url(db: str | os.PathLike[str] | None) -> bool:
    """Return True when ``db`` is a PostgreSQL connection URL rather than a file path."""
    return isinstance(db, str) and db.lower().startswith(_PG_SCHEMES)


def _conninfo_pairs(text: str) -> list[re.Match[str]] | None:
    """Return the ``key=value`` pairs of a libpq keyword/value string (None: not one)."""
    pairs: list[re.Match[str]] = []
    pos = 0
    while pos < len(text.rstrip()):
        match = _CONNINFO_PAIR.match(text, pos)
        if match is None or match.end() == pos:
            return None
        pairs.append(match)
        pos = match.end()
    if not any(m[1].lower() in _LIBPQ_KEYWORDS for m in pairs):
        return None
    return pairs


def is_postgres_conninfo(db: str | os.PathLike[str] | None) -> bool:
    """Return True when ``db`` is a libpq ``key=value`` string (``host=h password=p``)."""
    return isinstance(db, str) and not is_postgres_url(db) and _conninfo_pairs(db) is not None


def _url_parts(url: str) -> tuple[str, str, str, str, str, str]:
    """Split a URL as (scheme://, userinfo, hosts and path, ?query, #fragment) by hand.

    ``urlsplit`` rejects what libpq accepts (several hosts ``h1:1,h2:2``), and a
    secret must be masked even in a URL that is not valid.
    """
    scheme, sep, rest = url.partition("://")
    rest, hash_, fragment = rest.partition("#")
    rest, mark, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    return (scheme + sep, userinfo + at, hosts + slash + path, mark + query, hash_ + fragment, at)


def _secret_values(db: str) -> list[str]:
    """Return the secrets written in a connection URL or string, as written and decoded."""
    raw: list[str] = []
    if is_postgres_url(db):
        _, userinfo, _, query, _, at = _url_parts(db)
        if at and ":" in userinfo:
            raw.append(userinfo[:-1].partition(":")[2])
        for pair in query[1:].split("&"):
            key, eq, value = pair.partition("=")
            if eq and _SECRET_KEY.search(unquote_plus(key)):
                raw.append(value)
    else:
        for m in _conninfo_pairs(db) or []:
            if _SECRET_KEY.search(m[1]):
                value = m[2]
                raw.append(value)
                if value.startswith("'") and value.endswith("'") and len(value) >= 2:
                    raw.append(re.sub(r"\\(.)", r"\1", value[1:-1]))
    found = {
        form for value in raw if value for form in (value, unquote(value), unquote_plus(value))
    }
    return sorted((v for v in found if v), key=len, reverse=True)


def describe_db(db: str | os.PathLike[str] | None) -> str:
    """Return ``db`` as shown to users: the file path, or the connection without its secrets.

    In a ``postgresql://`` URL the password of the user part and the value of every
    query parameter whose name holds ``pass``, ``secret``, ``token`` or ``key``
    (``password``, ``sslpassword``, ``passfile``, ``sslkey``…) are shown as ``***``;
    so are those values in a libpq ``key=value`` string.
    """
    if db is None:
        return str(default_db_path())
    text = str(db)
    if is_postgres_url(text):
        scheme, userinfo, rest, query, fragment, at = _url_parts(text)
        if at and ":" in userinfo:
            userinfo = f"{userinfo[:-1].partition(':')[0]}:{MASK}@"
        if query:
            pairs = []
            for pair in query[1:].split("&"):
                key, eq, value = pair.partition("=")
                secret = eq and value and _SECRET_KEY.search(unquote_plus(key))
                pairs.append(f"{key}={MASK}" if secret else pair)
            query = "?" + "&".join(pairs)
        return scheme + userinfo + rest + query + fragment
    pairs = _conninfo_pairs(text) if isinstance(db, str) else None
    if pairs is None:
        return text
    shown = [f"{m[1]}={MASK}" if _SECRET_KEY.search(m[1]) and m[2] else m[0].strip() for m in pairs]
    return " ".join(shown)


def scrub_secrets(text: str, db: str | os.PathLike[str] | None) -> str:
    """Return ``text`` (an error message) with every secret of ``db`` masked.

    A driver's message can echo the connection string or a piece of it ('invalid
    percent-encoded token: "S3cret%zz"'): the whole string is replaced by
    :func:`describe_db`, then every secret value, as written or decoded, and any
    ``password=...`` left.
    """
    if db is None:
        return text
    raw = str(db)
    text = text.replace(raw, describe_db(raw))
    for secret in _secret_values(raw):
        text = text.replace(secret, MASK)
    return re.sub(
        r"((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&\"']+)",
        rf"\1{MASK}",
        text,
        flags=re.IGNORECASE,
    )


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
        with _open_postgres(str(db), timeout) as saver:
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
    index = _enclosing_index(path)
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


def _enclosing_index(path: Path) -> Path | None:
    """Return the sealgraph index folder holding ``path``, if any."""
    try:
        folders = path.expanduser().resolve().parents
    except (OSError, RuntimeError):
        return None
    for folder in folders:
        manifest = folder / _INDEX_MANIFEST
        try:
            if not manifest.is_file():
                continue
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue  # not readable as a manifest: not an index folder we can recognise
        if isinstance(data, dict) and data.get("format") == _INDEX_FORMAT:
            return folder
    return None


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


class StrictCheckpointSerializer(JsonPlusSerializer):
    """LangGraph's checkpoint serializer that loads only the types in :data:`CHECKPOINT_TYPES`.

    Writing is LangGraph's. Every stored value is checked before LangGraph
    rebuilds it, and nothing is imported or called to do the check:

    * msgpack: each typed extension must name an allowed ``(module, name)``;
      method-call, array and unknown extensions are refused;
    * legacy JSON: no LangChain serialisation envelope (``{"lc": ..., "type": ...}``)
      outside the allow-list;
    * pickle and any other encoding: refused (sealgraph never writes them).

    A refused value raises :class:`CheckpointError` naming the type and the store,
    rather than LangGraph's behaviour for a blocked type (a logged warning and
    the raw constructor argument silently put in the state), so a tampered run
    is never shown, replayed or resumed as if it were genuine.

    Args:
        label: The store, as named in error messages (path or password-free URL).
        allowed_types: ``(module, name)`` pairs that may be rebuilt.

    """

    def __init__(
        self,
        *,
        label: str = "(in memory)",
        allowed_types: frozenset[tuple[str, str]] = CHECKPOINT_TYPES,
    ) -> None:
        allowed = frozenset(allowed_types)
        # LangGraph's own gates, as strict as they go, behind the check of loads_typed:
        # an empty msgpack list means "LangGraph's built-in safe types only", never "all".
        super().__init__(
            pickle_fallback=False,
            allowed_json_modules=[(*module.split("."), name) for module, name in sorted(allowed)]
            or None,
            allowed_msgpack_modules=tuple(sorted(allowed)),
        )
        self.label = label
        self.allowed_types = allowed

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Load a stored value, refusing any type outside the allow-list.

        Raises:
            CheckpointError: The value names a type that is not allowed, uses an
                encoding sealgraph never writes, or cannot be decoded.

        """
        kind, payload = data
        if kind in ("null", "bytes", "bytearray"):
            return super().loads_typed(data)
        if kind == "msgpack":
            return self._loads_msgpack(payload)
        if kind == "json":
            return self._loads_json(payload)
        raise CheckpointError(self._refusal(f"a value encoded as {kind!r}"))

    def _refusal(self, what: str) -> str:
        return (
            f"refusing to read the checkpoint database {self.label}: it holds {what}, "
            "which sealgraph never writes, so it was not loaded "
            "(the database may have been tampered with; other runs in it stay readable)"
        )

    def _damaged(self, exc: BaseException) -> str:
        return (
            f"the checkpoint database {self.label} holds a damaged value "
            f"({type(exc).__name__}: {str(exc)[:120]}); it was not loaded"
        )

    def _loads_msgpack(self, payload: bytes) -> Any:
        refused: list[str] = []
        typed: list[int] = []

        def check(code: int, ext: bytes) -> None:
            # Only records what the extension names; the value itself is rebuilt by
            # LangGraph afterwards, and only when everything in it is allowed.
            typed.append(code)
            try:
                inner = ormsgpack.unpackb(ext, ext_hook=check, option=ormsgpack.OPT_NON_STR_KEYS)
            except Exception:  # a malformed extension: nothing in it may be rebuilt
                refused.append(f"an undecodable typed value (msgpack extension {code})")
                return None
            if code == _EXT_DELTA_SNAPSHOT:
                return None  # a container; its contents were just checked
            names = _ext_names(inner)
            if code not in _EXT_CONSTRUCTORS:  # method calls, arrays, unknown codes
                what = f"that calls {'.'.join(names)}" if names else f"(msgpack extension {code})"
                refused.append(f"a typed value {what}")
            elif names is None:
                refused.append(f"a malformed typed value (msgpack extension {code})")
            elif names[:2] not in self.allowed_types:
                refused.append(f"a value of type {names[0]}.{names[1]}")
            return None

        try:
            value = ormsgpack.unpackb(payload, ext_hook=check, option=ormsgpack.OPT_NON_STR_KEYS)
        except (ValueError, TypeError, RecursionError) as exc:
            raise CheckpointError(self._damaged(exc)) from None
        if refused:
            raise CheckpointError(self._refusal(refused[0]))
        if not typed:
            return value  # plain data: exactly what LangGraph would return
        return super().loads_typed(("msgpack", payload))

    def _loads_json(self, payload: bytes) -> Any:
        refused: list[str] = []
        envelopes: list[tuple[str, ...]] = []
        allowed = {(*module.split("."), name) for module, name in self.allowed_types}

        def check(obj: dict[str, Any]) -> dict[str, Any]:
            # LangChain's reviver turns {"lc": 1|2, "type": ..., "id": [...]} into an
            # object (or reads a secret from the environment); plain dicts pass.
            if isinstance(obj.get("lc"), int) and "type" in obj:
                ident = obj.get("id")
                parts = tuple(map(str, ident)) if isinstance(ident, list) else (str(ident),)
                envelopes.append(parts)
                if obj.get("type") != "constructor" or parts not in allowed:
                    refused.append(f"a serialised {obj.get('type')!s} of {'.'.join(parts)}")
            return obj

        try:
            value = json.loads(payload, object_hook=check)
        except (ValueError, TypeError, RecursionError) as exc:
            raise CheckpointError(self._damaged(exc)) from None
        if refused:
            raise CheckpointError(self._refusal(refused[0]))
        if envelopes:  # all allowed: LangGraph revives them (its json allow-list is the same)
            return super().loads_typed(("json", payload))
        return value


def _ext_names(inner: Any) -> tuple[str, ...] | None:
    """Return the ``(module, name)`` (plus the method of a method call) a decoded extension names."""
    if not isinstance(inner, (list, tuple)) or len(inner) < 3:
        return None
    if not (isinstance(inner[0], str) and isinstance(inner[1], str)):
        return None
    if len(inner) >= 4 and isinstance(inner[3], str):
        return (inner[0], inner[1], inner[3])
    return (inner[0], inner[1])


def strict_serializer(label: str = "(in memory)") -> StrictCheckpointSerializer:
    """Return the serializer every checkpointer sealgraph builds uses.

    Pass it to a saver you build yourself (``InMemorySaver(serde=strict_serializer())``)
    to get the same allow-list.
    """
    return StrictCheckpointSerializer(label=label)


_DECODE_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError)


class _ReadGuard:
    """Saver mixin: a stored checkpoint that cannot be decoded is a :class:`CheckpointError`.

    Reading a run decodes every row of it (LangGraph's metadata JSON, the
    serialized checkpoint); a damaged or hand-edited row would otherwise surface
    as a traceback from deep inside LangGraph, or when the graph reads a
    checkpoint that is not a dict.
    """

    label: str

    def _damaged_row(self, config: Any, detail: str) -> CheckpointError:
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        which = f" of thread {thread!r}" if thread is not None else ""
        return CheckpointError(
            f"the checkpoint database {self.label} holds a damaged checkpoint{which} "
            f"({detail}); it was not loaded"
        )

    def _checked(self, config: Any, item: Any) -> Any:
        if item is None:
            return None
        checkpoint = item.checkpoint
        if not (
            isinstance(checkpoint, Mapping)
            and isinstance(checkpoint.get("channel_values"), Mapping)
            and isinstance(item.metadata, Mapping)
        ):
            raise self._damaged_row(config, "not a checkpoint")
        return item

    def get_tuple(self, config: Any) -> Any:
        """Return the checkpoint tuple of ``config``; a damaged row raises :class:`CheckpointError`."""
        try:
            item = super().get_tuple(config)  # type: ignore[misc]
        except _DECODE_ERRORS as exc:
            raise self._damaged_row(config, f"{type(exc).__name__}: {str(exc)[:120]}") from None
        return self._checked(config, item)

    def list(self, config: Any, **kwargs: Any) -> Iterator[Any]:
        """Yield the checkpoint tuples matching ``config``; a damaged row raises :class:`CheckpointError`."""
        rows = super().list(config, **kwargs)  # type: ignore[misc]
        try:
            while True:
                try:
                    item = next(rows)
                except StopIteration:
                    return
                except _DECODE_ERRORS as exc:
                    detail = f"{type(exc).__name__}: {str(exc)[:120]}"
                    raise self._damaged_row(config, detail) from None
                yield self._checked(config, item)
        finally:
            rows.close()  # release its cursor now, while the connection is open


class GuardedSqliteSaver(_ReadGuard, SqliteSaver):
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
        self._claims: dict[str, _ThreadFileLock] = {}

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
        self._claims[thread_id] = _ThreadFileLock.acquire(self.path, thread_id, self.label)

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


# --- one run per thread at a time ------------------------------------------------------------

THREAD_LOCK_FOLDER = ".{name}.threads"
"""Name of the folder, next to a SQLite checkpoint database, holding its thread locks."""


def claim_thread(checkpointer: BaseCheckpointSaver, thread_id: str) -> None:
    """Hold ``thread_id`` for one run, for as long as ``checkpointer`` stays open.

    ``ask``, ``resume`` and ``replay`` claim the thread they write, so that two
    runs never write one thread at once; a second claim, by another process or
    another open checkpointer, is refused. The claim dies with the process that
    holds it, so a crashed run never leaves the thread locked:

    * PostgreSQL: a session-level advisory lock (``pg_try_advisory_lock``) on a
      64-bit hash of the thread id, held by the saver's connection; the server
      drops it when the connection closes or breaks.
    * SQLite: an exclusive ``flock`` on a file named by a hash of the thread id
      in the lock folder next to the database (``.runs.sqlite.threads/``, made
      only beside a file that is sealgraph's checkpoint database, and removed
      again when no thread is held); the kernel drops it when the process ends.

    Savers sealgraph did not build (``InMemorySaver``...) are not claimed.

    Raises:
        CheckpointError: Another run holds the thread (or the lock cannot be taken).

    """
    claim = getattr(checkpointer, "claim_thread", None)
    if callable(claim):
        claim(thread_id)


def thread_lock_folder(db: Path) -> Path:
    """Return the folder that holds the thread locks of the SQLite database ``db``."""
    real = db.expanduser().resolve()
    return real.parent / THREAD_LOCK_FOLDER.format(name=real.name)


def _thread_digest(thread_id: str, size: int) -> bytes:
    return hashlib.blake2b(
        thread_id.encode("utf-8"), digest_size=size, person=b"sealgraph-thrd"
    ).digest()


def _in_use(thread_id: str, label: str, holder: str = "") -> CheckpointError:
    by = f" ({holder})" if holder else ""
    return CheckpointError(
        f"thread {thread_id!r} is being run by another sealgraph process{by} in {label}; "
        "one thread takes one run at a time: wait for it to end, or use another --thread"
    )


class _ThreadFileLock:
    """An exclusive ``flock`` on one thread's lock file, removed on release."""

    def __init__(self, folder: Path, path: Path, fd: int | None, fallback: Any = None) -> None:
        self.folder = folder
        self.path = path
        self.fd = fd
        self.fallback = fallback

    @classmethod
    def acquire(cls, db: Path, thread_id: str, label: str) -> _ThreadFileLock:
        folder = thread_lock_folder(db)
        path = folder / f"{_thread_digest(thread_id, 16).hex()}.lock"
        if fcntl is None:  # pragma: no cover - no flock (Windows): filelock's own lock
            from filelock import FileLock, Timeout

            cls._make_folder(folder, label)
            lock = FileLock(str(path))
            try:
                lock.acquire(timeout=0)
            except Timeout:
                raise _in_use(thread_id, label) from None
            return cls(folder, path, None, lock)
        # A released lock file is removed while still locked, so the file a claim
        # locked may no longer be the one at ``path``: check, and try again if so.
        for _ in range(100):
            cls._make_folder(folder, label)
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
            try:
                fd = os.open(path, flags, 0o644)
            except FileNotFoundError:
                continue  # the folder was removed as it emptied: make it again
            except OSError as exc:
                raise CheckpointError(
                    f"cannot lock thread {thread_id!r} of {label}: {path}: {exc.strerror}"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _read_holder(fd)
                os.close(fd)
                if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise _in_use(thread_id, label, holder) from None
                raise CheckpointError(
                    f"cannot lock thread {thread_id!r} of {label}: {exc.strerror}"
                ) from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
            except OSError:
                same = False
            if same:
                with suppress(OSError):
                    os.ftruncate(fd, 0)
                    os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
                return cls(folder, path, fd)
            os.close(fd)
        raise CheckpointError(f"cannot lock thread {thread_id!r} of {label}: {path} keeps changing")

    @staticmethod
    def _make_folder(folder: Path, label: str) -> None:
        try:
            folder.mkdir(exist_ok=True)
        except OSError as exc:
            raise CheckpointError(
                f"cannot create the thread-lock folder {folder} of {label}: {exc.strerror}"
            ) from None
        if folder.is_symlink() or not folder.is_dir():
            raise CheckpointError(
                f"{folder} is not a folder sealgraph can keep the thread locks of {label} in; "
                "it was left untouched: move it away"
            )

    def release(self) -> None:
        if self.fallback is not None:  # pragma: no cover - no flock
            self.fallback.release()
            return
        if self.fd is None:
            return
        with suppress(OSError):
            self.path.unlink()  # while locked: a claim that opened it sees it is gone
        os.close(self.fd)  # drops the lock
        self.fd = None
        with suppress(OSError):
            self.folder.rmdir()  # only when empty: other threads may be held


def _read_holder(fd: int) -> str:
    """Return what the holder of a lock file wrote in it ("pid 123 on host"), if anything."""
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except (OSError, AttributeError):
        return ""
    return text if text.startswith("pid ") else ""


def _thread_lock_key(thread_id: str) -> int:
    """Return the signed 64-bit PostgreSQL advisory-lock key of a thread id."""
    return int.from_bytes(_thread_digest(thread_id, 8), "big", signed=True)


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

    class GuardedPostgresSaver(_ReadGuard, PostgresSaver):
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
                        "SELECT pg_try_advisory_lock(%s) AS locked", (_thread_lock_key(thread_id),)
                    ).fetchone()
            except psycopg.Error as exc:
                raise CheckpointError(_pg_message(exc, label, url)) from None
            if not (row and row["locked"]):
                raise _in_use(thread_id, label)

    saver = GuardedPostgresSaver(conn, serde=strict_serializer(label))
    saver.label = label
    return saver


@contextmanager
def _open_postgres(url: str, timeout_s: float) -> Iterator[BaseCheckpointSaver]:
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
