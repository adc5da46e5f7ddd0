"""Building an index: ingest, chunk, embed (reusing unchanged vectors), write atomically.

Everything is written into a temporary sibling of the target directory, flushed
to disk, and only then swapped into place; the manifest (with the checksum of
every file) is the last file written. A build that dies half-way therefore
leaves either the previous index or nothing that loads, never a mix.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.chunking import SPLITTER_VERSION, chunk_document
from sealgraph.errors import (
    EmbedderMismatchError,
    IndexCorruptError,
    IngestError,
    InputError,
    SealgraphError,
)
from sealgraph.index._dense import VECTORS_FILE, DenseIndex
from sealgraph.index._lexical import BM25_PARAMS, LEXICAL_DIR, TOKENIZER_VERSION, LexicalIndex
from sealgraph.index._manifest import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_FILE,
    checksum_tree,
    fsync_path,
    fsync_tree,
    read_manifest,
    verify_files,
    write_manifest,
)
from sealgraph.index._store import DOCSTORE_FILE, read_chunk_hashes, write_docstore
from sealgraph.index.embedders import ENABLE_DENSE_HINT, Embedder, normalize_rows, resolve_embedder
from sealgraph.ingest import SourceFile, WarnFn, load_corpus, warn_stderr
from sealgraph.ledger.knowledge import TABLES_FILE, write_corpus_tables
from sealgraph.tokens import encoding_for_model, token_counter
from sealgraph.types import Chunk, Document

ProgressFn = Callable[[str, int, int], None]
"""Progress callback: ``(stage, done, total)`` with stage ``chunking`` or ``embedding``."""

MIN_CHUNK_TOKENS = 8
_EMBED_BLOCK = 256  # texts per embed_documents call (progress granularity)


def indexed_text(chunk: Chunk) -> str:
    """Return the text both retrievers index: title, section headings, then chunk text.

    Headings equal to the title (a Markdown H1) are not repeated.
    """
    headings = [h for h in chunk.section if h != chunk.title]
    return "\n".join([chunk.title, *headings, chunk.text])


def content_hash(text: str) -> str:
    """SHA-256 of an indexed text: equal hashes mean a stored vector can be reused."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_index_dir(
    inputs: Any,
    index_dir: Path,
    *,
    embedder: str | Embedder | None,
    max_chunk_tokens: int,
    encoding: str,
    force: bool,
    progress: ProgressFn | None,
    warn: WarnFn | None,
) -> Embedder | None:
    """Build (or rebuild) the index in ``index_dir``; return the embedder used.

    See :func:`sealgraph.index.build_index` for the arguments and errors.
    """
    warn = warn or warn_stderr
    index_dir = index_dir.resolve()  # "." or "idx/" must still have a real name and parent
    if max_chunk_tokens < MIN_CHUNK_TOKENS:
        raise InputError(
            f"max chunk tokens must be at least {MIN_CHUNK_TOKENS}, got {max_chunk_tokens}"
        )
    existing = _existing_manifest(index_dir, warn)
    resolved = _resolve_embedder(embedder, warn)
    new_name = resolved.name if resolved is not None else None
    if existing is not None and not force:
        old_name = (existing.get("embedder") or {}).get("name")
        if old_name != new_name:
            raise EmbedderMismatchError(
                f"the index at {index_dir} was built with embedder {old_name or 'none'} but "
                f"{new_name or 'none'} was requested; vectors of different embedders cannot "
                f"be mixed: use --force (force=True) to rebuild it, or another directory"
            )
    encoding_name = encoding_for_model(encoding)
    counter = token_counter(encoding_name)
    report = progress or _StderrProgress()

    documents, sources = _documents(inputs, warn)
    chunks: list[Chunk] = []
    for i, doc in enumerate(documents, start=1):
        chunks.extend(chunk_document(doc, counter, max_chunk_tokens))
        report("chunking", i, len(documents))
    if not chunks:
        raise InputError("nothing to index: every document is empty")
    texts = [indexed_text(c) for c in chunks]
    hashes = [content_hash(t) for t in texts]

    index_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{index_dir.name}.building-", dir=index_dir.parent))
    try:
        write_docstore(tmp / DOCSTORE_FILE, documents, chunks, hashes)
        (tmp / LEXICAL_DIR).mkdir()
        LexicalIndex.build(texts).save(tmp / LEXICAL_DIR)
        # Corpus statistics of the offline reasoner (word and name frequencies), so
        # the first question does not pay a pass over the whole corpus.
        write_corpus_tables(tmp / TABLES_FILE, chunks)
        n_reused = n_new = 0
        embedder_info = None
        if resolved is not None:
            reuse = _reusable_vectors(index_dir, existing, resolved, warn)
            vectors, n_reused, n_new = _embed(resolved, texts, hashes, reuse, report)
            DenseIndex(vectors).save(tmp)
            embedder_info = {"name": resolved.name, "dim": int(vectors.shape[1])}
        manifest = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "sealgraph_version": _version(),
            "embedder": embedder_info,
            "tokenizer": {"encoding": encoding_name},
            "chunker": {"max_tokens": max_chunk_tokens, "splitter_version": SPLITTER_VERSION},
            "lexical": {"tokenizer_version": TOKENIZER_VERSION, **BM25_PARAMS},
            "counts": {
                "documents": len(documents),
                "chunks": len(chunks),
                "vectors_reused": n_reused,
                "vectors_new": n_new,
            },
            "sources": [
                {"path": s.path, "sha256": s.sha256, "documents": s.n_documents} for s in sources
            ],
            "files": checksum_tree(tmp),
        }
        write_manifest(tmp, manifest)
        fsync_tree(tmp)
        _swap_into_place(tmp, index_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return resolved


def _version() -> str:
    from sealgraph import __version__

    return __version__


def _resolve_embedder(embedder: str | Embedder | None, warn: WarnFn) -> Embedder | None:
    if embedder is None:
        return None
    if not isinstance(embedder, str):
        return embedder
    resolved = resolve_embedder(embedder)
    if resolved is None and embedder.strip().lower() == "auto":
        warn(
            "dense retrieval disabled (sentence-transformers is not installed): "
            f"retrieval will be lexical (BM25) only; enable it with {ENABLE_DENSE_HINT}"
        )
    return resolved


def _existing_manifest(index_dir: Path, warn: WarnFn) -> dict[str, Any] | None:
    """Return the manifest of the index being replaced, or None; never clobber other data."""
    if not index_dir.exists():
        return None
    if not index_dir.is_dir():
        raise InputError(f"{index_dir} is a file, not an index directory")
    if not (index_dir / MANIFEST_FILE).exists():
        if any(index_dir.iterdir()):
            raise InputError(
                f"{index_dir} exists and is not a sealgraph index; refusing to replace it "
                f"(choose a new or empty directory)"
            )
        return None
    try:
        return read_manifest(index_dir)
    except IndexCorruptError as exc:
        warn(f"replacing a damaged index: {exc}")
        return None


def _documents(inputs: Any, warn: WarnFn) -> tuple[list[Document], list[SourceFile]]:
    if isinstance(inputs, str | os.PathLike):
        corpus = load_corpus(inputs, warn=warn)
        return corpus.documents, corpus.sources
    items = list(inputs) if isinstance(inputs, Iterable) else [inputs]
    if not items:
        raise InputError("no documents or paths given to index")
    if not all(isinstance(item, Document) for item in items):
        if any(isinstance(item, Document) for item in items):
            raise InputError("give either paths or Document objects, not a mix")
        corpus = load_corpus(items, warn=warn)
        return corpus.documents, corpus.sources
    seen: set[str] = set()
    for doc in items:
        if doc.doc_id in seen:
            raise IngestError(f"duplicate document id {doc.doc_id!r}; document ids must be unique")
        seen.add(doc.doc_id)
    return items, []


def _reusable_vectors(
    index_dir: Path, manifest: dict[str, Any] | None, embedder: Embedder, warn: WarnFn
) -> dict[str, np.ndarray]:
    """Vectors of the index being replaced, by content hash, if its embedder is the same."""
    info = (manifest or {}).get("embedder") or {}
    if info.get("name") != embedder.name:
        return {}
    try:
        verify_files(index_dir, manifest, (DOCSTORE_FILE, VECTORS_FILE))
        hashes = read_chunk_hashes(index_dir / DOCSTORE_FILE)
        vectors = np.load(index_dir / VECTORS_FILE, allow_pickle=False)
        if vectors.dtype != np.float32 or vectors.shape != (len(hashes), info.get("dim")):
            raise ValueError(
                f"{VECTORS_FILE} has shape {vectors.shape}, expected {len(hashes)} rows"
            )
    except (IndexCorruptError, OSError, ValueError, sqlite3.DatabaseError) as exc:
        warn(f"cannot reuse the vectors of {index_dir} ({exc}); embedding every chunk again")
        return {}
    return {digest: vectors[row] for row, digest in enumerate(hashes)}


def _embed(
    embedder: Embedder,
    texts: Sequence[str],
    hashes: Sequence[str],
    reuse: dict[str, np.ndarray],
    report: ProgressFn,
) -> tuple[np.ndarray, int, int]:
    """Vectors for every chunk, embedding only texts whose hash has no stored vector.

    Returns:
        ``(vectors, chunks whose vector was reused, texts embedded now)``.

    """
    todo: dict[str, str] = {}
    for digest, text in zip(hashes, texts, strict=True):
        if digest not in reuse:
            todo.setdefault(digest, text)
    fresh: dict[str, np.ndarray] = {}
    pending = list(todo.items())
    report("embedding", 0, len(pending))
    for start in range(0, len(pending), _EMBED_BLOCK):
        block = pending[start : start + _EMBED_BLOCK]
        try:
            out = embedder.embed_documents([text for _, text in block])
        except SealgraphError:
            raise
        except Exception as exc:
            raise SealgraphError(
                f"embedding with {embedder.name} failed: {type(exc).__name__}: {exc}"
            ) from exc
        out = normalize_rows(out)
        if out.ndim != 2 or out.shape[0] != len(block):
            raise SealgraphError(
                f"embedder {embedder.name} returned shape {out.shape} for {len(block)} texts"
            )
        fresh.update((digest, vector) for (digest, _), vector in zip(block, out, strict=True))
        report("embedding", start + len(block), len(pending))
    rows = [reuse[d] if d in reuse else fresh[d] for d in hashes]
    dims = {row.shape[0] for row in rows}
    if len(dims) != 1:
        raise SealgraphError(f"embedder {embedder.name} returned vectors of sizes {sorted(dims)}")
    vectors = np.ascontiguousarray(np.stack(rows), dtype=np.float32)
    n_reused = sum(1 for d in hashes if d in reuse)
    return vectors, n_reused, len(pending)


def _swap_into_place(new: Path, target: Path) -> None:
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
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


class _StderrProgress:
    """A one-line progress bar on stderr, shown only on a terminal and for slow stages."""

    def __init__(self, delay_s: float = 0.5, interval_s: float = 0.1) -> None:
        self._stream = sys.stderr
        self._enabled = bool(getattr(self._stream, "isatty", lambda: False)())
        self._delay_s = delay_s
        self._interval_s = interval_s
        self._stage = ""
        self._stage_start = 0.0
        self._last = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self._enabled:
            return
        now = time.monotonic()
        if stage != self._stage:
            self._stage, self._stage_start, self._last = stage, now, 0.0
        finished = done >= total
        if now - self._stage_start < self._delay_s:
            return  # quick stages never show a bar
        if not finished and now - self._last < self._interval_s:
            return
        self._last = now
        width = 30
        filled = width if total <= 0 else int(width * min(done, total) / total)
        bar = "#" * filled + "." * (width - filled)
        self._stream.write(f"\r{stage:<10} [{bar}] {done}/{total}")
        if finished:
            self._stream.write("\n")
        self._stream.flush()
