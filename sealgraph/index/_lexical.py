"""BM25 over chunk text with a deterministic tokenizer, persisted without pickle.

bm25s stores its index as a CSC matrix of precomputed term scores (``.npy``
written with ``allow_pickle=False``) plus JSON vocabulary and parameters, so its
own ``save``/``load`` is pickle-free; we never pass it a corpus, so it writes no
corpus file either.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sealgraph.text.lexicon import Lexicon, active, words

LEXICAL_DIR = "lexical"
BM25_PARAMS = {"method": "lucene", "k1": 1.2, "b": 0.75}
"""BM25 variant and parameters (the common Lucene defaults)."""
# Files bm25s writes for our index (it writes no corpus file when none is given).
LEXICAL_FILES = (
    "data.csc.index.npy",
    "indices.csc.index.npy",
    "indptr.csc.index.npy",
    "vocab.index.json",
    "params.index.json",
)

# bm25s logs through the root logger at import on some versions; keep it quiet.
logging.getLogger("bm25s").setLevel(logging.WARNING)


def tokenizer_version(lexicon: Lexicon | None = None) -> str:
    """Version of :func:`lexical_tokens` with ``lexicon`` (the active one by default).

    It is the lexicon's :attr:`~sealgraph.text.lexicon.Lexicon.tokenizer_version` (its
    name, its Snowball stemmer and a digest of its stop words and irregular forms);
    an index built with another version has its lexical part rebuilt.
    """
    return (lexicon or active()).tokenizer_version


def lexical_tokens(text: str, lexicon: Lexicon | None = None) -> list[str]:
    """Tokenize for BM25: folded words, stop words dropped, stemmed (the lexicon's)."""
    lex = lexicon or active()
    stop = lex.stop_words
    return [lex.stem(w) for w in words(text) if w not in stop]


class LexicalIndex:
    """A BM25 index whose documents are addressed by their row (0..n-1)."""

    def __init__(self, bm25, lexicon: Lexicon | None = None) -> None:
        self._bm25 = bm25
        self.lexicon = lexicon or active()
        """The lexicon whose tokenizer built the index and reads queries."""
        self._vocab: dict[str, int] = bm25.vocab_dict
        self.n_docs = int(bm25.scores["num_docs"])

    @classmethod
    def build(cls, texts: Sequence[str], lexicon: Lexicon | None = None) -> LexicalIndex:
        """Index ``texts`` with ``lexicon`` (the active one by default); row i is ``texts[i]``."""
        import bm25s

        lex = lexicon or active()
        stop = lex.stop_words
        # Build the vocabulary ourselves in first-seen order so that the files
        # are identical across runs (bm25s would iterate a set of strings, whose
        # order changes with the hash seed). Token id 0 is a never-used sentinel
        # so that a corpus of stopwords only still gives a valid index.
        vocab: dict[str, int] = {"": 0}
        # Vocabulary id of each folded word (-1 for a stopword): the same as
        # lexical_tokens, but each distinct word is stemmed once, not at every
        # occurrence (most of the cost on a large corpus).
        word_ids: dict[str, int] = {}
        corpus_ids = []
        for text in texts:
            ids = []
            for word in words(text):
                token_id = word_ids.get(word)
                if token_id is None:
                    token_id = -1 if word in stop else vocab.setdefault(lex.stem(word), len(vocab))
                    word_ids[word] = token_id
                if token_id >= 0:
                    ids.append(token_id)
            corpus_ids.append(ids)
        bm25 = bm25s.BM25(**BM25_PARAMS)
        bm25.index((corpus_ids, vocab), create_empty_token=False, show_progress=False)
        return cls(bm25, lex)

    def save(self, directory: Path) -> None:
        """Write the index files into ``directory``."""
        self._bm25.save(str(directory), allow_pickle=False, show_progress=False)

    @classmethod
    def load(cls, directory: Path, lexicon: Lexicon | None = None) -> LexicalIndex:
        """Read an index written by :meth:`save` with ``lexicon``'s tokenizer."""
        import bm25s

        bm25 = bm25s.BM25.load(
            str(directory), allow_pickle=False, load_corpus=False, show_progress=False
        )
        return cls(bm25, lexicon)

    def query_ids(self, query: str) -> np.ndarray:
        """Vocabulary ids of the query's distinct known tokens, in query order."""
        seen: dict[int, None] = {}
        for token in lexical_tokens(query, self.lexicon):
            token_id = self._vocab.get(token)
            if token_id is not None:
                seen.setdefault(token_id, None)
        return np.fromiter(seen, dtype=np.int64, count=len(seen))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of ``query`` against every row (zeros when no token is known)."""
        ids = self.query_ids(query)
        if ids.size == 0:
            return np.zeros(self.n_docs, dtype=np.float32)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float32)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top ``k`` rows with a positive score, best first, ties broken by row."""
        if k <= 0:
            return []
        return top_k(self.scores(query), k)


def top_k(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Rows of the ``k`` highest positive scores, by score descending then row ascending."""
    candidates = np.flatnonzero(scores > 0)
    if candidates.size > k:
        cut = np.partition(scores[candidates], candidates.size - k)[candidates.size - k]
        candidates = candidates[scores[candidates] >= cut]
    order = np.lexsort((candidates, -scores[candidates]))[:k]
    return [(int(row), float(scores[row])) for row in candidates[order]]
