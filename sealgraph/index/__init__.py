"""The index: build, add to, remove from, open and check it, wherever it is kept.

Public entry points: :func:`build_index`, :func:`remove_documents`,
:func:`refresh_lexical`, :func:`load_index`, :func:`verify_index` and
:func:`read_index_manifest`. Each takes where the index lives: a directory (the
folder index, :mod:`sealgraph.index.folder`, whose loaded form is :class:`Index`) or
an address whose scheme picks a registered backend (``qdrant://HOST:PORT/COLLECTION``,
``qdrants://...``, ``qdrant+memory://COLLECTION``: an index held by Qdrant, a
:class:`QdrantIndex`, ``docs/scale-out.md``). :func:`register_backend` adds a backend
(:class:`IndexBackend`). What the graph needs of a loaded index is
:class:`SearchIndex` (:mod:`sealgraph.index.protocol`): searches over a
:class:`ChunkStore`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sealgraph.index._fusion import reciprocal_rank_fusion
from sealgraph.index._progress import ProgressFn
from sealgraph.index._registry import (
    IndexBackend,
    index_location,
    is_index_address,
    locate,
    register_backend,
    user_index_path,
)
from sealgraph.index.embedders import Embedder, as_embedder
from sealgraph.index.folder import Index
from sealgraph.index.folder._lifecycle import DEFAULT_LOCK_TIMEOUT_S
from sealgraph.index.protocol import BatchSearch, ChunkStore, SearchIndex, hybrid_search_batch
from sealgraph.ingest import LoaderLimits, WarnFn, warn_stderr
from sealgraph.text.chunking import indexed_text
from sealgraph.text.lexicon import Lexicon
from sealgraph.types import Document

if TYPE_CHECKING:
    from sealgraph.index.qdrant._index import QdrantIndex

__all__ = [
    "BatchSearch",
    "ChunkStore",
    "Embedder",
    "Index",
    "IndexBackend",
    "QdrantIndex",
    "SearchIndex",
    "build_index",
    "hybrid_search_batch",
    "index_location",
    "indexed_text",
    "is_index_address",
    "load_index",
    "read_index_manifest",
    "reciprocal_rank_fusion",
    "refresh_lexical",
    "register_backend",
    "remove_documents",
    "user_index_path",
    "verify_index",
]

PathsOrDocuments = str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | Iterable[Any]
"""What :func:`build_index` indexes: one path, several paths, or documents (sealgraph
:class:`Document` or LangChain ``Document`` objects)."""


def build_index(
    paths_or_documents: PathsOrDocuments,
    index_dir: str | os.PathLike[str],
    *,
    embedder: str | Embedder | Any | None = "auto",
    max_chunk_tokens: int | None = None,
    encoding: str | None = None,
    replace: bool = False,
    force: bool = False,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
    progress: ProgressFn | None = None,
    warn: WarnFn | None = None,
    lexicon: str | Lexicon | None = None,
    prune: bool = False,
    follow_links: bool = False,
    limits: LoaderLimits | None = None,
    exclude: Sequence[str] = (),
) -> Index | QdrantIndex:
    """Build an index, or add documents to an existing one, and return it loaded.

    Into an existing index the given documents are ADDED: a document whose id is
    already there is updated (chunked again), the index's other documents are kept
    and new ones are appended. Chunks whose indexed text is unchanged reuse their
    stored vectors (same embedder), so only new or changed text is embedded.
    ``replace=True`` instead makes the index hold exactly the given documents.
    Documents of files deleted from a folder indexed again stay (with a warning)
    unless ``prune=True``; :func:`remove_documents` removes documents by file,
    folder or id. The manifest's ``counts`` say how many documents were
    ``documents_added``, ``documents_updated``, ``documents_kept`` and
    ``documents_removed``, and how many vectors were ``vectors_reused`` and
    ``vectors_new`` (of which ``vectors_resumed``, when a killed build had
    embedded some: the key is only there then).

    Embedding is resumable: each finished batch is kept beside the index (in
    ``.NAME.partial-KEY/``, removed once the build is in place), and the same build
    run again after it was killed embeds only what was not finished.

    The build is atomic: the new index is written to a temporary sibling directory
    and swapped in only when complete. Builds of the same ``index_dir`` take turns
    (a lock file ``.NAME.lock`` beside it); the returned index is this build's
    result, loaded before the lock is released. ``index_dir`` may be new, empty or
    a sealgraph index; anything else (a folder of other files, even one with a
    ``manifest.json``, or an index into which other files were put) is refused
    and left untouched.

    Args:
        paths_or_documents: A path, several paths (files or folders; see
            :func:`sealgraph.ingest.load_documents`), or :class:`Document` objects
            (LangChain ``Document`` objects too: see
            :func:`sealgraph.ingest.from_langchain.documents_from_langchain` for their ids and titles).
        index_dir: Directory of the index; created, added to, or replaced. Or a
            Qdrant collection: ``qdrant://HOST:PORT/COLLECTION`` (``qdrants://``
            for TLS; the API key in ``$SEALGRAPH_QDRANT_API_KEY``) or
            ``qdrant+memory://COLLECTION`` (in memory, this process only); see
            ``docs/scale-out.md``. Vectors of another embedder need another
            collection there (``force`` with another embedder is refused).
        embedder: ``"auto"``, ``"local"``, ``"none"``, ``"openai:<model>"``, an
            :class:`Embedder`, any LangChain ``Embeddings`` (wrapped in a
            :class:`~sealgraph.index.embedders.LangChainEmbedder`; load the index
            later with the same embeddings), or None for lexical retrieval only. Into an existing
            index (without ``force``), ``"auto"`` is that index's embedder if it
            can be loaded here.
        max_chunk_tokens: Most tokens per chunk (a longer single sentence is cut into
            pieces of at most this many tokens, at spaces where it can). None: the existing index's (without ``force``), else 256.
        encoding: tiktoken encoding (or model name) that counts chunk tokens. None:
            the existing index's (without ``force``), else ``o200k_base``.
        replace: Replace the index's documents by the given ones instead of adding.
        force: Allow ``embedder`` to differ from the existing index's. Vectors of
            two embedders cannot be mixed, so this rebuilds the index from the given
            documents only (it implies ``replace``), with the given or default
            settings.
        lock_timeout: Seconds to wait for another build of ``index_dir`` to finish.
        progress: ``(stage, done, total)`` callback; by default progress is shown
            on stderr for stages that take over 10 s (a bar on a terminal;
            otherwise a line with the rate and time left at every 5 % of a stage or
            every 30 s, whichever comes first).
        warn: Called with one line per warning; defaults to stderr.
        lexicon: The language the index is read in (:mod:`sealgraph.text.lexicon`): a
            :class:`~sealgraph.text.lexicon.Lexicon`, ``"english"`` or a
            ``"package.module:NAME"`` path (the config's ``lexicon``). None: the
            existing index's (without ``force``), else English. Chunking and BM25
            use it, and so does what a reasoner derives from the index (the offline
            reasoner's corpus tables); the manifest records it (``lexicon``).
        prune: Also remove the index's documents that came from the given files
            or from files inside the given folders, and that this build did not
            read again: their file was deleted, or (a JSONL file) no longer holds
            them. Needs paths, not documents.
        follow_links: Also read what symlinks inside the given folders point to
            outside every given path (see :func:`sealgraph.ingest.load_documents`;
            off by default, such links are skipped with a warning).
        limits: How much of one file the loaders unpack before refusing it
            (:class:`~sealgraph.ingest.LoaderLimits`; its documented defaults when
            None).
        exclude: Gitignore-style patterns of files and folders the given folders
            leave out, after the defaults (build output, theme templates) and each
            folder's ``.sealgraphignore`` (:mod:`sealgraph.ingest.ignore`).

    Returns:
        The new index.

    Raises:
        InputError: Bad paths, nothing to index, or a target that is not an index
            (or holds files sealgraph did not write).
        IngestError: Malformed input (for example a bad JSONL line).
        EmbedderMismatchError: ``index_dir`` holds an index of another embedder.
        IndexCorruptError: Adding to an index whose documents cannot be read back
            (rebuild it with ``replace=True``).
        ConfigError: The embedder cannot work here (an OpenAI model without API key),
            or the lexicon is unknown.
        TokenizerError: The tiktoken encoding cannot be loaded.
        SealgraphError: Another build of ``index_dir`` ran longer than ``lock_timeout``.

    """
    if embedder is not None and not isinstance(embedder, str):
        embedder = as_embedder(embedder)  # a LangChain Embeddings gets a name and a dim
    settings: dict[str, Any] = {
        "embedder": embedder,
        "max_chunk_tokens": max_chunk_tokens,
        "encoding": encoding,
        "replace": replace,
        "force": force,
        "lock_timeout": lock_timeout,
        "progress": progress,
        "warn": warn,
        "lexicon": lexicon,
        "prune": prune,
        "follow_links": follow_links,
        "limits": limits,
        "exclude": exclude,
    }
    backend, location = locate(index_dir)
    return backend.build(_langchain_documents_converted(paths_or_documents), location, **settings)


def remove_documents(
    index_dir: str | os.PathLike[str],
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    embedder: str | Embedder | Any | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
    warn: WarnFn | None = None,
) -> Index | QdrantIndex:
    """Remove documents from an index and return it loaded.

    Each path is a file or folder: the documents read from that file, or from files
    inside that folder, are removed (the files need not exist any more; the index
    records each document's file). A document id works too. The other documents
    keep their chunks and vectors: nothing is embedded again (no embedder is
    needed) and the lexical part is rebuilt. Atomic and locked like a build; the
    manifest's ``counts`` say how many documents were ``documents_removed``.

    Args:
        index_dir: The index directory.
        paths: One or several files, folders or document ids.
        embedder: Query embedder of the returned index, as for :func:`load_index`.
        lock_timeout: Seconds to wait for another build of ``index_dir`` to finish.
        warn: Called with one line per warning (defaults to stderr).

    Raises:
        InputError: A path matches no document of the index (nothing is removed
            then, and the message names it), or nothing would be left.
        IndexCorruptError: No index there, or its kept files are damaged.

    """
    targets = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    backend, location = locate(index_dir)
    return backend.remove(
        location, targets, embedder=embedder, lock_timeout=lock_timeout, warn=warn
    )


def refresh_lexical(
    index_dir: str | os.PathLike[str],
    *,
    embedder: str | Embedder | Any | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
    warn: WarnFn | None = None,
) -> Index | QdrantIndex:
    """Rebuild an index's lexical part (BM25) and return the index loaded.

    For an index whose tokenizer is stale (:class:`~sealgraph.errors.StaleTokenizerError`:
    it was built by a sealgraph that stemmed or tokenized otherwise): the stored
    chunks are tokenized again with the index's lexicon; documents, chunks and
    vectors are kept, nothing is embedded again. Atomic like a build.

    Args:
        index_dir: The index directory.
        embedder: Query embedder, as for :func:`load_index`.
        lock_timeout: Seconds to wait for another build of ``index_dir`` to finish.
        warn: Called with one line per warning (defaults to stderr).

    Raises:
        IndexCorruptError: No index there, or its kept files are damaged.
        ConfigError: The lexicon the index records cannot be found.

    """
    backend, location = locate(index_dir)
    return backend.refresh(location, embedder=embedder, lock_timeout=lock_timeout, warn=warn)


def _langchain_documents_converted(inputs: Any) -> Any:
    """Return ``inputs`` with LangChain ``Document`` objects turned into sealgraph ones.

    Paths and sealgraph documents pass through unchanged (an iterator is read into
    a list once); langchain_core is only imported when something else is given.
    """
    if isinstance(inputs, str | os.PathLike | Document) or not isinstance(inputs, Iterable):
        return inputs
    if hasattr(inputs, "page_content"):  # one LangChain document (a pydantic model iterates)
        inputs = [inputs]
    items = list(inputs)
    if all(isinstance(item, str | os.PathLike | Document) for item in items):
        return items
    from langchain_core.documents import Document as LangChainDocument

    from sealgraph.ingest.from_langchain import documents_from_langchain

    converted = iter(
        documents_from_langchain([i for i in items if isinstance(i, LangChainDocument)])
    )
    return [next(converted) if isinstance(i, LangChainDocument) else i for i in items]


def verify_index(index_dir: str | os.PathLike[str]) -> int:
    """Check every file of an index against the full checksums taken when it was built.

    Opening an index (:func:`load_index`) checks sizes and quick digests only, so
    that a million-chunk index opens in seconds; this reads every byte, and asks
    SQLite to check the docstore. Returns the number of files checked.

    Raises:
        IndexCorruptError: No index there, or a file missing, unlisted or changed
            (named), or a docstore SQLite finds damaged.

    """
    backend, location = locate(index_dir)
    return backend.verify(location)


def read_index_manifest(index_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Return the manifest of the index at ``index_dir`` without opening the index.

    What was recorded when it was built: format, embedder, tokenizer, chunker,
    lexicon, counts (a Qdrant index's committed generation's). Nothing is checked
    beyond the manifest itself, and no embedder is loaded.

    Raises:
        IndexCorruptError: No index there, or a manifest sealgraph cannot read.
        InputError: A bad address.
        SealgraphError: The index's server cannot be read.

    """
    backend, location = locate(index_dir)
    return backend.manifest(location)


def load_index(
    index_dir: str | os.PathLike[str],
    *,
    embedder: str | Embedder | Any | None = None,
    warn: WarnFn | None = None,
    lexicon: str | Lexicon | None = None,
) -> Index | QdrantIndex:
    """Load and verify an index.

    Args:
        index_dir: The index directory, or a Qdrant address (``qdrant://HOST:PORT/
            COLLECTION``, ``qdrants://...``, ``qdrant+memory://COLLECTION``), which
            gives a :class:`QdrantIndex`.
        embedder: Query embedder. None uses the one recorded in the manifest
            (loaded lazily on the first dense query); ``"none"`` disables dense
            search; an :class:`Embedder`, spec or LangChain ``Embeddings`` must
            have the manifest's name (an index built with LangChain embeddings
            needs them passed again here; without them dense search is disabled,
            with a warning).
        warn: Called with one line per warning (defaults to stderr).
        lexicon: The lexicon to read the index with; None: the one its manifest
            records (``"english"`` for indexes that predate lexicons). Its tokenizer
            must be the one the index was built with.

    An index that a build moved aside and could not put back before it died
    (``.NAME.old-*`` beside a missing ``index_dir``) is restored first, with a
    warning.

    Raises:
        IndexCorruptError: No index there, or a file is missing, changed or unreadable.
        StaleTokenizerError: The index's lexical part was built with another
            tokenizer (an older sealgraph's stemmer, or another lexicon): rebuild it
            with :func:`refresh_lexical` (``sealgraph index --index DIR``), which
            embeds nothing again.
        EmbedderMismatchError: ``embedder`` is not the one the index was built with.
        ConfigError: The index's embedder cannot work here (an OpenAI model without
            an API key); the message names the variable to set.

    """
    backend, location = locate(index_dir)
    return backend.load(location, embedder=embedder, warn=warn or warn_stderr, lexicon=lexicon)


def __getattr__(name: str) -> Any:
    # QdrantIndex is the qdrant extra's: import its module only when it is asked for.
    if name == "QdrantIndex":
        from sealgraph.index.qdrant import QdrantIndex

        return QdrantIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
