"""Removing documents from an index: by file, by folder or by id, nothing embedded again."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from sealgraph.errors import IndexCorruptError, InputError
from sealgraph.index._documents import covered, document_counts, documents_to_remove
from sealgraph.index._plan import manifest_lexicon, sealgraph_version
from sealgraph.index.folder._ann import ANN_FILE, has_ann, renumbered
from sealgraph.index.folder._build import file_digests, lexical_entry, name_key
from sealgraph.index.folder._dense import VECTORS_FILE, DenseIndex
from sealgraph.index.folder._lexical import field_weight_of, write_lexical
from sealgraph.index.folder._lifecycle import (
    inspect_target,
    locked_index,
    restore_interrupted,
    swap_into_place,
)
from sealgraph.index.folder._manifest import fsync_tree, read_manifest, verify_files, write_manifest
from sealgraph.index.folder._segments import SegmentInfo
from sealgraph.index.folder._staging import staging, tree_bytes
from sealgraph.index.folder._statistics import counts_after, statistics_entry
from sealgraph.index.folder._store import (
    DOCSTORE_FILE,
    read_docstore,
    read_documents,
    read_rows,
    write_docstore,
    write_sources,
)
from sealgraph.index.folder._stored import stored_document_files, stored_sources
from sealgraph.ingest import WarnFn, warn_stderr
from sealgraph.text.chunking import lexical_text
from sealgraph.text.lexicon import Lexicon, get_lexicon, lexicon_spec
from sealgraph.types import Chunk, Document

_T = TypeVar("_T")


def remove_documents_dir(
    index_dir: Path,
    targets: Sequence[str | os.PathLike[str]],
    *,
    lock_timeout: float,
    warn: WarnFn | None,
    finish: Callable[[Path], _T],
) -> _T:
    """Remove the documents of ``targets`` from the index in ``index_dir``; return ``finish(...)``.

    A target is a file or folder, matching the documents read from that file or
    from files inside that folder (the files need not exist any more), or a
    document id. The other documents keep their chunks and vectors as stored:
    nothing is chunked or embedded again and no embedder is needed; the lexical
    (BM25) part is rebuilt. Written like a build: into a temporary sibling, then
    swapped into place under the index's lock, the manifest last.

    Raises:
        InputError: No targets; a target that matches no document (nothing is
            removed then); or removing would leave the index empty.
        IndexCorruptError: No index there, or its docstore or vectors are damaged.
        ConfigError: The lexicon the index records cannot be found.

    """
    warn = warn or warn_stderr
    index_dir = index_dir.resolve()
    given = [os.fspath(target) for target in targets]
    if not given:
        raise InputError("give the files, folders or document ids to remove")
    restore_interrupted(index_dir, timeout=lock_timeout, warn=warn)
    if inspect_target(index_dir) is None:
        raise IndexCorruptError(f"no sealgraph index at {index_dir} to remove documents from")
    with locked_index(index_dir, timeout=lock_timeout, warn=warn):
        existing = inspect_target(index_dir)
        if existing is None:
            raise IndexCorruptError(f"no sealgraph index at {index_dir} to remove documents from")
        manifest = read_manifest(index_dir)
        lex = get_lexicon(manifest_lexicon(manifest))
        stored = _read_stored(index_dir, manifest)
        removal = _plan_removal(index_dir, given, stored)
        with staging(index_dir, lambda: tree_bytes(index_dir)) as tmp:
            hashes = [stored.hashes[row] for row in removal.rows]
            statistics = counts_after(
                removal.kept, hashes, index_dir / DOCSTORE_FILE, manifest.get("statistics"), lex
            )
            write_docstore(
                tmp / DOCSTORE_FILE,
                removal.remaining,
                removal.kept,
                hashes,
                stored.files,
                name_key=name_key(lex),
                lex=lex,
                statistics=statistics,
            )
            weight = field_weight_of(manifest)
            segments = write_lexical(
                tmp, (lexical_text(chunk, weight) for chunk in removal.kept), lex
            )
            if stored.vectors is not None:
                vectors = np.ascontiguousarray(stored.vectors[removal.rows])
                lists = None
                if has_ann(manifest):  # the same lists, the rows numbered anew
                    lists = renumbered(index_dir / ANN_FILE, vectors)
                DenseIndex(vectors, lists).save(tmp)
            manifest = _manifest_after_removal(
                index_dir, tmp, manifest, lex, stored, removal, segments
            )
            write_manifest(tmp, manifest)
            fsync_tree(tmp)
            swap_into_place(tmp, index_dir, existing, warn)
        return finish(index_dir)


@dataclass(frozen=True)
class _Stored:
    """What an index holds, read back (and checked) for a removal."""

    documents: list[Document]
    chunks: list[Chunk]
    hashes: list[str]
    """The content hash of each chunk."""
    files: dict[str, str]
    """The file each document was read from, by id (where known)."""
    vectors: np.ndarray | None
    """One float32 row per chunk; None for a lexical-only index."""


def _read_stored(index_dir: Path, manifest: dict[str, Any]) -> _Stored:
    """Read the documents, chunks and vectors of the index; damage is an IndexCorruptError."""
    dense = bool(manifest.get("embedder"))
    docstore = index_dir / DOCSTORE_FILE
    verify_files(index_dir, manifest, (DOCSTORE_FILE, *((VECTORS_FILE,) if dense else ())))
    try:
        documents = read_documents(docstore)
        _, chunks, hashes = read_docstore(docstore)
        files = stored_document_files(docstore, manifest, documents)
        vectors = np.load(index_dir / VECTORS_FILE, mmap_mode="r") if dense else None
        if vectors is not None:
            rows = read_rows(docstore)  # an index added to row by row has gaps
            if vectors.dtype != np.float32 or vectors.ndim != 2 or len(vectors) <= max(rows):
                raise ValueError(f"{VECTORS_FILE} does not hold one float32 row per chunk")
            vectors = np.ascontiguousarray(vectors[rows])  # one per chunk, in order
    except (OSError, ValueError, KeyError, TypeError, sqlite3.DatabaseError) as exc:
        raise IndexCorruptError(
            f"damaged index at {index_dir}: {type(exc).__name__}: {exc}; rebuild it with "
            f"`sealgraph index PATH --index {index_dir} --replace`"
        ) from None
    return _Stored(documents, chunks, hashes, files, vectors)


@dataclass(frozen=True)
class _Removal:
    """What a removal takes out of an index and what it keeps."""

    removed: set[str]
    """Ids of the documents removed."""
    remaining: list[Document]
    rows: list[int]
    """Rows (in the stored chunks and vectors) of the chunks kept."""
    kept: list[Chunk]
    dropped: Callable[[str], bool]
    """Whether a source file the manifest lists is no longer one of the index's."""


def _plan_removal(index_dir: Path, given: list[str], stored: _Stored) -> _Removal:
    """Match the targets to documents; refuse a target matching none, or removing them all."""
    removed = documents_to_remove(index_dir, given, stored.documents, stored.files)
    remaining = [doc for doc in stored.documents if doc.doc_id not in removed]
    rows = [row for row, chunk in enumerate(stored.chunks) if chunk.doc_id not in removed]
    kept = [stored.chunks[row] for row in rows]
    files = stored.files
    still = {files[doc.doc_id] for doc in remaining if doc.doc_id in files}
    gone = {files[doc_id] for doc_id in removed if doc_id in files}

    def dropped(path: str) -> bool:
        return path not in still and (path in gone or covered(path, given))

    return _Removal(removed, remaining, rows, kept, dropped)


def _manifest_after_removal(
    index_dir: Path,
    tmp: Path,
    manifest: dict[str, Any],
    lex: Lexicon,
    stored: _Stored,
    removal: _Removal,
    segments: Sequence[SegmentInfo],
) -> dict[str, Any]:
    """Return the manifest of the index written in ``tmp``: the old one, updated.

    The source files the index in ``index_dir`` recorded are kept in ``tmp``'s
    docstore, less those whose documents all went.
    """
    n_kept = len(removal.kept)
    kept = [s for s in stored_sources(index_dir, manifest) if not removal.dropped(s["path"])]
    write_sources(tmp / DOCSTORE_FILE, kept, replace=True)
    # An earlier version's list of sources, and its numpy inverted file, are left out.
    left_out = {"sources"} if has_ann(manifest) else {"sources", "ann"}
    return {
        **{k: v for k, v in manifest.items() if k not in left_out},
        "sealgraph_version": sealgraph_version(),
        "lexicon": lexicon_spec(lex),
        "lexical": lexical_entry(lex, segments, field_weight_of(manifest)),
        "statistics": statistics_entry(lex, n_kept, tmp / DOCSTORE_FILE),
        "counts": {
            "documents": len(removal.remaining),
            "chunks": n_kept,
            "vectors_reused": n_kept if stored.vectors is not None else 0,
            "vectors_new": 0,
            **document_counts(
                {
                    "added": 0,
                    "updated": 0,
                    "kept": len(removal.remaining),
                    "removed": len(removal.removed),
                }
            ),
        },
        **file_digests(tmp),
    }
