"""Per-index knowledge the offline reasoner reuses across questions.

The gazetteer is built once per loaded index from its titles and headings, and the
features of each passage (mentions, qualifiers, words) are computed once and cached,
so a question only pays for the passages it touches for the first time.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import weakref
from collections.abc import Sequence

import numpy as np

from sealgraph.ledger.extract import PassageFeatures, passage_features, proper_names
from sealgraph.ledger.gazetteer import Gazetteer, declared_aliases
from sealgraph.text import stemmed_terms

# A proper name links passages when at most this many of them name it (the larger
# of an absolute floor and a share of the corpus).
_MIN_NAME_DF = 5
_NAME_DF_SHARE = 0.003


class CorpusKnowledge:
    """Gazetteer, passage features and question relevance for one index.

    Args:
        index: A loaded :class:`sealgraph.index.Index`.

    """

    def __init__(self, index) -> None:
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
        self._df: dict[str, int] | None = None
        self._name_df: dict[str, int] | None = None
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

        "Amy Poehler" named in three passages links them; "United States" named in
        hundreds links nothing. Name frequencies are counted on first use (one pass
        over the chunks) and cached.
        """
        if self._name_df is None:
            df: dict[str, int] = {}
            for chunk in self.index.iter_chunks():
                for k in {k for _, k in proper_names(chunk.text)}:
                    df[k] = df.get(k, 0) + 1
            with self._lock:
                self._name_df = df
        limit = max(_MIN_NAME_DF, _NAME_DF_SHARE * self.index.n_chunks)
        return self._name_df.get(key, 0) <= limit

    def idf(self, term: str) -> float:
        """Inverse document frequency of a stemmed word over the corpus's chunks.

        Computed on first use (one pass over the chunks) and cached.
        """
        if self._df is None:
            df: dict[str, int] = {}
            for chunk in self.index.iter_chunks():
                for t in stemmed_terms(chunk.title + " " + chunk.text):
                    df[t] = df.get(t, 0) + 1
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


def knowledge_for(index) -> CorpusKnowledge:
    """Return the shared :class:`CorpusKnowledge` of an index (built on first use)."""
    with _CACHE_LOCK:
        kn = _CACHE.get(index)
        if kn is None:
            kn = CorpusKnowledge(index)
            _CACHE[index] = kn
        return kn
