"""Where sealgraph keeps its per-user files.

Run checkpoints live in the user *data* directory (they are the audit trail and
must survive cache clean-ups); the demo index lives in the user *cache*
directory (it can always be rebuilt). Both can be redirected with environment
variables, which the tests use to stay out of the real home directory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = [
    "APP_NAME",
    "CACHE_ENV",
    "DATA_ENV",
    "cache_dir",
    "data_dir",
    "default_db_path",
    "demo_index_dir",
    "file_kind",
]

APP_NAME = "sealgraph"
"""Application name given to platformdirs."""

DATA_ENV = "SEALGRAPH_DATA_DIR"
"""Environment variable that replaces the user data directory (holds ``runs.sqlite``)."""

CACHE_ENV = "SEALGRAPH_CACHE_DIR"
"""Environment variable that replaces the user cache directory (holds ``demo-index``)."""

DB_FILE = "runs.sqlite"
"""File name of the default checkpoint database."""

DEMO_INDEX = "demo-index"
"""Directory name of the cached index of the example corpus."""


def data_dir() -> Path:
    """Return sealgraph's data directory (``$SEALGRAPH_DATA_DIR`` or the platform's user data dir)."""
    override = os.environ.get(DATA_ENV)
    if override:
        return Path(override).expanduser()
    try:
        from platformdirs import user_data_dir
    except ModuleNotFoundError:  # declared dependency; fall back to its Linux answer
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        return Path(base) / APP_NAME
    return Path(user_data_dir(APP_NAME))


def cache_dir() -> Path:
    """Return sealgraph's cache directory (``$SEALGRAPH_CACHE_DIR`` or the platform's user cache dir)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    try:
        from platformdirs import user_cache_dir
    except ModuleNotFoundError:  # declared dependency; fall back to its Linux answer
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / APP_NAME
    return Path(user_cache_dir(APP_NAME))


def default_db_path() -> Path:
    """Return the default checkpoint database: ``<data_dir()>/runs.sqlite``."""
    return data_dir() / DB_FILE


def demo_index_dir() -> Path:
    """Return the default location of the demo index: ``<cache_dir()>/demo-index``."""
    return cache_dir() / DEMO_INDEX


def file_kind(mode: int) -> str:
    """Name the kind of file of an ``st_mode``: ``"regular file"``, ``"a FIFO"``, ``"a device"``..."""
    if stat.S_ISREG(mode):
        return "regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"
