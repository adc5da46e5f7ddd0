"""The chunk store of an index held by Qdrant: chunks read by payload filters.

Every read is of the generation the index was opened at (``born <= G < died``), in
corpus order (``seq``: documents in order, chunks in order).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sealgraph.index.qdrant._points import chunk_from_payload
from sealgraph.index.qdrant._store import Collection, live_filter, match, match_any
from sealgraph.text.lexicon import Lexicon
from sealgraph.text.names import normalize_name
from sealgraph.types import Chunk

__all__ = ["QdrantChunks", "chunk_kind", "document_kind"]


def chunk_kind() -> Any:
    """Return the filter of chunk points (built on use: qdrant_client is an extra)."""
    return match("kind", "chunk")


def document_kind() -> Any:
    """Return the filter of document points."""
    return match("kind", "document")


class QdrantChunks:
    """The chunks of a collection at one generation (a :class:`~sealgraph.index.protocol.ChunkStore`)."""

    def __init__(
        self,
        collection: Collection,
        generation: int,
        manifest: dict[str, Any],
        lexicon: Lexicon,
    ) -> None:
        self._collection = collection
        self._generation = generation
        self._manifest = manifest
        self._lexicon = lexicon
        self._live_chunks = live_filter(generation, chunk_kind())

    @property
    def live_chunks(self) -> Any:
        """The filter of this generation's chunks."""
        return self._live_chunks

    def source_files(self) -> list[dict[str, Any]]:
        """Return the files the index was read from: ``path``, ``sha256``, ``documents``."""
        return copy.deepcopy(list(self._manifest.get("sources") or []))

    def chunk_filter(self, *conditions: Any) -> Any:
        """Return the filter of this generation's chunks that meet ``conditions``."""
        return live_filter(self._generation, chunk_kind(), *conditions)

    def _payloads(self, flt: Any, fields: Sequence[str] | bool = True) -> list[dict[str, Any]]:
        return [p.payload for p in self._collection.scroll(flt, payload=fields, order_by="seq")]

    def get_chunk(self, chunk_id: str) -> Chunk:
        """Return a chunk by id (KeyError if unknown)."""
        return self.get_chunks([chunk_id])[0]

    def get_chunks(self, chunk_ids: Iterable[str]) -> list[Chunk]:
        """Return chunks by id, in the given order (KeyError on an unknown id)."""
        wanted = list(chunk_ids)
        found: dict[str, Chunk] = {}
        distinct = list(dict.fromkeys(wanted))
        for start in range(0, len(distinct), 512):
            flt = self.chunk_filter(match_any("chunk_id", distinct[start : start + 512]))
            for point in self._collection.scroll(flt):
                chunk = chunk_from_payload(point.payload)
                found[chunk.chunk_id] = chunk
        missing = [c for c in wanted if c not in found]
        if missing:
            raise KeyError(f"unknown chunk id {missing[0]!r}")
        return [found[c] for c in wanted]

    def iter_chunks(self) -> Iterator[Chunk]:
        """Iterate over every chunk (documents in order, chunks in order), a page at a time."""
        for point in self._collection.scroll(self._live_chunks, order_by="seq"):
            yield chunk_from_payload(point.payload)

    def doc_chunks(self, doc_id: str) -> list[Chunk]:
        """Chunks of a document, in order (empty for an unknown document)."""
        return [
            chunk_from_payload(p)
            for p in self._payloads(self.chunk_filter(match("doc_id", doc_id)))
        ]

    def neighbors(self, chunk_id: str, before: int = 1, after: int = 1) -> list[Chunk]:
        """Return the chunk with up to ``before``/``after`` same-document neighbours, in order."""
        from qdrant_client import models

        chunk = self.get_chunk(chunk_id)
        lo = chunk.order - max(0, before)
        hi = chunk.order + max(0, after)
        flt = self.chunk_filter(
            match("doc_id", chunk.doc_id),
            models.FieldCondition(key="order", range=models.Range(gte=lo, lte=hi)),
        )
        return [chunk_from_payload(p) for p in self._payloads(flt)]

    def titles(self) -> list[tuple[str, str]]:
        """``(doc_id, title)`` of every document, in document order."""
        flt = live_filter(self._generation, document_kind())
        return [
            (p.payload["doc_id"], p.payload["title"])
            for p in self._collection.scroll(flt, payload=["doc_id", "title"], order_by="position")
        ]

    def headings(self) -> list[tuple[str, str]]:
        """``(chunk_id, own section heading)`` of every chunk that has one, in corpus order."""
        return self._own_headings("chunk_id")

    def document_headings(self) -> list[tuple[str, str]]:
        """``(doc_id, own section heading)`` of every chunk that has one, in one scroll."""
        return self._own_headings("doc_id")

    def _own_headings(self, key: str) -> list[tuple[str, str]]:
        return [
            (p[key], p["section"][-1])
            for p in self._payloads(self._live_chunks, [key, "section"])
            if p["section"]
        ]

    def first_chunk_texts(self) -> list[tuple[str, str]]:
        """``(doc_id, text of its first chunk)`` of every document, in document order."""
        out: dict[str, str] = {}
        for p in self._payloads(self._live_chunks, ["doc_id", "text"]):
            out.setdefault(p["doc_id"], p["text"])
        return list(out.items())

    def lookup_title(self, name: str) -> list[str]:
        """Chunk ids for an entity name, matched exactly after :func:`normalize_name`.

        First every chunk of each document whose title matches (documents in
        order), then every other chunk whose own section heading matches.
        """
        key = normalize_name(name, self._lexicon)
        if not key:
            return []
        titled = [
            p["chunk_id"]
            for p in self._payloads(self.chunk_filter(match("title_key", key)), ["chunk_id"])
        ]
        seen = set(titled)
        headed = [
            p["chunk_id"]
            for p in self._payloads(self.chunk_filter(match("heading_key", key)), ["chunk_id"])
            if p["chunk_id"] not in seen
        ]
        return titled + headed
