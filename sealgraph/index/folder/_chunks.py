"""The chunk store of a folder index: chunks read from the docstore on demand, with a cache.

An index of a million chunks holds gigabytes of text: opening it must not read them.
:class:`DocstoreReader` answers every lookup the index serves (by chunk id, by row, a
document's chunks, a name's chunks) with an indexed SQLite query and keeps the most
recently used chunks in a bounded cache. A small index is read whole once instead
(below :data:`PRELOAD_CHUNKS` rows), which is faster than querying it.
:class:`FolderChunks` is the :class:`~sealgraph.index.protocol.ChunkStore` the
index's searches read their hits from.

Connections are opened read-only and immutable, one per thread (SQLite connections
are not shared across threads).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sealgraph.index.folder._sqlite import connect_readonly
from sealgraph.index.folder._store import chunk_of_record
from sealgraph.index.folder._stored import stored_sources
from sealgraph.text.lexicon import Lexicon
from sealgraph.text.names import normalize_name
from sealgraph.types import Chunk

__all__ = ["PRELOAD_CHUNKS", "DocstoreReader", "FolderChunks"]

PRELOAD_CHUNKS = 50_000
"""Up to this many chunks, the store reads every chunk into memory when it opens."""

CACHE_CHUNKS = 20_000
"""Chunks a large store keeps in memory, the most recently used."""

_COLUMNS = (
    'c."row", c.chunk_id, c.doc_id, c.title, c.section, c.ord, c."start", c."end", c.text, '
    "c.n_tokens, c.sentences"
)


class DocstoreReader:
    """The chunks of one docstore file, read on demand, by row."""

    def __init__(self, path: Path, n_chunks: int) -> None:
        self._path = path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._cache: OrderedDict[int, Chunk] = OrderedDict()
        self._row_of: dict[str, int] | None = None
        self._all: dict[int, Chunk] | None = None
        if n_chunks <= PRELOAD_CHUNKS:
            self._all = {
                row: chunk for row, chunk in self._query(f"SELECT {_COLUMNS} FROM chunks c")
            }
            self._row_of = {chunk.chunk_id: row for row, chunk in self._all.items()}

    # -- queries ------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect_readonly(self._path)
            self._local.conn = conn
        return conn

    def _query(self, sql: str, params: tuple = ()) -> Iterator[tuple[int, Chunk]]:
        for record in self._conn().execute(sql, params):
            yield record[0], chunk_of_record(record)

    def scalar_rows(self, sql: str, params: tuple = ()) -> list:
        """Run a query returning one column; return its values."""
        return [value for (value,) in self._conn().execute(sql, params)]

    def records(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Run a query; return its rows."""
        return self._conn().execute(sql, params).fetchall()

    # -- lookups ------------------------------------------------------------------

    def row_of(self, chunk_id: str) -> int:
        """Row of a chunk (KeyError if unknown)."""
        if self._row_of is not None:
            return self._row_of[chunk_id]
        rows = self.scalar_rows('SELECT "row" FROM chunks WHERE chunk_id = ?', (chunk_id,))
        if not rows:
            raise KeyError(chunk_id)
        return int(rows[0])

    def by_row(self, row: int) -> Chunk:
        """Return the chunk at ``row`` (KeyError if there is none)."""
        if self._all is not None:
            return self._all[row]
        with self._lock:
            chunk = self._cache.get(row)
            if chunk is not None:
                self._cache.move_to_end(row)
                return chunk
        found = list(self._query(f'SELECT {_COLUMNS} FROM chunks c WHERE c."row" = ?', (row,)))
        if not found:
            raise KeyError(row)
        self._remember(found)
        return found[0][1]

    def by_rows(self, rows: list[int]) -> list[Chunk]:
        """Return the chunks at ``rows``, in order (KeyError on a missing one)."""
        if self._all is not None:
            return [self._all[r] for r in rows]
        missing = [r for r in dict.fromkeys(rows) if not self._cached(r)]
        for start in range(0, len(missing), 500):
            part = missing[start : start + 500]
            marks = ",".join("?" * len(part))
            self._remember(
                list(
                    self._query(
                        f'SELECT {_COLUMNS} FROM chunks c WHERE c."row" IN ({marks})', tuple(part)
                    )
                )
            )
        return [self.by_row(r) for r in rows]

    def doc_rows(self, doc_id: str) -> list[int]:
        """Rows of a document's chunks, in order (empty for an unknown document)."""
        if self._all is not None and self._row_of is not None:
            return self._doc_rows_loaded(doc_id)
        return [
            int(r)
            for r in self.scalar_rows(
                'SELECT "row" FROM chunks WHERE doc_id = ? ORDER BY ord', (doc_id,)
            )
        ]

    def iter_chunks(self) -> Iterator[Chunk]:
        """Every chunk by row, streamed (documents in order, chunks in order)."""
        if self._all is not None:
            yield from (self._all[r] for r in sorted(self._all))
            return
        conn = connect_readonly(self._path)  # its own cursor: may run long
        try:
            for record in conn.execute(f'SELECT {_COLUMNS} FROM chunks c ORDER BY c."row"'):
                yield chunk_of_record(record)
        finally:
            conn.close()

    # -- cache --------------------------------------------------------------------

    def _cached(self, row: int) -> bool:
        with self._lock:
            return row in self._cache

    def _remember(self, found: list[tuple[int, Chunk]]) -> None:
        with self._lock:
            for row, chunk in found:
                self._cache[row] = chunk
                self._cache.move_to_end(row)
            while len(self._cache) > CACHE_CHUNKS:
                self._cache.popitem(last=False)

    def _doc_rows_loaded(self, doc_id: str) -> list[int]:
        rows = getattr(self, "_by_doc", None)
        if rows is None:
            by_doc: dict[str, list[tuple[int, int]]] = {}
            assert self._all is not None
            for row, chunk in self._all.items():
                by_doc.setdefault(chunk.doc_id, []).append((chunk.order, row))
            rows = {d: [r for _, r in sorted(v)] for d, v in by_doc.items()}
            self._by_doc = rows
        return list(rows.get(doc_id, ()))


class FolderChunks:
    """The chunks of a folder index (a :class:`~sealgraph.index.protocol.ChunkStore`).

    Chunk ids are the docstore's; a chunk's row is its position in the lexical and
    dense indexes (:meth:`chunk_row`, :meth:`chunk_by_row`).
    """

    def __init__(
        self, path: Path, manifest: dict[str, Any], reader: DocstoreReader, lexicon: Lexicon
    ) -> None:
        self._path = path
        self._manifest = manifest
        self._store = reader
        self._lexicon = lexicon

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

    def chunks_by_rows(self, rows: list[int]) -> list[Chunk]:
        """Return the chunks at ``rows``, in that order."""
        return self._store.by_rows(rows)

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
