"""The SQLite docstore: documents and chunks, with each chunk's dense row number.

``row`` (0..n-1) is the position of a chunk in the lexical and dense indexes.
Structured fields (section chain, sentence spans, metadata) are stored as JSON.
``document_files`` records the file each document was read from (absolute, symlinks
resolved), so documents can be removed by file or folder; documents given as objects
have none. Docstores written before it existed lack that table. ``names`` maps each
normalised title and section heading to its chunks (:func:`name_rows`), so looking a
name up needs no table built when the index opens.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.index.folder._gazetteer import (
    GazetteerRows,
    create_gazetteer_tables,
    rewrite_key_filter,
    write_gazetteer_rows,
)
from sealgraph.index.folder._sqlite import connect_readonly
from sealgraph.index.folder._statistics import line_counts, write_counts
from sealgraph.text.lexicon import Lexicon
from sealgraph.text.statistics import CorpusCounts
from sealgraph.types import Chunk, Document

DOCSTORE_FILE = "docstore.sqlite"

_SCHEMA = """
CREATE TABLE documents (
    doc_id   TEXT PRIMARY KEY,
    position INTEGER NOT NULL UNIQUE,
    title    TEXT NOT NULL,
    source   TEXT NOT NULL,
    metadata TEXT NOT NULL
);
CREATE TABLE chunks (
    chunk_id  TEXT PRIMARY KEY,
    "row"     INTEGER NOT NULL UNIQUE,
    doc_id    TEXT NOT NULL REFERENCES documents(doc_id),
    title     TEXT NOT NULL,
    section   TEXT NOT NULL,
    ord       INTEGER NOT NULL,
    "start"   INTEGER NOT NULL,
    "end"     INTEGER NOT NULL,
    text      TEXT NOT NULL,
    n_tokens  INTEGER NOT NULL,
    sentences TEXT NOT NULL,
    hash      TEXT NOT NULL
);
CREATE INDEX chunks_doc_ord ON chunks (doc_id, ord);
CREATE TABLE document_files (
    doc_id TEXT PRIMARY KEY REFERENCES documents(doc_id),
    path   TEXT NOT NULL,
    -- Room for the loaders' map from indexed-text offsets to offsets in the raw file
    -- (front matter, markup and normalisation moved them), NULL until one is recorded.
    offset_map TEXT
);
CREATE TABLE names (
    "key"    TEXT NOT NULL,
    rank     INTEGER NOT NULL,
    position INTEGER NOT NULL,
    chunk_id TEXT NOT NULL
);
CREATE INDEX names_key ON names ("key", rank, position);
"""


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """A document as stored (its text lives in its chunks)."""

    doc_id: str
    """Document id."""
    title: str
    """Document title."""
    source: str
    """Where it came from."""


def write_docstore(
    path: Path,
    documents: Sequence[Document],
    chunks: Sequence[Chunk],
    hashes: Sequence[str],
    files: Mapping[str, str] | None = None,
    *,
    name_key: Callable[[str], str],
    statistics: CorpusCounts | None = None,
    lex: Lexicon | None = None,
) -> None:
    """Create the docstore at ``path``; chunk ``i`` gets row ``i`` and ``hashes[i]``.

    ``files`` maps document ids to the file each was read from (ids of documents
    not in ``documents`` are ignored); ``name_key`` normalises a title or heading
    for the names table (:func:`sealgraph.text.names.normalize_name` with the index's
    lexicon); ``statistics`` are the corpus counts of ``chunks``
    (:mod:`sealgraph.index.folder._statistics`); with ``lex`` (the index's lexicon) the
    reasoner's gazetteer is written too (:mod:`sealgraph.index.folder._gazetteer`).
    """
    writer = DocstoreWriter(path, name_key, lex)
    try:
        writer.add(documents, chunks, hashes, files)
        writer.finish(statistics, line_counts(chunks) if statistics is not None else None)
    finally:
        writer.close()


class DocstoreWriter:
    """Writes a new docstore batch by batch: rows, positions and names go on across batches.

    Nothing of a batch is kept once it is written, so a build's memory does not grow
    with the corpus. The indexes are made once at :meth:`finish` (faster than keeping
    them up to date row by row); the file is the build's own until it is swapped in,
    so it is written without a journal.
    """

    def __init__(
        self, path: Path, name_key: Callable[[str], str], lex: Lexicon | None = None
    ) -> None:
        self._conn = sqlite3.connect(path)
        self._conn.execute("PRAGMA journal_mode = OFF")
        self._conn.execute("PRAGMA synchronous = OFF")  # the build fsyncs the folder at the end
        tables, _ = _split_schema()
        self._conn.executescript(tables)
        if lex is not None:
            create_gazetteer_tables(self._conn)
        self._name_key = name_key
        self._lex = lex
        self.n_rows = 0
        """Chunks written so far (the next chunk's row)."""
        self.n_documents = 0
        """Documents written so far (the next document's position)."""
        self._title_position = 0

    def add(
        self,
        documents: Sequence[Document | DocumentRow],
        chunks: Sequence[Chunk],
        hashes: Sequence[str],
        files: Mapping[str, str] | None = None,
        gazetteer: GazetteerRows | None = None,
    ) -> None:
        """Write documents and their chunks (in order; the chunks get the next rows).

        ``gazetteer`` are the documents' gazetteer rows when made already.
        """
        conn = self._conn
        conn.executemany(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?)",
            (
                (d.doc_id, self.n_documents + i, d.title, d.source, _dumps(_metadata(d)))
                for i, d in enumerate(documents)
            ),
        )
        conn.executemany(
            "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            chunk_rows(chunks, hashes, self.n_rows),
        )
        if files:
            conn.executemany(
                "INSERT INTO document_files (doc_id, path) VALUES (?, ?)",
                ((d.doc_id, files[d.doc_id]) for d in documents if d.doc_id in files),
            )
        names = list(
            name_rows_from(documents, chunks, self._name_key, self._title_position, self.n_rows)
        )
        conn.executemany(
            'INSERT INTO names ("key", rank, position, chunk_id) VALUES (?, ?, ?, ?)', names
        )
        if self._lex is not None:
            write_gazetteer_rows(conn, documents, chunks, self._lex, gazetteer)
        self._title_position += sum(1 for row in names if row[1] == 0)
        self.n_rows += len(chunks)
        self.n_documents += len(documents)

    def finish(
        self,
        statistics: CorpusCounts | None,
        lines: tuple[np.ndarray, np.ndarray] | None,
    ) -> None:
        """Write the corpus counts (when given), make the indexes, commit."""
        _, indexes = _split_schema()
        self._conn.executescript(indexes)
        if self._lex is not None:
            rewrite_key_filter(self._conn)
        self._conn.commit()
        if statistics is not None:
            write_counts(self._conn, statistics, lines)

    def close(self) -> None:
        """Close the file (what was not finished is not committed)."""
        self._conn.close()


def _metadata(doc: Document | DocumentRow) -> Any:
    return getattr(doc, "metadata", {})


def _split_schema() -> tuple[str, str]:
    """Return the schema's ``CREATE TABLE`` statements, and its ``CREATE INDEX`` statements."""
    statements = [s.strip() for s in _SCHEMA.split(";") if s.strip()]
    tables = ";\n".join(s for s in statements if not s.startswith("CREATE INDEX")) + ";"
    indexes = ";\n".join(s for s in statements if s.startswith("CREATE INDEX")) + ";"
    return tables, indexes


def chunk_rows(
    chunks: Sequence[Chunk], hashes: Sequence[str], first_row: int = 0
) -> Iterator[tuple[Any, ...]]:
    """Yield the ``chunks`` table's rows of ``chunks``; the i-th gets row ``first_row + i``."""
    for i, c in enumerate(chunks):
        yield (
            c.chunk_id,
            first_row + i,
            c.doc_id,
            c.title,
            _dumps(list(c.section)),
            c.order,
            c.start,
            c.end,
            c.text,
            c.n_tokens,
            _dumps([list(s) for s in c.sentences]),
            hashes[i],
        )


def name_rows_from(
    documents: Sequence[Document | DocumentRow],
    chunks: Sequence[Chunk],
    name_key: Callable[[str], str],
    first_position: int,
    first_row: int,
) -> Iterator[tuple[str, int, int, str]]:
    """Yield the rows of the ``names`` table: ``(key, rank, position, chunk_id)``.

    A name's chunks are, first (rank 0), every chunk of each document whose title has
    that key, documents in order; then (rank 1) every other chunk whose own section
    heading has that key, by row. Positions and rows go on from ``first_position`` and
    ``first_row`` (a batch or an add after other documents).
    """
    rows_of: dict[str, list[int]] = {}
    for row, chunk in enumerate(chunks):
        rows_of.setdefault(chunk.doc_id, []).append(row)
    titled: dict[str, set[str]] = {}
    position = first_position
    for doc in documents:
        key = name_key(doc.title)
        if not key:
            continue
        for row in rows_of.get(doc.doc_id, ()):
            titled.setdefault(key, set()).add(chunks[row].chunk_id)
            yield key, 0, position, chunks[row].chunk_id
            position += 1
    for row, chunk in enumerate(chunks):
        if chunk.section:
            key = name_key(chunk.section[-1])
            if key and chunk.chunk_id not in titled.get(key, ()):
                yield key, 1, first_row + row, chunk.chunk_id


def read_docstore(path: Path) -> tuple[list[DocumentRow], list[Chunk], list[str]]:
    """Return documents (by position), chunks and their content hashes (by row).

    Rows need not be 0..n-1: an index added to row by row has gaps where changed
    documents' old chunks were (:func:`read_rows` gives the rows).

    Raises:
        sqlite3.DatabaseError: The file is not a valid docstore.

    """
    conn = connect_readonly(path)
    try:
        documents = [
            DocumentRow(doc_id, title, source)
            for doc_id, title, source in conn.execute(
                "SELECT doc_id, title, source FROM documents ORDER BY position"
            )
        ]
        chunks: list[Chunk] = []
        hashes: list[str] = []
        query = (
            'SELECT "row", chunk_id, doc_id, title, section, ord, "start", "end", text, '
            'n_tokens, sentences, hash FROM chunks ORDER BY "row"'
        )
        for record in conn.execute(query):
            digest = record[-1]
            chunks.append(chunk_of_record(record[:-1]))
            hashes.append(digest)
        return documents, chunks, hashes
    finally:
        conn.close()


def read_documents(path: Path) -> list[Document]:
    """Return the stored documents (by position) with their full text and metadata.

    A document's text is the concatenation of its chunks, which tile it; so the
    documents of an index can be chunked again, with other settings or with new
    documents beside them.

    Raises:
        ValueError: A document's chunks do not tile its text.
        sqlite3.DatabaseError: The file is not a valid docstore.

    """
    conn = connect_readonly(path)
    try:
        pieces: dict[str, list[str]] = {}
        ends: dict[str, int] = {}
        for doc_id, start, end, text in conn.execute(
            'SELECT doc_id, "start", "end", text FROM chunks ORDER BY doc_id, ord'
        ):
            if start != ends.get(doc_id, 0) or end - start != len(text):
                raise ValueError(f"the chunks of document {doc_id!r} do not tile its text")
            pieces.setdefault(doc_id, []).append(text)
            ends[doc_id] = end
        return [
            Document(
                doc_id=doc_id,
                title=title,
                text="".join(pieces.get(doc_id, ())),
                source=source,
                metadata=json.loads(metadata),
            )
            for doc_id, title, source, metadata in conn.execute(
                "SELECT doc_id, title, source, metadata FROM documents ORDER BY position"
            )
        ]
    finally:
        conn.close()


_SOURCES_TABLE = """
CREATE TABLE IF NOT EXISTS source_files (
    path      TEXT PRIMARY KEY,
    sha256    TEXT NOT NULL,
    documents INTEGER NOT NULL
) WITHOUT ROWID
"""


def write_sources(path: Path, sources: Iterable[Mapping[str, Any]], *, replace: bool) -> None:
    """Record the files an index was read from (``path``, ``sha256``, ``documents``).

    With ``replace`` the table holds ``sources`` alone; else they are added to it,
    a file listed again taking its new record. (Indexes of earlier versions listed
    them in the manifest; a million-document index made that a 20 MB file to parse
    at every open.)
    """
    conn = sqlite3.connect(path)
    try:
        conn.execute(_SOURCES_TABLE)
        with conn:
            if replace:
                conn.execute("DELETE FROM source_files")
            conn.executemany(
                "INSERT OR REPLACE INTO source_files (path, sha256, documents) VALUES (?, ?, ?)",
                ((s["path"], s["sha256"], s["documents"]) for s in sources),
            )
    finally:
        conn.close()


def read_sources(path: Path) -> list[dict[str, Any]] | None:
    """Return the recorded source files, by path; None for a docstore that records none."""
    conn = connect_readonly(path)
    try:
        try:
            rows = conn.execute(
                "SELECT path, sha256, documents FROM source_files ORDER BY path"
            ).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise
        return [
            {"path": p, "sha256": h, "documents": n}
            for p, h, n in rows
            if isinstance(p, str) and isinstance(h, str) and type(n) is int
        ]
    finally:
        conn.close()


def read_document_ids(path: Path) -> list[str]:
    """Return the id of every stored document, by position."""
    conn = connect_readonly(path)
    try:
        return [d for (d,) in conn.execute("SELECT doc_id FROM documents ORDER BY position")]
    finally:
        conn.close()


def read_document_files(path: Path) -> dict[str, str] | None:
    """Return the file each stored document was read from, by document id.

    None for a docstore written before files were recorded (no such table).
    """
    conn = connect_readonly(path)
    try:
        try:
            rows = conn.execute("SELECT doc_id, path FROM document_files").fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise
        return dict(rows)
    finally:
        conn.close()


def read_chunk_hashes(path: Path) -> list[tuple[int, str]]:
    """Return ``(row, content hash)`` of every chunk, by row."""
    conn = connect_readonly(path)
    try:
        return [
            (int(r), h) for r, h in conn.execute('SELECT "row", hash FROM chunks ORDER BY "row"')
        ]
    finally:
        conn.close()


def read_rows(path: Path) -> list[int]:
    """Return the row of every chunk, in order (the row space may have gaps)."""
    return [row for row, _ in read_chunk_hashes(path)]


def dumps_json(value: Any) -> str:
    """Return ``value`` as the docstore writes JSON columns (sorted keys, any value)."""
    return _dumps(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def count_rows(path: Path) -> tuple[int, int]:
    """Return ``(documents, chunks)`` stored in the docstore at ``path``."""
    conn = connect_readonly(path)
    try:
        (n_docs,) = conn.execute("SELECT COUNT(*) FROM documents").fetchone()
        (n_chunks,) = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
        return int(n_docs), int(n_chunks)
    finally:
        conn.close()


def chunk_of_record(record: tuple) -> Chunk:
    """Return the chunk of a ``chunks`` row read with its row number first.

    The columns: ``row, chunk_id, doc_id, title, section, order, start, end, text,
    n_tokens, sentences``.
    """
    _, cid, doc_id, title, section, order, start, end, text, n_tokens, sentences = record
    return Chunk(
        chunk_id=cid,
        doc_id=doc_id,
        title=title,
        section=tuple(json.loads(section)),
        order=order,
        start=start,
        end=end,
        text=text,
        n_tokens=n_tokens,
        sentences=tuple((a, b) for a, b in json.loads(sentences)),
    )
