"""An index directory on disk: what in it is sealgraph's, its lock, the swap, the recovery.

Builds of one index directory are serialised by a lock file beside it
(``.NAME.lock``, :func:`locked_index`, removed when the build ends, however it
ends); holding it, a build first cleans up what an interrupted build left (a
temporary ``.NAME.building-*`` folder, or the previous index still parked in
``.NAME.old-*`` by :func:`swap_into_place`). A directory is only ever replaced
when it is empty or a sealgraph index holding nothing but sealgraph's files
(:func:`inspect_target`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sealgraph._lockfile import LockFile
from sealgraph.errors import IndexCorruptError, InputError, SealgraphError
from sealgraph.index.derived import DERIVED_DIR, is_derived_file
from sealgraph.index.folder._ann import ANN_FILE, LEGACY_ANN_FILES
from sealgraph.index.folder._dense import DENSE_FILES, FAISS_FILE
from sealgraph.index.folder._lexical import LEXICAL_DIR
from sealgraph.index.folder._manifest import (
    MANIFEST_FILE,
    foreign_entries,
    fsync_path,
    read_marker,
    sibling_folders,
)
from sealgraph.index.folder._store import DOCSTORE_FILE
from sealgraph.ingest import WarnFn

DEFAULT_LOCK_TIMEOUT_S = 3600.0
"""How long a build waits for another build of the same index by default."""
LEGACY_FILES = ("knowledge.json",)
"""Files builds of earlier versions wrote and this one does not: the offline reasoner's
corpus tables, which the reasoner now counts and caches itself (see
:mod:`sealgraph.index.derived`). Verified when a manifest lists them, and still
sealgraph's own."""
BM25S_FILES = (
    "data.csc.index.npy",
    "indices.csc.index.npy",
    "indptr.csc.index.npy",
    "vocab.index.json",
    "params.index.json",
)
"""The lexical files of format 1 and 2 indexes (bm25s), which a build may replace."""
OWN_FILES = (
    DOCSTORE_FILE,
    *(f"{LEXICAL_DIR}/{name}" for name in BM25S_FILES),
    *DENSE_FILES,
    ANN_FILE,
    FAISS_FILE,
    *LEGACY_ANN_FILES,
    *LEGACY_FILES,
)
"""Files a build writes (besides the manifest and the lexical segments it lists), even
when a damaged manifest lists none."""
OWN_FOLDERS = {DERIVED_DIR: is_derived_file}
"""Folders holding files sealgraph writes under names the manifest cannot know (what
users of the index derive and cache), each with how its files are recognised."""


def inspect_target(index_dir: Path) -> dict[str, Any] | None:
    """Return the manifest of the index a build may replace; None for a new or empty folder.

    Raises:
        InputError: ``index_dir`` is a file, a folder that is not a sealgraph index
            (see :func:`sealgraph.index.folder._manifest.read_marker`), or a sealgraph index
            holding files sealgraph did not write; it must not be touched.

    """
    if not os.path.lexists(index_dir):
        return None
    if not index_dir.is_dir():
        kind = "a file" if index_dir.is_file() else "not a directory"
        raise InputError(f"{index_dir} is {kind}, not an index directory")
    try:
        if not any(index_dir.iterdir()):
            return None
    except OSError as exc:
        raise InputError(f"cannot read {index_dir}: {exc.strerror or exc}") from None
    manifest = read_marker(index_dir)
    foreign = foreign_entries(index_dir, manifest, OWN_FILES, OWN_FOLDERS)
    if foreign:
        shown = ", ".join(foreign[:5]) + (
            f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        )
        raise InputError(
            f"{index_dir} is a sealgraph index but also holds files sealgraph did not write "
            f"({shown}); refusing to replace it: move them out of the index directory first"
        )
    return manifest


@contextmanager
def locked_index(index_dir: Path, *, timeout: float, warn: WarnFn) -> Iterator[Path]:
    """Hold the build lock of ``index_dir`` (``.NAME.lock`` beside it); yield the resolved path.

    Waits up to ``timeout`` seconds for another build, saying so once. Once the
    lock is held, no other build of this index runs, so leftovers of interrupted
    builds are cleaned up (:func:`recover_leftovers`) before the caller's block.

    Raises:
        InputError: ``index_dir`` must not be touched (:func:`inspect_target`), or
            the lock file cannot be created.
        SealgraphError: The lock was not released within ``timeout`` seconds.

    """
    index_dir = index_dir.resolve()
    inspect_target(index_dir)  # never create anything beside a folder that is not ours
    lock_path = index_dir.parent / f".{index_dir.name}.lock"
    lock = LockFile(lock_path)  # removed when released: a build leaves no lock file
    try:
        index_dir.parent.mkdir(parents=True, exist_ok=True)
        if not lock.try_acquire():
            warn(
                f"waiting for another sealgraph build of {index_dir} to finish (up to {timeout:g} s)"
            )
            if not lock.acquire(timeout):
                raise SealgraphError(
                    f"another sealgraph build of {index_dir} still holds its lock {lock_path} "
                    f"after {timeout:g} s; try again when it has finished, or wait longer "
                    f"(--lock-timeout)"
                )
    except OSError as exc:
        raise InputError(
            f"cannot lock {index_dir} (lock file {lock_path}): {exc.strerror or exc}"
        ) from None
    try:
        recover_leftovers(index_dir, warn)
        yield index_dir
    finally:
        lock.release()


def recover_leftovers(index_dir: Path, warn: WarnFn) -> None:
    """Clean up after interrupted builds of ``index_dir``; call only holding its lock.

    Temporary ``.NAME.building-*`` folders are removed. A ``.NAME.old-*`` folder is
    the previous index parked by a swap: when ``index_dir`` is missing (or empty)
    the newest one holding a sealgraph manifest is renamed back; otherwise the swap
    finished and it is removed. Only folders with sealgraph's naming (and, for old
    ones, sealgraph's manifest and files, or nothing at all) are ever removed.
    """
    for stale in _leftovers(index_dir, "building"):
        shutil.rmtree(stale, ignore_errors=True)
        warn(f"removed {stale}, left by an interrupted build")
    parked = [(old, _marker_or_none(old)) for old in _leftovers(index_dir, "old")]
    indexes = [(old, manifest) for old, manifest in parked if manifest is not None]
    if indexes and _missing_or_empty(index_dir):
        newest = _put_back_newest(index_dir, indexes, warn)
        parked = [(old, manifest) for old, manifest in parked if old != newest]
    _remove_parked(index_dir, parked, warn)


def _put_back_newest(
    index_dir: Path, indexes: list[tuple[Path, dict[str, Any]]], warn: WarnFn
) -> Path:
    """Rename the newest parked index back to the missing or empty ``index_dir``; return it."""
    newest = max(indexes, key=lambda item: (item[0] / MANIFEST_FILE).stat().st_mtime)[0]
    try:
        if index_dir.is_dir():
            index_dir.rmdir()
        os.replace(newest, index_dir)
        fsync_path(index_dir.parent)
    except OSError as exc:
        raise IndexCorruptError(
            f"an interrupted build left the index of {index_dir} in {newest} and it "
            f"cannot be put back ({exc.strerror or exc}); rename it to {index_dir}"
        ) from None
    warn(f"restored the index at {index_dir} from {newest}, where an interrupted build left it")
    return newest


def _remove_parked(
    index_dir: Path, parked: list[tuple[Path, dict[str, Any] | None]], warn: WarnFn
) -> None:
    """Remove parked folders a finished swap left: empty ones, and old indexes of ours."""
    target_is_index = not _missing_or_empty(index_dir) and _marker_or_none(index_dir) is not None
    for old, manifest in parked:
        if manifest is None:
            with suppress(OSError):
                old.rmdir()  # the empty folder a swap creates first; anything else stays
        elif target_is_index and not foreign_entries(old, manifest, OWN_FILES, OWN_FOLDERS):
            shutil.rmtree(old, ignore_errors=True)
            warn(f"removed {old}, a previous index left by an interrupted build")


def restore_interrupted(index_dir: Path, *, timeout: float, warn: WarnFn) -> None:
    """Put back the index a build moved away from ``index_dir`` before it died, if any.

    Raises:
        IndexCorruptError: The previous index exists but cannot be put back; the
            message says where it is.

    """
    index_dir = index_dir.resolve()
    if os.path.lexists(index_dir):
        return
    parked = [old for old in _leftovers(index_dir, "old") if _marker_or_none(old) is not None]
    if not parked:
        return
    try:
        with locked_index(index_dir, timeout=timeout, warn=warn):
            pass  # recovery happens on taking the lock
    except IndexCorruptError:
        raise
    except (SealgraphError, OSError) as exc:
        raise IndexCorruptError(
            f"no index at {index_dir}: an interrupted build left the previous index in "
            f"{parked[-1]} and it cannot be put back ({exc}); rename it to {index_dir}"
        ) from None


def _leftovers(index_dir: Path, kind: str) -> list[Path]:
    # tempfile.mkdtemp appends 8 characters of [a-z0-9_] to the prefix.
    return sibling_folders(index_dir, rf"{kind}-[a-z0-9_]{{8}}")


def _marker_or_none(directory: Path) -> dict[str, Any] | None:
    try:
        return read_marker(directory)
    except InputError:
        return None


def _missing_or_empty(directory: Path) -> bool:
    if not os.path.lexists(directory):
        return True
    try:
        return directory.is_dir() and not any(directory.iterdir())
    except OSError:
        return False


def swap_into_place(new: Path, target: Path, existing: dict[str, Any] | None, warn: WarnFn) -> None:
    """Replace ``target`` by ``new``; the old index stays until the new one is in place."""
    old = None
    if target.exists():
        # Renaming a directory onto an empty directory is atomic on POSIX.
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        if old is not None:
            os.replace(old, target)
        raise
    fsync_path(target.parent)
    if old is None:
        return
    # Checked again: files could have been put into the folder during the build.
    if existing is None:
        keep = any(old.iterdir())  # it was empty when the build started
    else:
        keep = bool(foreign_entries(old, existing, OWN_FILES, OWN_FOLDERS))
    if keep:
        warn(f"kept {old}: the previous {target.name} holds files sealgraph did not write")
    else:
        shutil.rmtree(old, ignore_errors=True)
