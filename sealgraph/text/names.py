"""Small text utilities shared by retrieval, the ledger and packing.

Everything here is deterministic and locale-independent.
"""

from __future__ import annotations

import re
from functools import lru_cache

from sealgraph.text.lexicon import (
    WORD_RE,
    Lexicon,
    active,
    content_words,
    fold,
    stem,
    stemmed_terms,
    words,
)

__all__ = [
    "content_words",
    "fold",
    "lexical_overlap",
    "normalize_name",
    "stem",
    "stemmed_terms",
    "words",
]

# The tokenizer, the stemmer and the stop words live in sealgraph.text.lexicon (one for
# the whole package); the names are re-exported here for the modules that use them.
_WORD_RE = WORD_RE
_PAREN_RE = re.compile(r"\s*\([^)]*\)\s*$")


def normalize_name(name: str, lexicon: Lexicon | None = None) -> str:
    """Canonical key of an entity name for alias matching.

    Folds case and accents, drops a trailing parenthetical disambiguator
    (``"Harbourlight (album)"`` → ``"harbourlight"``), possessives, a leading article and
    punctuation, and collapses whitespace. Articles and possessives are those of
    ``lexicon`` (the active one by default).
    """
    return _normalize_name(lexicon or active(), name)


@lru_cache(maxsize=200_000)
def _normalize_name(lexicon: Lexicon, name: str) -> str:
    text = fold(name).strip()
    text = _PAREN_RE.sub("", text) or text
    text = lexicon.possessive_re.sub("", text)
    text = " ".join(_WORD_RE.findall(text))
    text = lexicon.leading_article_re.sub("", text)
    return text.strip()


def lexical_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the content-word sets of two texts (0 when either is empty)."""
    sa, sb = set(content_words(a)), set(content_words(b))
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


YEAR_RE = re.compile(r"\b(1\d{3}|20\d{2})\b")
"""A four-digit year, 1000-2099 (digits: the same whatever the lexicon)."""


def years_in(text: str) -> frozenset[str]:
    """Return the four-digit years written in ``text``."""
    return frozenset(YEAR_RE.findall(text))
