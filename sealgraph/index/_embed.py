"""Embedding the chunks of a dense build (any backend): reused, resumed and new vectors.

A build passes the vectors it may reuse, by content hash (:func:`content_hash` of the
chunk's indexed text: a folder index's stored vectors,
:func:`~sealgraph.index.folder._reuse.reusable_vectors`), and what an interrupted
build left (:class:`~sealgraph.index.folder._reuse.PartialEmbeddings`); the rest is
embedded in blocks of ``_EMBED_BLOCK`` texts (:func:`embed_chunks`), finished
blocks kept so that a killed build resumes.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from sealgraph.errors import SealgraphError
from sealgraph.index._progress import ProgressFn
from sealgraph.index.embedders import Embedder, normalize_rows
from sealgraph.ingest import WarnFn


class PartialEmbeddings(Protocol):
    """The batches an interrupted build kept, to resume from.

    The folder backend's :class:`~sealgraph.index.folder._reuse.PartialEmbeddings`;
    other backends keep none.
    """

    directory: Path
    """Where they are kept (named in warnings)."""
    vectors: dict[str, np.ndarray]
    """The kept vectors by content hash."""

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Keep finished vectors."""
        ...

    def reset(self) -> None:
        """Drop every kept vector."""
        ...


_EMBED_BLOCK = 256  # texts per embed_documents call (progress and resume granularity)
_KEEP_EVERY_S = 5.0  # finished blocks are kept for a resume at most this often (fast embedders)
_clock = time.monotonic  # when blocks were kept (replaced in tests)


def embedder_name(manifest: dict[str, Any]) -> str | None:
    """Return the name of the embedder an index records (None: a lexical-only index)."""
    info = manifest.get("embedder")
    name = info.get("name") if isinstance(info, dict) else None
    return str(name) if name is not None else None


def embed_chunks(
    embedder: Embedder,
    texts: Sequence[str],
    hashes: Sequence[str],
    reuse: dict[str, np.ndarray],
    report: ProgressFn,
    *,
    partial: PartialEmbeddings | None = None,
    warn: WarnFn | None = None,
) -> tuple[np.ndarray, int, int, int]:
    """Vectors for every chunk, embedding only texts whose hash has no stored vector.

    Vectors an interrupted build left in ``partial`` are used too; and when more
    than one block is to be embedded, finished blocks are added to it (gathered
    until ``_KEEP_EVERY_S`` have passed, so a fast embedder is not slowed down by
    the writes), so that this build, if interrupted, resumes from there.

    Returns:
        ``(vectors, chunks whose vector was reused, texts new to the index,
        of those the ones an interrupted build had embedded)``.

    """
    todo = _texts_to_embed(texts, hashes, reuse)
    run = _EmbeddingRun(todo, partial, warn)
    report("embedding", run.done, len(todo))
    run.last_kept = _clock()
    start = 0
    while start < len(run.pending):
        block = run.pending[start : start + _EMBED_BLOCK]
        start += len(block)
        out = _embed_block(embedder, [text for _, text in block])
        if start == len(block):  # the first block tells the embedder's vector size
            run.check_resumed_size(out.shape[1], embedder.name)
        run.finish(block, out, more=start < len(run.pending))
        report("embedding", run.done, len(todo))
    rows = [reuse[d] if d in reuse else run.fresh[d] for d in hashes]
    vectors = _stack_rows(rows, embedder.name)
    n_reused = sum(1 for d in hashes if d in reuse)
    return vectors, n_reused, len(todo), run.n_resumed


def _texts_to_embed(
    texts: Sequence[str], hashes: Sequence[str], reuse: dict[str, np.ndarray]
) -> dict[str, str]:
    """Return the texts without a reusable vector, by hash (each distinct text once)."""
    todo: dict[str, str] = {}
    for digest, text in zip(hashes, texts, strict=True):
        if digest not in reuse:
            todo.setdefault(digest, text)
    return todo


class _EmbeddingRun:
    """One embedding pass: the vectors found or made, what is pending, what is kept."""

    def __init__(
        self, todo: dict[str, str], partial: PartialEmbeddings | None, warn: WarnFn | None
    ) -> None:
        self.todo = todo
        self.partial = partial
        self.warn = warn
        known = partial.vectors if partial is not None else {}
        self.fresh: dict[str, np.ndarray] = {d: known[d] for d in todo if d in known}
        self.n_resumed = len(self.fresh)
        self.pending = [(digest, text) for digest, text in todo.items() if digest not in self.fresh]
        if self.n_resumed and partial is not None and warn is not None:
            warn(
                f"resuming an interrupted build: {self.n_resumed:,} of the {len(todo):,} chunks "
                f"to embed were embedded before it stopped (kept in {partial.directory})"
            )
        self.keep = partial is not None and len(self.pending) > _EMBED_BLOCK
        self.kept_dim = next(iter(self.fresh.values())).shape[0] if self.fresh else None
        self.done = self.n_resumed
        self.unkept: list[tuple[str, np.ndarray]] = []  # finished, not yet kept in ``partial``
        self.last_kept = 0.0

    def check_resumed_size(self, dim: int, embedder_name: str) -> None:
        """Drop the resumed vectors when the embedder gives vectors of another size."""
        partial = self.partial
        if not (self.n_resumed and partial is not None and dim != self.kept_dim):
            return
        # Vectors of another size under the same name are not this model's: start over.
        if self.warn is not None:
            self.warn(
                f"ignored the embeddings kept in {partial.directory}: they have {self.kept_dim} "
                f"dimensions, {embedder_name} gives {dim}; embedding their chunks again"
            )
        partial.reset()
        self.pending.extend((digest, self.todo[digest]) for digest in self.fresh)
        self.fresh.clear()
        self.done -= self.n_resumed
        self.n_resumed = 0
        self.keep = True

    def finish(self, block: list[tuple[str, str]], out: np.ndarray, *, more: bool) -> None:
        """Record the vectors of an embedded block; keep what is gathered when it is time."""
        finished = [(digest, vector) for (digest, _), vector in zip(block, out, strict=True)]
        if self.keep and self.partial is not None:
            self.unkept.extend(finished)
            if _clock() - self.last_kept >= _KEEP_EVERY_S and more:
                self.partial.add([d for d, _ in self.unkept], np.stack([v for _, v in self.unkept]))
                self.unkept.clear()
                self.last_kept = _clock()
        self.fresh.update(finished)
        self.done += len(block)


def _embed_block(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Return the unit vectors of one block of texts; any failure is a :class:`SealgraphError`."""
    try:
        out = embedder.embed_documents(texts)
    except SealgraphError:
        raise
    except Exception as exc:
        raise SealgraphError(
            f"embedding with {embedder.name} failed: {type(exc).__name__}: {exc}"
        ) from exc
    out = normalize_rows(out)
    if out.ndim != 2 or out.shape[0] != len(texts):
        raise SealgraphError(
            f"embedder {embedder.name} returned shape {out.shape} for {len(texts)} texts"
        )
    return out


def _stack_rows(rows: list[np.ndarray], embedder_name: str) -> np.ndarray:
    """Return the vectors of every chunk as one float32 matrix; all must have one size."""
    dims = {row.shape[0] for row in rows}
    if len(dims) != 1:
        raise SealgraphError(f"embedder {embedder_name} returned vectors of sizes {sorted(dims)}")
    return np.ascontiguousarray(np.stack(rows), dtype=np.float32)


def content_hash(text: str) -> str:
    """SHA-256 of an indexed text: equal hashes mean a stored vector can be reused."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
