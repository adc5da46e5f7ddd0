"""Building an index: ingest, chunk, embed (reusing unchanged vectors), write atomically.

Everything is written into a temporary sibling of the target directory
(:func:`~sealgraph.index.folder._staging.staging`), flushed to disk, and only then
swapped into place (:func:`~sealgraph.index.folder._lifecycle.swap_into_place`); the
manifest (with the checksum of every file) is the last file written. A build that
dies half-way therefore leaves either the previous index or nothing that loads,
never a mix.

Builds of one index directory are serialised by a lock file beside it
(``.NAME.lock``, :func:`~sealgraph.index.folder._lifecycle.locked_index`), which also
cleans up what an interrupted build left. A dense build keeps every finished batch
of embeddings beside the index, in ``.NAME.partial-KEY/``, until it has swapped the
new index in: a build that was killed resumes from there
(:mod:`sealgraph.index._embed`). Removing documents (:mod:`sealgraph.index.folder._remove`)
and refreshing the lexical part (:mod:`sealgraph.index.folder._refresh`) reuse the pieces
here.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

# DiskFullError is re-exported: what a build's failed write becomes, looked up here.
import numpy as np

from sealgraph.errors import DiskFullError as DiskFullError
from sealgraph.errors import IndexCorruptError, InputError
from sealgraph.index._bm25 import BM25_PARAMS, tokenizer
from sealgraph.index._documents import (
    merge_sources,
    pruned_source,
    stale_message,
)
from sealgraph.index._embed import embed_chunks
from sealgraph.index._parallel import BATCH, build_workers, process_documents
from sealgraph.index._plan import _BuildPlan, _check_embedder, plan_documents, sealgraph_version
from sealgraph.index._progress import ProgressFn, _StderrProgress
from sealgraph.index.embedders import (
    Embedder,
)
from sealgraph.index.folder._ann import (
    ANN_MAX_SHARE,
    ANN_MIN_VECTORS,
    TARGET_RECALL,
    ann_entry,
    build_ann,
    calibration_texts,
    read_share,
)
from sealgraph.index.folder._append import can_append, plan_append, write_append
from sealgraph.index.folder._dense import DenseIndex, calibrate_probe
from sealgraph.index.folder._lexical import LexicalWriter
from sealgraph.index.folder._lifecycle import inspect_target, locked_index, swap_into_place
from sealgraph.index.folder._manifest import (
    FORMAT_NAME,
    FORMAT_VERSION,
    checksum_tree,
    fsync_tree,
    old_format_message,
    quick_tree,
    verify_files,
    write_manifest,
)
from sealgraph.index.folder._reuse import PartialEmbeddings, discard_partials, reusable_vectors
from sealgraph.index.folder._segments import SegmentInfo
from sealgraph.index.folder._staging import build_bytes, staging
from sealgraph.index.folder._statistics import statistics_entry
from sealgraph.index.folder._store import (
    DOCSTORE_FILE,
    DocstoreWriter,
    DocumentRow,
    read_document_files,
    write_sources,
)
from sealgraph.index.folder._stored import merge_documents, stored_sources
from sealgraph.ingest import LoaderLimits, WarnFn, warn_stderr
from sealgraph.text.chunking import FIELD_WEIGHT, SPLITTER_VERSION, chunk_document, indexed_text
from sealgraph.text.lexicon import Lexicon, use_lexicon
from sealgraph.text.names import normalize_name
from sealgraph.text.statistics import CorpusCounts
from sealgraph.types import Document

_T = TypeVar("_T")


def build_index_dir(
    inputs: Any,
    index_dir: Path,
    *,
    embedder: str | Embedder | None,
    max_chunk_tokens: int | None,
    encoding: str | None,
    replace: bool,
    force: bool,
    lock_timeout: float,
    progress: ProgressFn | None,
    warn: WarnFn | None,
    finish: Callable[[Path, Embedder | None], _T],
    lexicon: str | Lexicon | None = None,
    prune: bool = False,
    follow_links: bool = False,
    limits: LoaderLimits | None = None,
    exclude: Sequence[str] = (),
) -> _T:
    """Build (or add to) the index in ``index_dir`` and return ``finish(index_dir, embedder)``.

    ``finish`` runs while the build still holds the index's lock, so what it reads
    is this build's result, not a concurrent build's. See
    :func:`sealgraph.index.build_index` for the arguments and errors.
    """
    warn = warn or warn_stderr
    index_dir = index_dir.resolve()  # "." or "idx/" must still have a real name and parent
    replace = replace or force  # vectors of two embedders never mix: --force rebuilds
    plan = _plan_build(
        inputs,
        index_dir,
        embedder=embedder,
        max_chunk_tokens=max_chunk_tokens,
        encoding=encoding,
        replace=replace,
        force=force,
        warn=warn,
        lexicon=lexicon,
        prune=prune,
        follow_links=follow_links,
        limits=limits,
        exclude=exclude,
    )
    report = progress or _StderrProgress()

    with locked_index(index_dir, timeout=lock_timeout, warn=warn), use_lexicon(plan.lex):
        existing = inspect_target(index_dir)
        if existing is not None and not replace:
            _check_format(index_dir, existing)
        _check_embedder(index_dir, existing, plan.embedder, force=force)
        if not (replace or prune) and can_append(existing, _append_settings(plan)):
            assert existing is not None  # can_append says so
            _append_build(index_dir, existing, plan, report, warn)
            return finish(index_dir, plan.embedder)
        documents, files, doc_counts, stale = merge_documents(
            index_dir,
            existing,
            plan.given,
            plan.given_files,
            replace=replace,
            scope=plan.scope,
            prune=prune,
        )
        if stale and not prune:
            warn(stale_message(stale, files, plan.scope))
        doc_chars = sum(len(d.text) for d in documents)
        # The estimate is read only after a failed write (a dim may cost a request).
        with staging(
            index_dir, lambda: build_bytes(doc_chars, doc_chars, doc_chars // 1000, plan.embedder)
        ) as tmp:
            written = _write_documents(tmp, documents, files, plan, report)
            texts, hashes, segments = written.texts, written.hashes, written.segments
            dense = _write_dense(
                tmp, index_dir, existing, plan.embedder, texts, hashes, report, warn
            )
            counts = {
                "documents": written.n_documents,
                "chunks": written.n_chunks,
                "vectors_reused": dense.n_reused,
                "vectors_new": dense.n_new,
                **({"vectors_resumed": dense.n_resumed} if dense.n_resumed else {}),
                **doc_counts,
            }
            manifest = _build_manifest(
                tmp,
                plan,
                dense,
                counts,
                segments,
                index_dir=index_dir,
                existing=existing,
                files=files,
                replace=replace,
                prune=prune,
            )
            write_manifest(tmp, manifest)
            fsync_tree(tmp)
            swap_into_place(tmp, index_dir, existing, warn)
        discard_partials(index_dir, dense.partial, set(hashes), warn)
        return finish(index_dir, plan.embedder)


@dataclass(frozen=True)
class _Written:
    """What :func:`_write_documents` wrote: counts, segments, and what embedding needs."""

    n_documents: int
    n_chunks: int
    segments: list[SegmentInfo]
    hashes: list[str]
    """Each chunk's content hash, by row."""
    texts: list[str]
    """Each chunk's indexed text, by row (only when the build embeds)."""


def _write_documents(
    tmp: Path,
    documents: list[Document],
    files: dict[str, str],
    plan: _BuildPlan,
    report: ProgressFn,
) -> _Written:
    """Chunk, tokenize and count the documents batch by batch, writing as it goes.

    The per-document work runs in worker processes for large builds
    (:mod:`sealgraph.index._parallel`); the docstore, the segments and the counts
    are written here, batch by batch, and a batch's document text is let go once it
    is written (a million chunks' text is gigabytes). Only an embedder needs the
    indexed texts of every chunk at once.
    """
    store = DocstoreWriter(tmp / DOCSTORE_FILE, name_key(plan.lex), plan.lex)
    try:
        lexical = LexicalWriter(tmp)
        names: Counter[str] = Counter()
        lines: list[np.ndarray] = []
        hashes: list[str] = []
        texts: list[str] = []
        batches = process_documents(
            documents,
            lex=plan.lex,
            counter=plan.counter,
            max_tokens=plan.max_chunk_tokens,
            tokenize=tokenizer(plan.lex),
            workers=build_workers(len(documents)),
        )
        for start, batch in zip(range(0, len(documents), BATCH), batches, strict=True):
            stop = min(start + BATCH, len(documents))
            store.add(documents[start:stop], batch.chunks, batch.hashes, files, batch.gazetteer)
            for tokens in batch.tokens:
                lexical.add(tokens)
            names.update(batch.names)
            lines.append(batch.lines)
            hashes.extend(batch.hashes)
            if plan.embedder is not None:
                texts.extend(indexed_text(c) for c in batch.chunks)
            for i in range(start, stop):  # written: only the record is needed any more
                documents[i] = dataclasses.replace(documents[i], text="")
            report("chunking", stop, len(documents))
        if store.n_rows == 0:
            raise InputError("nothing to index: every document is empty")
        counts = CorpusCounts()
        counts.n_chunks, counts.names = store.n_rows, names
        store.finish(counts, np.unique(np.concatenate(lines), return_counts=True))
        segments = lexical.finish()
    finally:
        store.close()
    return _Written(store.n_documents, store.n_rows, segments, hashes, texts)


def _append_settings(plan: _BuildPlan) -> dict[str, Any]:
    return {
        "max_tokens": plan.max_chunk_tokens,
        "encoding": plan.encoding_name,
        "lexicon": plan.spec,
        "lex": plan.lex,
        "embedder": plan.embedder.name if plan.embedder is not None else None,
    }


def _append_build(
    index_dir: Path,
    existing: dict[str, Any],
    plan: _BuildPlan,
    report: ProgressFn,
    warn: WarnFn,
) -> None:
    """Add the plan's documents to the index row by row (:mod:`sealgraph.index.folder._append`)."""
    docstore = index_dir / DOCSTORE_FILE
    try:
        verify_files(index_dir, existing, (DOCSTORE_FILE,))
        added = plan_append(
            docstore,
            plan.given,
            plan.given_files,
            lambda doc: chunk_document(doc, plan.counter, plan.max_chunk_tokens),
        )
        stale = _stale_documents(docstore, plan)
    except (IndexCorruptError, OSError, ValueError, sqlite3.DatabaseError) as exc:
        raise IndexCorruptError(
            f"cannot add to the index at {index_dir}: its documents cannot be read back "
            f"({exc}); rebuild it from all of its files with --replace (replace=True)"
        ) from None
    if stale:
        warn(stale_message(stale, (read_document_files(docstore) or {}), plan.scope))
    added_chars = sum(len(doc.text) for doc in added.documents)

    def needs() -> int:
        # An add copies the docstore and writes the new documents' rows (the other
        # files are hard-linked); read only after a failed write (a dim may cost a request).
        new = build_bytes(added_chars, added_chars, len(added.chunks), plan.embedder)
        return docstore.stat().st_size + new

    with staging(index_dir, needs) as tmp:
        manifest = write_append(
            tmp,
            index_dir,
            existing,
            added,
            plan.given_files,
            lex=plan.lex,
            name_key=name_key(plan.lex),
            embedder=plan.embedder,
            report=report,
            warn=warn,
            sources=merge_sources(stored_sources(index_dir, existing), plan.sources, replace=False),
        )
        manifest["sealgraph_version"] = sealgraph_version()
        write_manifest(tmp, manifest)
        fsync_tree(tmp)
        swap_into_place(tmp, index_dir, existing, warn)
    if added.partial is not None:
        discard_partials(index_dir, added.partial, set(added.hashes), warn)


def _stale_documents(docstore: Path, plan: _BuildPlan) -> list[DocumentRow]:
    """Return the stored documents not given again whose file in the scope is gone."""
    if plan.scope is None:
        return []
    given = {doc.doc_id for doc in plan.given}
    return [
        DocumentRow(doc_id, "", "")
        for doc_id, path in sorted((read_document_files(docstore) or {}).items())
        if doc_id not in given and plan.scope.gone(path)
    ]


def _plan_build(inputs: Any, index_dir: Path, *, replace: bool, **settings: Any) -> _BuildPlan:
    """Settle the settings and read the documents of a build; nothing is written yet.

    Everything that can fail without touching the disk fails here, before the lock
    file or any folder is created (the checks of the index are repeated under the lock).
    ``settings`` are :func:`plan_documents`'s.
    """
    existing = inspect_target(index_dir)
    if existing is not None and not replace:
        _check_format(index_dir, existing)
    return plan_documents(inputs, existing, where=index_dir, **settings)


@dataclass(frozen=True)
class _Dense:
    """The dense part a build wrote: the manifest's embedder entry and the vector counts."""

    info: dict[str, Any] | None = None
    n_reused: int = 0
    n_new: int = 0
    n_resumed: int = 0
    partial: PartialEmbeddings | None = None
    """Where finished batches were kept for a resume (removed once the build is in place)."""
    ann: dict[str, Any] | None = None
    """The manifest's ``ann`` entry: the approximate index written, if any."""


def _write_dense(
    tmp: Path,
    index_dir: Path,
    existing: dict[str, Any] | None,
    embedder: Embedder | None,
    texts: Sequence[str],
    hashes: Sequence[str],
    report: ProgressFn,
    warn: WarnFn,
) -> _Dense:
    """Embed the chunks (reusing and resuming what can be) and save the vectors in ``tmp``."""
    if embedder is None:
        return _Dense()
    reuse = reusable_vectors(index_dir, existing, embedder, warn)
    partial = PartialEmbeddings.open(index_dir, embedder.name, warn)
    vectors, n_reused, n_new, n_resumed = embed_chunks(
        embedder, texts, hashes, reuse, report, partial=partial, warn=warn
    )
    # Above a size, an inverted file is searched instead of every vector (_ann).
    lists, ann = (
        _approximate(vectors, texts, embedder, warn)
        if len(vectors) >= ANN_MIN_VECTORS
        else (None, None)
    )
    DenseIndex(vectors, lists).save(tmp)
    info = {  # and what the embedder records besides (an OpenAIEmbedder's base URL)
        "name": embedder.name,
        "dim": int(vectors.shape[1]),
        **getattr(embedder, "manifest_fields", {}),
    }
    return _Dense(info, n_reused, n_new, n_resumed, partial, ann)


def _approximate(
    vectors: np.ndarray, texts: Sequence[str], embedder: Embedder, warn: WarnFn
) -> tuple[Any, dict[str, Any] | None]:
    """Return the FAISS inverted file of ``vectors`` and its manifest entry, or nothing.

    The probe is the fewest lists that query-like sentences of the corpus need for
    the target recall (:func:`~sealgraph.index.folder._dense.calibrate_probe`); when that
    reads most of what exact search reads, or the recall is not reached, exact search
    is kept.
    """
    lists = build_ann(vectors)
    queries = np.asarray(embedder.embed_documents(calibration_texts(texts)), dtype=np.float32)
    probe, recall = calibrate_probe(vectors, lists, queries)
    if read_share(lists, probe) > ANN_MAX_SHARE or recall < TARGET_RECALL - 1e-9:
        warn(
            f"sealgraph: an inverted file of {lists.nlist} lists would read {probe} of them for "
            f"recall {recall:.3f} (target {TARGET_RECALL}) with these vectors; dense search "
            f"stays exact"
        )
        return None, None
    return lists, ann_entry(lists, probe, recall)


def _build_manifest(
    tmp: Path,
    plan: _BuildPlan,
    dense: _Dense,
    counts: dict[str, int],
    segments: Sequence[SegmentInfo],
    *,
    index_dir: Path,
    existing: dict[str, Any] | None,
    files: dict[str, str],
    replace: bool,
    prune: bool,
) -> dict[str, Any]:
    """Return the manifest of the index written in ``tmp`` (checksums of its files last).

    ``existing`` (the manifest of the index in ``index_dir`` added to), ``files``
    (the file of each document), ``replace`` and ``prune`` decide which source files
    the docstore records.
    """
    sources = merge_sources(
        stored_sources(index_dir, existing),
        plan.sources,
        replace=replace,
        drop=pruned_source(plan.scope, files, prune),
    )
    write_sources(tmp / DOCSTORE_FILE, sources, replace=True)
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "sealgraph_version": sealgraph_version(),
        "embedder": dense.info,
        **({"ann": dense.ann} if dense.ann else {}),
        "tokenizer": {"encoding": plan.encoding_name},
        "chunker": {"max_tokens": plan.max_chunk_tokens, "splitter_version": SPLITTER_VERSION},
        "lexicon": plan.spec,
        "lexical": lexical_entry(plan.lex, segments),
        "counts": counts,
        "statistics": statistics_entry(plan.lex, counts["chunks"], tmp / DOCSTORE_FILE),
        **file_digests(tmp),
    }


def lexical_entry(
    lex: Lexicon, segments: Sequence[SegmentInfo], field_weight: int = FIELD_WEIGHT
) -> dict[str, Any]:
    """Return the manifest's ``lexical`` entry: tokenizer, field weight, BM25 parameters, segments."""
    return {
        "tokenizer_version": lex.tokenizer_version,
        "field_weight": field_weight,
        **BM25_PARAMS,
        "segments": [info.to_dict() for info in segments],
    }


def name_key(lex: Lexicon) -> Callable[[str], str]:
    """How the docstore's names table keys a title or heading (the index's lexicon)."""
    return lambda name: normalize_name(name, lex)


def file_digests(directory: Path) -> dict[str, dict[str, str]]:
    """Return the manifest's ``files`` (SHA-256) and ``quick`` (checked at open) digests."""
    files = checksum_tree(directory)
    return {"files": files, "quick": quick_tree(directory, files)}


def _check_format(index_dir: Path, existing: dict[str, Any]) -> None:
    """Refuse to add to an index of an older format: its documents were read otherwise."""
    version = existing.get("format_version")
    if version != FORMAT_VERSION:
        raise InputError(old_format_message(index_dir, version))
