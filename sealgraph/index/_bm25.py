"""BM25's parameters and tokenizer, shared by the folder index and Qdrant's sparse vectors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sealgraph.errors import StaleTokenizerError
from sealgraph.text.lexicon import Lexicon, active, words

BM25 = {"method": "lucene", "k1": 1.2, "b": 0.75}
"""BM25 variant and parameters (the common Lucene defaults)."""

BM25_PARAMS = BM25
"""BM25 variant and parameters (the common Lucene defaults)."""


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


class _Tokenizer:
    """:func:`lexical_tokens` with each distinct word stemmed once (most of the cost)."""

    def __init__(self, lex: Lexicon) -> None:
        self.lex = lex
        self.stems: dict[str, str | None] = {}

    def __call__(self, text: str) -> list[str]:
        stems, stop, lex = self.stems, self.lex.stop_words, self.lex
        out = []
        for word in words(text):
            stem = stems.get(word, "")
            if stem == "":
                stem = stems[word] = None if word in stop else lex.stem(word)
            if stem is not None:
                out.append(stem)
        if len(stems) > 2_000_000:  # a vocabulary that keeps growing: bound the memo
            stems.clear()
        return out


def tokenizer(lex: Lexicon) -> Callable[[str], list[str]]:
    """Return :func:`lexical_tokens` of ``lex`` with each distinct word stemmed once."""
    return _Tokenizer(lex)


def check_tokenizer(manifest: dict[str, Any], lex: Lexicon, where: object) -> None:
    """Raise StaleTokenizerError when the index was tokenized otherwise than ``lex`` does.

    An index of an older sealgraph's stemmer, or of another lexicon: its lexical part
    is rebuilt (nothing is embedded again) by ``sealgraph index --index WHERE``.
    """
    built_with = (manifest.get("lexical") or {}).get("tokenizer_version")
    if built_with != lex.tokenizer_version:
        raise StaleTokenizerError(
            f"the index at {where} was built with lexical tokenizer {built_with}, this "
            f"sealgraph uses {lex.tokenizer_version}; rebuild its lexical part (nothing is "
            f"embedded again) with `sealgraph index --index {where}`"
        )
