"""The offline reasoner's gazetteer, written into the docstore at index time.

Every document's names (title, its aliases, the names its opening text declares,
its headings; :func:`sealgraph.text.aliases.document_names`) are rows of the
``gazetteer`` table, ``(key, doc_id, rank)``, and its title's words rows of
``title_words``: one document's rows depend on that document alone, so an add or a
removal deletes and writes the rows of the documents that changed. A sorted array of
64-bit hashes of every key (``gazetteer_keys``, rewritten by each build, add or
removal) tells a reader which of a text's word n-grams may be names without a query
per n-gram. :class:`StoredGazetteer` reads it all on demand: nothing is loaded when
the index opens, and the first question no longer derives the gazetteer from every
title and heading of the corpus.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.errors import IndexCorruptError
from sealgraph.index.folder._sqlite import connect_readonly
from sealgraph.text.aliases import KIND_OF_RANK, document_names, title_aliases, title_words
from sealgraph.text.lexicon import Lexicon, use_lexicon
from sealgraph.types import Chunk

__all__ = [
    "GazetteerRows",
    "StoredGazetteer",
    "create_gazetteer_tables",
    "delete_gazetteer_rows",
    "key_hash",
    "rewrite_key_filter",
    "write_gazetteer_rows",
]

MAX_KEY_WORDS = 16
"""Longest name, in words, a reader matches (:data:`sealgraph.ledger.gazetteer.MAX_KEY_WORDS`)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS gazetteer (
    "key"  TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    rank   INTEGER NOT NULL,
    PRIMARY KEY ("key", doc_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS gazetteer_doc ON gazetteer (doc_id);
CREATE TABLE IF NOT EXISTS title_words (
    file_name INTEGER NOT NULL,
    word      TEXT NOT NULL,
    doc_id    TEXT NOT NULL,
    PRIMARY KEY (file_name, word, doc_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS title_words_doc ON title_words (doc_id);
CREATE TABLE IF NOT EXISTS gazetteer_keys (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    hashes    BLOB NOT NULL,
    n_keys    INTEGER NOT NULL,
    max_words INTEGER NOT NULL
);
"""


def create_gazetteer_tables(conn: sqlite3.Connection) -> None:
    """Create the gazetteer tables where they are missing (commits what is pending)."""
    conn.executescript(SCHEMA)


def key_hash(key: str) -> int:
    """Return a stable signed 64-bit hash of a key (BLAKE2b; the same in every process)."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


GazetteerRows = tuple[list[tuple[str, str, int]], list[tuple[int, str, str]]]
"""Rows of the ``gazetteer`` table ``(key, doc_id, rank)`` and of ``title_words``
``(file_name, word, doc_id)``."""


def document_rows(documents: Iterable[Any], chunks: Sequence[Chunk], lex: Lexicon) -> GazetteerRows:
    """Return the ``gazetteer`` and ``title_words`` rows of ``documents``.

    ``chunks`` holds the documents' chunks (in row order); a document's first chunk
    (lowest order) may declare aliases, each chunk's own heading names the document.
    """
    first: dict[str, Chunk] = {}
    headings: dict[str, list[str]] = {}
    for chunk in chunks:
        seen = first.get(chunk.doc_id)
        if seen is None or chunk.order < seen.order:
            first[chunk.doc_id] = chunk
        if chunk.section:
            headings.setdefault(chunk.doc_id, []).append(chunk.section[-1])
    entries: list[tuple[str, str, int]] = []
    words: list[tuple[int, str, str]] = []
    with use_lexicon(lex):
        for doc in documents:
            lead = first.get(doc.doc_id)
            ranked = document_names(
                doc.title, lead.text if lead is not None else "", headings.get(doc.doc_id, ())
            )
            entries.extend((key, doc.doc_id, rank) for key, rank in ranked.items())
            title_tokens, file_name = title_words(doc.title)
            words.extend((int(file_name), w, doc.doc_id) for w in dict.fromkeys(title_tokens))
    return entries, words


def write_gazetteer_rows(
    conn: sqlite3.Connection,
    documents: Iterable[Any],
    chunks: Sequence[Chunk],
    lex: Lexicon,
    rows: GazetteerRows | None = None,
) -> None:
    """Write the gazetteer rows of ``documents`` (whose rows must not be there yet).

    ``rows`` are those rows made already (by a build's worker), else they are made here.
    """
    entries, words = rows if rows is not None else document_rows(documents, chunks, lex)
    conn.executemany('INSERT INTO gazetteer ("key", doc_id, rank) VALUES (?, ?, ?)', entries)
    conn.executemany(
        "INSERT OR IGNORE INTO title_words (file_name, word, doc_id) VALUES (?, ?, ?)", words
    )


def delete_gazetteer_rows(conn: sqlite3.Connection, doc_ids: Sequence[str]) -> None:
    """Delete the gazetteer rows of the documents ``doc_ids``."""
    for i in range(0, len(doc_ids), 500):
        part = list(doc_ids[i : i + 500])
        marks = ",".join("?" * len(part))
        conn.execute(f"DELETE FROM gazetteer WHERE doc_id IN ({marks})", part)
        conn.execute(f"DELETE FROM title_words WHERE doc_id IN ({marks})", part)


def rewrite_key_filter(conn: sqlite3.Connection) -> None:
    """Write the sorted hashes of every key in the ``gazetteer`` table, and its longest key."""
    hashes: list[int] = []
    longest = 1
    for (key,) in conn.execute('SELECT DISTINCT "key" FROM gazetteer'):
        hashes.append(key_hash(key))
        longest = max(longest, key.count(" ") + 1)
    array = np.unique(np.asarray(hashes, dtype="<i8"))
    conn.execute("DELETE FROM gazetteer_keys")
    conn.execute(
        "INSERT INTO gazetteer_keys (id, hashes, n_keys, max_words) VALUES (1, ?, ?, ?)",
        (array.tobytes(), len(hashes), min(MAX_KEY_WORDS, longest)),
    )


class StoredGazetteer:
    """The gazetteer tables of a docstore, read on demand (a bounded cache in front).

    Implements :class:`sealgraph.ledger.gazetteer.GazetteerTables`. Title keys are
    derived from a document's stored title with the index's lexicon ``lex``.
    """

    def __init__(self, docstore: Path, lex: Lexicon, cache_size: int = 100_000) -> None:
        self._docstore = docstore
        self._lex = lex
        self._local = threading.local()
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, Any], Any] = OrderedDict()
        self._cache_size = cache_size
        self._hashes: np.ndarray | None = None
        self._n_keys = 0
        self._max_words = 1

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = connect_readonly(self._docstore)
        return conn

    def _filter(self) -> np.ndarray:
        """Return the sorted key hashes, read once (checked: an index is data)."""
        if self._hashes is None:
            try:
                row = (
                    self._conn()
                    .execute("SELECT hashes, n_keys, max_words FROM gazetteer_keys WHERE id = 1")
                    .fetchone()
                )
            except sqlite3.Error as exc:
                raise IndexCorruptError(f"damaged gazetteer in {self._docstore}: {exc}") from None
            blob, n_keys, max_words = row if row else (b"", 0, 1)
            ok = (
                isinstance(blob, bytes)
                and len(blob) % 8 == 0
                and type(n_keys) is int
                and type(max_words) is int
                and 1 <= max_words <= MAX_KEY_WORDS
            )
            hashes = np.frombuffer(blob, dtype="<i8") if ok else np.zeros(0, "<i8")
            if not ok or len(hashes) != n_keys or np.any(hashes[1:] <= hashes[:-1]):
                raise IndexCorruptError(f"damaged gazetteer in {self._docstore}: bad key filter")
            self._n_keys, self._max_words = n_keys, max_words
            self._hashes = hashes
        return self._hashes

    @property
    def max_words(self) -> int:
        """Words of the longest key."""
        self._filter()
        return self._max_words

    def __len__(self) -> int:
        self._filter()
        return self._n_keys

    def known(self, keys: Sequence[str]) -> set[str]:
        """Keys whose hash is a stored key's (all the stored keys among them)."""
        hashes = self._filter()
        if not keys or not len(hashes):
            return set()
        wanted = np.fromiter((key_hash(k) for k in keys), dtype=np.int64, count=len(keys))
        at = np.minimum(np.searchsorted(hashes, wanted), len(hashes) - 1)
        hit = hashes[at] == wanted
        return {k for k, h in zip(keys, hit.tolist(), strict=True) if h}

    def entry(self, key: str) -> tuple[tuple[str, ...], str] | None:
        """``(doc_ids, kind)`` of the key's most reliable kind, or None."""
        return self._cached(("entry", key), lambda: self._entry(key))

    def _entry(self, key: str) -> tuple[tuple[str, ...], str] | None:
        rows = (
            self._conn()
            .execute('SELECT doc_id, rank FROM gazetteer WHERE "key" = ?', (key,))
            .fetchall()
        )
        ranks = [r for _, r in rows if type(r) is int and r in KIND_OF_RANK]
        if not ranks:
            return None
        best = min(ranks)
        return tuple(sorted(d for d, r in rows if r == best)), KIND_OF_RANK[best]

    def title(self, doc_id: str) -> str | None:
        """Return the stored title of a document; None for an unknown document."""
        return self._cached(("title", doc_id), lambda: self._title(doc_id))

    def _title(self, doc_id: str) -> str | None:
        row = (
            self._conn()
            .execute("SELECT title FROM documents WHERE doc_id = ?", (doc_id,))
            .fetchone()
        )
        return row[0] if row is not None and isinstance(row[0], str) else None

    def titles(self) -> Iterator[tuple[str, str]]:
        """``(doc_id, title)`` of every document, in document order, streamed."""
        conn = self._conn()
        yield from conn.execute("SELECT doc_id, title FROM documents ORDER BY position")

    def n_documents(self) -> int:
        """Return the number of documents."""
        return self._cached(
            ("count", ""),
            lambda: int(self._conn().execute("SELECT COUNT(*) FROM documents").fetchone()[0]),
        )

    def title_key(self, doc_id: str) -> str | None:
        """Return the key of the document's title (its first alias), from its stored title."""
        return self._cached(("title_key", doc_id), lambda: self._title_key(doc_id))

    def _title_key(self, doc_id: str) -> str | None:
        title = self.title(doc_id)
        if title is None:
            return None
        with use_lexicon(self._lex):
            aliases = title_aliases(title)
        return aliases[0][0] if aliases else None

    def in_titles(self, words: Sequence[str], *, file_names_only: bool) -> tuple[str, ...]:
        """Sorted ids of the documents whose title words hold every word of ``words``."""
        wanted = tuple(words)
        return self._cached(
            ("titles", (wanted, file_names_only)), lambda: self._in_titles(wanted, file_names_only)
        )

    def _in_titles(self, words: tuple[str, ...], file_names_only: bool) -> tuple[str, ...]:
        kinds = (1,) if file_names_only else (0, 1)
        marks = ",".join("?" * len(kinds))
        docs: set[str] | None = None
        for word in words:
            found = set(self._docs_holding(word, kinds, marks))
            docs = found if docs is None else docs & found
            if not docs:
                return ()
        return tuple(sorted(docs or ()))

    def _docs_holding(self, word: str, kinds: tuple[int, ...], marks: str) -> Iterator[str]:
        """Documents with ``word`` as a title word, or glued inside one (see ``word_in_title``)."""
        conn = self._conn()
        query = f"SELECT doc_id FROM title_words WHERE file_name IN ({marks}) AND word = ?"
        yield from (d for (d,) in conn.execute(query, (*kinds, word)))
        if len(word) >= 3:
            query = (
                f"SELECT doc_id FROM title_words WHERE file_name IN ({marks}) "
                "AND length(word) >= ? AND instr(word, ?) > 0"
            )
            yield from (d for (d,) in conn.execute(query, (*kinds, len(word) + 4, word)))

    def _cached(self, key: tuple[str, Any], compute: Any) -> Any:
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        value = compute()
        with self._lock:
            self._cache[key] = value
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return value
