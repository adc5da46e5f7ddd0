"""What a build of any backend settles first: its settings and the documents it reads.

Nothing is written: :func:`plan_documents` checks the settings against the index's
manifest (an add keeps the index's embedder, chunk size, encoding and lexicon unless
told otherwise), resolves the embedder and reads the given documents.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sealgraph._version import __version__
from sealgraph.errors import (
    EmbedderMismatchError,
    InputError,
)
from sealgraph.index._documents import Scope, given_documents
from sealgraph.index._embed import embedder_name
from sealgraph.index.embedders import (
    ENABLE_DENSE_HINT,
    Embedder,
    check_embedder_ready,
    resolve_embedder,
)
from sealgraph.ingest import LoaderLimits, SourceFile, WarnFn
from sealgraph.text.lexicon import Lexicon, get_lexicon, import_lexicon, lexicon_spec
from sealgraph.text.tokens import TokenCounter, encoding_for_model, token_counter
from sealgraph.types import Document

MIN_CHUNK_TOKENS = 8


DEFAULT_MAX_CHUNK_TOKENS = 256
"""Chunk size of a new index when none is given."""


DEFAULT_ENCODING = "o200k_base"
"""Tiktoken encoding of a new index when none is given."""


@dataclass(frozen=True)
class _BuildPlan:
    """What a build is to do, checked before anything is written (:func:`plan_documents`)."""

    lex: Lexicon
    spec: str
    """The lexicon as the manifest records it."""
    embedder: Embedder | None
    max_chunk_tokens: int
    encoding_name: str
    counter: TokenCounter
    given: list[Document]
    sources: list[SourceFile]
    given_files: dict[str, str]
    """The file of each given document read from one."""
    scope: Scope | None


def plan_documents(
    inputs: Any,
    existing: dict[str, Any] | None,
    *,
    where: Path | object,
    embedder: str | Embedder | None,
    max_chunk_tokens: int | None,
    encoding: str | None,
    force: bool,
    warn: WarnFn,
    lexicon: str | Lexicon | None,
    prune: bool,
    follow_links: bool,
    limits: LoaderLimits | None,
    exclude: Sequence[str] = (),
) -> _BuildPlan:
    """Settle a build's settings against the ``existing`` manifest and read its documents.

    ``where`` names the index in messages (a folder or a Qdrant address). Nothing
    is written.
    """
    if existing is not None and not force:
        # Adding a note must not silently re-chunk or re-embed the whole index with
        # other settings: unless given, they are the index's own.
        embedder, max_chunk_tokens, encoding = _settings_of(
            existing, embedder, max_chunk_tokens, encoding
        )
    if max_chunk_tokens is None:
        max_chunk_tokens = DEFAULT_MAX_CHUNK_TOKENS
    if max_chunk_tokens < MIN_CHUNK_TOKENS:
        raise InputError(
            f"max chunk tokens must be at least {MIN_CHUNK_TOKENS}, got {max_chunk_tokens}"
        )
    lex = _lexicon_of_build(lexicon, existing, force=force)
    spec = lexicon_spec(lex)
    resolved = _resolve_embedder(embedder, warn)
    _check_embedder(where, existing, resolved, force=force)
    check_embedder_ready(resolved)
    encoding = encoding or DEFAULT_ENCODING
    encoding_name = encoding_for_model(encoding)
    counter = token_counter(encoding_name)
    if isinstance(inputs, Iterable) and not isinstance(inputs, str | os.PathLike | Document):
        inputs = list(inputs)  # read twice: for the documents and for the folders given
    given, sources, given_files, excluded = given_documents(
        inputs, warn, follow_links=follow_links, limits=limits, exclude=exclude
    )
    scope = Scope.of(inputs, sources, excluded)
    if prune and scope is None:
        raise InputError(
            "pruning needs the files or folders the documents come from, not documents"
        )
    return _BuildPlan(
        lex,
        spec,
        resolved,
        max_chunk_tokens,
        encoding_name,
        counter,
        given,
        sources,
        given_files,
        scope,
    )


def _lexicon_of_build(
    lexicon: str | Lexicon | None, existing: dict[str, Any] | None, *, force: bool
) -> Lexicon:
    """Return the lexicon a build uses: the caller's, else the index's, else English."""
    # The caller's lexicon is the user's own (imported if it is a module path); the
    # one an existing index records is data: looked up, never imported.
    if lexicon is not None:
        return import_lexicon(lexicon)
    return get_lexicon(manifest_lexicon(existing) if existing and not force else "english")


def manifest_lexicon(manifest: dict[str, Any]) -> str:
    """Return the lexicon spec an index records (``"english"`` for indexes that predate it)."""
    spec = manifest.get("lexicon")
    return spec if isinstance(spec, str) and spec else "english"


def _settings_of(
    manifest: dict[str, Any],
    embedder: str | Embedder | None,
    max_chunk_tokens: int | None,
    encoding: str | None,
) -> tuple[str | Embedder | None, int | None, str | None]:
    """Return the settings of a build into the index of ``manifest``; given ones win.

    ``"auto"`` picks the index's embedder when it can be loaded here (else the
    usual automatic choice, which the embedder check may then refuse).
    """
    if isinstance(embedder, str) and embedder.strip().lower() == "auto":
        name = embedder_name(manifest)
        if name is None:
            embedder = None
        else:
            with suppress(InputError):
                embedder = resolve_embedder(str(name))
    chunker = manifest.get("chunker") or {}
    if max_chunk_tokens is None and type(chunker.get("max_tokens")) is int:
        max_chunk_tokens = chunker["max_tokens"]
    tokenizer = manifest.get("tokenizer") or {}
    if encoding is None and isinstance(tokenizer.get("encoding"), str):
        encoding = tokenizer["encoding"]
    return embedder, max_chunk_tokens, encoding


def _check_embedder(
    index_dir: Path | object,
    existing: dict[str, Any] | None,
    resolved: Embedder | None,
    *,
    force: bool,
) -> None:
    if existing is None or force:
        return
    old_name = embedder_name(existing)
    new_name = resolved.name if resolved is not None else None
    if old_name != new_name:
        raise EmbedderMismatchError(
            f"the index at {index_dir} was built with embedder {old_name or 'none'} but "
            f"{new_name or 'none'} was requested; vectors of different embedders cannot "
            f"be mixed: use --force (force=True) to rebuild it from the given files only, "
            f"or another directory"
        )


def _resolve_embedder(embedder: str | Embedder | None, warn: WarnFn) -> Embedder | None:
    if embedder is None:
        return None
    if not isinstance(embedder, str):
        return embedder
    resolved = resolve_embedder(embedder)
    if resolved is None and embedder.strip().lower() == "auto":
        warn(
            "dense retrieval disabled (sentence-transformers is not installed): "
            f"retrieval will be lexical (BM25) only; enable it with {ENABLE_DENSE_HINT}"
        )
    return resolved


def sealgraph_version() -> str:
    """Return the version of sealgraph recorded in a manifest."""
    return __version__
