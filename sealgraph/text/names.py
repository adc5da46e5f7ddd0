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
    "proper_names",
    "stem",
    "stemmed_terms",
    "token_key",
    "tokenize_with_offsets",
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


def token_key(token: str) -> str:
    """Normalise one word token the way :func:`normalize_name` normalises a name."""
    lex = active()
    keys = _keys_of(lex)
    key = keys.get(token)
    return key if key is not None else _remember_key(keys, lex, token)


def _keys_of(lex: Lexicon) -> dict[str, str]:
    """Return the keys of the words ``lex`` has seen (each word is normalised once)."""
    entry = _TOKEN_KEYS.get(id(lex))
    if entry is None or entry[0] is not lex:
        entry = _TOKEN_KEYS[id(lex)] = (lex, {})
    return entry[1]


def _remember_key(keys: dict[str, str], lex: Lexicon, token: str) -> str:
    if len(keys) >= _TOKEN_KEYS_MAX:
        keys.clear()
    t = fold(token)
    for suffix in lex.possessive_suffixes:
        if t.endswith(suffix):
            t = t[: -len(suffix)]
            break
    key = keys[token] = t.replace("’", "'")
    return key


# Per lexicon (by identity; the lexicon is kept alive with its table), bounded.
_TOKEN_KEYS: dict[int, tuple[Lexicon, dict[str, str]]] = {}
_TOKEN_KEYS_MAX = 500_000


def tokenize_with_offsets(text: str) -> list[tuple[str, int, int, bool]]:
    """Return ``(key, start, end, capitalized)`` for every word of ``text``."""
    out = []
    for m in WORD_RE.finditer(text):
        tok = m.group(0)
        out.append((token_key(tok), m.start(), m.end(), tok[:1].isupper()))
    return out


def proper_names(text: str) -> list[tuple[int, str]]:
    """Return ``(start, key)`` of every capitalised run of two or more words.

    Words must be separated by spaces only (a comma or bracket ends a name), and
    lower-case connectors may join capitalised words. Leading words that open a
    sentence or clause ("The", "In", "His") are not part of the name.
    """
    lex = active()
    openers, connectors, conjunctions = (
        lex.name_openers,
        lex.proper_name_connectors,
        lex.name_conjunctions,
    )
    keys = _keys_of(lex)
    out: list[tuple[int, str]] = []
    run: list[tuple[str, int, int, bool]] = []

    def emit(part: list[tuple[str, int, int, bool]]) -> None:
        key = normalize_name(text[part[0][1] : part[-1][2]])
        if key and len(key.split()) >= 2:
            out.append((part[0][1], key))

    def close() -> None:
        while run and not run[-1][3]:
            run.pop()  # a connector cannot end a name
        while run and run[0][0] in openers:
            run.pop(0)  # "In", "The", "His" open a sentence, not a name
        if sum(1 for t in run if t[3]) >= 2:
            # "Ada Brightwater and Tomas Greyhill" is two names; "Salt and Iron" one.
            parts: list[list[tuple[str, int, int, bool]]] = [[]]
            for t in run:
                if t[0] in conjunctions and not t[3]:
                    parts.append([])
                else:
                    parts[-1].append(t)
            if len(parts) > 1 and all(sum(1 for t in p if t[3]) >= 2 for p in parts):
                for p in parts:
                    emit(p)
            else:
                emit(run)
        run.clear()

    # tokenize_with_offsets inlined, each word's key made only where it is read: a
    # lower-case word outside a run closes nothing and starts nothing, and most words
    # are such (this runs over every chunk when an index counts its names).
    for m in WORD_RE.finditer(text):
        word = m.group(0)
        cap = word[:1].isupper()
        if not cap and not run:
            continue
        start = m.start()
        joined = bool(run) and text[run[-1][2] : start] == " "
        key = keys.get(word)
        if key is None:
            key = _remember_key(keys, lex, word)
        if cap:
            if run and not joined:
                close()
            run.append((key, start, m.end(), True))
        elif joined and key in connectors:
            run.append((key, start, m.end(), False))
        else:
            close()
    close()
    return out
