"""Chunks as Qdrant points, and BM25 as sparse vectors, both ways.

BM25 (Lucene's variant, :mod:`sealgraph.index.folder._segments`) scores a chunk d for
the query's distinct tokens t as ``Σ idf(t) · tf / (tf + k1 · (1 − b + b · |d| / avgdl))``.
A chunk's sparse vector holds the second factor for each of its tokens (made by
sealgraph, from the same tokenizer, lexicon and field weight as the folder
index); a query's holds 1 for each of its distinct tokens; Qdrant's IDF modifier
multiplies in ``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))``, Lucene's. Their
dot product is the folder index's BM25 score, as long as the ``avgdl`` the
weights were made with is the corpus's: see :func:`needs_reweighting`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from sealgraph.index._bm25 import BM25
from sealgraph.index.qdrant._store import ALIVE, DENSE, LEXICAL, point_id, term_id
from sealgraph.text.chunking import lexical_text
from sealgraph.text.names import normalize_name
from sealgraph.types import Chunk, Document

__all__ = [
    "AVGDL_TOLERANCE",
    "chunk_from_payload",
    "chunk_point",
    "document_point",
    "needs_reweighting",
    "query_vector",
    "sparse_vector",
]

AVGDL_TOLERANCE = 0.05
"""How far the corpus's mean chunk length may drift from the one the stored
weights were made with before an add or a removal re-weights every chunk."""
SEQ_STRIDE = 2**24
"""``seq`` of a chunk: its document's position times this, plus its order."""


def sparse_vector(tokens: Sequence[str], avgdl: float) -> Any:
    """Return the sparse vector of a chunk's lexical tokens: BM25's term-frequency part."""
    from qdrant_client import models

    k1, b = BM25["k1"], BM25["b"]
    norm = k1 * (1 - b + b * len(tokens) / avgdl) if avgdl > 0 else k1
    counts = Counter(term_id(t) for t in tokens)
    indices = sorted(counts)
    values = [counts[i] / (counts[i] + norm) for i in indices]
    return models.SparseVector(indices=indices, values=values)


def query_vector(terms: Sequence[str]) -> Any:
    """Return the sparse vector of a query's tokens: 1 for each distinct one."""
    from qdrant_client import models

    indices = sorted({term_id(t) for t in terms})
    return models.SparseVector(indices=indices, values=[1.0] * len(indices))


def needs_reweighting(weighted_with: float, avgdl: float) -> bool:
    """Whether chunks weighted with mean length ``weighted_with`` must be re-weighted."""
    return weighted_with <= 0 or abs(avgdl / weighted_with - 1) > AVGDL_TOLERANCE


def chunk_point(
    chunk: Chunk,
    *,
    tokens: Sequence[str],
    avgdl: float,
    vector: Sequence[float] | None,
    content_hash: str,
    position: int,
    generation: int,
    lex: Any,
    names: Sequence[str] = (),
) -> Any:
    """Return the point of a chunk written by ``generation``."""
    from qdrant_client import models

    vectors: dict[str, Any] = {LEXICAL: sparse_vector(tokens, avgdl)}
    if vector is not None:
        vectors[DENSE] = [float(x) for x in vector]
    heading = chunk.section[-1] if chunk.section else ""
    payload = {
        "kind": "chunk",
        "chunk_id": chunk.chunk_id,
        "doc_id": chunk.doc_id,
        "title": chunk.title,
        "section": list(chunk.section),
        "order": chunk.order,
        "start": chunk.start,
        "end": chunk.end,
        "text": chunk.text,
        "n_tokens": chunk.n_tokens,
        "sentences": [list(pair) for pair in chunk.sentences],
        "hash": content_hash,
        "dl": len(tokens),
        # The offline reasoner's counts (sealgraph.index.qdrant._stats).
        "names": sorted(names),
        "terms": sorted(set(tokens)),
        "seq": position * SEQ_STRIDE + chunk.order,
        "title_key": normalize_name(chunk.title, lex),
        "heading_key": normalize_name(heading, lex) if heading else "",
        "born": generation,
        "died": ALIVE,
    }
    return models.PointStruct(
        id=point_id("chunk", chunk.chunk_id, generation), vector=vectors, payload=payload
    )


def document_point(
    doc: Document,
    *,
    position: int,
    file: str | None,
    n_chunks: int,
    generation: int,
    lines: Sequence[int] = (),
) -> Any:
    """Return the point of a document (no vector) written by ``generation``."""
    from qdrant_client import models

    payload = {
        "kind": "document",
        "doc_id": doc.doc_id,
        "title": doc.title,
        "source": doc.source,
        "metadata": dict(doc.metadata),
        "file": file,
        "position": position,
        "n_chunks": n_chunks,
        "lines": list(lines),
        "born": generation,
        "died": ALIVE,
    }
    return models.PointStruct(
        id=point_id("document", doc.doc_id, generation), vector={}, payload=payload
    )


def chunk_from_payload(payload: Mapping[str, Any]) -> Chunk:
    """Return the chunk a chunk point's payload holds."""
    return Chunk(
        chunk_id=payload["chunk_id"],
        doc_id=payload["doc_id"],
        title=payload["title"],
        section=tuple(payload["section"]),
        order=int(payload["order"]),
        start=int(payload["start"]),
        end=int(payload["end"]),
        text=payload["text"],
        n_tokens=int(payload["n_tokens"]),
        sentences=tuple((int(a), int(b)) for a, b in payload["sentences"]),
    )


def chunk_tokens(chunk: Chunk, tokenize: Any, field_weight: int) -> list[str]:
    """Return a stored chunk's lexical tokens, as a build makes them (for re-weighting)."""
    return tokenize(lexical_text(chunk, field_weight))
