"""The index manifest: what an index was built with, and a checksum of every file.

The manifest is written last, so a directory without one is never mistaken for a
complete index, and the SHA-256 of every file lets :func:`verify_files` detect a
damaged or truncated index before anything is read from it.

The manifest is also sealgraph's marker: a directory is treated as a sealgraph
index (which a build may replace) only when its ``manifest.json`` says
``"format": "sealgraph-index"`` with a known ``format_version``
(:func:`read_marker`), and only the files that manifest lists are sealgraph's
(:func:`foreign_entries` names the others).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from sealgraph.errors import IndexCorruptError, InputError

MANIFEST_FILE = "manifest.json"
FORMAT_NAME = "sealgraph-index"
FORMAT_VERSION = 3
"""Version of the index format this sealgraph writes and reads. 2: document text is
normalised (NFC, invisible characters removed; :mod:`sealgraph.text.normalize`). 3:
the lexical index is memory-mapped segments (:mod:`sealgraph.index.folder._segments`), the
manifest holds each file's size and quick digest, the docstore the name tables."""
KNOWN_FORMAT_VERSIONS = frozenset({1, 2, FORMAT_VERSION})
"""Format versions this sealgraph recognises as its own, and so may replace."""


def old_format_message(directory: Path, version: object) -> str:
    """Say that the index in ``directory`` has another format version, and what to do."""
    if type(version) is int and version in KNOWN_FORMAT_VERSIONS:
        return (
            f"the index at {directory} was built by an older sealgraph (format version "
            f"{version}; this one reads {FORMAT_VERSION}): rebuild it from its documents with "
            f"`sealgraph index PATH --index {directory} --replace`"
        )
    return (
        f"the index at {directory} has format version {version}, this sealgraph reads "
        f"version {FORMAT_VERSION}; open it with the sealgraph that built it, or build "
        f"a new index in another directory"
    )


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


QUICK_BYTES = 1 << 16
"""Bytes read from each end of a file for its quick digest."""


def quick_digest(path: Path) -> str:
    """Return a cheap digest of a file: its size and its first and last :data:`QUICK_BYTES`.

    What an index checks when it opens (a full SHA-256 of gigabytes would take
    seconds): a truncated, extended, replaced or foreign file shows; a change in the
    middle of a large file needs ``sealgraph index --verify``.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        digest.update(str(size).encode())
        f.seek(0)
        digest.update(f.read(QUICK_BYTES))
        if size > QUICK_BYTES:
            f.seek(max(QUICK_BYTES, size - QUICK_BYTES))
            digest.update(f.read(QUICK_BYTES))
    return digest.hexdigest()


def quick_tree(directory: Path, names: Iterable[str]) -> dict[str, str]:
    """Quick digests (:func:`quick_digest`) of the given files of ``directory``."""
    return {name: quick_digest(directory / name) for name in names}


def checksum_tree(directory: Path) -> dict[str, str]:
    """SHA-256 of every file under ``directory`` except the manifest, by POSIX path."""
    sums = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and path.name != MANIFEST_FILE:
            sums[path.relative_to(directory).as_posix()] = file_sha256(path)
    return sums


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest.json`` (sorted keys, so equal builds give equal files)."""
    text = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (directory / MANIFEST_FILE).write_text(text, encoding="utf-8")


def read_manifest(directory: Path) -> dict[str, Any]:
    """Read and sanity-check the manifest of the index in ``directory``.

    Raises:
        IndexCorruptError: No index there, unreadable JSON, or an unknown format.

    """
    path = directory / MANIFEST_FILE
    if not directory.is_dir() or not path.is_file():
        raise IndexCorruptError(
            f"no sealgraph index at {directory} "
            f"(build one with `sealgraph index PATH --index {directory}`)"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise IndexCorruptError(
            f"damaged index at {directory}: {MANIFEST_FILE} is not valid JSON ({exc}); "
            f"rebuild it with `sealgraph index PATH --index {directory} --replace`"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise IndexCorruptError(
            f"no sealgraph index at {directory}: its {MANIFEST_FILE} was not written by sealgraph"
        )
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise IndexCorruptError(old_format_message(directory, version))
    if not isinstance(manifest.get("files"), dict):
        raise IndexCorruptError(f"damaged index at {directory}: {MANIFEST_FILE} lists no files")
    return manifest


def read_marker(directory: Path) -> dict[str, Any]:
    """Return the manifest of ``directory`` if it carries sealgraph's marker, else refuse.

    Unlike :func:`read_manifest` this does not judge whether the index is intact
    (its ``files`` listing may be missing): it decides whether the directory is
    sealgraph's at all, so that nothing else is ever replaced.

    Raises:
        InputError: No ``manifest.json``, one that is not sealgraph's (another
            program's, unreadable, not JSON), or a format version this sealgraph
            does not know.

    """
    path = directory / MANIFEST_FILE
    refuse = "refusing to touch it (choose a new or empty directory for the index)"
    if not path.is_file():
        raise InputError(f"{directory} exists and is not a sealgraph index; {refuse}")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise InputError(
            f"{directory} is not a sealgraph index (its {MANIFEST_FILE} was not written by "
            f"sealgraph); {refuse}"
        )
    version = manifest.get("format_version")
    if type(version) is not int or version not in KNOWN_FORMAT_VERSIONS:
        raise InputError(
            f"{directory} holds a sealgraph index of format version {version!r}, which this "
            f"sealgraph (format version {FORMAT_VERSION}) does not replace; use the "
            f"sealgraph that built it, or choose another directory"
        )
    return manifest


def foreign_entries(
    directory: Path,
    manifest: dict[str, Any],
    own: Iterable[str] = (),
    own_folders: Mapping[str, Callable[[Path], bool]] | None = None,
) -> list[str]:
    """Return what in ``directory`` sealgraph did not write, as sorted relative POSIX paths.

    Sealgraph's are the manifest, the files it lists, the names in ``own`` and the
    folders holding them, and in each folder of ``own_folders`` (caches whose names
    the manifest cannot know) the plain files (not symlinks, not subfolders) its
    predicate recognises as sealgraph's by their content; anything else (a file,
    an unlisted or symlinked folder, or a folder that cannot be read, which ends
    with ``/``) is someone else's.
    """
    listed = manifest.get("files")
    own_files = {MANIFEST_FILE, *own, *(listed if isinstance(listed, dict) else ())}
    whole = dict(own_folders or {})
    own_dirs = {parent for name in own_files for parent in _parents(name)}
    own_dirs.update(parent for folder in whole for parent in _parents(folder + "/"))
    foreign: list[str] = []

    def unreadable(error: OSError) -> None:
        foreign.append(_relative(directory, error.filename) + "/")

    for dirpath, dirnames, filenames in os.walk(directory, onerror=unreadable):
        recognise = whole.get(_relative(directory, dirpath))
        for name in list(dirnames):
            rel = _relative(directory, os.path.join(dirpath, name))
            if rel not in own_dirs or os.path.islink(os.path.join(dirpath, name)):
                foreign.append(rel + "/")
                dirnames.remove(name)
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = _relative(directory, path)
            if rel in own_files:
                continue
            if recognise is None or os.path.islink(path) or not recognise(Path(path)):
                foreign.append(rel)
    return sorted(foreign)


def _parents(name: str) -> list[str]:
    parts = name.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _relative(directory: Path, path: str | os.PathLike[str]) -> str:
    return Path(path).relative_to(directory).as_posix()


def verify_files(
    directory: Path,
    manifest: dict[str, Any],
    required: tuple[str, ...] | None = None,
    *,
    full: bool = False,
) -> None:
    """Check that the listed files exist and match what the manifest records.

    Args:
        directory: The index directory.
        manifest: Its manifest.
        required: Files to check (they must be listed); None checks every listed file.
        full: Compare full SHA-256 checksums (``sealgraph index --verify``); by
            default the quick digests the manifest records (:func:`quick_digest`),
            or the checksums for a manifest written before it recorded them.

    Raises:
        IndexCorruptError: A file is missing, unlisted or changed, naming it.

    """
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        raise IndexCorruptError(f"damaged index at {directory}: {MANIFEST_FILE} lists no files")
    quick = manifest.get("quick")
    quick = quick if isinstance(quick, dict) and not full else None
    names = tuple(listed) if required is None else required
    for name in names:
        if name not in listed:
            raise IndexCorruptError(
                f"damaged index at {directory}: {MANIFEST_FILE} does not list {name}"
            )
        path = directory / name
        if not path.is_file():
            raise IndexCorruptError(f"damaged index at {directory}: {name} is missing")
        if quick is not None and name in quick:
            same = quick_digest(path) == quick[name]
        else:
            same = file_sha256(path) == listed[name]
        if not same:
            raise IndexCorruptError(
                f"damaged index at {directory}: {name} does not match its checksum "
                f"(changed or truncated); rebuild it with `sealgraph index PATH --index "
                f"{directory} --replace`"
            )


def sibling_folders(index_dir: Path, suffix: str) -> list[Path]:
    """Folders beside ``index_dir`` named ``.NAME.<suffix>`` (a regex), sorted; no links.

    How sealgraph finds the temporary, parked and partial folders it made itself next to
    an index; an unreadable parent lists none.
    """
    pattern = re.compile(rf"\.{re.escape(index_dir.name)}\.{suffix}")
    try:
        entries = list(index_dir.parent.iterdir())
    except OSError:
        return []
    return sorted(
        entry
        for entry in entries
        if pattern.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink()
    )


def fsync_tree(directory: Path) -> None:
    """Flush every file and folder under ``directory`` to disk."""
    for path in sorted(directory.rglob("*"), reverse=True):
        fsync_path(path)
    fsync_path(directory)


def fsync_path(path: Path) -> None:
    """Flush one file or folder to disk."""
    flags = os.O_RDONLY | (os.O_DIRECTORY if path.is_dir() else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
