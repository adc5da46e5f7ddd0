"""Opening an index's SQLite docstore for reading."""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["connect_readonly"]


def connect_readonly(path: Path) -> sqlite3.Connection:
    """Open the SQLite file at ``path`` read-only, as immutable.

    An index's files are never written in place (a build, add or removal writes a
    new folder and swaps it in), so no lock is taken and no journal is made: the
    index may sit on a read-only disk. Each thread opens its own connection.
    """
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
