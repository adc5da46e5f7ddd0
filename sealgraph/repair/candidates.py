"""Candidate passages for micro-queries: title/alias lookup first, then hybrid search.

A micro-query that names documents (``title_targets``) takes their best chunks first:
ranked by the query's relation words alone (the document's name is in every one of
its chunks and says nothing about which states the relation), lexically and, with
an embedder, by vector similarity, fused by reciprocal rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sealgraph.config import RetrievalConfig, SealConfig
from sealgraph.index import hybrid_search_batch, reciprocal_rank_fusion
from sealgraph.ledger.needs import focus_text, scope_clauses
from sealgraph.model import MicroQuery, QuestionNeeds
from sealgraph.types import Chunk, Hit

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.index.protocol import SearchIndex

DOC_CHUNKS = 3
"""Chunks taken from each document a micro-query names (its best for the relation)."""


def relation_text(query: MicroQuery) -> str:
    """Return the part of a micro-query that is not the name of the entity it is about."""
    text = query.text
    if query.entity and text.lower().startswith(query.entity.lower()):
        rest = text[len(query.entity) :].strip()
        return rest or text
    return text


def rank_doc_chunks(
    index: SearchIndex,
    query: str,
    chunk_ids: Sequence[str],
    retrieval: RetrievalConfig | None = None,
) -> list[int]:
    """Order ``chunk_ids`` (positions) by relevance to ``query``, best first, ties by position.

    The lexical and (with an embedder) dense orders of the chunks are fused as hybrid
    search fuses its lists: :func:`~sealgraph.index.reciprocal_rank_fusion` with the
    configured weights and ``rrf_k``.
    """
    retrieval = retrieval or RetrievalConfig()
    n = len(chunk_ids)
    if n == 0:
        return []
    lex = np.asarray(index.score_lexical(query, list(chunk_ids)), dtype=np.float64)
    rankings = [sorted(range(n), key=lambda i: (-float(lex[i]), i))]
    weights = [retrieval.lexical_weight]
    vecs = index.chunk_vectors(list(chunk_ids)) if index.has_dense else None
    qv = index.embed_query(query) if vecs is not None and retrieval.dense_weight > 0 else None
    if qv is not None:
        cos = np.asarray(vecs @ qv, dtype=np.float64)
        rankings.append(sorted(range(n), key=lambda i: (-float(cos[i]), i)))
        weights.append(retrieval.dense_weight)
    fused = reciprocal_rank_fusion(rankings, weights, rrf_k=retrieval.rrf_k)
    # Every position is ranked: a chunk left out by zero weights keeps its place.
    placed = [i for i, _ in fused]
    return placed + sorted(set(range(n)) - set(placed))


def gather_candidates(
    index: SearchIndex,
    queries: Sequence[MicroQuery],
    config: SealConfig,
    exclude: set[str],
) -> dict[str, list[str]]:
    """Return candidate chunk ids per micro-query text (deterministic order).

    Documents a query names by title come first (their best chunks for the query's
    relation words), then the hybrid search results. ``exclude`` (evidence and
    blocklist) is removed.

    A loop's queries cost one model call and one search: every text they embed (the
    queries, and the relation words of those that rank a named document's chunks) is
    embedded in one batch, and the queries are searched together
    (:func:`~sealgraph.index.hybrid_search_batch`: one FAISS call). The candidates are
    those of searching the queries one by one.
    """
    if not queries:
        return {}
    targets = [_target_chunks(index, q, exclude) for q in queries]
    if index.has_dense and config.retrieval.dense_weight > 0:
        ranked_texts = [
            relation_text(q)
            for q, docs in zip(queries, targets, strict=True)
            if any(len(chunks) > DOC_CHUNKS for chunks in docs)
        ]
        index.embed_queries(list(dict.fromkeys([q.text for q in queries] + ranked_texts)))
    found = hybrid_search_batch(
        index, [q.text for q in queries], config.micro_query_k, config.retrieval
    )
    return {
        q.text: _query_candidates(index, q, docs, hits, config, exclude)
        for q, docs, hits in zip(queries, targets, found, strict=True)
    }


def _query_candidates(
    index: SearchIndex,
    query: MicroQuery,
    docs: Sequence[Sequence[Chunk]],
    hits: Sequence[Hit],
    config: SealConfig,
    exclude: set[str],
) -> list[str]:
    """Return one query's candidates: its named documents' best chunks, then its hits."""
    ids: list[str] = []
    for chunks in docs:
        if len(chunks) > DOC_CHUNKS:
            order = rank_doc_chunks(
                index, relation_text(query), [c.chunk_id for c in chunks], config.retrieval
            )
            chunks = [chunks[i] for i in order[:DOC_CHUNKS]]
        ids.extend(c.chunk_id for c in chunks)
    if query.entity and not query.title_targets:
        ids.extend(index.lookup_title(query.entity)[:2])
    ids.extend(h.chunk_id for h in hits)
    return [c for c in dict.fromkeys(ids) if c not in exclude]


def _target_chunks(index: SearchIndex, query: MicroQuery, exclude: set[str]) -> list[list[Chunk]]:
    """Return the chunks of each document ``query`` names by title, ``exclude`` left out."""
    return [
        [c for c in index.doc_chunks(doc) if c.chunk_id not in exclude]
        for doc in query.title_targets
    ]


def scope_documents(needs: QuestionNeeds) -> tuple[str, ...]:
    """Documents the question's scope clause names ("Consider X's privacy policy; ...").

    Only entities written inside a scope clause count, and only those the corpus
    resolves to documents: the clause picks the documents, the rest of the question
    asks something of them.
    """
    clauses = [needs.question[a:b] for a, b in scope_clauses(needs.question)]
    if not clauses:
        return ()
    docs: dict[str, None] = {}
    for entity in needs.entities:
        if entity.targets and any(entity.name in clause for clause in clauses):
            docs.update(dict.fromkeys(entity.targets))
    return tuple(docs)


def set_members(needs: QuestionNeeds) -> tuple[str, ...]:
    """Return the member documents of the sets the question asks over, in set order, once each."""
    return tuple(dict.fromkeys(d for group in needs.sets for d in group.members))


def initial_hits(index: SearchIndex, needs: QuestionNeeds, k: int, config: SealConfig) -> list[Hit]:
    """Return the initial top-k evidence: hybrid search, with slots reserved where asked.

    A question over a set ("Intel's net sales over time") gets one slot per member
    while the set fits in k: each member document's best chunk for the question, the
    other slots from hybrid search. A question whose scope clause names documents
    asks its remaining clause of those documents: their chunks are ranked by that
    clause alone (the scope's words are in every chunk of the document and would
    only favour its opening), and fill the set before anything else. Otherwise this
    is plain hybrid search on the question.
    """
    flat = index.search_hybrid(needs.question, k, config.retrieval)
    members = set_members(needs)
    if members and len(members) <= k:
        query = focus_text(needs.question)
        chosen = [c for doc in members for c in _best_chunks(index, query, doc, 1, config)]
        return _hits(chosen, flat, k, config)
    docs = scope_documents(needs)
    if not docs:
        return flat[:k]
    chunk_ids = [c.chunk_id for d in docs for c in index.doc_chunks(d)]
    order = rank_doc_chunks(index, focus_text(needs.question), chunk_ids, config.retrieval)
    return _hits([chunk_ids[i] for i in order][:k], flat, k, config)


def _best_chunks(
    index: SearchIndex, query: str, doc_id: str, n: int, config: SealConfig
) -> list[str]:
    """Return the ``n`` chunks of a document that best answer ``query`` (hybrid, fused), best first."""
    chunk_ids = [c.chunk_id for c in index.doc_chunks(doc_id)]
    order = rank_doc_chunks(index, query, chunk_ids, config.retrieval)
    return [chunk_ids[i] for i in order[:n]]


def _hits(chosen: list[str], flat: Sequence[Hit], k: int, config: SealConfig) -> list[Hit]:
    """``chosen`` first, then hybrid search's hits up to ``k``, scored by rank."""
    chosen = list(dict.fromkeys(chosen))[:k]
    chosen += [h.chunk_id for h in flat if h.chunk_id not in chosen][: k - len(chosen)]
    rrf_k = config.retrieval.rrf_k
    return [Hit(cid, 1.0 / (rrf_k + rank + 1), rank, "scoped") for rank, cid in enumerate(chosen)]
