"""Building an index: ingest, chunk, embed (reusing unchanged vectors), write atomically.

Everything is written into a temporary sibling of the target directory, flushed
to disk, and only then swapped into place; the manifest (with the checksum of
every file) is the last file written. A build that dies half-way therefore
leaves either the previous index or nothing that loads, never a mix.

Builds of one index directory are serialised by a lock file beside it
(``.NAME.lock``, :func:`locked_index`); holding it, a build first cleans up what
an interrupted build left (a temporary ``.NAME.building-*`` folder, or the
previous index still parked in ``.NAME.old-*``). A directory is only ever
replaced when it is empty or a sealgraph index holding nothing but sealgraph's
files (:func:`inspect_target`).

A dense build keeps every finished batch of embeddings beside the index, in
``.NAME.partial-KEY/`` (:class:`~sealgraph.index._dense.PartialEmbeddings`), until
it has swapped the new index in: a build that was killed resumes from there.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, TextIO, TypeVar

import numpy as np
from filelock import FileLock, Timeout

from sealgraph.errors import (
    DiskFullError,
    EmbedderMismatchError,
    IndexCorruptError,
    IngestError,
    InputError,
    SealgraphError,
)
from sealgraph.index._dense import (
    DENSE_FILES,
    VECTORS_FILE,
    DenseIndex,
    PartialEmbeddings,
    is_own_partial,
    partial_dirs,
)
from sealgraph.index._lexical import (
    BM25_PARAMS,
    LEXICAL_DIR,
    LEXICAL_FILES,
    LexicalIndex,
)
from sealgraph.index._manifest import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_FILE,
    checksum_tree,
    foreign_entries,
    fsync_path,
    fsync_tree,
    old_format_message,
    read_manifest,
    read_marker,
    verify_files,
    write_manifest,
)
from sealgraph.index._store import (
    DOCSTORE_FILE,
    read_chunk_hashes,
    read_docstore,
    read_document_files,
    read_document_ids,
    read_documents,
    write_docstore,
)
from sealgraph.index.derived import DERIVED_DIR, is_derived_file
from sealgraph.index.embedders import (
    ENABLE_DENSE_HINT,
    Embedder,
    check_embedder_ready,
    normalize_rows,
    resolve_embedder,
)
from sealgraph.ingest import LoaderLimits, SourceFile, WarnFn, load_corpus, warn_stderr
from sealgraph.terminal import write_control
from sealgraph.text.chunking import SPLITTER_VERSION, chunk_document
from sealgraph.text.lexicon import Lexicon, get_lexicon, import_lexicon, lexicon_spec, use_lexicon
from sealgraph.text.tokens import encoding_for_model, token_counter
from sealgraph.types import Chunk, Document

ProgressFn = Callable[[str, int, int], None]
"""Progress callback: ``(stage, done, total)`` with stage ``chunking`` or ``embedding``."""

MIN_CHUNK_TOKENS = 8
DEFAULT_MAX_CHUNK_TOKENS = 256
"""Chunk size of a new index when none is given."""
DEFAULT_ENCODING = "o200k_base"
"""Tiktoken encoding of a new index when none is given."""
DEFAULT_LOCK_TIMEOUT_S = 3600.0
"""How long a build waits for another build of the same index by default."""
LEGACY_FILES = ("knowledge.json",)
"""Files builds of earlier versions wrote and this one does not: the offline reasoner's
corpus tables, which the reasoner now counts and caches itself (see
:mod:`sealgraph.index.derived`). Verified when a manifest lists them, and still
sealgraph's own."""
OWN_FILES = (
    DOCSTORE_FILE,
    *(f"{LEXICAL_DIR}/{name}" for name in LEXICAL_FILES),
    *DENSE_FILES,
    *LEGACY_FILES,
)
"""Files a build writes (besides the manifest), even when a damaged manifest lists none."""
OWN_FOLDERS = {DERIVED_DIR: is_derived_file}
"""Folders holding files sealgraph writes under names the manifest cannot know (what
users of the index derive and cache), each with how its files are recognised."""

_EMBED_BLOCK = 256  # texts per embed_documents call (progress and resume granularity)
_KEEP_EVERY_S = 5.0  # finished blocks are kept for a resume at most this often (fast embedders)
_clock = time.monotonic  # when blocks were kept (replaced in tests)
_LOG_DELAY_S = 10.0  # off a terminal, a stage shorter than this prints nothing
_LOG_INTERVAL_S = 30.0  # ... and a longer one prints a line at least this often
_LOG_STEP = 0.05  # ... or whenever this much more of it is done
_LOG_MIN_GAP_S = 5.0  # ... but never twice within this
_T = TypeVar("_T")


def indexed_text(chunk: Chunk) -> str:
    """Return the text both retrievers index: title, section headings, then chunk text.

    Headings equal to the title (a Markdown H1) are not repeated.
    """
    headings = [h for h in chunk.section if h != chunk.title]
    return "\n".join([chunk.title, *headings, chunk.text])


def content_hash(text: str) -> str:
    """SHA-256 of an indexed text: equal hashes mean a stored vector can be reused."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_index_dir(
    inputs: Any,
    index_dir: Path,
    *,
    embedder: str | Embedder | None,
    max_chunk_tokens: int | None,
    encoding: str | None,
    replace: bool,
    force: bool,
    lock_timeout: float,
    progress: ProgressFn | None,
    warn: WarnFn | None,
    finish: Callable[[Path, Embedder | None], _T],
    lexicon: str | Lexicon | None = None,
    prune: bool = False,
    follow_links: bool = False,
    limits: LoaderLimits | None = None,
) -> _T:
    """Build (or add to) the index in ``index_dir`` and return ``finish(index_dir, embedder)``.

    ``finish`` runs while the build still holds the index's lock, so what it reads
    is this build's result, not a concurrent build's. See
    :func:`sealgraph.index.build_index` for the arguments and errors.
    """
    warn = warn or warn_stderr
    index_dir = index_dir.resolve()  # "." or "idx/" must still have a real name and parent
    replace = replace or force  # vectors of two embedders never mix: --force rebuilds
    # Everything that can fail without touching the disk fails before the lock file
    # or any folder is created (the checks are repeated under the lock).
    existing = inspect_target(index_dir)
    if existing is not None and not replace:
        _check_format(index_dir, existing)
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
    # The caller's lexicon is the user's own (imported if it is a module path); the
    # one an existing index records is data: looked up, never imported.
    if lexicon is not None:
        lex = import_lexicon(lexicon)
    else:
        lex = get_lexicon(manifest_lexicon(existing) if existing and not force else "english")
    spec = lexicon_spec(lex)
    resolved = _resolve_embedder(embedder, warn)
    _check_embedder(index_dir, existing, resolved, force=force)
    check_embedder_ready(resolved)
    encoding = encoding or DEFAULT_ENCODING
    encoding_name = encoding_for_model(encoding)
    counter = token_counter(encoding_name)
    if isinstance(inputs, Iterable) and not isinstance(inputs, str | os.PathLike | Document):
        inputs = list(inputs)  # read twice: for the documents and for the folders given
    given, sources, given_files = _documents(inputs, warn, follow_links=follow_links, limits=limits)
    scope = _Scope.of(inputs, sources)
    if prune and scope is None:
        raise InputError(
            "pruning needs the files or folders the documents come from, not documents"
        )
    report = progress or _StderrProgress()

    with locked_index(index_dir, timeout=lock_timeout, warn=warn), use_lexicon(lex):
        existing = inspect_target(index_dir)
        if existing is not None and not replace:
            _check_format(index_dir, existing)
        _check_embedder(index_dir, existing, resolved, force=force)
        documents, files, doc_counts, stale = _merge(
            index_dir, existing, given, given_files, replace=replace, scope=scope, prune=prune
        )
        if stale and not prune:
            warn(_stale_message(stale, files, scope))
        chunks: list[Chunk] = []
        for i, doc in enumerate(documents, start=1):
            chunks.extend(chunk_document(doc, counter, max_chunk_tokens))
            report("chunking", i, len(documents))
        if not chunks:
            raise InputError("nothing to index: every document is empty")
        texts = [indexed_text(c) for c in chunks]
        hashes = [content_hash(t) for t in texts]

        partial = None
        # The estimate is read only after a failed write (a dim may cost a request).
        with _staging(index_dir, lambda: _build_bytes(documents, texts, resolved)) as tmp:
            write_docstore(tmp / DOCSTORE_FILE, documents, chunks, hashes, files)
            _write_lexical(tmp, texts, lex)
            n_reused = n_new = n_resumed = 0
            embedder_info = None
            if resolved is not None:
                reuse = _reusable_vectors(index_dir, existing, resolved, warn)
                partial = PartialEmbeddings.open(index_dir, resolved.name, warn)
                vectors, n_reused, n_new, n_resumed = _embed(
                    resolved, texts, hashes, reuse, report, partial=partial, warn=warn
                )
                DenseIndex(vectors).save(tmp)
                embedder_info = {"name": resolved.name, "dim": int(vectors.shape[1])}
            manifest = {
                "format": FORMAT_NAME,
                "format_version": FORMAT_VERSION,
                "sealgraph_version": _version(),
                "embedder": embedder_info,
                "tokenizer": {"encoding": encoding_name},
                "chunker": {"max_tokens": max_chunk_tokens, "splitter_version": SPLITTER_VERSION},
                "lexicon": spec,
                "lexical": {"tokenizer_version": lex.tokenizer_version, **BM25_PARAMS},
                "counts": {
                    "documents": len(documents),
                    "chunks": len(chunks),
                    "vectors_reused": n_reused,
                    "vectors_new": n_new,
                    **({"vectors_resumed": n_resumed} if n_resumed else {}),
                    **doc_counts,
                },
                "sources": _merge_sources(
                    existing, sources, replace=replace, drop=_pruned_source(scope, files, prune)
                ),
                "files": checksum_tree(tmp),
            }
            write_manifest(tmp, manifest)
            fsync_tree(tmp)
            _swap_into_place(tmp, index_dir, existing, warn)
        _discard_partials(index_dir, partial, set(hashes), warn)
        return finish(index_dir, resolved)


def _write_lexical(directory: Path, texts: Sequence[str], lex: Lexicon) -> None:
    """Write the parts of an index that depend on the lexicon's tokenizer into ``directory``.

    The BM25 index of ``texts``. (What a reasoner derives from the chunks with the
    lexicon, such as the offline reasoner's corpus tables, is its own to count and
    cache: see :mod:`sealgraph.index.derived`.)
    """
    with use_lexicon(lex):
        (directory / LEXICAL_DIR).mkdir()
        LexicalIndex.build(texts, lex).save(directory / LEXICAL_DIR)


def manifest_lexicon(manifest: dict[str, Any]) -> str:
    """Return the lexicon spec an index records (``"english"`` for indexes that predate it)."""
    spec = manifest.get("lexicon")
    return spec if isinstance(spec, str) and spec else "english"


def refresh_lexical_dir(
    index_dir: Path,
    *,
    lock_timeout: float,
    warn: WarnFn | None,
    finish: Callable[[Path], _T],
) -> _T:
    """Rebuild the lexical part of the index in ``index_dir``; return ``finish(index_dir)``.

    The BM25 index is computed again from the stored chunks with the index's
    lexicon, as the current sealgraph tokenizes; the documents,
    chunks and vectors are kept as they are (nothing is chunked or embedded again).
    Written like a build: into a temporary sibling (the unchanged files hard-linked,
    or copied where links are not possible), then swapped into place under the
    index's lock, the manifest last.

    Raises:
        IndexCorruptError: No index there, or its docstore is damaged.
        ConfigError: The lexicon the index records cannot be found.

    """
    warn = warn or warn_stderr
    index_dir = index_dir.resolve()
    with locked_index(index_dir, timeout=lock_timeout, warn=warn):
        existing = inspect_target(index_dir)
        if existing is None:
            raise IndexCorruptError(f"no index at {index_dir}")
        manifest = read_manifest(index_dir)
        lex = get_lexicon(manifest_lexicon(manifest))
        files = manifest.get("files") or {}
        kept = [
            name
            for name in files
            if not name.startswith(f"{LEXICAL_DIR}/") and name not in LEGACY_FILES
        ]
        verify_files(index_dir, manifest, tuple(kept))
        try:
            _, chunks, _ = read_docstore(index_dir / DOCSTORE_FILE)
        except (OSError, ValueError, KeyError, TypeError, sqlite3.DatabaseError) as exc:
            raise IndexCorruptError(
                f"damaged index at {index_dir}: {type(exc).__name__}: {exc}"
            ) from None
        with _staging(index_dir, lambda: _tree_bytes(index_dir / LEXICAL_DIR)) as tmp:
            for name in kept:
                target = tmp / name
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(index_dir / name, target)
                except OSError:
                    shutil.copy2(index_dir / name, target)
            _write_lexical(tmp, [indexed_text(c) for c in chunks], lex)
            fresh = checksum_tree(tmp / LEXICAL_DIR)
            manifest["files"] = {
                **{name: files[name] for name in kept},
                **{f"{LEXICAL_DIR}/{name}": digest for name, digest in fresh.items()},
            }
            manifest["files"] = dict(sorted(manifest["files"].items()))
            manifest["lexicon"] = lexicon_spec(lex)
            manifest["lexical"] = {"tokenizer_version": lex.tokenizer_version, **BM25_PARAMS}
            manifest["sealgraph_version"] = _version()
            write_manifest(tmp, manifest)
            fsync_tree(tmp)
            _swap_into_place(tmp, index_dir, existing, warn)
        return finish(index_dir)


def remove_documents_dir(
    index_dir: Path,
    targets: Sequence[str | os.PathLike[str]],
    *,
    lock_timeout: float,
    warn: WarnFn | None,
    finish: Callable[[Path], _T],
) -> _T:
    """Remove the documents of ``targets`` from the index in ``index_dir``; return ``finish(...)``.

    A target is a file or folder, matching the documents read from that file or
    from files inside that folder (the files need not exist any more), or a
    document id. The other documents keep their chunks and vectors as stored:
    nothing is chunked or embedded again and no embedder is needed; the lexical
    (BM25) part is rebuilt. Written like a build: into a temporary sibling, then
    swapped into place under the index's lock, the manifest last.

    Raises:
        InputError: No targets; a target that matches no document (nothing is
            removed then); or removing would leave the index empty.
        IndexCorruptError: No index there, or its docstore or vectors are damaged.
        ConfigError: The lexicon the index records cannot be found.

    """
    warn = warn or warn_stderr
    index_dir = index_dir.resolve()
    given = [os.fspath(target) for target in targets]
    if not given:
        raise InputError("give the files, folders or document ids to remove")
    restore_interrupted(index_dir, timeout=lock_timeout, warn=warn)
    if inspect_target(index_dir) is None:
        raise IndexCorruptError(f"no sealgraph index at {index_dir} to remove documents from")
    with locked_index(index_dir, timeout=lock_timeout, warn=warn):
        existing = inspect_target(index_dir)
        if existing is None:
            raise IndexCorruptError(f"no sealgraph index at {index_dir} to remove documents from")
        manifest = read_manifest(index_dir)
        dense = bool(manifest.get("embedder"))
        lex = get_lexicon(manifest_lexicon(manifest))
        docstore = index_dir / DOCSTORE_FILE
        verify_files(index_dir, manifest, (DOCSTORE_FILE, *((VECTORS_FILE,) if dense else ())))
        try:
            documents = read_documents(docstore)
            _, chunks, hashes = read_docstore(docstore)
            files = stored_document_files(docstore, manifest, documents)
            vectors = np.load(index_dir / VECTORS_FILE, allow_pickle=False) if dense else None
            if vectors is not None and (
                vectors.dtype != np.float32 or vectors.ndim != 2 or len(vectors) != len(chunks)
            ):
                raise ValueError(f"{VECTORS_FILE} does not hold one float32 row per chunk")
        except (OSError, ValueError, KeyError, TypeError, sqlite3.DatabaseError) as exc:
            raise IndexCorruptError(
                f"damaged index at {index_dir}: {type(exc).__name__}: {exc}; rebuild it with "
                f"`sealgraph index PATH --index {index_dir} --replace`"
            ) from None
        matched = _documents_of_targets(given, documents, files)
        unmatched = [target for target in given if not matched[target]]
        if unmatched:
            raise InputError(
                f"no document of the index at {index_dir} came from {', '.join(unmatched)} "
                f"(no file there or inside it was indexed, and no document has that id); "
                f"nothing was removed"
            )
        removed = set().union(*matched.values())
        remaining = [doc for doc in documents if doc.doc_id not in removed]
        if not remaining:
            raise InputError(
                f"removing {', '.join(given)} would leave the index at {index_dir} empty; "
                f"delete the index folder instead, or rebuild it with --replace"
            )
        rows = [row for row, chunk in enumerate(chunks) if chunk.doc_id not in removed]
        kept = [chunks[row] for row in rows]
        still = {files[doc.doc_id] for doc in remaining if doc.doc_id in files}
        gone = {files[doc_id] for doc_id in removed if doc_id in files}

        def dropped(path: str) -> bool:
            return path not in still and (path in gone or _covered(path, given))

        with _staging(index_dir, lambda: _tree_bytes(index_dir)) as tmp:
            write_docstore(tmp / DOCSTORE_FILE, remaining, kept, [hashes[r] for r in rows], files)
            _write_lexical(tmp, [indexed_text(chunk) for chunk in kept], lex)
            if vectors is not None:
                DenseIndex(np.ascontiguousarray(vectors[rows])).save(tmp)
            manifest = {
                **manifest,
                "sealgraph_version": _version(),
                "lexicon": lexicon_spec(lex),
                "lexical": {"tokenizer_version": lex.tokenizer_version, **BM25_PARAMS},
                "counts": {
                    "documents": len(remaining),
                    "chunks": len(kept),
                    "vectors_reused": len(kept) if vectors is not None else 0,
                    "vectors_new": 0,
                    **_document_counts(
                        {"added": 0, "updated": 0, "kept": len(remaining), "removed": len(removed)}
                    ),
                },
                "sources": [
                    source
                    for source in manifest.get("sources") or ()
                    if not (
                        isinstance(source, dict)
                        and isinstance(source.get("path"), str)
                        and dropped(source["path"])
                    )
                ],
                "files": checksum_tree(tmp),
            }
            write_manifest(tmp, manifest)
            fsync_tree(tmp)
            _swap_into_place(tmp, index_dir, existing, warn)
        return finish(index_dir)


def _target_paths(target: str) -> set[str]:
    """Return a target as an absolute path, as given and with symlinks resolved (POSIX)."""
    path = Path(target).expanduser()
    return {Path(os.path.abspath(path)).as_posix(), path.resolve().as_posix()}


def _covered(file: str, targets: Sequence[str]) -> bool:
    return any(_within(file, option) for target in targets for option in _target_paths(target))


def _documents_of_targets(
    targets: Sequence[str], documents: Sequence[Document], files: Mapping[str, str]
) -> dict[str, set[str]]:
    """Return the ids of the documents each target names (by file or folder, or by id)."""
    ids = {doc.doc_id for doc in documents}
    by_file: dict[str, list[str]] = {}
    for doc_id, file in files.items():
        if doc_id in ids:
            by_file.setdefault(file, []).append(doc_id)
    found: dict[str, set[str]] = {}
    for target in targets:
        options = _target_paths(target)
        hits = {
            doc_id
            for file, doc_ids in by_file.items()
            if any(_within(file, option) for option in options)
            for doc_id in doc_ids
        }
        if target in ids:
            hits.add(target)
        found[target] = hits
    return found


def inspect_target(index_dir: Path) -> dict[str, Any] | None:
    """Return the manifest of the index a build may replace; None for a new or empty folder.

    Raises:
        InputError: ``index_dir`` is a file, a folder that is not a sealgraph index
            (see :func:`sealgraph.index._manifest.read_marker`), or a sealgraph index
            holding files sealgraph did not write; it must not be touched.

    """
    if not os.path.lexists(index_dir):
        return None
    if not index_dir.is_dir():
        kind = "a file" if index_dir.is_file() else "not a directory"
        raise InputError(f"{index_dir} is {kind}, not an index directory")
    try:
        if not any(index_dir.iterdir()):
            return None
    except OSError as exc:
        raise InputError(f"cannot read {index_dir}: {exc.strerror or exc}") from None
    manifest = read_marker(index_dir)
    foreign = foreign_entries(index_dir, manifest, OWN_FILES, OWN_FOLDERS)
    if foreign:
        shown = ", ".join(foreign[:5]) + (
            f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        )
        raise InputError(
            f"{index_dir} is a sealgraph index but also holds files sealgraph did not write "
            f"({shown}); refusing to replace it: move them out of the index directory first"
        )
    return manifest


@contextmanager
def locked_index(index_dir: Path, *, timeout: float, warn: WarnFn) -> Iterator[Path]:
    """Hold the build lock of ``index_dir`` (``.NAME.lock`` beside it); yield the resolved path.

    Waits up to ``timeout`` seconds for another build, saying so once. Once the
    lock is held, no other build of this index runs, so leftovers of interrupted
    builds are cleaned up (:func:`recover_leftovers`) before the caller's block.

    Raises:
        InputError: ``index_dir`` must not be touched (:func:`inspect_target`), or
            the lock file cannot be created.
        SealgraphError: The lock was not released within ``timeout`` seconds.

    """
    index_dir = index_dir.resolve()
    inspect_target(index_dir)  # never create anything beside a folder that is not ours
    lock_path = index_dir.parent / f".{index_dir.name}.lock"
    try:
        index_dir.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(lock_path)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            warn(
                f"waiting for another sealgraph build of {index_dir} to finish (up to {timeout:g} s)"
            )
            try:
                lock.acquire(timeout=max(timeout, 0))
            except Timeout:
                raise SealgraphError(
                    f"another sealgraph build of {index_dir} still holds its lock {lock_path} "
                    f"after {timeout:g} s; try again when it has finished, or wait longer "
                    f"(--lock-timeout)"
                ) from None
    except OSError as exc:
        raise InputError(
            f"cannot lock {index_dir} (lock file {lock_path}): {exc.strerror or exc}"
        ) from None
    try:
        recover_leftovers(index_dir, warn)
        yield index_dir
    finally:
        lock.release()


def recover_leftovers(index_dir: Path, warn: WarnFn) -> None:
    """Clean up after interrupted builds of ``index_dir``; call only holding its lock.

    Temporary ``.NAME.building-*`` folders are removed. A ``.NAME.old-*`` folder is
    the previous index parked by a swap: when ``index_dir`` is missing (or empty)
    the newest one holding a sealgraph manifest is renamed back; otherwise the swap
    finished and it is removed. Only folders with sealgraph's naming (and, for old
    ones, sealgraph's manifest and files, or nothing at all) are ever removed.
    """
    for stale in _leftovers(index_dir, "building"):
        shutil.rmtree(stale, ignore_errors=True)
        warn(f"removed {stale}, left by an interrupted build")
    parked = [(old, _marker_or_none(old)) for old in _leftovers(index_dir, "old")]
    indexes = [(old, manifest) for old, manifest in parked if manifest is not None]
    if indexes and _missing_or_empty(index_dir):
        newest = max(indexes, key=lambda item: (item[0] / MANIFEST_FILE).stat().st_mtime)[0]
        try:
            if index_dir.is_dir():
                index_dir.rmdir()
            os.replace(newest, index_dir)
            fsync_path(index_dir.parent)
        except OSError as exc:
            raise IndexCorruptError(
                f"an interrupted build left the index of {index_dir} in {newest} and it "
                f"cannot be put back ({exc.strerror or exc}); rename it to {index_dir}"
            ) from None
        warn(f"restored the index at {index_dir} from {newest}, where an interrupted build left it")
        parked = [(old, manifest) for old, manifest in parked if old != newest]
    target_is_index = not _missing_or_empty(index_dir) and _marker_or_none(index_dir) is not None
    for old, manifest in parked:
        if manifest is None:
            with suppress(OSError):
                old.rmdir()  # the empty folder a swap creates first; anything else stays
        elif target_is_index and not foreign_entries(old, manifest, OWN_FILES, OWN_FOLDERS):
            shutil.rmtree(old, ignore_errors=True)
            warn(f"removed {old}, a previous index left by an interrupted build")


def restore_interrupted(index_dir: Path, *, timeout: float, warn: WarnFn) -> None:
    """Put back the index a build moved away from ``index_dir`` before it died, if any.

    Raises:
        IndexCorruptError: The previous index exists but cannot be put back; the
            message says where it is.

    """
    index_dir = index_dir.resolve()
    if os.path.lexists(index_dir):
        return
    parked = [old for old in _leftovers(index_dir, "old") if _marker_or_none(old) is not None]
    if not parked:
        return
    try:
        with locked_index(index_dir, timeout=timeout, warn=warn):
            pass  # recovery happens on taking the lock
    except IndexCorruptError:
        raise
    except (SealgraphError, OSError) as exc:
        raise IndexCorruptError(
            f"no index at {index_dir}: an interrupted build left the previous index in "
            f"{parked[-1]} and it cannot be put back ({exc}); rename it to {index_dir}"
        ) from None


def _leftovers(index_dir: Path, kind: str) -> list[Path]:
    # tempfile.mkdtemp appends 8 characters of [a-z0-9_] to the prefix.
    pattern = re.compile(rf"\.{re.escape(index_dir.name)}\.{kind}-[a-z0-9_]{{8}}")
    try:
        entries = list(index_dir.parent.iterdir())
    except OSError:
        return []
    return sorted(
        entry
        for entry in entries
        if pattern.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink()
    )


def _marker_or_none(directory: Path) -> dict[str, Any] | None:
    try:
        return read_marker(directory)
    except InputError:
        return None


def _missing_or_empty(directory: Path) -> bool:
    if not os.path.lexists(directory):
        return True
    try:
        return directory.is_dir() and not any(directory.iterdir())
    except OSError:
        return False


def _check_format(index_dir: Path, existing: dict[str, Any]) -> None:
    """Refuse to add to an index of an older format: its documents were read otherwise."""
    version = existing.get("format_version")
    if version != FORMAT_VERSION:
        raise InputError(old_format_message(index_dir, version))


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
        name = _embedder_name(manifest)
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


def _embedder_name(manifest: dict[str, Any]) -> str | None:
    info = manifest.get("embedder")
    name = info.get("name") if isinstance(info, dict) else None
    return str(name) if name is not None else None


def _check_embedder(
    index_dir: Path, existing: dict[str, Any] | None, resolved: Embedder | None, *, force: bool
) -> None:
    if existing is None or force:
        return
    old_name = _embedder_name(existing)
    new_name = resolved.name if resolved is not None else None
    if old_name != new_name:
        raise EmbedderMismatchError(
            f"the index at {index_dir} was built with embedder {old_name or 'none'} but "
            f"{new_name or 'none'} was requested; vectors of different embedders cannot "
            f"be mixed: use --force (force=True) to rebuild it from the given files only, "
            f"or another directory"
        )


@dataclass(frozen=True)
class _Scope:
    """The files and folders a build was given, and the files it read from them."""

    roots: tuple[str, ...]
    """The given paths, absolute with symlinks resolved (POSIX)."""
    read: frozenset[str]
    """Every file read (as :attr:`SourceFile.path`), documents or not."""

    @classmethod
    def of(cls, inputs: Any, sources: Sequence[SourceFile]) -> _Scope | None:
        """Return the scope of the paths given to a build; None when documents were given."""
        items = [inputs] if isinstance(inputs, str | os.PathLike) else inputs
        if not isinstance(items, list) or not all(isinstance(i, str | os.PathLike) for i in items):
            return None
        roots = tuple(Path(item).resolve().as_posix() for item in items)
        return cls(roots, frozenset(source.path for source in sources))

    def covers(self, file: str) -> bool:
        """Whether ``file`` is one of the given files or inside a given folder."""
        return any(_within(file, root) for root in self.roots)

    def gone(self, file: str | None) -> bool:
        """Whether a document of ``file`` that this build did not give again is stale.

        That is: ``file`` is in scope and either no longer exists or was read
        again without giving that document (a file that exists but was skipped,
        with a warning, keeps its documents).
        """
        return (
            file is not None
            and self.covers(file)
            and (file in self.read or not os.path.lexists(file))
        )


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _merge(
    index_dir: Path,
    existing: dict[str, Any] | None,
    given: list[Document],
    given_files: Mapping[str, str],
    *,
    replace: bool,
    scope: _Scope | None = None,
    prune: bool = False,
) -> tuple[list[Document], dict[str, str], dict[str, int], list[Document]]:
    """Documents of the new index, their files, the counts, and the stale documents.

    Adding keeps the index's documents in their order, with those whose id is
    given again replaced in place, and appends the new ones. Replacing keeps none.
    Stale documents are kept ones whose file is in ``scope`` but gone
    (:meth:`_Scope.gone`); ``prune`` removes them.

    Returns:
        ``(documents, file of each document read from one, document counts, stale)``.

    """
    given_ids = {doc.doc_id for doc in given}
    if replace or existing is None:
        old_ids = _old_document_ids(index_dir, existing)
        updated = len(given_ids & old_ids)
        counts = {"added": len(given) - updated, "updated": updated, "kept": 0}
        counts["removed"] = len(old_ids - given_ids)
        return given, dict(given_files), _document_counts(counts), []
    try:
        verify_files(index_dir, existing, (DOCSTORE_FILE,))
        old = read_documents(index_dir / DOCSTORE_FILE)
        old_files = stored_document_files(index_dir / DOCSTORE_FILE, existing, old)
    except (IndexCorruptError, OSError, ValueError, TypeError, sqlite3.DatabaseError) as exc:
        raise IndexCorruptError(
            f"cannot add to the index at {index_dir}: its documents cannot be read back "
            f"({exc}); rebuild it from all of its files with --replace (replace=True)"
        ) from None
    stale = [
        doc
        for doc in old
        if doc.doc_id not in given_ids
        and scope is not None
        and scope.gone(old_files.get(doc.doc_id))
    ]
    dropped = {doc.doc_id for doc in stale} if prune else set()
    by_id = {doc.doc_id: doc for doc in given}
    old_ids = {doc.doc_id for doc in old}
    merged = [by_id.get(doc.doc_id, doc) for doc in old if doc.doc_id not in dropped]
    merged.extend(doc for doc in given if doc.doc_id not in old_ids)
    files = {
        doc_id: file
        for doc_id, file in old_files.items()
        if doc_id not in given_ids and doc_id not in dropped
    }
    files.update(given_files)
    updated = len(given_ids & old_ids)
    counts = {
        "added": len(given) - updated,
        "updated": updated,
        "kept": len(old) - updated - len(dropped),
        "removed": len(dropped),
    }
    return merged, files, _document_counts(counts), stale


def _stale_message(
    stale: Sequence[Document], files: Mapping[str, str], scope: _Scope | None
) -> str:
    shown = ", ".join(files.get(doc.doc_id, doc.doc_id) for doc in stale[:3])
    more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
    roots = ", ".join(scope.roots) if scope is not None else ""
    them = "them" if len(stale) > 1 else "it"
    return (
        f"kept {len(stale)} document{'s' if len(stale) > 1 else ''} of {roots} that this build "
        f"did not read again ({shown}{more}): the file is gone, no longer holds {them}, or gave "
        f"{them} another id; index with --prune (prune=True) to remove {them}, or remove "
        f"{them} with `sealgraph index --remove PATH`"
    )


def stored_document_files(
    docstore: Path, manifest: Mapping[str, Any], documents: Iterable[Any]
) -> dict[str, str]:
    """Return the file each stored document was read from, by id (where known).

    Docstores record it (:func:`~sealgraph.index._store.read_document_files`); for
    those written before they did, it is found from what each document says it
    came from (its ``source``, a path as given with ``:LINE`` for JSONL records)
    among the files the manifest lists.
    """
    recorded = read_document_files(docstore)
    if recorded is not None:
        return recorded
    listed = [
        s["path"]
        for s in manifest.get("sources") or ()
        if isinstance(s, dict) and isinstance(s.get("path"), str)
    ]
    found = {doc.doc_id: _file_of_source(doc.source, listed) for doc in documents}
    return {doc_id: file for doc_id, file in found.items() if file is not None}


def _file_of_source(source: str, listed: Sequence[str]) -> str | None:
    candidates = [source]
    if re.search(r":\d+$", source):
        candidates.append(source.rsplit(":", 1)[0])
    for candidate in reversed(candidates):  # a JSONL record's file first
        if not candidate:
            continue
        path = Path(candidate)
        if path.is_absolute():
            for option in (os.path.normpath(candidate), path.resolve().as_posix()):
                if option in listed:
                    return option
            continue
        suffix = "/" + PurePosixPath(os.path.normpath(candidate)).as_posix()
        matches = [file for file in listed if file.endswith(suffix)]
        if len(matches) == 1:
            return matches[0]
    return None


def _old_document_ids(index_dir: Path, existing: dict[str, Any] | None) -> set[str]:
    """Ids in the index being replaced (only counted: a damaged docstore counts none)."""
    if existing is None:
        return set()
    try:
        verify_files(index_dir, existing, (DOCSTORE_FILE,))
        return set(read_document_ids(index_dir / DOCSTORE_FILE))
    except (IndexCorruptError, OSError, sqlite3.DatabaseError):
        return set()


def _document_counts(counts: dict[str, int]) -> dict[str, int]:
    return {f"documents_{key}": value for key, value in counts.items()}


def _merge_sources(
    existing: dict[str, Any] | None,
    sources: Sequence[SourceFile],
    *,
    replace: bool,
    drop: Callable[[str], bool] | None = None,
) -> list[dict[str, Any]]:
    """Source files of the new index: the given ones, after the kept ones read before.

    ``drop`` says which kept ones to leave out (files whose documents were removed).
    """
    new = [{"path": s.path, "sha256": s.sha256, "documents": s.n_documents} for s in sources]
    if replace or existing is None or not isinstance(existing.get("sources"), list):
        return new
    paths = {s["path"] for s in new}
    kept = [
        s
        for s in existing["sources"]
        if isinstance(s, dict)
        and s.get("path") not in paths
        and not (drop is not None and isinstance(s.get("path"), str) and drop(s["path"]))
    ]
    return kept + new


def _pruned_source(
    scope: _Scope | None, files: Mapping[str, str], prune: bool
) -> Callable[[str], bool] | None:
    """With ``prune``: drop listed files in scope that no kept document comes from."""
    if not prune or scope is None:
        return None
    still = set(files.values())
    return lambda path: scope.covers(path) and path not in still


def _version() -> str:
    from sealgraph import __version__

    return __version__


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


def _documents(
    inputs: Any, warn: WarnFn, *, follow_links: bool = False, limits: LoaderLimits | None = None
) -> tuple[list[Document], list[SourceFile], dict[str, str]]:
    """Documents to index, the files read, and the file of each document read from one."""
    if isinstance(inputs, str | os.PathLike):
        corpus = load_corpus(inputs, warn=warn, follow_links=follow_links, limits=limits)
        return corpus.documents, corpus.sources, _files_of(corpus.documents, corpus.sources)
    items = list(inputs) if isinstance(inputs, Iterable) else [inputs]
    if not items:
        raise InputError("no documents or paths given to index")
    if not all(isinstance(item, Document) for item in items):
        if any(isinstance(item, Document) for item in items):
            raise InputError("give either paths or Document objects, not a mix")
        corpus = load_corpus(items, warn=warn, follow_links=follow_links, limits=limits)
        return corpus.documents, corpus.sources, _files_of(corpus.documents, corpus.sources)
    seen: set[str] = set()
    for doc in items:
        if doc.doc_id in seen:
            raise IngestError(f"duplicate document id {doc.doc_id!r}; document ids must be unique")
        seen.add(doc.doc_id)
    return items, [], {}


def _files_of(documents: Sequence[Document], sources: Sequence[SourceFile]) -> dict[str, str]:
    """Map each document to its file: sources say, in order, how many documents each gave."""
    if sum(source.n_documents for source in sources) != len(documents):
        return {}  # not the loader's contiguous order: record no files rather than wrong ones
    files: dict[str, str] = {}
    docs = iter(documents)
    for source in sources:
        for _ in range(source.n_documents):
            files[next(docs).doc_id] = source.path
    return files


def _reusable_vectors(
    index_dir: Path, manifest: dict[str, Any] | None, embedder: Embedder, warn: WarnFn
) -> dict[str, np.ndarray]:
    """Vectors of the index being replaced, by content hash, if its embedder is the same."""
    if manifest is None or _embedder_name(manifest) != embedder.name:
        return {}
    info = manifest["embedder"]
    try:
        verify_files(index_dir, manifest, (DOCSTORE_FILE, VECTORS_FILE))
        hashes = read_chunk_hashes(index_dir / DOCSTORE_FILE)
        vectors = np.load(index_dir / VECTORS_FILE, allow_pickle=False)
        if vectors.dtype != np.float32 or vectors.shape != (len(hashes), info.get("dim")):
            raise ValueError(
                f"{VECTORS_FILE} has shape {vectors.shape}, expected {len(hashes)} rows"
            )
    except (IndexCorruptError, OSError, ValueError, sqlite3.DatabaseError) as exc:
        warn(f"cannot reuse the vectors of {index_dir} ({exc}); embedding every chunk again")
        return {}
    return {digest: vectors[row] for row, digest in enumerate(hashes)}


def _embed(
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
    todo: dict[str, str] = {}
    for digest, text in zip(hashes, texts, strict=True):
        if digest not in reuse:
            todo.setdefault(digest, text)
    known = partial.vectors if partial is not None else {}
    fresh: dict[str, np.ndarray] = {d: known[d] for d in todo if d in known}
    n_resumed = len(fresh)
    pending = [(digest, text) for digest, text in todo.items() if digest not in fresh]
    if n_resumed and partial is not None and warn is not None:
        warn(
            f"resuming an interrupted build: {n_resumed:,} of the {len(todo):,} chunks to "
            f"embed were embedded before it stopped (kept in {partial.directory})"
        )
    keep = partial is not None and len(pending) > _EMBED_BLOCK
    kept_dim = next(iter(fresh.values())).shape[0] if fresh else None
    done = n_resumed
    report("embedding", done, len(todo))
    unkept: list[tuple[str, np.ndarray]] = []  # finished, not yet kept in ``partial``
    last_kept = _clock()
    start = 0
    while start < len(pending):
        block = pending[start : start + _EMBED_BLOCK]
        start += len(block)
        try:
            out = embedder.embed_documents([text for _, text in block])
        except SealgraphError:
            raise
        except Exception as exc:
            raise SealgraphError(
                f"embedding with {embedder.name} failed: {type(exc).__name__}: {exc}"
            ) from exc
        out = normalize_rows(out)
        if out.ndim != 2 or out.shape[0] != len(block):
            raise SealgraphError(
                f"embedder {embedder.name} returned shape {out.shape} for {len(block)} texts"
            )
        first = start == len(block)
        if first and n_resumed and partial is not None and out.shape[1] != kept_dim:
            # Vectors of another size under the same name are not this model's: start over.
            if warn is not None:
                warn(
                    f"ignored the embeddings kept in {partial.directory}: they have {kept_dim} "
                    f"dimensions, {embedder.name} gives {out.shape[1]}; embedding their chunks again"
                )
            partial.reset()
            pending.extend((digest, todo[digest]) for digest in fresh)
            fresh.clear()
            done -= n_resumed
            n_resumed = 0
            keep = True
        finished = [(digest, vector) for (digest, _), vector in zip(block, out, strict=True)]
        if keep and partial is not None:
            unkept.extend(finished)
            if _clock() - last_kept >= _KEEP_EVERY_S and start < len(pending):
                partial.add([d for d, _ in unkept], np.stack([v for _, v in unkept]))
                unkept.clear()
                last_kept = _clock()
        fresh.update(finished)
        done += len(block)
        report("embedding", done, len(todo))
    rows = [reuse[d] if d in reuse else fresh[d] for d in hashes]
    dims = {row.shape[0] for row in rows}
    if len(dims) != 1:
        raise SealgraphError(f"embedder {embedder.name} returned vectors of sizes {sorted(dims)}")
    vectors = np.ascontiguousarray(np.stack(rows), dtype=np.float32)
    n_reused = sum(1 for d in hashes if d in reuse)
    return vectors, n_reused, len(todo), n_resumed


def _discard_partials(
    index_dir: Path, partial: PartialEmbeddings | None, used: set[str], warn: WarnFn
) -> None:
    """Remove the kept batches of interrupted builds once a build of ``index_dir`` succeeded."""
    for directory in partial_dirs(index_dir):
        if not is_own_partial(directory):
            continue  # our naming, not our files: never removed (a build says so when it opens it)
        if partial is not None and directory == partial.directory:
            unused = sum(1 for digest in partial.vectors if digest not in used)
            if unused:
                warn(
                    f"discarded {unused:,} embeddings an interrupted build left in {directory} "
                    f"for text this index does not hold"
                )
        else:
            warn(f"removed {directory}, embeddings an interrupted build with another embedder left")
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def _staging(index_dir: Path, needed_bytes: Callable[[], int]) -> Iterator[Path]:
    """Yield a new temporary sibling of ``index_dir`` to write an index into; remove it after.

    A write that fails for want of space (full disk, quota, file size limit)
    becomes a :class:`DiskFullError` naming the folder and about how much space the
    index needs (``needed_bytes``); the index in ``index_dir`` is not touched until
    the new one is complete, so nothing is lost.
    """
    tmp = None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{index_dir.name}.building-", dir=index_dir.parent))
        yield tmp
    except (OSError, sqlite3.Error, RuntimeError) as exc:
        if not _out_of_space(exc, index_dir.parent, needed_bytes):
            raise
        raise DiskFullError(_out_of_space_message(index_dir, needed_bytes())) from None
    finally:
        if tmp is not None and tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


_NO_SPACE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
# What libraries say when a write came up short without an errno: numpy's
# "N requested and M written", SQLite's SQLITE_FULL, C stdio through FAISS.
_NO_SPACE_RE = re.compile(r"requested and \d+ written|disk is full|no space left|quota", re.I)


def _out_of_space(exc: BaseException, folder: Path, needed_bytes: Callable[[], int]) -> bool:
    """Whether a failed write failed for want of space in ``folder``."""
    if isinstance(exc, OSError) and exc.errno in _NO_SPACE_ERRNOS:
        return True
    if getattr(exc, "sqlite_errorcode", None) == 13:  # SQLITE_FULL
        return True
    if _NO_SPACE_RE.search(str(exc)):
        return True
    if not (isinstance(exc, OSError) and exc.errno is None):
        return False
    try:  # a short write that does not say why: is the disk (nearly) full?
        return shutil.disk_usage(folder).free < needed_bytes()
    except OSError:
        return False


def _out_of_space_message(index_dir: Path, needed: int) -> str:
    try:
        free = f"{_megabytes(shutil.disk_usage(index_dir.parent).free)} free"
    except OSError:
        free = "free space unknown"
    return (
        f"no space left in {index_dir.parent} to write the index {index_dir.name}: it needs "
        f"about {_megabytes(needed)} there ({free}); free some space or give --index a "
        f"folder on another disk. Nothing was changed: the index there is as it was"
    )


def _megabytes(n_bytes: int) -> str:
    return f"{max(n_bytes, 0) / 1e6:,.1f} MB"


def _build_bytes(
    documents: Sequence[Document], texts: Sequence[str], embedder: Embedder | None
) -> int:
    """Return about how many bytes a new index of these documents takes.

    Measured: ~2.2× the chunk text for the docstore and the BM25 arrays; vectors
    are stored twice (FAISS and ``.npy``).
    """
    chunk_bytes = sum(len(t.encode("utf-8")) for t in texts)
    doc_bytes = sum(len(d.text.encode("utf-8")) for d in documents)
    try:
        dim = embedder.dim if embedder is not None else 0
    except Exception:  # a remote embedder that cannot say: count its vectors as MiniLM's
        dim = 384
    return 3 * chunk_bytes + doc_bytes + len(texts) * dim * 8 + (1 << 16)


def _tree_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder`` (what a rewrite of them needs again)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _swap_into_place(
    new: Path, target: Path, existing: dict[str, Any] | None, warn: WarnFn
) -> None:
    """Replace ``target`` by ``new``; the old index stays until the new one is in place."""
    old = None
    if target.exists():
        # Renaming a directory onto an empty directory is atomic on POSIX.
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        if old is not None:
            os.replace(old, target)
        raise
    fsync_path(target.parent)
    if old is None:
        return
    # Checked again: files could have been put into the folder during the build.
    if existing is None:
        keep = any(old.iterdir())  # it was empty when the build started
    else:
        keep = bool(foreign_entries(old, existing, OWN_FILES, OWN_FOLDERS))
    if keep:
        warn(f"kept {old}: the previous {target.name} holds files sealgraph did not write")
    else:
        shutil.rmtree(old, ignore_errors=True)


class _StderrProgress:
    """Progress on stderr for slow stages only.

    On a terminal: a one-line bar redrawn in place, with the rate and the time
    left. Otherwise (a log file, a pipe): plain lines such as
    ``sealgraph: embedding 2,560/17,440 chunks (14.7 chunks/s, ETA 16m50s)``. Once
    a stage has run ``log_delay_s``, a line is printed at every ``log_step`` of it
    or every ``log_interval_s``, whichever comes first (but never within
    ``log_min_gap_s`` of the previous one), and a last one when the stage ends; so
    short builds print nothing. The rate counts what this stage did, not what a
    resumed build found done.
    """

    _UNITS: ClassVar[dict[str, str]] = {"chunking": "documents", "embedding": "chunks"}

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        delay_s: float = 0.5,
        interval_s: float = 0.1,
        log_delay_s: float | None = None,
        log_interval_s: float | None = None,
        log_step: float | None = None,
        log_min_gap_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())
        self._delay_s = delay_s
        self._interval_s = interval_s
        # Module defaults read here, so that they can be changed (tests, a caller).
        self._log_delay_s = _LOG_DELAY_S if log_delay_s is None else log_delay_s
        self._log_interval_s = _LOG_INTERVAL_S if log_interval_s is None else log_interval_s
        self._log_step = _LOG_STEP if log_step is None else log_step
        self._log_min_gap_s = _LOG_MIN_GAP_S if log_min_gap_s is None else log_min_gap_s
        self._clock = clock
        self._stage = ""
        self._stage_start = 0.0
        self._start_done = 0
        self._last = 0.0
        self._last_done = 0
        self._printed = False
        self._width = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = self._clock()
        if stage != self._stage:
            self._stage, self._stage_start, self._start_done = stage, now, done
            self._last, self._last_done, self._printed, self._width = 0.0, done, False, 0
        if self._tty:
            self._draw_bar(stage, done, total, now)
        else:
            self._log_line(stage, done, total, now)

    def _draw_bar(self, stage: str, done: int, total: int, now: float) -> None:
        finished = done >= total
        if now - self._stage_start < self._delay_s:
            return  # quick stages never show a bar
        if not finished and now - self._last < self._interval_s:
            return
        self._last = now
        width = 30
        filled = width if total <= 0 else int(width * min(done, total) / total)
        bar = "#" * filled + "." * (width - filled)
        line = f"{stage:<10} [{bar}] {done}/{total}"
        speed = self._speed(stage, done, total, now)
        if speed:
            line += f"  {speed}"
        write_control(self._stream, "\r")
        self._stream.write(line.ljust(self._width))
        self._width = len(line)
        if finished:
            self._stream.write("\n")
        self._stream.flush()

    def _log_line(self, stage: str, done: int, total: int, now: float) -> None:
        if now - self._stage_start < self._log_delay_s:
            return  # short stages stay quiet, even when they end
        finished = done >= total
        if self._printed and not finished:
            since = now - self._last
            if since < self._log_min_gap_s:
                return
            if since < self._log_interval_s and done - self._last_done < self._log_step * total:
                return
        self._last, self._last_done, self._printed = now, done, True
        unit = self._UNITS.get(stage)
        counts = f"{done:,}/{total:,}" + (f" {unit}" if unit else "")
        speed = self._speed(stage, done, total, now)
        self._stream.write(f"sealgraph: {stage} {counts}{f' ({speed})' if speed else ''}\n")
        self._stream.flush()

    def _speed(self, stage: str, done: int, total: int, now: float) -> str:
        """Return ``14.7 chunks/s, ETA 16m50s`` (``in 19m46s`` once done); empty if unknown."""
        elapsed = now - self._stage_start
        rate = (done - self._start_done) / elapsed if elapsed > 0 else 0.0
        unit = self._UNITS.get(stage, "")
        parts = []
        if rate > 0:
            parts.append(f"{rate:.1f}" if rate < 100 else f"{rate:,.0f}")
            parts[-1] += f" {unit}/s" if unit else "/s"
        if done >= total:
            if elapsed > 0:
                parts.append(f"in {_duration(elapsed)}")
        elif rate > 0:
            parts.append(f"ETA {_duration((total - done) / rate)}")
        return ", ".join(parts)


def _duration(seconds: float) -> str:
    """Return ``45s``, ``16m50s`` or ``2h05m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
