"""Adding documents to a large index without rewriting it: new rows, a new segment.

A build that adds to an index (not ``replace``, not ``prune``) with the same
settings (chunker, tokenizer, lexicon, embedder) and current corpus counts takes
this path: only the given documents are chunked; a document whose chunks and
record are unchanged is left alone; a new or changed document's chunks get new
rows at the end of the row space, in a new lexical segment (and new vectors),
while the rows of a changed document's old chunks are deleted (the lexical
index's deletion list; the docstore drops them). The corpus's proper-name counts
are updated by the chunks that came and went.

The new index is written like any build: into a temporary sibling (the files
that do not change hard-linked, the docstore copied then updated), then swapped
into place under the index's lock. Only the new files are checksummed.

BM25 statistics are taken over the live rows at query time, so the evidence is
the same as a fresh build's of the same documents, except that a changed
document's chunks now come after the others (ties between equal scores are
broken by row).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.index._counts import is_current
from sealgraph.index._embed import content_hash, embed_chunks
from sealgraph.index.folder._ann import ANN_FILE, LEGACY_ANN_FILES, extended, has_ann, save_ann
from sealgraph.index.folder._dense import VECTORS_FILE, DenseIndex
from sealgraph.index.folder._gazetteer import (
    create_gazetteer_tables,
    delete_gazetteer_rows,
    rewrite_key_filter,
    write_gazetteer_rows,
)
from sealgraph.index.folder._lexical import LEXICAL_DIR, field_weight_of, write_lexical
from sealgraph.index.folder._manifest import (
    FORMAT_VERSION,
    MANIFEST_FILE,
    file_sha256,
    quick_digest,
)
from sealgraph.index.folder._reuse import PartialEmbeddings
from sealgraph.index.folder._segments import (
    DELETED_FILE,
    SEGMENT_PREFIX,
    SegmentInfo,
    merge_segments,
)
from sealgraph.index.folder._sqlite import connect_readonly
from sealgraph.index.folder._statistics import statistics_entry, update_line_counts
from sealgraph.index.folder._store import (
    DOCSTORE_FILE,
    chunk_rows,
    dumps_json,
    name_rows_from,
    write_sources,
)
from sealgraph.text.chunking import SPLITTER_VERSION, indexed_text, lexical_text
from sealgraph.text.lexicon import Lexicon
from sealgraph.text.statistics import chunk_names
from sealgraph.types import Chunk, Document

__all__ = ["AppendPlan", "can_append", "plan_append", "write_append"]

_BATCH = 500


def can_append(existing: dict[str, Any] | None, settings: dict[str, Any]) -> bool:
    """Tell whether a build may add to the index of manifest ``existing`` row by row.

    ``settings``: ``max_tokens``, ``encoding``, ``lexicon`` (spec), ``lex`` (the
    lexicon), ``embedder`` (its name or None) of the build.
    """
    if existing is None or existing.get("format_version") != FORMAT_VERSION:
        return False
    chunker = existing.get("chunker") or {}
    lexical = existing.get("lexical") or {}
    embedder = existing.get("embedder") or {}
    lex = settings["lex"]
    return (
        chunker.get("max_tokens") == settings["max_tokens"]
        and chunker.get("splitter_version") == SPLITTER_VERSION
        and (existing.get("tokenizer") or {}).get("encoding") == settings["encoding"]
        and existing.get("lexicon") == settings["lexicon"]
        and lexical.get("tokenizer_version") == lex.tokenizer_version
        and bool(lexical.get("segments"))
        and embedder.get("name") == settings["embedder"]
        and is_current(existing.get("statistics"), lex)
    )


class AppendPlan:
    """What an add changes: the documents that come (new or changed) and the rows that go."""

    def __init__(self) -> None:
        self.documents: list[Document] = []
        """New and changed documents, in the order given."""
        self.chunks: list[Chunk] = []
        """Their chunks, in order."""
        self.gone_rows: list[int] = []
        """Rows of the changed documents' old chunks."""
        self.gone_texts: list[str] = []
        """Texts of those chunks (their names are counted out)."""
        self.gone_hashes: list[str] = []
        """Content hashes of those chunks (their vectors may be reused)."""
        self.gone_documents: list[list[str]] = []
        """The old chunk texts of each changed document (their lines are counted out)."""
        self.counts: dict[str, int] = {
            "added": 0,
            "updated": 0,
            "unchanged": 0,
            "kept": 0,
            "removed": 0,
        }
        """Documents added, updated (given again, changed), unchanged (given again, the
        same), kept (not given) and removed, as a build reports them."""
        self.hashes: list[str] = []
        """Content hashes of :attr:`chunks` (set when written)."""
        self.partial: PartialEmbeddings | None = None
        """Where embedded batches were kept for a resume (set when written)."""


def plan_append(
    docstore: Path,
    given: Sequence[Document],
    given_files: dict[str, str],
    chunk: Callable[[Document], list[Chunk]],
) -> AppendPlan:
    """Compare the given documents with the stored ones; chunk only the new and changed ones.

    A stored document given again with the same title, source, metadata, file and
    text (its stored chunks tile its text) is kept as it is without being chunked:
    chunking is a function of the document and the index's settings, which an add
    keeps (:func:`can_append`), so re-indexing a folder where few files changed
    chunks only those.
    """
    plan = AppendPlan()
    conn = connect_readonly(docstore)
    try:
        (n_old,) = conn.execute("SELECT COUNT(*) FROM documents").fetchone()
        for doc in given:
            stored = conn.execute(
                "SELECT title, source, metadata FROM documents WHERE doc_id = ?", (doc.doc_id,)
            ).fetchone()
            if stored is None:
                plan.counts["added"] += 1
                chunks = chunk(doc)
                hashes = [content_hash(indexed_text(c)) for c in chunks]
            else:
                old = conn.execute(
                    'SELECT "row", text, hash FROM chunks WHERE doc_id = ? ORDER BY ord',
                    (doc.doc_id,),
                ).fetchall()
                file = conn.execute(
                    "SELECT path FROM document_files WHERE doc_id = ?", (doc.doc_id,)
                ).fetchone()
                same_record = tuple(stored) == (
                    doc.title,
                    doc.source,
                    dumps_json(doc.metadata),
                ) and (file[0] if file else None) == given_files.get(doc.doc_id)
                if same_record and "".join(text for _, text, _ in old) == doc.text:
                    plan.counts["unchanged"] += 1
                    continue  # the same document: the same chunks
                chunks = chunk(doc)
                hashes = [content_hash(indexed_text(c)) for c in chunks]
                if same_record and [h for _, _, h in old] == hashes:
                    plan.counts["unchanged"] += 1
                    continue
                plan.counts["updated"] += 1
                plan.gone_documents.append([text for _, text, _ in old])
                for row, text, digest in old:
                    plan.gone_rows.append(int(row))
                    plan.gone_texts.append(text)
                    plan.gone_hashes.append(digest)
            plan.documents.append(doc)
            plan.chunks.extend(chunks)
        plan.counts["kept"] = n_old - plan.counts["updated"] - plan.counts["unchanged"]
    finally:
        conn.close()
    return plan


def write_append(
    tmp: Path,
    index_dir: Path,
    existing: dict[str, Any],
    plan: AppendPlan,
    given_files: dict[str, str],
    *,
    lex: Lexicon,
    name_key: Callable[[str], str],
    embedder: Any,
    sources: Sequence[dict[str, Any]],
    report: Any,
    warn: Any,
) -> dict[str, Any]:
    """Write the added-to index into ``tmp``; return its manifest (not yet written).

    The caller swaps ``tmp`` into place. ``existing`` is the index's manifest;
    ``sources`` the source files the index now records (all of them).
    """
    lexical = existing["lexical"]
    infos = [SegmentInfo.from_dict(s) for s in lexical["segments"]]
    n_rows = max(i.first_row + i.n_rows for i in infos)
    # An earlier sealgraph's numpy inverted file is left out (and its "ann" entry below).
    changed = {DOCSTORE_FILE, f"{LEXICAL_DIR}/{DELETED_FILE}", VECTORS_FILE, ANN_FILE}
    changed.update(LEGACY_ANN_FILES)
    _link_unchanged(index_dir, tmp, existing, changed)
    shutil.copyfile(index_dir / DOCSTORE_FILE, tmp / DOCSTORE_FILE)
    texts = [indexed_text(c) for c in plan.chunks]
    hashes = plan.hashes = [content_hash(t) for t in texts]
    n_docs, n_chunks = _update_docstore(
        tmp / DOCSTORE_FILE, plan, given_files, hashes, n_rows, name_key, lex
    )
    write_sources(tmp / DOCSTORE_FILE, sources, replace=True)
    new_infos = write_lexical(
        tmp,
        [lexical_text(c, field_weight_of(existing)) for c in plan.chunks],
        lex,
        first_row=n_rows,
        first_number=_next(infos),
    )
    deleted = _deleted_rows(index_dir, plan.gone_rows)
    if deleted.size:
        np.save(tmp / LEXICAL_DIR / DELETED_FILE, deleted, allow_pickle=False)
    segments = merge_small(tmp / LEXICAL_DIR, [*infos, *new_infos])
    dense_counts = {"vectors_reused": 0, "vectors_new": 0}
    if embedder is not None:
        dense_counts = _append_vectors(
            tmp, index_dir, existing, plan, texts, hashes, embedder, report, warn
        )
    if embedder is not None:  # as a build counts them: every vector it did not embed
        dense_counts["vectors_reused"] = n_chunks - dense_counts["vectors_new"]
    # A deep copy of plain data; an earlier version's list of sources is in the docstore now.
    manifest = json.loads(json.dumps({k: v for k, v in existing.items() if k != "sources"}))
    if not has_ann(existing):
        manifest.pop("ann", None)
    manifest["lexical"] = {**lexical, "segments": [i.to_dict() for i in segments]}
    manifest["statistics"] = statistics_entry(lex, n_chunks, tmp / DOCSTORE_FILE)
    manifest["counts"] = {
        "documents": n_docs,
        "chunks": n_chunks,
        **dense_counts,
        **{f"documents_{k}": v for k, v in plan.counts.items()},
    }
    manifest.update(_digests(tmp, existing, changed))
    return manifest


SMALL_SEGMENT_ROWS = 25_000
"""A segment of fewer rows is small: adds make them, merges fold them together."""
MAX_SMALL_SEGMENTS = 8
"""More small segments than this at the end of the list are merged into one."""


def merge_small(directory: Path, infos: list[SegmentInfo]) -> list[SegmentInfo]:
    """Merge the small segments at the end of ``infos`` when there are too many.

    Each add writes a segment of its own; a query reads every segment, so they are
    folded together once more than :data:`MAX_SMALL_SEGMENTS` small ones pile up,
    as search engines merge segments (rows keep their numbers; the deletion list
    in ``directory`` keeps deleted rows out). Returns the segments now listed.
    """
    tail = 0
    while tail < len(infos) and infos[len(infos) - 1 - tail].n_rows < SMALL_SEGMENT_ROWS:
        tail += 1
    if tail <= MAX_SMALL_SEGMENTS:
        return infos
    small = infos[len(infos) - tail :]
    merged = merge_segments(directory, small, f"{SEGMENT_PREFIX}{_next(infos):06d}")
    for info in small:
        shutil.rmtree(directory / info.name)  # hard links in the new index only
    return [*infos[: len(infos) - tail], merged]


def _next(infos: Sequence[SegmentInfo]) -> int:
    """Return the number of the next segment (one more than the highest so far)."""
    return 1 + max(int(i.name.rsplit("-", 1)[-1]) for i in infos)


def _link_unchanged(
    index_dir: Path, tmp: Path, existing: dict[str, Any], changed: set[str]
) -> None:
    """Hard-link (or copy) every file the manifest lists that this add does not change."""
    for name in existing.get("files") or {}:
        if name in changed or name == MANIFEST_FILE:
            continue
        target = tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        _link_or_copy(index_dir / name, target)


def _link_or_copy(source: Path, target: Path) -> None:
    """Hard-link ``source`` as ``target`` (files of an index are never written in place)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _update_docstore(
    path: Path,
    plan: AppendPlan,
    given_files: dict[str, str],
    hashes: Sequence[str],
    first_row: int,
    name_key: Callable[[str], str],
    lex: Lexicon,
) -> tuple[int, int]:
    """Drop the changed documents' old records, add the new ones; return the counts."""
    ids = [doc.doc_id for doc in plan.documents]
    conn = sqlite3.connect(path)
    try:
        create_gazetteer_tables(conn)
        with conn:
            delete_gazetteer_rows(conn, ids)
            for i in range(0, len(ids), _BATCH):
                part = ids[i : i + _BATCH]
                marks = ",".join("?" * len(part))
                conn.execute(
                    f"DELETE FROM names WHERE chunk_id IN "
                    f"(SELECT chunk_id FROM chunks WHERE doc_id IN ({marks}))",
                    part,
                )
                for table in ("chunks", "document_files", "documents"):
                    conn.execute(f"DELETE FROM {table} WHERE doc_id IN ({marks})", part)
            (position,) = conn.execute(
                "SELECT COALESCE(MAX(position), -1) FROM documents"
            ).fetchone()
            conn.executemany(
                "INSERT INTO documents VALUES (?, ?, ?, ?, ?)",
                (
                    (d.doc_id, position + 1 + i, d.title, d.source, dumps_json(d.metadata))
                    for i, d in enumerate(plan.documents)
                ),
            )
            conn.executemany(
                "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                chunk_rows(plan.chunks, hashes, first_row),
            )
            conn.executemany(
                "INSERT INTO document_files (doc_id, path) VALUES (?, ?)",
                (
                    (d.doc_id, given_files[d.doc_id])
                    for d in plan.documents
                    if d.doc_id in given_files
                ),
            )
            (title_position,) = conn.execute(
                "SELECT COALESCE(MAX(position), -1) FROM names WHERE rank = 0"
            ).fetchone()
            conn.executemany(
                'INSERT INTO names ("key", rank, position, chunk_id) VALUES (?, ?, ?, ?)',
                name_rows_from(
                    plan.documents, plan.chunks, name_key, title_position + 1, first_row
                ),
            )
            write_gazetteer_rows(conn, plan.documents, plan.chunks, lex)
            rewrite_key_filter(conn)
            _update_names(conn, plan.gone_texts, [c.text for c in plan.chunks])
            texts_of: dict[str, list[str]] = {}
            for chunk in plan.chunks:
                texts_of.setdefault(chunk.doc_id, []).append(chunk.text)
            update_line_counts(conn, list(texts_of.values()), plan.gone_documents)
        (n_docs,) = conn.execute("SELECT COUNT(*) FROM documents").fetchone()
        (n_chunks,) = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
    finally:
        conn.close()
    return int(n_docs), int(n_chunks)


def _update_names(conn: sqlite3.Connection, gone: Sequence[str], came: Sequence[str]) -> None:
    """Update the docstore's proper-name counts by the chunk texts that went and came."""
    delta: Counter[str] = Counter()
    for text in came:
        delta.update(chunk_names(text))
    for text in gone:
        delta.subtract(chunk_names(text))
    conn.executemany(
        'INSERT INTO name_df ("key", n) VALUES (?, ?) '
        'ON CONFLICT("key") DO UPDATE SET n = n + excluded.n',
        sorted((k, v) for k, v in delta.items() if v),
    )
    conn.execute("DELETE FROM name_df WHERE n <= 0")


def _deleted_rows(index_dir: Path, gone: Sequence[int]) -> np.ndarray:
    """Return the index's deletion list with ``gone`` added, sorted."""
    path = index_dir / LEXICAL_DIR / DELETED_FILE
    old = np.load(path, allow_pickle=False) if path.is_file() else np.zeros(0, np.int64)
    return np.union1d(old.astype(np.int64), np.asarray(gone, dtype=np.int64))


def _append_vectors(
    tmp: Path,
    index_dir: Path,
    existing: dict[str, Any],
    plan: AppendPlan,
    texts: Sequence[str],
    hashes: Sequence[str],
    embedder: Any,
    report: Any,
    warn: Any,
) -> dict[str, int]:
    """Write the old vectors then the new chunks' (a gone chunk's vector reused by hash)."""
    lists = has_ann(existing)
    old = DenseIndex.load(index_dir)
    if not texts:  # nothing new: the vectors stay as they are
        for name in (VECTORS_FILE, *((ANN_FILE,) if lists else ())):
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(index_dir / name, tmp / name)
        return {"vectors_reused": 0, "vectors_new": 0}
    reuse = {
        digest: np.asarray(old.vectors[row])
        for row, digest in zip(plan.gone_rows, plan.gone_hashes, strict=True)
    }
    partial = plan.partial = PartialEmbeddings.open(index_dir, embedder.name, warn)
    vectors, n_reused, n_new, _ = embed_chunks(
        embedder, texts, hashes, reuse, report, partial=partial, warn=warn
    )
    if vectors.shape[1] != old.dim:
        raise ValueError(
            f"the embedder returned {vectors.shape[1]} dims, the index holds {old.dim}"
        )
    out = np.lib.format.open_memmap(
        tmp / VECTORS_FILE,
        mode="w+",
        dtype=np.float32,
        shape=(old.n_vectors + len(vectors), old.dim),
    )
    for start in range(0, old.n_vectors, 65_536):
        stop = min(start + 65_536, old.n_vectors)
        out[start:stop] = old.vectors[start:stop]
    out[old.n_vectors :] = vectors
    out.flush()
    del out
    if lists:  # the new rows join the lists of their nearest centroids
        save_ann(extended(index_dir / ANN_FILE, vectors, old.n_vectors), tmp / ANN_FILE)
    return {"vectors_reused": n_reused, "vectors_new": n_new}


def _digests(tmp: Path, existing: dict[str, Any], changed: set[str]) -> dict[str, dict[str, str]]:
    """Return the manifest's checksums: linked files keep theirs, the rest are read."""
    old_files = existing.get("files") or {}
    old_quick = existing.get("quick") or {}
    files: dict[str, str] = {}
    quick: dict[str, str] = {}
    for path in sorted(tmp.rglob("*")):
        if not path.is_file() or path.name == MANIFEST_FILE:
            continue
        name = path.relative_to(tmp).as_posix()
        if name in old_files and name not in changed and name in old_quick:
            files[name], quick[name] = old_files[name], old_quick[name]
        else:
            files[name], quick[name] = file_sha256(path), quick_digest(path)
    return {"files": files, "quick": quick}
