"""Lines that many documents repeat: site navigation, footers, banners.

The packer leaves out a line that many documents of the corpus repeat (see
:func:`sealgraph.packing.scoring.boilerplate_reason`). What "many" means needs the
whole corpus, so an index counts, at build time, how many documents hold each line
(:func:`document_line_hashes`), and keeps the counts current as documents come and
go; a reader asks the index for the lines at or above :func:`repeated_floor`.

A line counts once per document; headings and lines longer than
:data:`MAX_LINE_CHARS` characters are left out. Lines are compared by
:func:`line_key` (their folded words), and stored by :func:`line_hash` of the key.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

from sealgraph.text.lexicon import words

__all__ = [
    "MAX_LINE_CHARS",
    "REPEATED_LINE_DOC_SHARE",
    "REPEATED_LINE_MIN_DOCS",
    "document_line_hashes",
    "document_line_keys",
    "line_hash",
    "line_key",
    "repeated_floor",
]

REPEATED_LINE_MIN_DOCS = 3
"""A line is corpus boilerplate when at least this many documents repeat it..."""
REPEATED_LINE_DOC_SHARE = 0.02
"""...and at least this share of the corpus's documents (site headers, footers, banners)."""
MAX_LINE_CHARS = 300
"""Longer lines are content, never counted."""


def line_key(line: str) -> str:
    """Key of a line for counting repeats across documents: its folded words, space-joined."""
    return " ".join(words(line))


def document_line_keys(texts: Iterable[str]) -> set[str]:
    """Keys of the lines of one document's chunk texts (each once; headings left out)."""
    keys = set()
    for text in texts:
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#") or len(line) > MAX_LINE_CHARS:
                continue
            key = line_key(line)
            if key:
                keys.add(key)
    return keys


def line_hash(key: str) -> int:
    """Return a signed 64-bit digest of a line key (what an index stores)."""
    return int.from_bytes(
        hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big", signed=True
    )


def document_line_hashes(texts: Iterable[str]) -> list[int]:
    """:func:`line_hash` of each of :func:`document_line_keys`, sorted."""
    return sorted({line_hash(key) for key in document_line_keys(texts)})


def repeated_floor(n_documents: int) -> int:
    """Documents a line must be in to be repeated, in a corpus of ``n_documents``."""
    return max(REPEATED_LINE_MIN_DOCS, math.ceil(REPEATED_LINE_DOC_SHARE * n_documents))
