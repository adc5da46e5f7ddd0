"""The documents of a build, any backend's: those given, those an index keeps, those removed.

A build reads the given paths or documents (:func:`given_documents`); adding to an
index keeps its documents and replaces those given again (a folder index's:
:func:`~sealgraph.index.folder._stored.merge_documents`), noting the stale ones whose
file, within the paths given (:class:`Scope`), is gone (:func:`stale_message`). The
list of source files follows (:func:`merge_sources`, :func:`pruned_source`); a removal
names documents by file, folder or id (:func:`documents_to_remove`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sealgraph.errors import IngestError, InputError
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


def stale_message(stale: Sequence[Document], files: Mapping[str, str], scope: Scope | None) -> str:
    """Return the warning about stale documents a build kept (see :func:`~sealgraph.index.folder._stored.merge_documents`)."""
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


def document_counts(counts: dict[str, int]) -> dict[str, int]:
    """Return document counts under their manifest names (``documents_added``...)."""
    return {f"documents_{key}": value for key, value in counts.items()}


def merge_sources(
    existing: Sequence[Mapping[str, Any]],
    sources: Sequence[SourceFile],
    *,
    replace: bool,
    drop: Callable[[str], bool] | None = None,
) -> list[dict[str, Any]]:
    """Source files of the new index: the given ones, after the kept ones read before.

    ``existing`` are the files the index recorded (:func:`~sealgraph.index.folder._stored.stored_sources`); ``drop``
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


def documents_to_remove(
    where: Path | object,
    targets: Sequence[str],
    documents: Sequence[Document],
    files: Mapping[str, str],
) -> set[str]:
    """Return the ids of the documents the targets name; refuse a target naming none.

    Raises:
        InputError: A target matches no document (the message names it), or every
            document would go.

    """
    matched = _documents_of_targets(targets, documents, files)
    unmatched = [target for target in targets if not matched[target]]
    if unmatched:
        raise InputError(
            f"no document of the index at {where} came from {', '.join(unmatched)} "
            f"(no file there or inside it was indexed, and no document has that id); "
            f"nothing was removed"
        )
    removed: set[str] = set().union(*matched.values())
    if all(doc.doc_id in removed for doc in documents):
        raise InputError(
            f"removing {', '.join(targets)} would leave the index at {where} empty; "
            f"delete the index instead, or rebuild it with --replace"
        )
    return removed


def covered(file: str, targets: Sequence[str]) -> bool:
    """Whether ``file`` is one of ``targets`` (files or folders) or inside one of them."""
    return _covered(file, targets)


def _target_paths(target: str) -> set[str]:
    """Return a target as an absolute path, as given and with symlinks resolved (POSIX)."""
    path = Path(target).expanduser()
    return {Path(os.path.abspath(path)).as_posix(), path.resolve().as_posix()}


def _covered(file: str, targets: Sequence[str]) -> bool:
    """Whether ``file`` is one of ``targets`` or inside one of them."""
    return any(within(file, option) for target in targets for option in _target_paths(target))


def _documents_of_targets(
    targets: Sequence[str], documents: Sequence[Document], files: Mapping[str, str]
) -> dict[str, set[str]]:
    """Return the ids of the documents each target names (by file or folder, or by id)."""
    ids = {doc.doc_id for doc in documents}
    by_file: dict[str, list[str]] = {}
    for doc_id, file in files.items():
        if doc_id in ids:
            by_file.setdefault(file, []).append(doc_id)
    found: dict[str, set[str]] = {}
    for target in targets:
        options = _target_paths(target)
        hits = {
            doc_id
            for file, doc_ids in by_file.items()
            if any(within(file, option) for option in options)
            for doc_id in doc_ids
        }
        if target in ids:
            hits.add(target)
        found[target] = hits
    return found
