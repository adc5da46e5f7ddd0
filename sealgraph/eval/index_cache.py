"""The content-addressed cache of evaluation indexes.

The evaluation corpus (the paragraphs of the questions file and every pool
file, deduplicated by (title, text); or the documents of a corpus folder) is
indexed once and cached under a key derived from its content and the index
settings, so a second run over the same files loads the index instead of
re-embedding it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sealgraph.errors import IndexCorruptError, InputError, StaleTokenizerError
from sealgraph.index import is_index_address
from sealgraph.paths import cache_dir
from sealgraph.text.tokens import DEFAULT_ENCODING
from sealgraph.types import Document

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.index.protocol import SearchIndex

__all__ = [
    "DEFAULT_MAX_CHUNK_TOKENS",
    "EVAL_INDEX_DIR",
    "OpenedIndex",
    "corpus_fingerprint",
    "open_index",
]

EVAL_INDEX_DIR = "eval-index"
"""Folder of the cache directory that holds evaluation indexes, one per fingerprint."""

DEFAULT_MAX_CHUNK_TOKENS = 256
"""Chunk size used to build evaluation indexes (``build_index``'s default)."""

_FINGERPRINT_VERSION = 8  # bump when a cached index changes meaning (8: Markdown without HTML)


@dataclass(frozen=True, slots=True)
class OpenedIndex:
    """An index ready for evaluation and where it lives."""

    index: SearchIndex
    """The loaded :class:`sealgraph.index.Index`."""
    path: Path | str
    """Directory of the index, or its address (``qdrant://...``)."""
    reused: bool
    """True when an existing index was loaded, False when it was built by this call."""


def corpus_fingerprint(
    documents: Sequence[Document],
    *,
    embedder: str,
    max_chunk_tokens: int,
    encoding: str,
    lexicon: str = "english",
) -> str:
    """Return the sha256 of the sorted (title, text) corpus plus the index settings.

    The lexicon counts only when it is not the default English one, so that the
    keys of indexes cached before lexicons existed stay valid.

    The order of the input files and of their paragraphs does not change it.
    Document ids are part of what an index returns, so the ids that are not
    derived from (title, text) (files of a corpus folder, whose id is their path)
    are hashed too; multi-hop QA paragraphs, whose id is
    :func:`sealgraph.ingest.qa_doc_id` of their content, keep the keys they had.
    """
    from sealgraph.ingest import qa_doc_id
    from sealgraph.text.chunking import SPLITTER_VERSION

    digest = hashlib.sha256()
    settings = {
        "version": _FINGERPRINT_VERSION,
        # Another sentence splitter cuts other chunks: the cached index is stale.
        "splitter": SPLITTER_VERSION,
        "embedder": embedder,
        "max_chunk_tokens": max_chunk_tokens,
        "encoding": encoding,
    }
    if lexicon != "english":
        settings["lexicon"] = lexicon
    digest.update(json.dumps(settings, sort_keys=True).encode())
    for title, text in sorted({(doc.title, doc.text) for doc in documents}):
        # Length prefixes make the encoding unambiguous whatever the texts contain.
        for part in (title, text):
            data = part.encode()
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
    named = sorted(
        {(d.doc_id, d.title, d.text) for d in documents if d.doc_id != qa_doc_id(d.title, d.text)}
    )
    if named:
        digest.update(b"\x00doc-ids")
        for triple in named:
            for part in triple:
                data = part.encode()
                digest.update(len(data).to_bytes(8, "big"))
                digest.update(data)
    return digest.hexdigest()


def open_index(
    documents: Sequence[Document],
    index_dir: str | Path | None = None,
    *,
    embedder: str = "auto",
    max_chunk_tokens: int = DEFAULT_MAX_CHUNK_TOKENS,
    encoding: str = DEFAULT_ENCODING,
    lexicon: str = "english",
    folder: str | Path | None = None,
) -> OpenedIndex:
    """Load the index of ``documents``, building it first when needed.

    Without ``index_dir`` and with no cached index of the documents, an index that
    ``sealgraph index`` built from ``folder`` with the same settings, and that still
    holds exactly its files, is used instead of building one
    (:mod:`sealgraph.eval._built_indexes`).

    Without ``index_dir`` the index lives in
    ``<cache_dir()>/eval-index/<fingerprint[:16]>`` (``cache_dir()`` is
    ``$SEALGRAPH_CACHE_DIR`` or the user cache dir). With ``index_dir`` an
    existing index there is loaded (and must hold exactly this corpus), else one
    is built there. :func:`sealgraph.index.build_index` builds atomically, so an
    interrupted run never leaves a half-written index behind. A cached index whose
    lexical tokenizer is stale (built by a sealgraph that stemmed otherwise) has its
    lexical part rebuilt in place (:func:`sealgraph.index.refresh_lexical`): nothing
    is embedded again.

    Args:
        documents: The deduplicated corpus.
        index_dir: Where to load or build the index (a folder or a Qdrant address);
            None for the cache.
        embedder: Embedder spec for a build (``auto``, ``none``, ...).
        max_chunk_tokens: Chunk size for a build.
        encoding: tiktoken encoding that counts chunk tokens in a build.
        lexicon: Lexicon of a build (the config's ``lexicon``).
        folder: The corpus folder the documents were read from, if they were.

    Raises:
        InputError: ``index_dir`` holds an index of a different corpus.
        IndexCorruptError: ``index_dir`` holds a damaged index.
        StaleTokenizerError: ``index_dir`` holds an index whose lexical part is stale
            (the message says how to refresh it without embedding anything).

    """
    from sealgraph.index import build_index, load_index, refresh_lexical

    settings = {
        # The embedder the spec stands for here ("auto" is the local model where it is
        # installed and none elsewhere): a cached index built with another is not reused.
        "embedder": _resolved_name(embedder),
        "max_chunk_tokens": max_chunk_tokens,
        "encoding": encoding,
        "lexicon": lexicon,
    }
    if index_dir is not None and is_index_address(index_dir):
        return _open_address(documents, str(index_dir), settings)
    if index_dir is not None:
        path = Path(index_dir)
        if path.is_dir() and any(path.iterdir()):
            index = load_index(path)
            _check_corpus_size(index, documents, path)
            return OpenedIndex(index=index, path=path, reused=True)
    else:
        key = corpus_fingerprint(documents, **settings)
        path = cache_dir() / EVAL_INDEX_DIR / key[:16]
        if path.is_dir():
            try:
                return OpenedIndex(index=load_index(path), path=path, reused=True)
            except StaleTokenizerError:
                # Tokenized by an older sealgraph: re-tokenize the stored chunks only.
                try:
                    return OpenedIndex(index=refresh_lexical(path), path=path, reused=True)
                except IndexCorruptError:
                    shutil.rmtree(path)  # our own cache entry, damaged: rebuild it
            except IndexCorruptError:
                shutil.rmtree(path)  # our own cache entry, damaged: rebuild it
        built = _built_index(folder, documents, settings)
        if built is not None:
            return built
    path.parent.mkdir(parents=True, exist_ok=True)
    index = build_index(list(documents), path, **settings)
    return OpenedIndex(index=index, path=path, reused=False)


def _built_index(
    folder: str | Path | None, documents: Sequence[Document], settings: dict[str, object]
) -> OpenedIndex | None:
    """Return the index ``sealgraph index`` built of ``folder`` with these settings, if any."""
    if folder is None:
        return None
    from sealgraph.eval._built_indexes import find_built_index

    index = find_built_index(folder, documents, settings)
    if index is None:
        return None
    print(
        f"sealgraph: using the index at {index.path} (built from {folder} with the same "
        "settings; give --index to choose another)",
        file=sys.stderr,
    )
    return OpenedIndex(index=index, path=index.path, reused=True)


def _open_address(
    documents: Sequence[Document], address: str, settings: dict[str, object]
) -> OpenedIndex:
    """Load the index at a Qdrant address, building it there when there is none."""
    from sealgraph.index import build_index, load_index

    try:
        index = load_index(address)
    except IndexCorruptError:  # no collection yet (a foreign one is refused: InputError)
        index = build_index(list(documents), address, **settings)  # type: ignore[arg-type]
        return OpenedIndex(index=index, path=address, reused=False)
    _check_corpus_size(index, documents, address)
    return OpenedIndex(index=index, path=address, reused=True)


def _check_corpus_size(index: SearchIndex, documents: Sequence[Document], path: Path | str) -> None:
    if index.n_docs != len(documents):
        raise InputError(
            f"the index in {path} holds {index.n_docs} documents but the evaluation corpus "
            f"has {len(documents)}; give an empty or new --index directory (or a new "
            "collection), or omit --index to use the content-addressed cache"
        )


def _resolved_name(spec: str) -> str:
    """Return the name of the embedder ``spec`` resolves to ("none" for lexical only)."""
    from sealgraph.index.embedders import resolve_embedder

    embedder = resolve_embedder(spec)
    return "none" if embedder is None else embedder.name
