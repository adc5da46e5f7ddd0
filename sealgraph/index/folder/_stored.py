"""The documents and source files a folder index holds, read back for a build that adds to it."""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from sealgraph.errors import (
    IndexCorruptError,
)
from sealgraph.index._documents import Scope, document_counts
from sealgraph.index.folder._manifest import verify_files
from sealgraph.index.folder._store import (
    DOCSTORE_FILE,
    read_document_files,
    read_document_ids,
    read_documents,
    read_sources,
)
from sealgraph.types import Document


def merge_documents(
    index_dir: Path,
    existing: dict[str, Any] | None,
    given: list[Document],
    given_files: Mapping[str, str],
    *,
    replace: bool,
    scope: Scope | None = None,
    prune: bool = False,
) -> tuple[list[Document], dict[str, str], dict[str, int], list[Document]]:
    """Documents of the new index, their files, the counts, and the stale documents.

    Adding keeps the index's documents in their order, with those whose id is
    given again replaced in place, and appends the new ones. Replacing keeps none.
    Stale documents are kept ones whose file is in ``scope`` but gone
    (:meth:`Scope.gone`); ``prune`` removes them.

    Returns:
        ``(documents, file of each document read from one, document counts, stale)``.

    """
    given_ids = {doc.doc_id for doc in given}
    if replace or existing is None:
        old_ids = _old_document_ids(index_dir, existing)
        updated = len(given_ids & old_ids)
        counts = {"added": len(given) - updated, "updated": updated, "kept": 0}
        counts["removed"] = len(old_ids - given_ids)
        return given, dict(given_files), document_counts(counts), []
    try:
        verify_files(index_dir, existing, (DOCSTORE_FILE,))
        old = read_documents(index_dir / DOCSTORE_FILE)
        old_files = stored_document_files(index_dir / DOCSTORE_FILE, existing, old)
    except (IndexCorruptError, OSError, ValueError, TypeError, sqlite3.DatabaseError) as exc:
        raise IndexCorruptError(
            f"cannot add to the index at {index_dir}: its documents cannot be read back "
            f"({exc}); rebuild it from all of its files with --replace (replace=True)"
        ) from None
    stale = [
        doc
        for doc in old
        if doc.doc_id not in given_ids
        and scope is not None
        and scope.gone(old_files.get(doc.doc_id))
    ]
    dropped = {doc.doc_id for doc in stale} if prune else set()
    by_id = {doc.doc_id: doc for doc in given}
    old_ids = {doc.doc_id for doc in old}
    merged = [by_id.get(doc.doc_id, doc) for doc in old if doc.doc_id not in dropped]
    merged.extend(doc for doc in given if doc.doc_id not in old_ids)
    files = {
        doc_id: file
        for doc_id, file in old_files.items()
        if doc_id not in given_ids and doc_id not in dropped
    }
    files.update(given_files)
    return merged, files, document_counts(_merge_counts(old, given, dropped)), stale


def _merge_counts(
    old: Sequence[Document], given: Sequence[Document], dropped: set[str]
) -> dict[str, int]:
    """Documents added, updated (given again, changed), unchanged, kept and removed."""
    old_by_id = {doc.doc_id: doc for doc in old}
    again = [doc for doc in given if doc.doc_id in old_by_id]
    unchanged = sum(1 for doc in again if old_by_id[doc.doc_id] == doc)
    return {
        "added": len(given) - len(again),
        "updated": len(again) - unchanged,
        "unchanged": unchanged,
        "kept": len(old) - len(again) - len(dropped),
        "removed": len(dropped),
    }


def stored_document_files(
    docstore: Path, manifest: Mapping[str, Any], documents: Iterable[Any]
) -> dict[str, str]:
    """Return the file each stored document was read from, by id (where known).

    Docstores record it (:func:`~sealgraph.index.folder._store.read_document_files`); for
    those written before they did, it is found from what each document says it
    came from (its ``source``, a path as given with ``:LINE`` for JSONL records)
    among the source files the index records (:func:`stored_sources`).
    """
    recorded = read_document_files(docstore)
    if recorded is not None:
        return recorded
    listed = [s["path"] for s in stored_sources(docstore.parent, manifest)]
    found = {doc.doc_id: _file_of_source(doc.source, listed) for doc in documents}
    return {doc_id: file for doc_id, file in found.items() if file is not None}


def _file_of_source(source: str, listed: Sequence[str]) -> str | None:
    candidates = [source]
    if re.search(r":\d+$", source):
        candidates.append(source.rsplit(":", 1)[0])
    for candidate in reversed(candidates):  # a JSONL record's file first
        if not candidate:
            continue
        path = Path(candidate)
        if path.is_absolute():
            for option in (os.path.normpath(candidate), path.resolve().as_posix()):
                if option in listed:
                    return option
            continue
        suffix = "/" + PurePosixPath(os.path.normpath(candidate)).as_posix()
        matches = [file for file in listed if file.endswith(suffix)]
        if len(matches) == 1:
            return matches[0]
    return None


def _old_document_ids(index_dir: Path, existing: dict[str, Any] | None) -> set[str]:
    """Ids in the index being replaced (only counted: a damaged docstore counts none)."""
    if existing is None:
        return set()
    try:
        verify_files(index_dir, existing, (DOCSTORE_FILE,))
        return set(read_document_ids(index_dir / DOCSTORE_FILE))
    except (IndexCorruptError, OSError, sqlite3.DatabaseError):
        return set()


def stored_sources(index_dir: Path, manifest: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Return the source files the index in ``index_dir`` records (none without one).

    The docstore's table (:func:`~sealgraph.index.folder._store.read_sources`); indexes of
    earlier versions listed them in the manifest. A docstore that cannot be read
    records none (a rebuild lists the files it reads).
    """
    if manifest is None:
        return []
    try:
        found = read_sources(index_dir / DOCSTORE_FILE)
    except (OSError, sqlite3.DatabaseError):
        found = None
    if found is not None:
        return found
    listed = manifest.get("sources")
    if not isinstance(listed, list):
        return []
    return [s for s in listed if isinstance(s, dict) and isinstance(s.get("path"), str)]
