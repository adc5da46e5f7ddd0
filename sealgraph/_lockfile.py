"""An exclusive lock on a lock file that leaves no file behind once released.

:class:`LockFile` takes an ``flock`` on a file it opens (creating it), and removes
the file when it lets go, while still holding it. Another process may have
opened the file just before it was removed and then win the lock on a file no
longer there: so a lock is held only once the file at the path is the very file
locked (same device and inode); otherwise it is opened again. Every process
that uses the same path through this class then excludes the others, and a
build that failed, or was interrupted by an exception, leaves nothing beside the
index. (A process killed outright leaves the file: the kernel drops its lock,
and the next build takes the file and removes it in turn.)

Where ``flock`` does not exist (Windows), :mod:`filelock`'s lock is used and its
file stays.
"""

from __future__ import annotations

import errno
import os
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["LockFile"]

_BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)
_POLL_S = 0.05


class LockFile:
    """An exclusive lock on ``path``, removed on :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        """The open, locked file while held (None with the fallback)."""
        self._fallback: Any = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; return whether it is held now.

        Raises:
            OSError: The lock file cannot be opened (its folder is gone, no rights).

        """
        if fcntl is None:  # pragma: no cover - no flock
            return self._fallback_acquire(0)
        for _ in range(100):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | _NOFOLLOW, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in _BUSY:
                    return False
                raise
            if _same_file(fd, self.path):
                self.fd = fd
                return True
            os.close(fd)  # removed by the holder before us: open the path's file again
        raise OSError(errno.EBUSY, f"{self.path} keeps changing")

    def acquire(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the lock; return whether it is held."""
        if fcntl is None:  # pragma: no cover - no flock
            return self._fallback_acquire(timeout)
        deadline = time.monotonic() + max(timeout, 0.0)
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)
        return True

    def release(self) -> None:
        """Remove the lock file, then let go of the lock (nothing when not held)."""
        if self._fallback is not None:  # pragma: no cover - no flock
            self._fallback.release()
            self._fallback = None
            return
        if self.fd is None:
            return
        with suppress(OSError):
            if _same_file(self.fd, self.path):
                self.path.unlink()  # while locked: a process that opened it sees it gone
        os.close(self.fd)  # drops the lock
        self.fd = None

    def _fallback_acquire(self, timeout: float) -> bool:  # pragma: no cover - no flock
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.path))
        try:
            lock.acquire(timeout=timeout)
        except Timeout:
            return False
        self._fallback = lock
        return True


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
    except OSError:
        return False
