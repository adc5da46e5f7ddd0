"""The corpus's proper-name frequencies, counted at build time and kept in the docstore.

A table of the docstore, ``name_df`` (key, chunk count), holds the full counts of
:class:`sealgraph.text.statistics.CorpusCounts`; the manifest's
``statistics`` entry says which code and lexicon counted them. A build that adds
to or removes from an index whose tables are current updates them by the chunks
that came and went (:func:`counts_after`) instead of recounting the corpus; any
other build counts them from its chunks. Readers get a :class:`CorpusStatistics`
whose lookups are SQL queries with a bounded cache: nothing is loaded at open.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.index._counts import CachedCounts, RepeatedLines, is_current
from sealgraph.index.folder._gazetteer import StoredGazetteer
from sealgraph.index.folder._sqlite import connect_readonly
from sealgraph.text.lexicon import Lexicon
from sealgraph.text.lines import document_line_hashes, repeated_floor
from sealgraph.text.statistics import STATISTICS_VERSION, CorpusCounts, statistics_fingerprint
from sealgraph.types import Chunk

__all__ = [
    "CachedCounts",
    "CorpusStatistics",
    "DocumentFrequencies",
    "counts_after",
    "statistics_entry",
    "write_counts",
]

TABLES = {"names": "name_df"}
"""The docstore table of each kind of count."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS name_df ("key" TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS line_df (h INTEGER PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS line_df_n ON line_df (n);
"""
_BATCH = 500  # hashes per SQL lookup of the chunks that left


def statistics_entry(lex: Lexicon, n_chunks: int, docstore: Path) -> dict[str, Any]:
    """Return the manifest's ``statistics`` entry for tables counted now with ``lex``.

    ``n_documents`` (documents with at least one chunk, what the repeated-line
    share is taken of) is read from the finished ``docstore``.
    """
    conn = connect_readonly(docstore)
    try:
        (n_documents,) = conn.execute("SELECT COUNT(DISTINCT doc_id) FROM chunks").fetchone()
    finally:
        conn.close()
    return {
        "version": STATISTICS_VERSION,
        "code": statistics_fingerprint(),
        "lexicon": lex.fingerprint,
        "n_chunks": n_chunks,
        "n_documents": int(n_documents),
    }


def write_counts(
    conn: sqlite3.Connection,
    counts: CorpusCounts,
    lines: tuple[np.ndarray, np.ndarray] | None = None,
) -> None:
    """Write ``counts`` and the line counts ``lines`` (:func:`line_counts`) into a new docstore."""
    conn.executescript(_SCHEMA)
    with conn:
        for kind, table in TABLES.items():
            values: Counter[str] = getattr(counts, kind)
            conn.executemany(
                f'INSERT INTO {table} ("key", n) VALUES (?, ?)',
                ((key, values[key]) for key in sorted(values) if values[key] > 0),
            )
        hashes, numbers = lines if lines is not None else line_counts(())
        conn.executemany(
            "INSERT INTO line_df (h, n) VALUES (?, ?)",
            zip(hashes.tolist(), numbers.tolist(), strict=True),
        )


def line_counts(chunks: Sequence[Chunk]) -> tuple[np.ndarray, np.ndarray]:
    """Return each line hash of ``chunks`` and how many documents hold it (sorted by hash).

    A document's chunks are those with its id (in any order); a line counts once
    per document (:func:`sealgraph.text.lines.document_line_hashes`).
    """
    texts_of: dict[str, list[str]] = {}
    for chunk in chunks:
        texts_of.setdefault(chunk.doc_id, []).append(chunk.text)
    parts = [np.asarray(document_line_hashes(texts), dtype=np.int64) for texts in texts_of.values()]
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.unique(np.concatenate(parts), return_counts=True)


def update_line_counts(
    conn: sqlite3.Connection, came: Sequence[list[str]], gone: Sequence[list[str]]
) -> None:
    """Count the lines of documents that came in and those that went out.

    Each item is one document's chunk texts (a changed document is in both).
    """
    delta: Counter[int] = Counter()
    for texts in came:
        delta.update(document_line_hashes(texts))
    for texts in gone:
        delta.subtract(document_line_hashes(texts))
    conn.executemany(
        "INSERT INTO line_df (h, n) VALUES (?, ?) ON CONFLICT(h) DO UPDATE SET n = n + excluded.n",
        sorted((h, n) for h, n in delta.items() if n),
    )
    conn.execute("DELETE FROM line_df WHERE n <= 0")


def counts_after(
    chunks: Sequence[Chunk],
    hashes: Sequence[str],
    previous: Path | None,
    previous_entry: object,
    lex: Lexicon,
) -> CorpusCounts:
    """Return the counts of ``chunks``, updated from the previous docstore when it can be.

    ``previous`` is the docstore of the index being replaced (None for a new one)
    and ``previous_entry`` its manifest's ``statistics`` entry. When that docstore
    holds tables counted by this code and lexicon, the chunks that left (by content
    hash, with multiplicity) are subtracted and the chunks that came are added;
    otherwise every chunk is counted. Either way the result is the same counts.
    """
    counts = _stored_counts(previous) if previous and is_current(previous_entry, lex) else None
    if counts is None:
        counts = CorpusCounts()
        counts.add(c.text for c in chunks)
        return counts
    old = Counter(_stored_hashes(previous))
    new = Counter(hashes)
    gone, came = old - new, new - old
    counts.subtract(_stored_chunks(previous, gone))
    wanted = Counter(came)
    added = []
    for chunk, digest in zip(chunks, hashes, strict=True):
        if wanted[digest] > 0:
            wanted[digest] -= 1
            added.append(chunk.text)
    counts.add(added)
    return counts


def _stored_counts(docstore: Path) -> CorpusCounts | None:
    """Read the full counts of a docstore, or None when it has none (an older index)."""
    try:
        conn = connect_readonly(docstore)
    except sqlite3.Error:
        return None
    try:
        counts = CorpusCounts()
        for kind, table in TABLES.items():
            values: Counter[str] = getattr(counts, kind)
            values.update(dict(conn.execute(f'SELECT "key", n FROM {table}')))
        (counts.n_chunks,) = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
        return counts
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _stored_hashes(docstore: Path) -> Iterator[str]:
    conn = connect_readonly(docstore)
    try:
        yield from (h for (h,) in conn.execute("SELECT hash FROM chunks"))
    finally:
        conn.close()


def _stored_chunks(docstore: Path, wanted: Counter[str]) -> list[str]:
    """Texts of stored chunks with the given hashes, each as often as counted."""
    keys = sorted(wanted)
    out: list[str] = []
    conn = connect_readonly(docstore)
    try:
        for i in range(0, len(keys), _BATCH):
            batch = keys[i : i + _BATCH]
            marks = ",".join("?" * len(batch))
            rows = conn.execute(
                f'SELECT hash, text FROM chunks WHERE hash IN ({marks}) ORDER BY "row"',
                batch,
            )
            left = Counter({k: wanted[k] for k in batch})
            for digest, text in rows:
                if left[digest] > 0:
                    left[digest] -= 1
                    out.append(text)
    finally:
        conn.close()
    return out


class DocumentFrequencies(CachedCounts):
    """One table of counts, read by key from the docstore (a bounded cache in front)."""

    def __init__(self, docstore: Path, table: str, cache_size: int = 200_000) -> None:
        if table not in TABLES.values():
            raise ValueError(f"unknown statistics table {table!r}")
        super().__init__(cache_size)
        self._docstore = docstore
        self._table = table
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = connect_readonly(self._docstore)
        return conn

    def _count(self, key: str) -> int:
        row = (
            self._conn().execute(f'SELECT n FROM {self._table} WHERE "key" = ?', (key,)).fetchone()
        )
        return int(row[0]) if row else 0


class CorpusStatistics:
    """The counts an index was built with: how many chunks write each proper name.

    Attributes are documented at :class:`sealgraph.text.statistics.CorpusCounts`;
    here ``names`` is a :class:`DocumentFrequencies` read on demand.
    """

    def __init__(self, docstore: Path, entry: dict[str, Any], lex: Lexicon | None = None) -> None:
        self.n_chunks: int = int(entry["n_chunks"])
        """Chunks counted."""
        self.lexicon: str = str(entry["lexicon"])
        """Fingerprint of the lexicon they were counted with."""
        self.code: str = str(entry.get("code", ""))
        """Fingerprint of the code that counted them (for the record)."""
        self.names = DocumentFrequencies(docstore, TABLES["names"])
        """Proper-name key -> chunks writing it."""
        self.n_documents: int = int(entry.get("n_documents", 0))
        """Documents with at least one chunk."""
        self._docstore = docstore
        self._repeated: RepeatedLines | None = None
        self._lex = lex
        self._gazetteer: StoredGazetteer | None = None

    def gazetteer(self) -> StoredGazetteer | None:
        """Return the names of every document, as the reasoner's gazetteer reads them.

        None without the index's lexicon (the keys are that lexicon's).
        """
        if self._gazetteer is None and self._lex is not None:
            self._gazetteer = StoredGazetteer(self._docstore, self._lex)
        return self._gazetteer

    def repeated_lines(self) -> RepeatedLines:
        """Return the lines at least :func:`~sealgraph.text.lines.repeated_floor` documents hold."""
        if self._repeated is None:
            floor = repeated_floor(self.n_documents)
            conn = connect_readonly(self._docstore)
            try:
                found = {h for (h,) in conn.execute("SELECT h FROM line_df WHERE n >= ?", (floor,))}
            finally:
                conn.close()
            self._repeated = RepeatedLines(frozenset(found))
        return self._repeated
