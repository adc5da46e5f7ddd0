"""The on-disk index: SQLite docstore, lexical BM25, dense FAISS, manifest.

Public entry points: :func:`build_index`, :func:`remove_documents`, :func:`load_index`
and the :class:`Index` they return, which implements :class:`SearchIndex` (what the graph
needs from an index; see :mod:`sealgraph.index.protocol`). Given a Qdrant address
(``qdrant://HOST:PORT/COLLECTION``, ``qdrants://...``, ``qdrant+memory://COLLECTION``)
instead of a directory, the same functions work on an index held by Qdrant and return a
:class:`QdrantIndex` (``docs/scale-out.md``).

An index directory holds::

    manifest.json      format version, embedder, tokenizer, chunker settings,
                       counts, source files, SHA-256 of every other file
    docstore.sqlite    documents and chunks (chunk row = position in the indexes)
    lexical/           BM25 segments (memory-mapped .npy without pickle, sorted terms)
    vectors.npy        unit vectors as float32, one row per chunk row (only with an
                       embedder), memory-mapped and searched exactly
    derived/           caches users of the index compute from it (written after the
                       build, not in the manifest; see :mod:`sealgraph.index.derived`)

Opening reads nothing in proportion to the corpus: the arrays are memory-mapped,
chunks are read from the docstore on demand (a bounded cache keeps the recent
ones), and the files are checked by size and a quick digest (full checksums are
taken at build time). An :class:`Index` is read-only, so it is safe to share
between threads. Builds of one directory take
turns through a lock file beside it, ``.NAME.lock``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sealgraph.config import RetrievalConfig
from sealgraph.errors import (
    EmbedderMismatchError,
    IndexCorruptError,
    InputError,
    StaleTokenizerError,
)
from sealgraph.index._address import QdrantAddress, parse_index_address
from sealgraph.index._ann import ANN_FILE, calibrated_probe, has_ann, has_legacy_ann
from sealgraph.index._build import build_index_dir, indexed_text, manifest_lexicon
from sealgraph.index._chunks import ChunkStore
from sealgraph.index._dense import DENSE_FILES, DenseIndex
from sealgraph.index._documents import stored_sources
from sealgraph.index._fusion import reciprocal_rank_fusion
from sealgraph.index._lexical import LEXICAL_DIR, LexicalIndex, segment_files
from sealgraph.index._lifecycle import DEFAULT_LOCK_TIMEOUT_S, LEGACY_FILES, restore_interrupted
from sealgraph.index._manifest import read_manifest, verify_files
from sealgraph.index._progress import ProgressFn
from sealgraph.index._queries import IndexBasics, QueryEmbeddings
from sealgraph.index._refresh import refresh_lexical_dir
from sealgraph.index._remove import remove_documents_dir
from sealgraph.index._segments import DELETED_FILE
from sealgraph.index._sqlite import connect_readonly
from sealgraph.index._statistics import CorpusStatistics
from sealgraph.index._statistics import is_current as is_current_statistics
from sealgraph.index._store import DOCSTORE_FILE, count_rows
from sealgraph.index.embedders import (
    ENABLE_DENSE_HINT,
    LANGCHAIN_PREFIX,
    Embedder,
    as_embedder,
    check_embedder_ready,
    recorded_embedder,
)
from sealgraph.index.protocol import SearchIndex
from sealgraph.ingest import LoaderLimits, WarnFn, warn_stderr
from sealgraph.text.lexicon import Lexicon, get_lexicon, import_lexicon
from sealgraph.text.names import normalize_name
from sealgraph.types import Chunk, Document, Hit

if TYPE_CHECKING:
    from sealgraph.index._qdrant import QdrantIndex

__all__ = [
    "Embedder",
    "Index",
    "QdrantIndex",
    "SearchIndex",
    "build_index",
    "indexed_text",
    "load_index",
    "reciprocal_rank_fusion",
    "refresh_lexical",
    "remove_documents",
    "verify_index",
]

PathsOrDocuments = str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | Iterable[Any]
"""What :func:`build_index` indexes: one path, several paths, or documents (sealgraph
:class:`Document` or LangChain ``Document`` objects)."""

_warned_once: set[str] = set()


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
    inputs = _langchain_documents_converted(paths_or_documents)
    target = parse_index_address(index_dir)
    if isinstance(target, QdrantAddress):
        from sealgraph.index._qdrant_write import build_qdrant

        return build_qdrant(inputs, target, **settings)
    return build_index_dir(
        inputs,
        target,
        **settings,
        finish=lambda path, used: load_index(
            path, embedder=used if used is not None else "none", warn=warn
        ),
    )


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
    target = parse_index_address(index_dir)
    if isinstance(target, QdrantAddress):
        from sealgraph.index._qdrant_write import remove_qdrant

        return remove_qdrant(
            target,
            [os.fspath(t) for t in targets],
            embedder=embedder,
            lock_timeout=lock_timeout,
            warn=warn,
        )
    return remove_documents_dir(
        Path(index_dir),
        targets,
        lock_timeout=lock_timeout,
        warn=warn,
        finish=lambda path: load_index(path, embedder=embedder, warn=warn),
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
    target = parse_index_address(index_dir)
    if isinstance(target, QdrantAddress):
        from sealgraph.index._qdrant_write import refresh_qdrant

        return refresh_qdrant(target, embedder=embedder, lock_timeout=lock_timeout, warn=warn)
    return refresh_lexical_dir(
        Path(index_dir),
        lock_timeout=lock_timeout,
        warn=warn,
        finish=lambda path: load_index(path, embedder=embedder, warn=warn),
    )


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
    target = parse_index_address(index_dir)
    if isinstance(target, QdrantAddress):
        from sealgraph.index._qdrant import verify_qdrant_index

        return verify_qdrant_index(target)
    path = target
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
    warn = warn or warn_stderr
    target = parse_index_address(index_dir)
    if isinstance(target, QdrantAddress):
        from sealgraph.index._qdrant import open_qdrant_index

        return open_qdrant_index(target, embedder=embedder, warn=warn, lexicon=lexicon)
    path = target
    restore_interrupted(path, timeout=DEFAULT_LOCK_TIMEOUT_S, warn=warn)
    manifest = read_manifest(path)
    info = manifest.get("embedder")
    lexical_entry = manifest.get("lexical") or {}
    required = [DOCSTORE_FILE, *segment_files(lexical_entry)]
    ann = has_ann(manifest)
    if info:
        required.extend(DENSE_FILES)
    if ann:
        required.append(ANN_FILE)
    # The deletion list of an index added to row by row: checked when listed.
    deleted = f"{LEXICAL_DIR}/{DELETED_FILE}"
    if deleted in manifest["files"]:
        required.append(deleted)
    # Files of earlier versions (the offline reasoner's tables) are checked when listed.
    required.extend(name for name in LEGACY_FILES if name in manifest["files"])
    verify_files(path, manifest, tuple(required))  # quick digests: the full check is --verify
    # A lexicon the caller names may be imported; the one the manifest names is data.
    lex = (
        import_lexicon(lexicon) if lexicon is not None else get_lexicon(manifest_lexicon(manifest))
    )
    counts = manifest.get("counts") or {}
    try:
        n_docs, n_chunks = count_rows(path / DOCSTORE_FILE)
        lexical = LexicalIndex.load(path, lexical_entry, lex)
        store = ChunkStore(path / DOCSTORE_FILE, n_chunks)
        dense = DenseIndex.load(path, ann=ann) if info else None
        if dense is not None and dense.ann is not None:
            dense.probe = calibrated_probe(manifest.get("ann"), dense.ann.nlist)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, sqlite3.DatabaseError) as exc:
        raise IndexCorruptError(f"damaged index at {path}: {type(exc).__name__}: {exc}") from None
    problems = []
    if counts.get("chunks") != n_chunks or counts.get("documents") != n_docs:
        problems.append("the docstore does not match the manifest counts")
    if lexical.n_docs != n_chunks:
        problems.append("the lexical index does not match the docstore")
    if dense is not None and (dense.n_vectors != lexical.n_rows or dense.dim != info.get("dim")):
        problems.append("the dense index does not match the docstore")
    if problems:
        raise IndexCorruptError(
            f"damaged index at {path}: {'; '.join(problems)}; rebuild it with "
            f"`sealgraph index PATH --index {path} --replace`"
        )
    built_with = lexical_entry.get("tokenizer_version")
    if built_with != lex.tokenizer_version:
        raise StaleTokenizerError(
            f"the index at {path} was built with lexical tokenizer {built_with}, this "
            f"sealgraph uses {lex.tokenizer_version}; rebuild its lexical part (nothing is "
            f"embedded again) with `sealgraph index --index {path}`"
        )
    query_embedder = _query_embedder(info, embedder, path, warn) if dense is not None else None
    if has_legacy_ann(manifest):
        _warn_once(
            warn,
            f"the index at {path} holds the inverted file of an earlier sealgraph, which this "
            f"one does not read: dense search is exact over its {n_chunks:,} vectors (slower "
            f"at this size); build it again for FAISS lists (its vectors are reused): "
            f"`sealgraph index PATH --index {path} --replace`",
        )
    return Index(
        path=path,
        manifest=manifest,
        store=store,
        n_docs=n_docs,
        n_chunks=n_chunks,
        lexical=lexical,
        dense=dense,
        query_embedder=query_embedder,
    )


def _query_embedder(
    info: dict[str, Any], embedder: str | Embedder | None, path: object, warn: WarnFn
) -> Embedder | None:
    name = info.get("name")
    if isinstance(embedder, str) and embedder.strip().lower() in {"none", "off"}:
        return None
    if embedder is None:
        try:
            # A base URL the manifest records is refused unless the user gives one.
            resolved = recorded_embedder(info, where=f"the index at {path}")
        except InputError:  # unknown name or missing optional dependency
            resolved = None
        if resolved is None:
            message = (
                f"dense retrieval disabled: the index at {path} has {name} vectors but that "
                f"embedder is not available here; retrieval will be lexical (BM25) only"
            )
            if name and name.startswith("sentence-transformers/"):
                message += f"; enable it with {ENABLE_DENSE_HINT}"
            elif name and name.startswith(LANGCHAIN_PREFIX):
                message += (
                    "; pass the LangChain embeddings it was built with: "
                    "load_index(path, embedder=embeddings)"
                )
            _warn_once(warn, message)
        # Available but not usable (no API key): say so now, not inside a graph node.
        check_embedder_ready(resolved)
        return resolved
    resolved = as_embedder(embedder)
    if resolved is None or resolved.name != name:
        got = resolved.name if resolved is not None else "none"
        raise EmbedderMismatchError(
            f"the index at {path} was built with embedder {name}, not {got}; "
            f"query with the same embedder or rebuild the index"
        )
    check_embedder_ready(resolved)
    return resolved


def _warn_once(warn: WarnFn, message: str) -> None:
    if message not in _warned_once:
        _warned_once.add(message)
        warn(message)


class Index(IndexBasics):
    """A loaded, read-only index: chunk lookup plus lexical, dense and hybrid search.

    Build one with :func:`build_index` or open one with :func:`load_index`; the
    constructor is not part of the public API.
    """

    def __init__(
        self,
        *,
        path: Path,
        manifest: dict[str, Any],
        store: ChunkStore,
        n_docs: int,
        n_chunks: int,
        lexical: LexicalIndex,
        dense: DenseIndex | None,
        query_embedder: Embedder | None,
    ) -> None:
        self._path = path
        self._manifest = manifest
        self._store = store
        self._n_docs = n_docs
        self._n_chunks = n_chunks
        self._lexical = lexical
        self._lexicon = lexical.lexicon
        self._dense = dense
        self._queries = QueryEmbeddings(
            query_embedder if dense is not None else None,
            dense.dim if dense is not None else None,
            path,
        )
        self._statistics: CorpusStatistics | None = None

    # -- properties (the others: IndexBasics) ------------------------------------

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

    # -- chunk access -----------------------------------------------------------

    def get_chunk(self, chunk_id: str) -> Chunk:
        """Return a chunk by id (KeyError if unknown)."""
        return self._store.by_row(self.chunk_row(chunk_id))

    def get_chunks(self, chunk_ids: Iterable[str]) -> list[Chunk]:
        """Return chunks by id, in the given order."""
        return self._store.by_rows([self.chunk_row(cid) for cid in chunk_ids])

    def chunk_row(self, chunk_id: str) -> int:
        """Row of a chunk in the lexical and dense indexes (KeyError if unknown)."""
        try:
            return self._store.row_of(chunk_id)
        except KeyError:
            raise KeyError(f"unknown chunk id {chunk_id!r}") from None

    def chunk_by_row(self, row: int) -> Chunk:
        """Return the chunk at ``row`` (IndexError if there is none)."""
        try:
            return self._store.by_row(row)
        except KeyError:
            raise IndexError(f"no chunk at row {row}") from None

    def iter_chunks(self) -> Iterator[Chunk]:
        """Iterate over every chunk, by row (documents in order, chunks in order), streamed."""
        return self._store.iter_chunks()

    def doc_chunks(self, doc_id: str) -> list[Chunk]:
        """Chunks of a document, in order (empty for an unknown document)."""
        return self._store.by_rows(self._store.doc_rows(doc_id))

    def neighbors(self, chunk_id: str, before: int = 1, after: int = 1) -> list[Chunk]:
        """Return the chunk with up to ``before``/``after`` same-document neighbours, in order."""
        chunk = self.get_chunk(chunk_id)
        rows = self._store.doc_rows(chunk.doc_id)
        lo = max(0, chunk.order - max(0, before))
        hi = chunk.order + max(0, after) + 1
        return self._store.by_rows(rows[lo:hi])

    def source_files(self) -> list[dict[str, Any]]:
        """Return the files the index was read from: ``path``, ``sha256``, ``documents``, by path.

        Read from the docstore when asked (a large index records hundreds of
        thousands); an index of an earlier version listed them in its manifest.
        """
        return stored_sources(self._path, self._manifest)

    def titles(self) -> list[tuple[str, str]]:
        """``(doc_id, title)`` of every document, in document order."""
        return [
            (doc_id, title)
            for doc_id, title in self._store.records(
                "SELECT doc_id, title FROM documents ORDER BY position"
            )
        ]

    def headings(self) -> list[tuple[str, str]]:
        """``(chunk_id, own section heading)`` of every chunk that has one, by row."""
        return self._own_headings("chunk_id")

    def document_headings(self) -> list[tuple[str, str]]:
        """``(doc_id, own section heading)`` of every chunk that has one, by row (one query)."""
        return self._own_headings("doc_id")

    def _own_headings(self, key: str) -> list[tuple[str, str]]:
        out = []
        for value, section in self._store.records(
            f"SELECT {key}, section FROM chunks WHERE section != '[]' ORDER BY \"row\""
        ):
            chain = json.loads(section)
            if chain:
                out.append((value, chain[-1]))
        return out

    def first_chunk_texts(self) -> list[tuple[str, str]]:
        """``(doc_id, text of its first chunk)`` of every document, in document order."""
        return [
            (doc_id, text)
            for doc_id, text in self._store.records(
                "SELECT c.doc_id, c.text FROM chunks c JOIN documents d ON c.doc_id = d.doc_id "
                "WHERE c.ord = (SELECT MIN(ord) FROM chunks WHERE doc_id = c.doc_id) "
                "ORDER BY d.position"
            )
        ]

    def lookup_title(self, name: str) -> list[str]:
        """Chunk ids for an entity name, matched exactly after :func:`normalize_name`.

        First every chunk of each document whose title matches (documents in order),
        then every other chunk whose own section heading matches (the docstore's
        names table, written at index time).
        """
        key = normalize_name(name, self._lexicon)
        if not key:
            return []
        return self._store.scalar_rows(
            'SELECT chunk_id FROM names WHERE "key" = ? ORDER BY rank, position', (key,)
        )

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
        vector = self.embed_query(query)
        if vector is None or self._dense is None:
            return []
        return self._hits(self._dense.search(vector, k, self._lexical.live), "dense")

    def search_hybrid(
        self, query: str, k: int, retrieval: RetrievalConfig | None = None
    ) -> list[Hit]:
        """Weighted reciprocal-rank fusion of lexical and dense results.

        Each list is ``max(retrieval.pool, k)`` deep; fused scores are
        ``Σ w / (rrf_k + rank)`` with 1-based ranks. Without dense search (or with
        a zero dense weight) this is :meth:`search_lexical` (source ``lexical``).
        """
        retrieval = retrieval or RetrievalConfig()
        if k <= 0:
            return []
        vector = self.embed_query(query) if retrieval.dense_weight > 0 else None
        if vector is None or self._dense is None:
            return self.search_lexical(query, k)
        depth = max(retrieval.pool, k)
        rankings = [[row for row, _ in self._dense.search(vector, depth, self._lexical.live)]]
        weights = [retrieval.dense_weight]
        if retrieval.lexical_weight > 0:
            rankings.append([row for row, _ in self._lexical.search(query, depth)])
            weights.append(retrieval.lexical_weight)
        fused = reciprocal_rank_fusion(rankings, weights, rrf_k=retrieval.rrf_k, k=k)
        return self._hits(fused, "hybrid")

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
        chunks = self._store.by_rows([row for row, _ in ranked])
        return [
            Hit(chunk_id=chunk.chunk_id, score=score, rank=rank, source=source)
            for rank, ((_, score), chunk) in enumerate(zip(ranked, chunks, strict=True))
        ]

    def __repr__(self) -> str:
        dense = self.embedder_name or "none"
        return f"Index({str(self._path)!r}, docs={self.n_docs}, chunks={self.n_chunks}, {dense=!s})"


def __getattr__(name: str) -> Any:
    # QdrantIndex is the qdrant extra's: import its module only when it is asked for.
    if name == "QdrantIndex":
        from sealgraph.index._qdrant import QdrantIndex

        return QdrantIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
