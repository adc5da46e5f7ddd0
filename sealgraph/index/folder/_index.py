"""A folder index opened for search: :func:`open_folder_index` and the :class:`Index` it returns.

Opening reads nothing in proportion to the corpus: the arrays are memory-mapped,
chunks are read from the docstore on demand (a bounded cache keeps the recent ones),
and the files are checked by size and a quick digest (full checksums are taken at
build time; :func:`verify_folder_index` reads every byte). An :class:`Index` is
read-only, so it is safe to share between threads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.config import RetrievalConfig
from sealgraph.errors import IndexCorruptError
from sealgraph.index._base import IndexBasics
from sealgraph.index._bm25 import check_tokenizer
from sealgraph.index._fusion import reciprocal_rank_fusion
from sealgraph.index._plan import manifest_lexicon
from sealgraph.index._queries import QueryEmbeddings, query_embedder, warn_once
from sealgraph.index.embedders import Embedder
from sealgraph.index.folder._ann import ANN_FILE, calibrated_probe, has_ann, has_legacy_ann
from sealgraph.index.folder._chunks import DocstoreReader, FolderChunks
from sealgraph.index.folder._dense import DENSE_FILES, DenseIndex
from sealgraph.index.folder._lexical import LEXICAL_DIR, LexicalIndex, segment_files
from sealgraph.index.folder._lifecycle import (
    DEFAULT_LOCK_TIMEOUT_S,
    LEGACY_FILES,
    restore_interrupted,
)
from sealgraph.index.folder._manifest import read_manifest, verify_files
from sealgraph.index.folder._segments import DELETED_FILE
from sealgraph.index.folder._sqlite import connect_readonly
from sealgraph.index.folder._statistics import CorpusStatistics
from sealgraph.index.folder._statistics import is_current as is_current_statistics
from sealgraph.index.folder._store import DOCSTORE_FILE, count_rows
from sealgraph.ingest import WarnFn
from sealgraph.text.lexicon import Lexicon, get_lexicon, import_lexicon
from sealgraph.types import Hit

__all__ = ["Index", "open_folder_index", "verify_folder_index"]


def open_folder_index(
    path: Path,
    *,
    embedder: str | Embedder | Any | None,
    warn: WarnFn,
    lexicon: str | Lexicon | None,
) -> Index:
    """Open and check the index in ``path`` (see :func:`sealgraph.index.load_index`)."""
    restore_interrupted(path, timeout=DEFAULT_LOCK_TIMEOUT_S, warn=warn)
    manifest = read_manifest(path)
    verify_files(path, manifest, _required_files(manifest))  # quick digests: --verify is full
    # A lexicon the caller names may be imported; the one the manifest names is data.
    lex = (
        import_lexicon(lexicon) if lexicon is not None else get_lexicon(manifest_lexicon(manifest))
    )
    try:
        parts = _Parts.open(path, manifest, lex)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, sqlite3.DatabaseError) as exc:
        raise IndexCorruptError(f"damaged index at {path}: {type(exc).__name__}: {exc}") from None
    parts.check(path, manifest, lex)
    info = manifest.get("embedder")
    chosen = query_embedder(info, embedder, path, warn) if parts.dense is not None else None
    if has_legacy_ann(manifest):
        warn_once(
            warn,
            f"the index at {path} holds the inverted file of an earlier sealgraph, which this "
            f"one does not read: dense search is exact over its {parts.n_chunks:,} vectors "
            f"(slower at this size); build it again for FAISS lists (its vectors are reused): "
            f"`sealgraph index PATH --index {path} --replace`",
        )
    return Index(path=path, manifest=manifest, parts=parts, query_embedder=chosen)


def _required_files(manifest: dict[str, Any]) -> tuple[str, ...]:
    """Return the files an open checks: what it reads, and what earlier versions listed."""
    required = [DOCSTORE_FILE, *segment_files(manifest.get("lexical") or {})]
    if manifest.get("embedder"):
        required.extend(DENSE_FILES)
    if has_ann(manifest):
        required.append(ANN_FILE)
    # The deletion list of an index added to row by row: checked when listed.
    deleted = f"{LEXICAL_DIR}/{DELETED_FILE}"
    if deleted in manifest["files"]:
        required.append(deleted)
    # Files of earlier versions (the offline reasoner's tables) are checked when listed.
    required.extend(name for name in LEGACY_FILES if name in manifest["files"])
    return tuple(required)


class _Parts:
    """What an open reads: counts, the chunk store, the lexical and dense indexes."""

    def __init__(
        self,
        n_docs: int,
        n_chunks: int,
        chunks: FolderChunks,
        lexical: LexicalIndex,
        dense: DenseIndex | None,
    ) -> None:
        self.n_docs = n_docs
        self.n_chunks = n_chunks
        self.chunks = chunks
        self.lexical = lexical
        self.dense = dense

    @classmethod
    def open(cls, path: Path, manifest: dict[str, Any], lex: Lexicon) -> _Parts:
        n_docs, n_chunks = count_rows(path / DOCSTORE_FILE)
        lexical = LexicalIndex.load(path, manifest.get("lexical") or {}, lex)
        reader = DocstoreReader(path / DOCSTORE_FILE, n_chunks)
        chunks = FolderChunks(path, manifest, reader, lex)
        dense = None
        if manifest.get("embedder"):
            dense = DenseIndex.load(path, ann=has_ann(manifest))
            if dense.ann is not None:
                dense.probe = calibrated_probe(manifest.get("ann"), dense.ann.nlist)
        return cls(n_docs, n_chunks, chunks, lexical, dense)

    def check(self, path: Path, manifest: dict[str, Any], lex: Lexicon) -> None:
        """Raise when the parts do not fit together, or the tokenizer is not this sealgraph's."""
        counts = manifest.get("counts") or {}
        problems = []
        if counts.get("chunks") != self.n_chunks or counts.get("documents") != self.n_docs:
            problems.append("the docstore does not match the manifest counts")
        if self.lexical.n_docs != self.n_chunks:
            problems.append("the lexical index does not match the docstore")
        dense, info = self.dense, manifest.get("embedder") or {}
        if dense is not None and (
            dense.n_vectors != self.lexical.n_rows or dense.dim != info.get("dim")
        ):
            problems.append("the dense index does not match the docstore")
        if problems:
            raise IndexCorruptError(
                f"damaged index at {path}: {'; '.join(problems)}; rebuild it with "
                f"`sealgraph index PATH --index {path} --replace`"
            )
        check_tokenizer(manifest, lex, path)


def verify_folder_index(path: Path) -> int:
    """Check every file of the index in ``path`` against its full checksums; return their count.

    Raises:
        IndexCorruptError: No index there, or a file missing, unlisted or changed
            (named), or a docstore SQLite finds damaged.

    """
    manifest = read_manifest(path)
    verify_files(path, manifest, full=True)
    try:
        conn = connect_readonly(path / DOCSTORE_FILE)
        try:
            (result,) = conn.execute("PRAGMA integrity_check").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        result = f"{type(exc).__name__}: {exc}"
    if result != "ok":
        raise IndexCorruptError(f"damaged index at {path}: {DOCSTORE_FILE}: {result}")
    return len(manifest.get("files") or {})


class Index(IndexBasics):
    """A loaded, read-only folder index: its chunks plus lexical, dense and hybrid search.

    Build one with :func:`sealgraph.index.build_index` or open one with
    :func:`sealgraph.index.load_index`; the constructor is not part of the public API.
    """

    def __init__(
        self,
        *,
        path: Path,
        manifest: dict[str, Any],
        parts: _Parts,
        query_embedder: Embedder | None,
    ) -> None:
        self._path = path
        self._manifest = manifest
        self._chunks = parts.chunks
        self._n_docs = parts.n_docs
        self._n_chunks = parts.n_chunks
        self._lexical = parts.lexical
        self._lexicon = parts.lexical.lexicon
        self._dense = parts.dense
        dense = parts.dense
        self._queries = QueryEmbeddings(
            query_embedder if dense is not None else None,
            dense.dim if dense is not None else None,
            path,
        )
        self._statistics: CorpusStatistics | None = None

    @property
    def path(self) -> Path:
        """Directory the index was loaded from."""
        return self._path

    def statistics(self) -> CorpusStatistics | None:
        """Return the corpus counts stored at build time, read on demand; None when stale.

        Chunk frequencies of stemmed words and of proper names
        (:mod:`sealgraph.text.statistics`), kept current by every add and removal.
        None when the index holds none, or when they were counted by other code or
        another lexicon than this sealgraph's (``sealgraph index --index DIR``
        recounts them); a reader then counts them itself.
        """
        if self._statistics is None:
            entry = self._manifest.get("statistics")
            if (
                isinstance(entry, dict)
                and is_current_statistics(entry, self._lexicon)
                and entry.get("n_chunks") == self._n_chunks
                and type(entry.get("n_documents")) is int  # a manifest is data: checked
                and isinstance(entry.get("lexicon"), str)
            ):
                self._statistics = CorpusStatistics(
                    self._path / DOCSTORE_FILE, entry, self._lexicon
                )
        return self._statistics

    def chunk_row(self, chunk_id: str) -> int:
        """Row of a chunk in the lexical and dense indexes (KeyError if unknown)."""
        return self._chunks.chunk_row(chunk_id)

    def chunk_by_row(self, row: int) -> Any:
        """Return the chunk at ``row`` (IndexError if there is none)."""
        return self._chunks.chunk_by_row(row)

    # -- search -----------------------------------------------------------------

    def document_frequency(self, term: str) -> int:
        """Chunks whose indexed text (title, headings, text) holds ``term``, a lexical token.

        A token is a stemmed content word as the index's lexicon makes it
        (:func:`sealgraph.text.lexicon.stemmed_terms`); what BM25's idf counts, read
        from the lexical segments at query time, so always current.
        """
        return self._lexical.document_frequency(term)

    def search_lexical(self, query: str, k: int) -> list[Hit]:
        """BM25 top ``k`` (only chunks sharing a term with the query), ties by row."""
        return self._hits(self._lexical.search(query, k), "lexical")

    def search_dense(self, query: str, k: int) -> list[Hit]:
        """Cosine top ``k`` by embedding; empty when the index has no dense search."""
        return self.search_dense_many([query], k)[0]

    def search_dense_many(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """:meth:`search_dense` for each query: one batch embedded, one FAISS call."""
        found = self._dense_rows(queries, k)
        if found is None:
            return [[] for _ in queries]
        return [self._hits(ranked, "dense") for ranked in found]

    def search_hybrid(
        self, query: str, k: int, retrieval: RetrievalConfig | None = None
    ) -> list[Hit]:
        """Weighted reciprocal-rank fusion of lexical and dense results.

        Each list is ``max(retrieval.pool, k)`` deep; fused scores are
        ``Σ w / (rrf_k + rank)`` with 1-based ranks. Without dense search (or with
        a zero dense weight) this is :meth:`search_lexical` (source ``lexical``).
        """
        return self.search_hybrid_many([query], k, retrieval)[0]

    def search_hybrid_many(
        self, queries: Sequence[str], k: int, retrieval: RetrievalConfig | None = None
    ) -> list[list[Hit]]:
        """:meth:`search_hybrid` for each query: one batch embedded, one FAISS call."""
        retrieval = retrieval or RetrievalConfig()
        if k <= 0:
            return [[] for _ in queries]
        depth = max(retrieval.pool, k)
        dense = self._dense_rows(queries, depth) if retrieval.dense_weight > 0 else None
        if dense is None:
            return [self.search_lexical(query, k) for query in queries]
        out = []
        for query, ranked in zip(queries, dense, strict=True):
            rankings = [[row for row, _ in ranked]]
            weights = [retrieval.dense_weight]
            if retrieval.lexical_weight > 0:
                rankings.append([row for row, _ in self._lexical.search(query, depth)])
                weights.append(retrieval.lexical_weight)
            fused = reciprocal_rank_fusion(rankings, weights, rrf_k=retrieval.rrf_k, k=k)
            out.append(self._hits(fused, "hybrid"))
        return out

    def _dense_rows(self, queries: Sequence[str], k: int) -> list[list[tuple[int, float]]] | None:
        """Dense top ``k`` rows of each query; None without dense search."""
        if self._dense is None or not self._queries.enabled:
            return None
        if len(queries) == 1:  # the embedder's query path, as a search of one query always took
            vector = self.embed_query(queries[0])
            vectors = None if vector is None else vector[None, :]
        else:
            vectors = self.embed_queries(list(queries))
        if vectors is None:
            return None
        return self._dense.search_many(vectors, k, self._lexical.live)

    def score_lexical(self, query: str, chunk_ids: Sequence[str]) -> np.ndarray:
        """BM25 score of ``query`` for each given chunk (0 where no term matches)."""
        rows = np.fromiter((self.chunk_row(c) for c in chunk_ids), dtype=np.int64, count=-1)
        if rows.size == 0:
            return np.zeros(0, dtype=np.float32)
        return self._lexical.scores(query)[rows]

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray | None:
        """Return the stored unit vectors of the chunks (one row each), or None without vectors."""
        if self._dense is None:
            return None
        rows = [self.chunk_row(c) for c in chunk_ids]
        return self._dense.vectors[rows]

    def _hits(self, ranked: Sequence[tuple[int, float]], source: str) -> list[Hit]:
        chunks = self._chunks.chunks_by_rows([row for row, _ in ranked])
        return [
            Hit(chunk_id=chunk.chunk_id, score=score, rank=rank, source=source)
            for rank, ((_, score), chunk) in enumerate(zip(ranked, chunks, strict=True))
        ]

    def __repr__(self) -> str:
        dense = self.embedder_name or "none"
        return f"Index({str(self._path)!r}, docs={self.n_docs}, chunks={self.n_chunks}, {dense=!s})"
