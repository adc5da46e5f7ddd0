"""Where a new index is written before it is swapped in, and what a full disk becomes.

:func:`staging` yields a temporary sibling of the index directory
(``.NAME.building-*``) and turns a write that failed for want of space into a
:class:`~sealgraph.errors.DiskFullError` saying about how much space the index
needs (:func:`build_bytes` for a build, :func:`tree_bytes` for a rewrite).
"""

from __future__ import annotations

import errno
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sealgraph.errors import DiskFullError
from sealgraph.index.embedders import Embedder


@contextmanager
def staging(index_dir: Path, needed_bytes: Callable[[], int]) -> Iterator[Path]:
    """Yield a new temporary sibling of ``index_dir`` to write an index into; remove it after.

    A write that fails for want of space (full disk, quota, file size limit)
    becomes a :class:`DiskFullError` naming the folder, about how much space the
    write needs (``needed_bytes``) and how much was free when it began (both the
    same quantity: before the write took any); the index in ``index_dir`` is not
    touched until the new one is complete, so nothing is lost.
    """
    tmp = None
    free = _free_bytes(index_dir.parent)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{index_dir.name}.building-", dir=index_dir.parent))
        yield tmp
    except (OSError, sqlite3.Error, RuntimeError) as exc:
        if not _out_of_space(exc, index_dir.parent, needed_bytes):
            raise
        raise DiskFullError(_out_of_space_message(index_dir, needed_bytes(), free)) from None
    finally:
        if tmp is not None and tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


_NO_SPACE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
# What libraries say when a write came up short without an errno: numpy's
# "N requested and M written", SQLite's SQLITE_FULL, C stdio through FAISS.
_NO_SPACE_RE = re.compile(r"requested and \d+ written|disk is full|no space left|quota", re.I)


def _out_of_space(exc: BaseException, folder: Path, needed_bytes: Callable[[], int]) -> bool:
    """Whether a failed write failed for want of space in ``folder``."""
    if isinstance(exc, OSError) and exc.errno in _NO_SPACE_ERRNOS:
        return True
    if getattr(exc, "sqlite_errorcode", None) == 13:  # SQLITE_FULL
        return True
    if _NO_SPACE_RE.search(str(exc)):
        return True
    if not (isinstance(exc, OSError) and exc.errno is None):
        return False
    try:  # a short write that does not say why: is the disk (nearly) full?
        return shutil.disk_usage(folder).free < needed_bytes()
    except OSError:
        return False


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def _out_of_space_message(index_dir: Path, needed: int, free: int | None) -> str:
    # Both sizes are of the same moment, before the write: what it needs, what was free.
    if free is None:
        need = f"it needs about {_megabytes(needed)} there (free space unknown)"
    elif needed > free:
        need = f"it needs about {_megabytes(needed)} there and {_megabytes(free)} were free"
    else:  # the estimate fell short: say only what is sure
        need = f"it needs more than the {_megabytes(free)} that were free there"
    return (
        f"no space left in {index_dir.parent} to write the index {index_dir.name}: {need}; "
        f"free some space or give --index a folder on another disk. Nothing was changed: "
        f"the index there is as it was"
    )


def _megabytes(n_bytes: int) -> str:
    return f"{max(n_bytes, 0) / 1e6:,.1f} MB"


def build_bytes(doc_chars: int, chunk_chars: int, n_chunks: int, embedder: Embedder | None) -> int:
    """Return about how many bytes a new index takes.

    ``doc_chars`` of documents are cut into ``n_chunks`` chunks of ``chunk_chars``
    characters in all. Measured: ~3× the chunk text for the docstore and the BM25 arrays, plus the
    documents' records, plus the float32 vectors (and room for their copy).
    """
    try:
        dim = embedder.dim if embedder is not None else 0
    except Exception:  # a remote embedder that cannot say: count its vectors as MiniLM's
        dim = 384
    return 3 * chunk_chars + doc_chars + n_chunks * dim * 8 + (1 << 16)


def tree_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder`` (what a rewrite of them needs again)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
