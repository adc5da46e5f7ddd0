"""A sealgraph index held by Qdrant: the :class:`SearchIndex` the graph runs on, in an engine.

:func:`open_qdrant_index` reads the collection's manifest point and returns a
:class:`QdrantIndex` pinned to its committed generation (see
:mod:`sealgraph.index.qdrant._store` for the layout). Searches run in the engine:
lexical as a sparse query (BM25's IDF by Qdrant's modifier, counted over the
generation's chunks only), dense as a cosine query, hybrid as one Query API call
with both as prefetches fused by RRF. Chunk reads, neighbours and a document's
chunks are payload filters. Ties are broken by the chunk's place in the corpus
(``seq``: documents in order, chunks in order), as the folder index breaks them
by row.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.config import RetrievalConfig
from sealgraph.errors import IndexCorruptError, SealgraphError
from sealgraph.index._base import IndexBasics
from sealgraph.index._bm25 import check_tokenizer, lexical_tokens
from sealgraph.index._plan import manifest_lexicon
from sealgraph.index._queries import QueryEmbeddings
from sealgraph.index._queries import query_embedder as settle_query_embedder
from sealgraph.index.embedders import Embedder
from sealgraph.index.qdrant._address import QdrantAddress
from sealgraph.index.qdrant._chunks import QdrantChunks
from sealgraph.index.qdrant._points import query_vector
from sealgraph.index.qdrant._stats import PayloadCounts, QdrantStatistics, current
from sealgraph.index.qdrant._store import (
    DENSE,
    LEXICAL,
    Collection,
    connect,
    live_filter,
    match,
    match_any,
)
from sealgraph.ingest import WarnFn, warn_stderr
from sealgraph.text.lexicon import Lexicon, get_lexicon, import_lexicon
from sealgraph.types import Hit

__all__ = ["QdrantIndex", "open_qdrant_index"]


_SLACK = 8
"""Extra hits asked of the engine, so that ties at the cut are broken by ``seq`` here."""


def open_qdrant_index(
    address: QdrantAddress,
    *,
    embedder: str | Embedder | Any | None = None,
    warn: WarnFn | None = None,
    lexicon: str | Lexicon | None = None,
) -> QdrantIndex:
    """Open the index in a Qdrant collection (see :func:`sealgraph.index.load_index`).

    Raises:
        InputError: The collection was not made by sealgraph (left untouched).
        IndexCorruptError: No such collection, or no generation committed yet.
        StaleTokenizerError: The index was built with another lexical tokenizer.
        EmbedderMismatchError: ``embedder`` is not the one it was built with.

    """
    warn = warn or warn_stderr
    collection = Collection(connect(address), address)
    head = collection.head()
    if head is None:
        raise IndexCorruptError(f"no index at {address}: the Qdrant collection does not exist")
    manifest = head.get("manifest")
    if not isinstance(manifest, dict) or not isinstance(head.get("generation"), int):
        raise IndexCorruptError(
            f"no index at {address}: its first build has not finished (or died); build it again"
        )
    lex = (
        import_lexicon(lexicon) if lexicon is not None else get_lexicon(manifest_lexicon(manifest))
    )
    check_tokenizer(manifest, lex, address)
    info = manifest.get("embedder")
    query_embedder = settle_query_embedder(info, embedder, address, warn) if info else None
    return QdrantIndex(collection, head["generation"], manifest, lex, query_embedder)


class QdrantIndex(IndexBasics):
    """A sealgraph index in a Qdrant collection, read at one committed generation.

    Open one with :func:`sealgraph.index.load_index` (or get it from
    :func:`sealgraph.index.build_index`) with a ``qdrant://`` or
    ``qdrant+memory://`` address. It implements
    :class:`~sealgraph.index.protocol.SearchIndex`; it reads the generation that
    was committed when it was opened, so a later add or removal is seen by
    opening it again.
    """

    def __init__(
        self,
        collection: Collection,
        generation: int,
        manifest: dict[str, Any],
        lexicon: Lexicon,
        query_embedder: Embedder | None,
    ) -> None:
        self._collection = collection
        self._client = collection.client
        self._name = collection.name
        self._generation = generation
        self._manifest = manifest
        self._lexicon = lexicon
        counts = manifest.get("counts") or {}
        self._n_chunks = int(counts.get("chunks", 0))
        self._n_docs = int(counts.get("documents", 0))
        info = manifest.get("embedder") or None
        self._has_vectors = bool(info)
        self._queries = QueryEmbeddings(
            query_embedder if info else None, info.get("dim") if info else None, self.location
        )
        self._chunks = QdrantChunks(collection, generation, manifest, lexicon)
        self._live_chunks = self._chunks.live_chunks
        self._term_counts = PayloadCounts(collection, generation, "terms")
        self._statistics: QdrantStatistics | None = None

    # -- properties -------------------------------------------------------------

    @property
    def location(self) -> str:
        """The index's address (``qdrant://HOST:PORT/COLLECTION`` or ``qdrant+memory://...``)."""
        return self._collection.address.url

    @property
    def address(self) -> QdrantAddress:
        """Where the index lives."""
        return self._collection.address

    @property
    def path(self) -> Path:
        """The address as a path, for messages (nothing is read from it: no folder exists)."""
        return Path(self.location)

    @property
    def generation(self) -> int:
        """The committed generation this index reads."""
        return self._generation

    # -- the offline reasoner's counts (CorpusStatisticsSource) ------------------

    def statistics(self) -> QdrantStatistics | None:
        """Return the corpus counts the collection keeps (counted by the engine); None when stale.

        None when the points' count fields were written by other counting code or
        another lexicon (``sealgraph index --index ADDRESS`` writes them again); a
        reader then counts from the chunks.
        """
        if not current(self._manifest.get("statistics"), self._lexicon):
            return None
        if self._statistics is None:
            self._statistics = QdrantStatistics(self._collection, self._generation, self._n_chunks)
        return self._statistics

    def document_frequency(self, term: str) -> int:
        """Chunks whose indexed text holds the lexical token ``term`` (a stem), counted now."""
        return self._term_counts.get(term)

    # -- search -----------------------------------------------------------------

    def _terms(self, query: str) -> list[str]:
        return list(dict.fromkeys(lexical_tokens(query, self._lexicon)))

    def _lexical_params(self) -> Any:
        from qdrant_client import models

        # IDF over this generation's chunks only: a write in progress (points born
        # later) or just committed (points died, not yet deleted) does not shift it.
        return models.SearchParams(idf=models.IdfCorpusParams(corpus=self._live_chunks))

    def _query(self, **kwargs: Any) -> list[Any]:
        return self._client.query_points(
            self._name, with_payload=["chunk_id", "seq"], **kwargs
        ).points

    def _ranked(self, points: Sequence[Any], k: int, source: str, scale: float = 1.0) -> list[Hit]:
        ordered = sorted(points, key=lambda p: (-p.score, p.payload["seq"]))[:k]
        return [
            Hit(
                chunk_id=p.payload["chunk_id"],
                score=float(p.score) * scale,
                rank=rank,
                source=source,
            )
            for rank, p in enumerate(ordered)
        ]

    def _lexical_prefetch(self, query: str, depth: int) -> Any:
        terms = self._terms(query)
        if not terms:
            return None
        from qdrant_client import models

        return models.Prefetch(
            query=query_vector(terms),
            using=LEXICAL,
            filter=self._live_chunks,
            params=self._lexical_params(),
            limit=depth,
        )

    def search_lexical(self, query: str, k: int) -> list[Hit]:
        """BM25 top ``k`` (only chunks sharing a term with the query), ties by corpus order."""
        terms = self._terms(query)
        if k <= 0 or not terms:
            return []
        points = self._query(
            query=query_vector(terms),
            using=LEXICAL,
            query_filter=self._live_chunks,
            search_params=self._lexical_params(),
            limit=k + _SLACK,
        )
        return self._ranked([p for p in points if p.score > 0], k, "lexical")

    def search_dense(self, query: str, k: int) -> list[Hit]:
        """Cosine top ``k`` by embedding; empty when the index has no dense search."""
        vector = self.embed_query(query)
        if vector is None or k <= 0:
            return []
        points = self._query(
            query=vector.tolist(), using=DENSE, query_filter=self._live_chunks, limit=k + _SLACK
        )
        return self._ranked(points, k, "dense")

    def search_hybrid(
        self, query: str, k: int, retrieval: RetrievalConfig | None = None
    ) -> list[Hit]:
        """Reciprocal-rank fusion of lexical and dense results, in the engine.

        One Query API call: the dense and the lexical query, each
        ``max(retrieval.pool, k)`` deep, as prefetches fused by Qdrant's RRF. With
        equal weights (the default) the fused order is the folder index's
        ``Σ w / (rrf_k + rank)``; the scores are given on that scale. Qdrant weights
        a list by dividing its ranks (``1 / (rank / w + k − 1)``), so with unequal
        weights the fusion differs from the folder index's. Without dense search
        (or with a zero dense weight) this is :meth:`search_lexical`.
        """
        from qdrant_client import models

        retrieval = retrieval or RetrievalConfig()
        if k <= 0:
            return []
        vector = self.embed_query(query) if retrieval.dense_weight > 0 else None
        if vector is None:
            return self.search_lexical(query, k)
        depth = max(retrieval.pool, k)
        prefetch = [
            models.Prefetch(
                query=vector.tolist(), using=DENSE, filter=self._live_chunks, limit=depth
            )
        ]
        weights = [retrieval.dense_weight]
        lexical = self._lexical_prefetch(query, depth) if retrieval.lexical_weight > 0 else None
        if lexical is not None:
            prefetch.append(lexical)
            weights.append(retrieval.lexical_weight)
        equal = len(set(weights)) == 1
        fusion = models.Rrf(k=retrieval.rrf_k + 1, weights=None if equal else weights)
        points = self._query(prefetch=prefetch, query=models.RrfQuery(rrf=fusion), limit=k + _SLACK)
        return self._ranked(points, k, "hybrid", scale=weights[0] if equal else 1.0)

    def search_dense_many(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """:meth:`search_dense` for each query (the queries embedded in one batch)."""
        if len(queries) > 1:
            self.embed_queries(list(queries))  # one model call; the searches find them cached
        return [self.search_dense(query, k) for query in queries]

    def search_hybrid_many(
        self, queries: Sequence[str], k: int, retrieval: RetrievalConfig | None = None
    ) -> list[list[Hit]]:
        """:meth:`search_hybrid` for each query (the queries embedded in one batch)."""
        if len(queries) > 1 and (retrieval or RetrievalConfig()).dense_weight > 0:
            self.embed_queries(list(queries))
        return [self.search_hybrid(query, k, retrieval) for query in queries]

    def score_lexical(self, query: str, chunk_ids: Sequence[str]) -> np.ndarray:
        """BM25 score of ``query`` for each given chunk (0 where no term matches).

        One sparse query restricted to the given chunks, so the engine's IDF (over
        the whole generation) scores them as it scores a search.
        """
        ids = list(chunk_ids)
        scores = np.zeros(len(ids), dtype=np.float32)
        terms = self._terms(query)
        if not ids or not terms:
            return scores
        distinct = list(dict.fromkeys(ids))
        points = self._query(
            query=query_vector(terms),
            using=LEXICAL,
            query_filter=self._chunks.chunk_filter(match_any("chunk_id", distinct)),
            search_params=self._lexical_params(),
            limit=len(distinct),
        )
        by_id = {p.payload["chunk_id"]: float(p.score) for p in points}
        for i, chunk_id in enumerate(ids):
            scores[i] = by_id.get(chunk_id, 0.0)
        return scores

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray | None:
        """Return the stored unit vectors of the chunks (one row each), or None without vectors."""
        if not self._has_vectors:
            return None
        ids = list(chunk_ids)
        found: dict[str, np.ndarray] = {}
        distinct = list(dict.fromkeys(ids))
        for start in range(0, len(distinct), 512):
            flt = self._chunks.chunk_filter(match_any("chunk_id", distinct[start : start + 512]))
            for point in self._collection.scroll(flt, payload=["chunk_id"], vectors=[DENSE]):
                found[point.payload["chunk_id"]] = np.asarray(point.vector[DENSE], dtype=np.float32)
        missing = [c for c in ids if c not in found]
        if missing:
            raise KeyError(f"unknown chunk id {missing[0]!r}")
        dim = int(self._manifest["embedder"]["dim"])
        if not ids:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([found[c] for c in ids])

    def __repr__(self) -> str:
        dense = self.embedder_name or "none"
        return (
            f"QdrantIndex({self.location!r}, docs={self.n_docs}, chunks={self.n_chunks}, "
            f"{dense=!s}, generation={self._generation})"
        )


def verify_qdrant_index(address: QdrantAddress) -> int:
    """Check that the committed generation holds what its manifest counts; return the points read.

    Raises:
        IndexCorruptError: No index there, or its chunk or document points do not
            match the manifest's counts.

    """
    index = open_qdrant_index(address, embedder="none")
    counts = index.manifest.get("counts") or {}
    found = {
        kind: int(
            index._client.count(
                index._name,
                count_filter=live_filter(index.generation, match("kind", kind)),
                exact=True,
            ).count
        )
        for kind in ("chunk", "document")
    }
    if found["chunk"] != counts.get("chunks") or found["document"] != counts.get("documents"):
        raise IndexCorruptError(
            f"damaged index at {address}: {found['chunk']} chunks and {found['document']} "
            f"documents stored, the manifest counts {counts.get('chunks')} and "
            f"{counts.get('documents')}; rebuild it with --replace"
        )
    return found["chunk"] + found["document"] + 1


def committed_manifest(address: QdrantAddress) -> dict[str, Any]:
    """Return the committed manifest of the index at ``address``, without opening it.

    Raises:
        IndexCorruptError: No such collection, or no generation committed yet.
        SealgraphError: The server cannot be read (its error, in one line).

    """
    try:
        head = Collection(connect(address), address).head()
    except (OSError, ValueError, RuntimeError) as exc:
        raise SealgraphError(
            f"cannot read the index at {address}: {type(exc).__name__}: {exc}"
        ) from None
    manifest = (head or {}).get("manifest")
    if not isinstance(manifest, dict):
        raise IndexCorruptError(f"no index at {address}: no generation of it is committed")
    return manifest
