"""Per-index knowledge the offline reasoner reuses across questions.

The gazetteer is built once per loaded index from its titles and headings, and the
features of each passage (mentions, qualifiers, words) are computed once and cached,
so a question only pays for the passages it touches for the first time.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sealgraph.ledger.extract import PassageFeatures, passage_features, proper_names
from sealgraph.ledger.gazetteer import Gazetteer, declared_aliases
from sealgraph.text import content_words, stem
from sealgraph.types import Chunk

if TYPE_CHECKING:  # pragma: no cover (sealgraph.index imports this module)
    from sealgraph.index.protocol import SearchIndex

# A proper name links passages when at most this many of them name it (the larger
# of an absolute floor and a share of the corpus).
_MIN_NAME_DF = 5
_NAME_DF_SHARE = 0.003

TABLES_FILE = "knowledge.json"
"""File of an index directory holding the corpus tables (see :func:`corpus_tables`)."""
TABLES_VERSION = 1
"""Version of the tables' content: bump it whenever :func:`sealgraph.text.stemmed_terms`
or :func:`sealgraph.ledger.extract.proper_names` change what they return, so tables
written by an older build are recomputed instead of trusted."""


def term_document_frequencies(chunks: Iterable[Chunk]) -> dict[str, int]:
    """Count the chunks whose title or text holds each stemmed word.

    A chunk's terms are ``stemmed_terms(chunk.title + " " + chunk.text)``.
    """
    df: dict[str, int] = {}
    # stemmed_terms computed per distinct word and remembered across chunks: the
    # same sets, but each word is stemmed once per corpus rather than at every
    # occurrence, and stemmed_terms' cache is not filled with every chunk's text.
    stems: dict[str, str] = {}
    for chunk in chunks:
        terms = set()
        for word in set(content_words(chunk.title + " " + chunk.text)):
            term = stems.get(word)
            if term is None:
                term = stems[word] = stem(word)
            terms.add(term)
        for t in terms:
            df[t] = df.get(t, 0) + 1
    return df


def name_document_frequencies(chunks: Iterable[Chunk]) -> dict[str, int]:
    """Count the chunks whose text writes each proper name (see ``proper_names``)."""
    df: dict[str, int] = {}
    for chunk in chunks:
        for k in {k for _, k in proper_names(chunk.text)}:
            df[k] = df.get(k, 0) + 1
    return df


def corpus_tables(chunks: Sequence[Chunk]) -> dict[str, Any]:
    """Corpus statistics the offline reasoner needs, computed once at index time.

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


def write_corpus_tables(path: Path, chunks: Sequence[Chunk]) -> None:
    """Write :func:`corpus_tables` as JSON (sorted keys: equal corpora, equal files)."""
    text = json.dumps(corpus_tables(chunks), sort_keys=True, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")


def _stored_tables(index: SearchIndex) -> dict[str, Any] | None:
    """Return the tables an index was built with, or None (older index, other version).

    The file was checksum-verified when the index was loaded; anything unexpected
    here only means the tables are recomputed from the chunks on first use.
    """
    files = index.manifest.get("files") or {}
    if TABLES_FILE not in files:
        return None
    try:
        tables = json.loads((index.path / TABLES_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if (
        not isinstance(tables, dict)
        or tables.get("version") != TABLES_VERSION
        or tables.get("n_chunks") != index.n_chunks
        or not isinstance(tables.get("term_df"), dict)
        or not isinstance(tables.get("name_df"), dict)
    ):
        return None
    return tables


class CorpusKnowledge:
    """Gazetteer, passage features and question relevance for one index.

    Args:
        index: A loaded index (:class:`sealgraph.index.Index`).

    """

    def __init__(self, index: SearchIndex) -> None:
        self.index = index
        titles = list(index.titles())
        self.doc_titles: dict[str, str] = dict(titles)
        headings = []
        for chunk_id, heading in index.headings():
            headings.append((index.get_chunk(chunk_id).doc_id, heading))
        aliases = []
        for doc_id, title in titles:
            first = index.doc_chunks(doc_id)[:1]
            if first:
                aliases.extend((doc_id, a) for a in declared_aliases(title, first[0].text))
        self.gazetteer = Gazetteer(titles, headings, aliases)
        self._features: dict[str, PassageFeatures] = {}
        # Built at index time when the index has them; else on first use.
        tables = _stored_tables(index)
        self._df: dict[str, int] | None = tables["term_df"] if tables else None
        self._name_df: dict[str, int] | None = tables["name_df"] if tables else None
        self._lock = threading.Lock()

    def features(self, chunk_ids: Sequence[str]) -> list[PassageFeatures]:
        """Return (cached) passage features for chunk ids, in order.

        Proper names are kept only when distinctive (see :meth:`distinctive_name`).
        """
        missing = [c for c in chunk_ids if c not in self._features]
        if missing:
            chunks = self.index.get_chunks(missing)
            computed = {}
            for c in chunks:
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
        hundreds links nothing. Name frequencies come from the index's stored tables
        (:data:`TABLES_FILE`), or are counted on first use (one pass over the chunks).
        """
        if self._name_df is None:
            df = name_document_frequencies(self.index.iter_chunks())
            with self._lock:
                self._name_df = df
        limit = max(_MIN_NAME_DF, _NAME_DF_SHARE * self.index.n_chunks)
        return self._name_df.get(key, 0) <= limit

    def idf(self, term: str) -> float:
        """Inverse document frequency of a stemmed word over the corpus's chunks.

        From the index's stored tables, or computed on first use (one pass over the
        chunks) and cached.
        """
        if self._df is None:
            df = term_document_frequencies(self.index.iter_chunks())
            with self._lock:
                self._df = df
        n = max(1, self.index.n_chunks)
        return math.log(1.0 + n / (1.0 + self._df.get(term, 0)))

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


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def knowledge_for(index: SearchIndex) -> CorpusKnowledge:
    """Return the shared :class:`CorpusKnowledge` of an index (built on first use)."""
    with _CACHE_LOCK:
        kn = _CACHE.get(index)
        if kn is None:
            kn = CorpusKnowledge(index)
            _CACHE[index] = kn
        return kn
