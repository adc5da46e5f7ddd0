"""The documents of a new index: those given, merged with those it already holds.

A build reads the given paths or documents (:func:`given_documents`); adding to an
index keeps its documents and replaces those given again (:func:`merge_documents`),
noting the stale ones whose file, within the paths given (:class:`Scope`), is gone.
Each stored document's file (:func:`stored_document_files`) and the list of source
files in the manifest (:func:`merge_sources`) follow.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from sealgraph.errors import IndexCorruptError, IngestError, InputError
from sealgraph.index._manifest import verify_files
from sealgraph.index._store import (
    DOCSTORE_FILE,
    read_document_files,
    read_document_ids,
    read_documents,
    read_sources,
)
from sealgraph.ingest import LoaderLimits, SourceFile, WarnFn, load_corpus
from sealgraph.types import Document


def given_documents(
    inputs: Any,
    warn: WarnFn,
    *,
    follow_links: bool = False,
    limits: LoaderLimits | None = None,
    exclude: Sequence[str] = (),
) -> tuple[list[Document], list[SourceFile], dict[str, str], list[str]]:
    """Return the documents to index, the files read, the file of each document, what was left out.

    The last is :attr:`sealgraph.ingest.Corpus.excluded`: the files and folders the
    ignore patterns left out (none when documents were given).
    """
    items = [inputs] if isinstance(inputs, str | os.PathLike) else inputs
    items = list(items) if isinstance(items, Iterable) else [items]
    if not items:
        raise InputError("no documents or paths given to index")
    if not all(isinstance(item, Document) for item in items):
        if any(isinstance(item, Document) for item in items):
            raise InputError("give either paths or Document objects, not a mix")
        corpus = load_corpus(
            items, warn=warn, follow_links=follow_links, limits=limits, exclude=exclude
        )
        files = _files_of(corpus.documents, corpus.sources)
        return corpus.documents, corpus.sources, files, corpus.excluded
    seen: set[str] = set()
    for doc in items:
        if doc.doc_id in seen:
            raise IngestError(f"duplicate document id {doc.doc_id!r}; document ids must be unique")
        seen.add(doc.doc_id)
    return items, [], {}, []


def _files_of(documents: Sequence[Document], sources: Sequence[SourceFile]) -> dict[str, str]:
    """Map each document to its file: sources say, in order, how many documents each gave."""
    if sum(source.n_documents for source in sources) != len(documents):
        return {}  # not the loader's contiguous order: record no files rather than wrong ones
    files: dict[str, str] = {}
    docs = iter(documents)
    for source in sources:
        for _ in range(source.n_documents):
            files[next(docs).doc_id] = source.path
    return files


@dataclass(frozen=True)
class Scope:
    """The files and folders a build was given, and the files it read from them."""

    roots: tuple[str, ...]
    """The given paths, absolute with symlinks resolved (POSIX)."""
    read: frozenset[str]
    """Every file read (as :attr:`SourceFile.path`), documents or not."""
    excluded: tuple[str, ...] = ()
    """Files and folders inside the folders given that the ignore patterns left out."""

    @classmethod
    def of(
        cls, inputs: Any, sources: Sequence[SourceFile], excluded: Sequence[str] = ()
    ) -> Scope | None:
        """Return the scope of the paths given to a build; None when documents were given."""
        items = [inputs] if isinstance(inputs, str | os.PathLike) else inputs
        if not isinstance(items, list) or not all(isinstance(i, str | os.PathLike) for i in items):
            return None
        roots = tuple(Path(item).resolve().as_posix() for item in items)
        return cls(roots, frozenset(source.path for source in sources), tuple(excluded))

    def covers(self, file: str) -> bool:
        """Whether ``file`` is one of the given files or inside a given folder."""
        return any(within(file, root) for root in self.roots)

    def gone(self, file: str | None) -> bool:
        """Whether a document of ``file`` that this build did not give again is stale.

        That is: ``file`` is in scope and either no longer exists, was read again
        without giving that document, or is now left out by the ignore patterns
        (``--exclude``, ``.sealgraphignore``); a file that exists but was skipped,
        with a warning, keeps its documents.
        """
        return (
            file is not None
            and self.covers(file)
            and (
                file in self.read
                or not os.path.lexists(file)
                or any(within(file, left_out) for left_out in self.excluded)
            )
        )


def within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (POSIX paths)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


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
    updated = len(again) - unchanged
    return {
        "added": len(given) - len(again),
        "updated": updated,
        "unchanged": unchanged,
        "kept": len(old) - len(again) - len(dropped),
        "removed": len(dropped),
    }


def stale_message(stale: Sequence[Document], files: Mapping[str, str], scope: Scope | None) -> str:
    """Return the warning about stale documents a build kept (see :func:`merge_documents`)."""
    shown = ", ".join(files.get(doc.doc_id, doc.doc_id) for doc in stale[:3])
    more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
    roots = ", ".join(scope.roots) if scope is not None else ""
    them = "them" if len(stale) > 1 else "it"
    return (
        f"kept {len(stale)} document{'s' if len(stale) > 1 else ''} of {roots} that this build "
        f"did not read again ({shown}{more}): the file is gone, is left out by the ignore "
        f"patterns, no longer holds {them}, or gave {them} another id; index with --prune "
        f"(prune=True) to remove {them}, or remove "
        f"{them} with `sealgraph index --remove PATH`"
    )


def stored_document_files(
    docstore: Path, manifest: Mapping[str, Any], documents: Iterable[Any]
) -> dict[str, str]:
    """Return the file each stored document was read from, by id (where known).

    Docstores record it (:func:`~sealgraph.index._store.read_document_files`); for
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


def document_counts(counts: dict[str, int]) -> dict[str, int]:
    """Return document counts under their manifest names (``documents_added``...)."""
    return {f"documents_{key}": value for key, value in counts.items()}


def stored_sources(index_dir: Path, manifest: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Return the source files the index in ``index_dir`` records (none without one).

    The docstore's table (:func:`~sealgraph.index._store.read_sources`); indexes of
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


def merge_sources(
    existing: Sequence[Mapping[str, Any]],
    sources: Sequence[SourceFile],
    *,
    replace: bool,
    drop: Callable[[str], bool] | None = None,
) -> list[dict[str, Any]]:
    """Source files of the new index: the given ones, after the kept ones read before.

    ``existing`` are the files the index recorded (:func:`stored_sources`); ``drop``
    says which kept ones to leave out (files whose documents were removed).
    """
    new = [{"path": s.path, "sha256": s.sha256, "documents": s.n_documents} for s in sources]
    if replace:
        return new
    paths = {s["path"] for s in new}
    kept = [
        dict(s)
        for s in existing
        if s.get("path") not in paths and not (drop is not None and drop(str(s.get("path"))))
    ]
    return kept + new


def pruned_source(
    scope: Scope | None, files: Mapping[str, str], prune: bool
) -> Callable[[str], bool] | None:
    """With ``prune``: drop listed files in scope that no kept document comes from."""
    if not prune or scope is None:
        return None
    still = set(files.values())
    return lambda path: scope.covers(path) and path not in still
