"""Derived caches: data a user of an index computes from it once and keeps beside it.

An index directory is sealgraph's own, so a component that derives data from an
index (the offline reasoner's corpus tables, for example) may keep it in the
index's ``derived/`` folder instead of computing it again in every process. The
index does not know what these files hold; it only

- says where one lives, for an index loaded from a directory that still holds
  that same index (a directory rebuilt since gets nothing from an old index);
- keys each file to the index it was derived from (:func:`index_identity`, a
  digest of the manifest's file checksums): a file written for another build of
  the directory is ignored;
- reads it as strict JSON, never unpickled (:func:`read_derived`), and writes it
  atomically (:func:`write_derived`), best effort: a read-only index directory
  only means the data is computed again next time.

Derived files are not listed in the manifest (they are written after it). A build
writes a new directory without them; a file in ``derived/`` that
:func:`is_derived_file` recognises as one (by its name and its own last bytes,
which :func:`write_derived` always ends with the format marker and the index
identity) is sealgraph's to replace, and any other file there is the user's: the
build refuses to replace the index, as for a user's file anywhere in it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from sealgraph.index.folder._manifest import MANIFEST_FILE

__all__ = ["DERIVED_DIR", "index_identity", "is_derived_file", "read_derived", "write_derived"]

DERIVED_DIR = "derived"
"""Folder of an index directory holding the derived caches."""

_FORMAT = "sealgraph-derived"
# A plain file name: no folder, no dot file (the atomic writer's temporaries are).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\.json")
# What the atomic writer's temporary file is named (tempfile.mkstemp's random part).
_TEMP_NAME = re.compile(r"\.[A-Za-z0-9][A-Za-z0-9_.-]*\.json\.[A-Za-z0-9_]+\.tmp")
# How every derived file ends: keys are sorted, so "data" comes first and the
# format and the identity of the index it was derived from come last.
_TAIL = re.compile(rb', "format": "sealgraph-derived", "index": "[0-9a-f]{64}"\}\Z')
_TAIL_BYTES = 160


def index_identity(manifest: Mapping[str, Any]) -> str | None:
    """Return a digest naming one build of an index, or None for a manifest without files.

    The digest of the whole manifest: it holds the SHA-256 of every file and the
    settings the index was built and is read with (lexicon, tokenizer, chunker), so
    any rebuild or refresh of the directory that could change what is derived from
    it gives another identity.
    """
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return None
    try:
        text = json.dumps(manifest, sort_keys=True, ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError):  # not a manifest sealgraph wrote
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_derived(index: Any, name: str) -> Any | None:
    """Return what :func:`write_derived` stored as ``name`` for this very index, else None.

    None when the index has no directory of its own, the file is missing or
    unreadable, is not strict JSON (``NaN`` and ``Infinity`` are refused), or was
    written for another build of the directory. The caller still validates the
    data it gets: it is a cache, not a checked index file.
    """
    location = _location(index, name)
    if location is None:
        return None
    path, identity = location
    try:
        if path.is_symlink():
            return None
        stored = _strict_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if (
        not isinstance(stored, dict)
        or stored.get("format") != _FORMAT
        or stored.get("index") != identity
        or "data" not in stored
    ):
        return None
    return stored["data"]


def write_derived(index: Any, name: str, data: Any) -> bool:
    """Store JSON-safe ``data`` as ``name`` for this index; return whether it was written.

    The file is written to a temporary name and renamed into place, so a reader
    sees the old file or the new one, never half of one. Nothing is written for an
    index without a directory of its own, and a directory that cannot be written
    (read-only, full disk) is not an error.

    Raises:
        ValueError: ``name`` is not a plain ``.json`` file name, or ``data`` holds a
            NaN or infinite number.
        TypeError: ``data`` is not JSON-serialisable.

    """
    location = _location(index, name)
    if location is None:
        return False
    path, identity = location
    text = json.dumps(
        {"format": _FORMAT, "index": identity, "data": data},
        sort_keys=True,
        ensure_ascii=False,
        allow_nan=False,
    )
    folder = path.parent
    try:
        if folder.is_symlink():
            return False
        folder.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        return False
    return True


def is_derived_file(path: Path) -> bool:
    """Whether ``path`` is a derived file :func:`write_derived` wrote (or was writing).

    Decided by its name and its last bytes, not by its folder: a file the user put
    in ``derived/`` is not sealgraph's, and a build must not delete it.
    """
    if not (_NAME.fullmatch(path.name) or _TEMP_NAME.fullmatch(path.name)):
        return False
    try:
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - _TAIL_BYTES))
            tail = f.read()
    except OSError:
        return False
    return _TAIL.search(tail) is not None


def _location(index: Any, name: str) -> tuple[Path, str] | None:
    """Path of the derived file ``name`` of ``index`` and the index's identity.

    None when the index was not loaded from a directory (an in-memory index), or
    the directory now holds another build than the loaded one: what is derived
    from this index must not be stored as the other's.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"a derived cache is named like 'name.json', not {name!r}")
    manifest = getattr(index, "manifest", None)
    directory = getattr(index, "path", None)
    if not isinstance(manifest, Mapping) or not isinstance(directory, str | os.PathLike):
        return None
    identity = index_identity(manifest)
    if identity is None:
        return None
    directory = Path(directory)
    try:
        on_disk = _strict_json((directory / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(on_disk, dict) or index_identity(on_disk) != identity:
        return None
    return directory / DERIVED_DIR / name, identity


def _strict_json(text: str) -> Any:
    """Parse JSON, refusing the ``NaN`` and ``Infinity`` that Python's parser accepts."""
    return json.loads(text, parse_constant=_refuse_constant)


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")
