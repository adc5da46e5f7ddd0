"""What every backend's index answers the same way: its manifest, its embedder, its chunks.

A backend's index class derives from :class:`IndexBasics`, sets what it reads from
(its manifest, counts, lexicon, :class:`~sealgraph.index._queries.QueryEmbeddings`)
and its :class:`~sealgraph.index.protocol.ChunkStore` (``_chunks``), whose reads it
answers by delegation; it writes the searches itself.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from sealgraph.index._queries import QueryEmbeddings
from sealgraph.index.protocol import ChunkStore
from sealgraph.text.lexicon import Lexicon
from sealgraph.types import Chunk

__all__ = ["IndexBasics"]


class IndexBasics:
    """What every index implementation answers the same way from its manifest and embedder.

    A subclass sets ``_manifest``, ``_n_chunks``, ``_n_docs``, ``_lexicon``,
    ``_queries`` (a :class:`QueryEmbeddings`) and ``_chunks`` (its chunk store).
    """

    _chunks: Any
    _manifest: dict[str, Any]
    _n_chunks: int
    _n_docs: int
    _lexicon: Lexicon
    _queries: QueryEmbeddings

    @property
    def manifest(self) -> dict[str, Any]:
        """A copy of the manifest."""
        return copy.deepcopy(self._manifest)

    @property
    def n_chunks(self) -> int:
        """Number of chunks."""
        return self._n_chunks

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return self._n_docs

    @property
    def has_dense(self) -> bool:
        """True when dense search works: vectors are stored and queries can be embedded."""
        return self._queries.enabled

    @property
    def embedder_name(self) -> str | None:
        """Name of the embedder the stored vectors come from (None if there are none)."""
        info = self._manifest.get("embedder")
        return info.get("name") if info else None

    @property
    def lexicon(self) -> Lexicon:
        """The lexicon the index was built with; runs over the index read with it."""
        return self._lexicon

    @property
    def encoding(self) -> str:
        """Tiktoken encoding that counted ``Chunk.n_tokens``."""
        return self._manifest["tokenizer"]["encoding"]

    def embed_query(self, text: str) -> np.ndarray | None:
        """Return the unit query vector (cached, read-only), or None without dense search."""
        return self._queries.query(text)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray | None:
        """Embed several queries at once (one batch for the uncached ones), or None.

        The vectors land in the query cache, so calling this with a loop's
        micro-queries before searching them one by one saves a model call each.
        """
        return self._queries.queries(texts)

    def clear_query_cache(self) -> None:
        """Forget cached query embeddings (for cold-start latency measurements)."""
        self._queries.clear()

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray | None:
        """Embed arbitrary texts (one unit row each) with the query embedder, or None.

        Not cached: meant for one batch of passage pieces (e.g. sentences to pack).
        """
        return self._queries.texts(texts)

    # -- the chunk store (ChunkStore) ------------------------------------------------

    @property
    def chunks(self) -> ChunkStore:
        """The chunk store the index reads its hits' chunks from."""
        return self._chunks

    def get_chunk(self, chunk_id: str) -> Chunk:
        """Return a chunk by id (KeyError if unknown)."""
        return self._chunks.get_chunk(chunk_id)

    def get_chunks(self, chunk_ids: Iterable[str]) -> list[Chunk]:
        """Return chunks by id, in the given order (KeyError on an unknown id)."""
        return self._chunks.get_chunks(chunk_ids)

    def iter_chunks(self) -> Iterator[Chunk]:
        """Iterate over every chunk (documents in order, chunks in order)."""
        return self._chunks.iter_chunks()

    def doc_chunks(self, doc_id: str) -> list[Chunk]:
        """Chunks of a document, in order (empty for an unknown document)."""
        return self._chunks.doc_chunks(doc_id)

    def neighbors(self, chunk_id: str, before: int = 1, after: int = 1) -> list[Chunk]:
        """Return the chunk with up to ``before``/``after`` same-document neighbours, in order."""
        return self._chunks.neighbors(chunk_id, before, after)

    def titles(self) -> list[tuple[str, str]]:
        """``(doc_id, title)`` of every document, in document order."""
        return self._chunks.titles()

    def headings(self) -> list[tuple[str, str]]:
        """``(chunk_id, own section heading)`` of every chunk that has one."""
        return self._chunks.headings()

    def document_headings(self) -> list[tuple[str, str]]:
        """``(doc_id, own section heading)`` of every chunk that has one, in one read."""
        return self._chunks.document_headings()

    def first_chunk_texts(self) -> list[tuple[str, str]]:
        """``(doc_id, text of its first chunk)`` of every document, in one read."""
        return self._chunks.first_chunk_texts()

    def lookup_title(self, name: str) -> list[str]:
        """Chunk ids for an entity name (documents with that title, then that heading)."""
        return self._chunks.lookup_title(name)

    def source_files(self) -> list[dict[str, Any]]:
        """Return the files the index was read from: ``path``, ``sha256``, ``documents``."""
        return self._chunks.source_files()
