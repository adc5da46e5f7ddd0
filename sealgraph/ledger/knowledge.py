"""Per-index knowledge the offline reasoner reuses across questions.

A :class:`CorpusKnowledge` is made once per index by whoever holds the index: a
graph's run context (:class:`sealgraph.graph.context.RunContext`) or an evaluation.
Its gazetteer is read on demand from the names the index stored at build time (an
index that stored none has it derived from its titles, headings and first chunks),
and the features of each passage (mentions, qualifiers, words) are computed once and
cached, so a question only pays for the passages it touches for the first time.

The corpus tables (word and proper-name document frequencies, see
:func:`corpus_tables`) are read from the counts the index keeps
(:class:`sealgraph.index.protocol.CorpusStatisticsSource`). An index that keeps none
(or counted them otherwise) has them counted from its chunks on first use, once per
loaded index, and kept in the index directory's derived cache
(:mod:`sealgraph.index.derived`, strict JSON keyed by the index's build) so that the
next process over the same index reads them instead. Indexes built by earlier
versions, which stored the tables themselves (:data:`TABLES_FILE`), are still read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import threading
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sealgraph.index.derived import read_derived, write_derived
from sealgraph.ledger._need_items import need_items
from sealgraph.ledger.content_links import OPENING_CHARS, ContentNames
from sealgraph.ledger.extract import PassageFeatures, passage_features
from sealgraph.ledger.gazetteer import Gazetteer, declared_aliases
from sealgraph.ledger.periods import DocPeriod, document_period
from sealgraph.model import NeedItem, QuestionNeeds
from sealgraph.packing.scoring import repeated_lines
from sealgraph.text.chunking import indexed_text
from sealgraph.text.lexicon import active, lexicon_of, use_lexicon, words
from sealgraph.text.names import years_in
from sealgraph.text.statistics import CorpusCounts, statistics_fingerprint
from sealgraph.text.statistics import fingerprint_sources as statistics_sources
from sealgraph.types import Chunk

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.index.protocol import SearchIndex

# A proper name links passages when at most this many of them name it (the larger
# of an absolute floor and a share of the corpus).
_MIN_NAME_DF = 5
_NAME_DF_SHARE = 0.003

_NAME_WRITERS = 200
"""Chunks read to tell which documents write a name (:meth:`CorpusKnowledge.content_documents`)."""

TABLES_FILE = "knowledge.json"
"""File in which index builds of earlier versions stored the corpus tables (listed in
the index's manifest, so checksum-verified when the index is loaded); still read."""
TABLES_CACHE = "reasoner-tables.json"
"""Name of the corpus tables in the index's derived cache (:mod:`sealgraph.index.derived`)."""
TABLES_VERSION = 2
"""Version of the tables' content: bump it whenever what a count means changes, so
tables stored by an older version (:data:`TABLES_FILE`) are recomputed instead of
trusted. 2: words are counted over a chunk's indexed text (title, headings, text)
with the lexical tokenizer, as BM25 counts them. Cached tables are also keyed by the
source of the code that counts them (:func:`_code_fingerprint`)."""


def term_document_frequencies(chunks: Iterable[Chunk]) -> dict[str, int]:
    """Count the chunks whose indexed text holds each stemmed word, as BM25 counts them.

    A chunk's terms are the lexical tokens (stemmed content words) of its title,
    headings and text (:func:`sealgraph.text.chunking.indexed_text`): what an
    index's ``document_frequency`` returns.
    """
    stems: dict[str, str | None] = {}
    df: dict[str, int] = {}
    lex = active()
    stop = lex.stop_words
    for chunk in chunks:
        terms = set()
        for word in set(words(indexed_text(chunk))):
            term = stems.get(word, "")
            if term == "":
                term = stems[word] = None if word in stop else lex.stem(word)
            if term is not None:
                terms.add(term)
        for term in terms:
            df[term] = df.get(term, 0) + 1
    return df


def name_document_frequencies(chunks: Iterable[Chunk]) -> dict[str, int]:
    """Count the chunks whose text writes each proper name (see ``proper_names``)."""
    counts = CorpusCounts()
    counts.add(chunk.text for chunk in chunks)
    return dict(counts.names)


def corpus_tables(chunks: Sequence[Chunk]) -> dict[str, Any]:
    """Corpus statistics the offline reasoner needs, counted from the chunks.

    Word document frequencies (for IDF weights) and proper-name document
    frequencies (for :meth:`CorpusKnowledge.distinctive_name`). Names named in at
    most ``_MIN_NAME_DF`` chunks are left out: they are distinctive at any corpus size.

    Returns:
        A JSON-safe dict: ``version``, ``n_chunks``, ``term_df``, ``name_df``.

    """
    names = name_document_frequencies(chunks)
    return {
        "version": TABLES_VERSION,
        "n_chunks": len(chunks),
        "term_df": term_document_frequencies(chunks),
        "name_df": {k: v for k, v in names.items() if v > _MIN_NAME_DF},
    }


def index_tables(index: SearchIndex) -> dict[str, Any]:
    """Return the :func:`corpus_tables` of an index: stored, cached, or counted now.

    In order: the counts the index stored at build time (its ``statistics()``, read
    on demand: nothing is counted); the tables cached in the index's derived cache for this very build,
    code and lexicon; the tables an index of an earlier version was built with
    (:data:`TABLES_FILE`); or else the tables counted from the index's chunks (one
    pass over the corpus), which are then cached for the next process (best
    effort: an index directory that cannot be written is no error).
    """
    lexicon = lexicon_of(index)
    tables = _built_tables(index) or _cached_tables(index) or _stored_tables(index)
    if tables is None:
        with use_lexicon(lexicon):  # the index's words, stems and names
            tables = corpus_tables(list(index.iter_chunks()))
        write_derived(
            index,
            TABLES_CACHE,
            {"code": _code_fingerprint(), "lexicon": lexicon.fingerprint, "tables": tables},
        )
    return tables


def _built_tables(index: SearchIndex) -> dict[str, Any] | None:
    """Return the counts the index keeps (read on demand from it), or None.

    An index may offer ``statistics()`` (:meth:`sealgraph.index.Index.statistics`:
    proper-name counts made at build time with the index's lexicon, kept current by
    adds and removals) and ``document_frequency(term)`` (BM25's own counts of the
    same stemmed words).
    """
    read = getattr(index, "statistics", None)
    stats = read() if callable(read) else None
    frequency = getattr(index, "document_frequency", None)
    if stats is None or stats.n_chunks != index.n_chunks or not callable(frequency):
        return None
    return {
        "version": TABLES_VERSION,
        "n_chunks": stats.n_chunks,
        "term_df": _Frequencies(frequency),
        "name_df": stats.names,
    }


class _Frequencies:
    """Word frequencies read from an index's lexical part on demand, remembered."""

    def __init__(self, frequency: Any) -> None:
        self._frequency = frequency
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def get(self, term: str, default: int = 0) -> int:
        found = self._seen.get(term)
        if found is None:
            found = int(self._frequency(term))
            with self._lock:
                if len(self._seen) > 500_000:
                    self._seen.clear()
                self._seen[term] = found
        return found or default


def _cached_tables(index: SearchIndex) -> dict[str, Any] | None:
    """Return the tables of the derived cache, or None (none, another build, other code)."""
    cached = read_derived(index, TABLES_CACHE)
    if not isinstance(cached, dict) or cached.get("code") != _code_fingerprint():
        return None
    if cached.get("lexicon") != lexicon_of(index).fingerprint:
        return None  # counted with another lexicon's words and stems
    tables = cached.get("tables")
    return tables if _valid_tables(tables, index.n_chunks) else None


def _stored_tables(index: SearchIndex) -> dict[str, Any] | None:
    """Return the tables an index of an earlier version was built with, or None.

    The file was checksum-verified when the index was loaded; anything unexpected
    here only means the tables are recomputed from the chunks on first use.
    """
    files = index.manifest.get("files") or {}
    if TABLES_FILE not in files:
        return None
    try:
        tables = json.loads(
            (Path(index.path) / TABLES_FILE).read_text(encoding="utf-8"),
            parse_constant=_refuse_constant,
        )
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return tables if _valid_tables(tables, index.n_chunks) else None


def _valid_tables(tables: Any, n_chunks: int) -> bool:
    """Tell whether ``tables`` is what :func:`corpus_tables` returns for ``n_chunks`` chunks.

    Read back from a file, the tables are trusted only when every count is a
    non-negative integer of this version's tables: a damaged or foreign file
    must not change a question's weights, only cost a recount.
    """
    return (
        isinstance(tables, dict)
        and type(tables.get("version")) is int
        and tables["version"] == TABLES_VERSION
        and type(tables.get("n_chunks")) is int
        and tables["n_chunks"] == n_chunks
        and _valid_counts(tables.get("term_df"))
        and _valid_counts(tables.get("name_df"))
    )


def _valid_counts(table: Any) -> bool:
    return isinstance(table, dict) and all(type(v) is int and v >= 0 for v in table.values())


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def fingerprint_sources() -> list[Path]:
    """Return the source files whose code decides what the corpus tables count."""
    return [*statistics_sources(), Path(__file__).resolve()]


@functools.cache
def _code_fingerprint() -> str:
    """Digest of the code the tables are counted with (this module's included).

    The words, stems and proper names a table counts are what this sealgraph's
    text, lexicon and statistics code make of the chunks; cached tables counted by
    other code are recounted rather than trusted (a version number is easily
    forgotten). Unreadable sources (a zipped install) count as empty.
    """
    digest = hashlib.sha256(f"{TABLES_VERSION}:{statistics_fingerprint()}".encode())
    with contextlib.suppress(OSError):
        digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()


_ITEMS_KEPT = 256
"""N(q)s whose need items a corpus keeps (a served graph answers many questions)."""


class CorpusKnowledge:
    """Gazetteer, passage features and question relevance for one index.

    Args:
        index: A loaded index (:class:`sealgraph.index.Index`).

    """

    def __init__(self, index: SearchIndex) -> None:
        self.index = index
        self.lexicon = lexicon_of(index)
        """The lexicon the gazetteer and the passage features are read with."""
        with use_lexicon(self.lexicon):
            self._read_names(index)
        self._features: dict[str, PassageFeatures] = {}
        self._doc_years: dict[str, frozenset[str]] = {}
        self._doc_periods: dict[str, DocPeriod] = {}
        self._content_names: ContentNames | None = None  # read on first use
        self._tables: dict[str, Any] | None = None  # index_tables(index), on first use
        self._common_lines: Container[str] | None = None  # repeated lines, on first use
        self._items: dict[tuple[QuestionNeeds, str], tuple[NeedItem, ...]] = {}
        self._lock = threading.Lock()
        self._tables_lock = threading.Lock()

    def _read_names(self, index: SearchIndex) -> None:
        stored = _stored_gazetteer(index)
        if stored is not None:  # written at index time: read on demand
            self.doc_titles: Mapping[str, str] = _StoredTitles(stored)
            self.gazetteer = Gazetteer.over(stored)
            return
        titles = list(index.titles())
        self.doc_titles = dict(titles)
        aliases = []
        for doc_id, first_text in _first_chunk_texts(index):
            aliases.extend(
                (doc_id, a) for a in declared_aliases(self.doc_titles[doc_id], first_text)
            )
        self.gazetteer = Gazetteer(titles, _document_headings(index), aliases)

    def tables(self) -> dict[str, Any]:
        """Return the corpus tables (:func:`index_tables`), obtained once per instance.

        Concurrent first calls wait for one count instead of each making its own.
        """
        tables = self._tables
        if tables is None:
            with self._tables_lock:
                if self._tables is None:
                    self._tables = index_tables(self.index)
                tables = self._tables
        return tables

    @property
    def common_lines(self) -> Container[str]:
        """Keys of the lines many documents repeat: navigation, footers.

        Read from the counts the index keeps (its ``statistics()``), else counted
        once per instance (:func:`sealgraph.packing.scoring.repeated_lines`).
        """
        lines = self._common_lines
        if lines is None:
            with self._tables_lock:
                if self._common_lines is None:
                    built = _built_lines(self.index)  # (may be empty: no line repeats)
                    self._common_lines = (
                        built if built is not None else repeated_lines(self.index.iter_chunks())
                    )
                lines = self._common_lines
        return lines

    def doc_years(self, doc_id: str) -> frozenset[str]:
        """Return the four-digit years a document writes (cached per document)."""
        got = self._doc_years.get(doc_id)
        if got is None:
            got = frozenset().union(*(years_in(c.text) for c in self.index.doc_chunks(doc_id)))
            with self._lock:
                self._doc_years[doc_id] = got
        return got

    def opening(self, doc_id: str) -> str:
        """Return a document's opening: its first chunks' text, up to ``OPENING_CHARS``."""
        parts: list[str] = []
        size = 0
        for chunk in self.index.doc_chunks(doc_id):
            parts.append(chunk.text)
            size += len(chunk.text)
            if size >= OPENING_CHARS:
                break
        return "\n".join(parts)[:OPENING_CHARS]

    def doc_period(self, doc_id: str) -> DocPeriod:
        """Return the period a document covers (:func:`~sealgraph.ledger.periods.document_period`).

        Cached per document.
        """
        got = self._doc_periods.get(doc_id)
        if got is None:
            with use_lexicon(self.lexicon):
                got = document_period(doc_id, self.doc_titles.get(doc_id, ""), self.opening(doc_id))
            with self._lock:
                self._doc_periods[doc_id] = got
        return got

    def content_documents(self, key: str) -> tuple[str, ...]:
        """Return the documents whose opening gives the name ``key`` on a line of its own.

        The openings of every document are read once, on the first call
        (:class:`~sealgraph.ledger.content_links.ContentNames`). None when more of
        the documents that write the name (among its best lexical matches) do not give
        it on their opening than do: then it is a term of theirs, not their name.
        """
        names = self._content_names
        if names is None:
            with self._tables_lock:
                if self._content_names is None:
                    with use_lexicon(self.lexicon):
                        self._content_names = ContentNames.read(
                            (doc_id, self.opening(doc_id)) for doc_id, _ in self.index.titles()
                        )
                names = self._content_names
        docs = names.documents(key)
        if not docs:
            return docs
        # A cover's name is the documents' own: most documents that write it at all
        # give it on their cover. "CONFIDENTIAL INFORMATION", a heading in capitals
        # in some agreements and a term of every one, names none of them.
        with use_lexicon(self.lexicon):
            hits = self.index.search_lexical(key, _NAME_WRITERS)
        writers = {c.doc_id for c in self.index.get_chunks([h.chunk_id for h in hits])}
        return docs if len(writers - set(docs)) <= len(docs) else ()

    def features(self, chunk_ids: Sequence[str]) -> list[PassageFeatures]:
        """Return (cached) passage features for chunk ids, in order.

        Proper names are kept only when distinctive (see :meth:`distinctive_name`).
        """
        missing = [c for c in chunk_ids if c not in self._features]
        if missing:
            chunks = self.index.get_chunks(missing)
            computed = {}
            for c in chunks:
                with use_lexicon(self.lexicon):
                    f = passage_features(c, self.gazetteer)
                # A name with a page of its own links through the gazetteer already.
                names = tuple(
                    n for n in f.names if n[1] not in self.gazetteer and self.distinctive_name(n[1])
                )
                computed[c.chunk_id] = dataclasses.replace(f, names=names)
            with self._lock:
                self._features.update(computed)
        return [self._features[c] for c in chunk_ids]

    def distinctive_name(self, key: str) -> bool:
        """Tell whether a proper name is rare enough in the corpus to link passages.

        "Ines Varga" named in three passages links them; "United States" named in
        hundreds links nothing. Name frequencies come from the corpus tables
        (:meth:`tables`).
        """
        limit = max(_MIN_NAME_DF, _NAME_DF_SHARE * self.index.n_chunks)
        return self.tables()["name_df"].get(key, 0) <= limit

    def document_frequency(self, term: str) -> int:
        """Chunks of the corpus whose text holds a stemmed word (from :meth:`tables`)."""
        return int(self.tables()["term_df"].get(term, 0))

    def idf(self, term: str) -> float:
        """Inverse document frequency of a stemmed word over the corpus's chunks.

        Word frequencies come from the corpus tables (:meth:`tables`).
        """
        n = max(1, self.index.n_chunks)
        return math.log(1.0 + n / (1.0 + self.tables()["term_df"].get(term, 0)))

    def need_items(self, needs: QuestionNeeds) -> list[NeedItem]:
        """N(q)'s need items, words weighted by :meth:`idf`: computed once per needs.

        Every node of a run (and every branch of a fan-out) asks for the items of the
        same N(q); they change only when N(q) does, so they are kept by its value (and
        the active lexicon's name, which reads their words) instead of rebuilt per node.
        """
        key = (needs, active().name)
        try:
            items = self._items.get(key)
        except TypeError:  # N(q) of an unhashable kind (a caller's own): not kept
            return need_items(needs, self.idf)
        if items is None:
            items = tuple(need_items(needs, self.idf))
            if len(self._items) >= _ITEMS_KEPT:
                self._items.clear()  # a long-lived graph serves many questions
            self._items[key] = items
        return list(items)

    def relevance(self, question: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        """Question relevance of each chunk in [0, 1].

        BM25 scores are divided by the best score in the set; with dense vectors,
        the average with the clipped cosine similarity is taken.
        """
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        lex = np.asarray(self.index.score_lexical(question, ids), dtype=np.float64)
        top = float(lex.max()) if lex.size else 0.0
        rel = lex / top if top > 0 else np.zeros(len(ids))
        if self.index.has_dense:
            qv = self.index.embed_query(question)
            vecs = self.index.chunk_vectors(ids)
            if qv is not None and vecs is not None:
                cos = np.clip(vecs @ qv, 0.0, 1.0)
                rel = 0.5 * rel + 0.5 * cos
        return {c: float(round(r, 6)) for c, r in zip(ids, rel, strict=True)}


def _stored_gazetteer(index: SearchIndex) -> Any:
    """Return the gazetteer tables an index stored at build time, or None.

    An index's ``statistics()`` may offer ``gazetteer()`` (see
    :class:`sealgraph.index.protocol.CorpusStatisticsSource`); None when the index
    holds none or its counts are stale.
    """
    read = getattr(index, "statistics", None)
    stats = read() if callable(read) else None
    tables = getattr(stats, "gazetteer", None)
    return tables() if callable(tables) else None


class _StoredTitles(Mapping[str, str]):
    """Document titles read one at a time from the stored gazetteer (a mapping by id)."""

    def __init__(self, stored: Any) -> None:
        self._stored = stored

    def __getitem__(self, doc_id: str) -> str:
        title = self._stored.title(doc_id)
        if title is None:
            raise KeyError(doc_id)
        return title

    def __iter__(self) -> Iterator[str]:
        return (doc_id for doc_id, _ in self._stored.titles())

    def __len__(self) -> int:
        return self._stored.n_documents()


def _document_headings(index: SearchIndex) -> list[tuple[str, str]]:
    """``(doc_id, heading)`` of the chunks with one: in one query where the index can."""
    bulk = getattr(index, "document_headings", None)
    if callable(bulk):
        return list(bulk())
    return [(index.get_chunk(chunk_id).doc_id, heading) for chunk_id, heading in index.headings()]


def _first_chunk_texts(index: SearchIndex) -> list[tuple[str, str]]:
    """``(doc_id, first chunk's text)`` of each document: in one query where the index can."""
    bulk = getattr(index, "first_chunk_texts", None)
    if callable(bulk):
        return list(bulk())
    out = []
    for doc_id, _title in index.titles():
        first = index.doc_chunks(doc_id)[:1]
        if first:
            out.append((doc_id, first[0].text))
    return out


def _built_lines(index: SearchIndex) -> Container[str] | None:
    """Return the repeated lines of the counts an index keeps, or None when it keeps none."""
    read = getattr(index, "statistics", None)
    stats = read() if callable(read) else None
    lines = getattr(stats, "repeated_lines", None)
    return lines() if callable(lines) else None
