"""Candidate passages for micro-queries: title/alias lookup first, then hybrid search."""

from __future__ import annotations

from collections.abc import Sequence

from sealgraph.config import SealConfig
from sealgraph.ledger.microqueries import MicroQuery


def gather_candidates(
    index,
    queries: Sequence[MicroQuery],
    config: SealConfig,
    exclude: set[str],
) -> dict[str, list[str]]:
    """Return candidate chunk ids per micro-query text (deterministic order).

    Documents a query names by title come first (their chunks ranked by the query),
    then the hybrid search results. ``exclude`` (evidence and blocklist) is removed.
    """
    out: dict[str, list[str]] = {}
    # One batched model call for every new query instead of one call per query.
    if getattr(index, "has_dense", False) and config.retrieval.dense_weight > 0:
        index.embed_queries([q.text for q in queries])
    for q in queries:
        ids: list[str] = []
        for doc in q.title_targets:
            chunks = index.doc_chunks(doc)
            if len(chunks) > 2:
                scores = index.score_lexical(q.text, [c.chunk_id for c in chunks])
                order = sorted(range(len(chunks)), key=lambda i: (-float(scores[i]), i))
                chunks = [chunks[i] for i in order[:2]]
            ids.extend(c.chunk_id for c in chunks)
        if q.entity and not q.title_targets:
            ids.extend(index.lookup_title(q.entity)[:2])
        ids.extend(
            h.chunk_id for h in index.search_hybrid(q.text, config.micro_query_k, config.retrieval)
        )
        out[q.text] = [c for c in dict.fromkeys(ids) if c not in exclude]
    return out
