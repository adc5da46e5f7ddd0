"""Small text utilities shared by retrieval, the ledger and packing.

Everything here is deterministic and locale-independent.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "o",
        "re",
        "ve",
        "y",
    ]
)
"""English function words ignored by lexical matching."""

CALENDAR_WORDS: frozenset[str] = frozenset(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
)
"""English month and day names (folded): a capitalised one dates something, it names
no entity ("June 2021", "Monday")."""

_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_PAREN_RE = re.compile(r"\s*\([^)]*\)\s*$")
_ARTICLE_RE = re.compile(r"^(?:the|a|an)\s+")
_POSSESSIVE_RE = re.compile(r"['’]s\b")


def fold(text: str) -> str:
    """Lower-case and strip accents (``"Renée"`` → ``"renee"``)."""
    if text.isascii():  # fast path: nothing to decompose
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text: str) -> list[str]:
    """Split into folded word tokens (letters and digits; inner apostrophes kept)."""
    return _WORD_RE.findall(fold(text))


def content_words(text: str) -> list[str]:
    """Words minus stopwords, in order, with repeats."""
    return [w for w in words(text) if w not in STOPWORDS]


@lru_cache(maxsize=200_000)
def normalize_name(name: str) -> str:
    """Canonical key of an entity name for alias matching.

    Folds case and accents, drops a trailing parenthetical disambiguator
    (``"Harbourlight (album)"`` → ``"harbourlight"``), possessives, a leading article and
    punctuation, and collapses whitespace.
    """
    text = fold(name).strip()
    text = _PAREN_RE.sub("", text) or text
    text = _POSSESSIVE_RE.sub("", text)
    text = " ".join(_WORD_RE.findall(text))
    text = _ARTICLE_RE.sub("", text)
    return text.strip()


def lexical_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the content-word sets of two texts (0 when either is empty)."""
    sa, sb = set(content_words(a)), set(content_words(b))
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def stem(word: str) -> str:
    """Reduce a folded word to a crude stem so inflections meet ("directed" ~ "director").

    Deliberately light and deterministic: plural, -ing, -ed, -er, -ly endings and a
    7-character cap. A wrong merge costs little in bag-of-terms matching.
    """
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "ches", "shes", "xes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif (word.endswith(("ed", "ly", "er")) and len(word) > 4) or (
        word.endswith("or") and len(word) > 5  # agent nouns: director ~ directed
    ):
        word = word[:-2]
    return word[:7]


@lru_cache(maxsize=100_000)
def stemmed_terms(text: str) -> frozenset[str]:
    """Stemmed content words of a text, as a set."""
    return frozenset(stem(w) for w in content_words(text))
