"""One run per thread at a time: the claims ``ask``, ``resume`` and ``replay`` take.

:func:`claim_thread` holds a thread for as long as a checkpointer stays open: a
``flock`` on a lock file beside a SQLite database (:class:`ThreadFileLock`, in
:func:`thread_lock_folder`), or a PostgreSQL advisory lock keyed by
:func:`thread_lock_key`.
"""

from __future__ import annotations

import hashlib
import os
import socket
from contextlib import suppress
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver

from sealgraph._lockfile import LockFile
from sealgraph.errors import CheckpointError

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


def thread_in_use(thread_id: str, label: str, holder: str = "") -> CheckpointError:
    by = f" ({holder})" if holder else ""
    return CheckpointError(
        f"thread {thread_id!r} is being run by another sealgraph process{by} in {label}; "
        "one thread takes one run at a time: wait for it to end, or use another --thread"
    )


class ThreadFileLock:
    """An exclusive ``flock`` on one thread's lock file, removed on release."""

    def __init__(self, folder: Path, path: Path, lock: LockFile) -> None:
        self.folder = folder
        self.path = path
        self.lock = lock

    @classmethod
    def acquire(cls, db: Path, thread_id: str, label: str) -> ThreadFileLock:
        folder = thread_lock_folder(db)
        path = folder / f"{_thread_digest(thread_id, 16).hex()}.lock"
        for _ in range(100):
            cls._make_folder(folder, label)
            lock = LockFile(path)  # removed when released, while still locked
            try:
                held = lock.try_acquire()
            except FileNotFoundError:
                continue  # the folder was removed as it emptied: make it again
            except OSError as exc:
                raise CheckpointError(
                    f"cannot lock thread {thread_id!r} of {label}: {path}: {exc.strerror}"
                ) from None
            if not held:
                raise thread_in_use(thread_id, label, _read_holder(path))
            if lock.fd is not None:
                with suppress(OSError):
                    os.ftruncate(lock.fd, 0)
                    os.write(lock.fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
            return cls(folder, path, lock)
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
        self.lock.release()
        with suppress(OSError):
            self.folder.rmdir()  # only when empty: other threads may be held


def _read_holder(path: Path) -> str:
    """Return what the holder of a lock file wrote in it ("pid 123 on host"), if anything."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return ""
    try:
        text = os.read(fd, 200).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)
    return text if text.startswith("pid ") else ""


def thread_lock_key(thread_id: str) -> int:
    """Return the signed 64-bit PostgreSQL advisory-lock key of a thread id."""
    return int.from_bytes(_thread_digest(thread_id, 8), "big", signed=True)
