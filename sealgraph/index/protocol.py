"""What the graph, the ledger, packing, the pipeline and the evaluation need from an index.

:class:`SearchIndex` is the interface: the searches, over the :class:`ChunkStore` the
hits are read from (a search index is a chunk store too: its reads are the store's).
:class:`sealgraph.index.Index` (the folder index) and
:class:`sealgraph.index.QdrantIndex` (what :func:`sealgraph.index.build_index` and
:func:`sealgraph.index.load_index` return for a folder or a Qdrant address)
implement it. A LangChain vector store or retriever does not: the SEAL loop reads
chunks by id, walks a document's chunks in order and scores given chunks
lexically, which a retriever cannot do. :func:`require_search_index` turns such a
value into a clear :class:`~sealgraph.errors.InputError`.

:class:`CorpusStatisticsSource` is optional: an index that keeps its corpus's counts
(BM25's document frequencies, proper-name counts, repeated lines and the gazetteer's
names of each document, made at build time and kept current by adds and removals)
offers them, and the offline reasoner
and the packer read them instead of reading the whole corpus at the first question;
its bulk reads (``document_headings``, ``first_chunk_texts``) spare the reasoner's
gazetteer one lookup per chunk. :class:`sealgraph.index.QdrantIndex` (an index held
by Qdrant, ``docs/scale-out.md``) implements both. Who reads what:

* the graph's search step: ``search_lexical``, ``search_dense``, ``search_hybrid``,
  ``embed_query`` / ``embed_queries``, ``n_chunks``, ``has_dense``;
* the ledger and the offline reasoner: ``get_chunk(s)``, ``doc_chunks``,
  ``neighbors``, ``titles``, ``headings``, ``lookup_title``, ``score_lexical``,
  ``chunk_vectors``, and the optional counts;
* packing (bubble, relevant segments, semantic window): ``doc_chunks``,
  ``neighbors``, ``embed_texts``, the repeated lines;
* the evaluation: ``iter_chunks``, ``manifest``, ``path``, ``get_chunks``, and the
  files the index was read from where it records them (``source_files()``, a list
  of ``{"path", "sha256", "documents"}``; :meth:`sealgraph.index.Index.source_files`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from sealgraph.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from sealgraph.config import RetrievalConfig
    from sealgraph.types import Chunk, Hit

__all__ = [
    "BatchSearch",
    "ChunkStore",
    "CorpusStatisticsSource",
    "SearchIndex",
    "hybrid_search_batch",
    "require_search_index",
]


@runtime_checkable
class ChunkStore(Protocol):
    """The chunks of an index, read by id, by document and by name.

    Chunk ids are ``"{doc_id}#{order}"`` (see :class:`sealgraph.types.Chunk`).
    """

    def get_chunk(self, chunk_id: str) -> Chunk:
        """Return a chunk by id (KeyError if unknown)."""

    def get_chunks(self, chunk_ids: Iterable[str]) -> list[Chunk]:
        """Return chunks by id, in the given order (KeyError on an unknown id)."""

    def iter_chunks(self) -> Iterator[Chunk]:
        """Iterate over every chunk (documents in order, chunks in order)."""

    def doc_chunks(self, doc_id: str) -> list[Chunk]:
        """Chunks of a document, in order (empty for an unknown document)."""

    def neighbors(self, chunk_id: str, before: int = 1, after: int = 1) -> list[Chunk]:
        """Return the chunk with up to ``before``/``after`` same-document neighbours, in order."""

    def titles(self) -> list[tuple[str, str]]:
        """``(doc_id, title)`` of every document, in document order."""

    def headings(self) -> list[tuple[str, str]]:
        """``(chunk_id, own section heading)`` of every chunk that has one."""

    def lookup_title(self, name: str) -> list[str]:
        """Chunk ids for an entity name (documents with that title, then that heading)."""


@runtime_checkable
class SearchIndex(ChunkStore, Protocol):
    """A loaded, read-only corpus index: lexical, dense and hybrid search over its chunks.

    ``isinstance(value, SearchIndex)`` checks that every member is present (the
    :class:`ChunkStore` reads included).
    """

    # -- properties -------------------------------------------------------------

    @property
    def path(self) -> Path:
        """Directory the index was loaded from (an index held by an engine: its address)."""

    @property
    def manifest(self) -> dict[str, Any]:
        """The manifest (a copy): counts, sources, settings and the files it holds."""

    @property
    def n_chunks(self) -> int:
        """Number of chunks."""

    @property
    def n_docs(self) -> int:
        """Number of documents."""

    @property
    def has_dense(self) -> bool:
        """True when dense search works: vectors are stored and queries can be embedded."""

    @property
    def embedder_name(self) -> str | None:
        """Name of the embedder the stored vectors come from (None if there are none)."""

    # -- search -----------------------------------------------------------------

    def search_lexical(self, query: str, k: int) -> list[Hit]:
        """BM25 top ``k`` (only chunks sharing a term with the query)."""

    def search_dense(self, query: str, k: int) -> list[Hit]:
        """Cosine top ``k`` by embedding; empty when the index has no dense search."""

    def search_hybrid(
        self, query: str, k: int, retrieval: RetrievalConfig | None = None
    ) -> list[Hit]:
        """Reciprocal-rank fusion of lexical and dense results (lexical only without dense)."""

    def score_lexical(self, query: str, chunk_ids: Sequence[str]) -> np.ndarray:
        """BM25 score of ``query`` for each given chunk (0 where no term matches)."""

    def embed_query(self, text: str) -> np.ndarray | None:
        """Return the unit query vector, or None without dense search."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray | None:
        """Embed several queries at once (one unit row each), or None without dense search."""

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray | None:
        """Embed arbitrary texts (one unit row each), or None without dense search."""

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray | None:
        """Return the stored unit vectors of the chunks (one row each), or None without vectors."""


@runtime_checkable
class BatchSearch(Protocol):
    """Searches of several queries in one call (optional; both of sealgraph's indexes offer it).

    The results are those of :meth:`SearchIndex.search_dense` and
    :meth:`SearchIndex.search_hybrid` one query at a time; the queries are embedded in
    one batch (one model call for the uncached ones; their vectors kept in the index's
    query cache), and the folder index hands them to FAISS in one call.
    """

    def search_dense_many(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """:meth:`SearchIndex.search_dense` for each query."""

    def search_hybrid_many(
        self, queries: Sequence[str], k: int, retrieval: RetrievalConfig | None = None
    ) -> list[list[Hit]]:
        """:meth:`SearchIndex.search_hybrid` for each query."""


@runtime_checkable
class CorpusStatisticsSource(Protocol):
    """What an index may offer so that no reader counts its corpus (optional)."""

    def document_frequency(self, term: str) -> int:
        """Chunks whose indexed text holds the lexical token ``term`` (a stem), now."""

    def statistics(self) -> Any:
        """Return the corpus counts, or None.

        ``n_chunks``, ``names.get(key, 0)`` (chunks writing a proper name),
        ``repeated_lines()`` (a container of the line keys many documents repeat) and
        ``gazetteer()`` (every document's names, read on demand: a
        :class:`sealgraph.ledger.gazetteer.GazetteerTables`, or None); None when the
        index holds none, or when they were counted otherwise (another
        counting version or lexicon; see :class:`sealgraph.index.folder._statistics.CorpusStatistics`).
        """

    def document_headings(self) -> list[tuple[str, str]]:
        """``(doc_id, own section heading)`` of every chunk that has one, in one read."""

    def first_chunk_texts(self) -> list[tuple[str, str]]:
        """``(doc_id, text of its first chunk)`` of every document, in one read."""


def hybrid_search_batch(
    index: SearchIndex,
    queries: Sequence[str],
    k: int,
    retrieval: RetrievalConfig | None = None,
) -> list[list[Hit]]:
    """Return :meth:`SearchIndex.search_hybrid` of each query, in one batch where the index can.

    An index that offers :class:`BatchSearch` embeds the queries in one model call;
    any other is asked one query at a time. The results are the same either way.
    """
    if isinstance(index, BatchSearch):
        return index.search_hybrid_many(queries, k, retrieval)
    return [index.search_hybrid(query, k, retrieval) for query in queries]


def require_search_index(value: object, *, where: str, expected: str) -> SearchIndex:
    """Return ``value`` if it is a :class:`SearchIndex`, else raise a clear InputError.

    Args:
        value: What the caller was given as an index.
        where: Who needs the index, to start the message (``"build_graph"``).
        expected: What to give instead, in the message's parentheses.

    Raises:
        InputError: ``value`` is not a sealgraph index (for example a LangChain
            vector store or retriever, a dict, or a path where a loaded index is
            needed); the message names its type and the members it lacks.

    """
    if isinstance(value, SearchIndex):
        return value
    kind = type(value)
    name = kind.__qualname__
    if kind.__module__ != "builtins":
        name = f"{kind.__module__}.{name}"
    missing = [m for m in _MEMBERS if not _has_member(value, m)]
    if len(missing) < len(_MEMBERS):
        tail = f", which has no {', '.join(missing)}"
    else:  # nothing like an index (a vector store, a retriever, a dict...)
        tail = "; index the documents with sealgraph.index.build_index(paths, index_dir)"
    raise InputError(f"{where} needs a sealgraph index ({expected}); got {name}{tail}")


_MEMBERS = tuple(
    name for protocol in (ChunkStore, SearchIndex) for name in vars(protocol) if name[0] != "_"
)
"""Names of the members of :class:`SearchIndex` (its chunk store's first), in declaration order."""


def _has_member(value: object, name: str) -> bool:
    # As the protocol check: present, and a method not blocked by setting it to None.
    if not hasattr(value, name):
        return False
    return not callable(getattr(SearchIndex, name)) or getattr(value, name) is not None
