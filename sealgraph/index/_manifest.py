"""The index manifest: what an index was built with, and a checksum of every file.

The manifest is written last, so a directory without one is never mistaken for a
complete index, and the SHA-256 of every file lets :func:`verify_files` detect a
damaged or truncated index before anything is read from it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from sealgraph.errors import IndexCorruptError

MANIFEST_FILE = "manifest.json"
FORMAT_NAME = "sealgraph-index"
FORMAT_VERSION = 1


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexCorruptError(
            f"damaged index at {directory}: {MANIFEST_FILE} is not valid JSON ({exc}); "
            f"rebuild it with `sealgraph index PATH --index {directory}`"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise IndexCorruptError(
            f"damaged index at {directory}: {MANIFEST_FILE} is not a sealgraph manifest"
        )
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise IndexCorruptError(
            f"the index at {directory} has format version {version}, this sealgraph reads "
            f"version {FORMAT_VERSION}; rebuild it with `sealgraph index PATH --index "
            f"{directory}`"
        )
    if not isinstance(manifest.get("files"), dict):
        raise IndexCorruptError(f"damaged index at {directory}: {MANIFEST_FILE} lists no files")
    return manifest


def verify_files(
    directory: Path, manifest: dict[str, Any], required: tuple[str, ...] | None = None
) -> None:
    """Check that the listed files exist and match their checksums.

    Args:
        directory: The index directory.
        manifest: Its manifest.
        required: Files to check (they must be listed); None checks every listed file.

    Raises:
        IndexCorruptError: A file is missing, unlisted or changed, naming it.

    """
    listed: dict[str, str] = manifest["files"]
    names = tuple(listed) if required is None else required
    for name in names:
        if name not in listed:
            raise IndexCorruptError(
                f"damaged index at {directory}: {MANIFEST_FILE} does not list {name}"
            )
        path = directory / name
        if not path.is_file():
            raise IndexCorruptError(f"damaged index at {directory}: {name} is missing")
        if file_sha256(path) != listed[name]:
            raise IndexCorruptError(
                f"damaged index at {directory}: {name} does not match its checksum "
                f"(changed or truncated); rebuild it with `sealgraph index PATH --index "
                f"{directory}`"
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
