"""Refreshing the lexical part of an index: BM25 computed again from the stored chunks."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np

from sealgraph.errors import IndexCorruptError
from sealgraph.index._counts import is_current
from sealgraph.index._plan import manifest_lexicon, sealgraph_version
from sealgraph.index.folder._build import file_digests, lexical_entry
from sealgraph.index.folder._gazetteer import (
    create_gazetteer_tables,
    rewrite_key_filter,
    write_gazetteer_rows,
)
from sealgraph.index.folder._lexical import LEXICAL_DIR, write_lexical
from sealgraph.index.folder._lifecycle import (
    LEGACY_FILES,
    inspect_target,
    locked_index,
    swap_into_place,
)
from sealgraph.index.folder._manifest import fsync_tree, read_manifest, verify_files, write_manifest
from sealgraph.index.folder._segments import DELETED_FILE
from sealgraph.index.folder._staging import staging, tree_bytes
from sealgraph.index.folder._statistics import line_counts, statistics_entry, write_counts
from sealgraph.index.folder._store import DOCSTORE_FILE, DocumentRow, read_docstore, read_rows
from sealgraph.ingest import WarnFn, warn_stderr
from sealgraph.text.chunking import lexical_text
from sealgraph.text.lexicon import Lexicon, get_lexicon, lexicon_spec
from sealgraph.text.statistics import CorpusCounts
from sealgraph.types import Chunk

_T = TypeVar("_T")


def refresh_lexical_dir(
    index_dir: Path,
    *,
    lock_timeout: float,
    warn: WarnFn | None,
    finish: Callable[[Path], _T],
) -> _T:
    """Rebuild the lexical part of the index in ``index_dir``; return ``finish(index_dir)``.

    The BM25 index is computed again from the stored chunks with the index's
    lexicon, as the current sealgraph tokenizes, and so are the corpus counts when
    other code or another lexicon counted them; the documents,
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
            documents, chunks, _ = read_docstore(index_dir / DOCSTORE_FILE)
            rows = read_rows(index_dir / DOCSTORE_FILE)
        except (OSError, ValueError, KeyError, TypeError, sqlite3.DatabaseError) as exc:
            raise IndexCorruptError(
                f"damaged index at {index_dir}: {type(exc).__name__}: {exc}"
            ) from None
        with staging(index_dir, lambda: tree_bytes(index_dir / LEXICAL_DIR)) as tmp:
            for name in kept:
                target = tmp / name
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(index_dir / name, target)
                except OSError:
                    shutil.copy2(index_dir / name, target)
            segments = write_lexical(tmp, _row_texts(chunks, rows, manifest), lex)
            deleted = sorted(set(range(segments[-1].first_row + segments[-1].n_rows)) - set(rows))
            if deleted:  # an index added to row by row keeps its row space
                np.save(
                    tmp / LEXICAL_DIR / DELETED_FILE,
                    np.asarray(deleted, dtype=np.int64),
                    allow_pickle=False,
                )
            if not is_current(manifest.get("statistics"), lex):
                _recount(tmp / DOCSTORE_FILE, documents, chunks, lex)
                manifest["statistics"] = statistics_entry(lex, len(chunks), tmp / DOCSTORE_FILE)
            manifest.update(file_digests(tmp))
            manifest["lexicon"] = lexicon_spec(lex)
            manifest["lexical"] = lexical_entry(lex, segments)
            manifest["sealgraph_version"] = sealgraph_version()
            write_manifest(tmp, manifest)
            fsync_tree(tmp)
            swap_into_place(tmp, index_dir, existing, warn)
        return finish(index_dir)


def _recount(
    docstore: Path, documents: list[DocumentRow], chunks: list[Chunk], lex: Lexicon
) -> None:
    """Replace the hard-linked ``docstore`` by a copy holding counts and names of ``chunks``."""
    linked = docstore.with_name(docstore.name + ".linked")
    os.replace(docstore, linked)
    shutil.copyfile(linked, docstore)
    linked.unlink()
    counts = CorpusCounts()
    counts.add(c.text for c in chunks)
    conn = sqlite3.connect(docstore)
    try:
        with conn:
            conn.execute("DROP TABLE IF EXISTS name_df")
            conn.execute("DROP TABLE IF EXISTS line_df")
            for table in ("gazetteer", "title_words", "gazetteer_keys"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
        write_counts(conn, counts, line_counts(chunks))
        create_gazetteer_tables(conn)
        with conn:
            write_gazetteer_rows(conn, documents, chunks, lex)
            rewrite_key_filter(conn)
    finally:
        conn.close()


def _row_texts(chunks: list[Chunk], rows: list[int], manifest: dict) -> Iterator[str]:
    """Lexical text of every row of the row space; empty for a deleted row."""
    segments = (manifest.get("lexical") or {}).get("segments") or []
    n_rows = max([r + 1 for r in rows[-1:]] + [s["first_row"] + s["n_rows"] for s in segments])
    by_row = dict(zip(rows, chunks, strict=True))
    for row in range(n_rows):
        chunk = by_row.get(row)
        yield lexical_text(chunk) if chunk is not None else ""
