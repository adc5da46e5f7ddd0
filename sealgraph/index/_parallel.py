"""The per-document work of a large build, spread over the machine's cores.

Chunking a document, tokenizing its chunks for BM25 and finding their proper
names are pure functions of the document, the lexicon and the token counter, and
they are most of a build's time. Above :data:`PARALLEL_MIN_DOCUMENTS` documents a
build runs them in worker processes (forked, so the lexicon and the counter are
not re-created or pickled), batch by batch, and reads the results back in the
documents' order: the index is the same as one built in one process. Writing the
docstore, the segments and the manifest stays in the building process.

``SEALGRAPH_BUILD_WORKERS`` sets the number of workers (``1``: none); by default
it is the number of cores, at most :data:`MAX_WORKERS`. Where processes cannot be
forked (Windows, macOS's default), the work runs in the building process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from sealgraph.errors import ConfigError
from sealgraph.index._embed import content_hash
from sealgraph.index.folder._gazetteer import GazetteerRows, document_rows
from sealgraph.text.chunking import chunk_document, indexed_text, lexical_text
from sealgraph.text.lexicon import Lexicon, use_lexicon
from sealgraph.text.lines import document_line_hashes
from sealgraph.text.statistics import chunk_names
from sealgraph.text.tokens import TokenCounter
from sealgraph.types import Chunk, Document

__all__ = ["PARALLEL_MIN_DOCUMENTS", "WORKERS_ENV", "Processed", "process_documents"]

WORKERS_ENV = "SEALGRAPH_BUILD_WORKERS"
"""Environment variable: worker processes of a large build (1 turns them off)."""
PARALLEL_MIN_DOCUMENTS = 2_000
"""Builds of fewer documents run in one process (starting workers costs more)."""
MAX_WORKERS = 4
BATCH = 64
"""Documents a worker takes at a time."""


@dataclass(frozen=True)
class Processed:
    """What the per-document work gives for a batch of documents."""

    chunks: list[Chunk]
    """The documents' chunks, in order."""
    tokens: list[list[str]]
    """Each chunk's BM25 tokens (of its indexed text)."""
    names: Counter[str]
    """Chunks writing each proper name, over the batch."""
    hashes: list[str]
    """Each chunk's content hash (of its indexed text)."""
    lines: np.ndarray
    """Each document's line hashes (:func:`~sealgraph.text.lines.document_line_hashes`), joined."""
    gazetteer: GazetteerRows
    """The documents' rows of the gazetteer tables (:func:`~sealgraph.index.folder._gazetteer.document_rows`)."""


@dataclass(frozen=True)
class _Settings:
    lex: Lexicon
    counter: TokenCounter
    max_tokens: int
    tokenize: Callable[[str], list[str]]


_SETTINGS: list[_Settings] = []  # the worker's, set before the fork


def _process(batch: Sequence[Document]) -> Processed:
    settings = _SETTINGS[-1]
    with use_lexicon(settings.lex):
        chunks: list[Chunk] = []
        for doc in batch:
            chunks.extend(chunk_document(doc, settings.counter, settings.max_tokens))
        texts = [indexed_text(c) for c in chunks]
        tokens = [settings.tokenize(lexical_text(c)) for c in chunks]
        names: Counter[str] = Counter()
        for chunk in chunks:
            names.update(chunk_names(chunk.text))
        lines = [line for doc in batch for line in _document_lines(doc.doc_id, chunks)]
    hashes = [content_hash(text) for text in texts]
    gazetteer = document_rows(batch, chunks, settings.lex)
    return Processed(chunks, tokens, names, hashes, np.asarray(lines, dtype=np.int64), gazetteer)


def _document_lines(doc_id: str, chunks: Sequence[Chunk]) -> list[int]:
    return document_line_hashes(c.text for c in chunks if c.doc_id == doc_id)


def build_workers(n_documents: int) -> int:
    """Return how many worker processes a build of ``n_documents`` documents uses (1: none).

    Raises:
        ConfigError: ``$SEALGRAPH_BUILD_WORKERS`` is not a whole number of at least 1.

    """
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise ConfigError(f"{WORKERS_ENV} must be a whole number of at least 1, got {raw!r}")
        return int(raw)
    if n_documents < PARALLEL_MIN_DOCUMENTS:
        return 1
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def process_documents(
    documents: Sequence[Document],
    *,
    lex: Lexicon,
    counter: TokenCounter,
    max_tokens: int,
    tokenize: Callable[[str], list[str]],
    workers: int,
) -> Iterator[Processed]:
    """Yield the :class:`Processed` batches of ``documents``, in order."""
    # Batches are cut as they are sent, so a batch's documents can be let go once done.
    batches = (documents[i : i + BATCH] for i in range(0, len(documents), BATCH))
    _SETTINGS.append(_Settings(lex, counter, max_tokens, tokenize))
    try:
        if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            yield from map(_process, batches)
            return
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            # imap keeps the order; a few batches ahead per worker bound the memory.
            yield from pool.imap(_process, batches, chunksize=1)
    finally:
        _SETTINGS.pop()
