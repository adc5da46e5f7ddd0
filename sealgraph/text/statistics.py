"""How often a corpus names each proper name, counted the lexicon's way.

The offline reasoner tells a distinctive name ("Ines Varga", in three passages)
from a common one ("United States", in hundreds) by how many chunks write it. An
index counts these at build time with the lexicon it is built with and keeps the
counts up to date as documents come and go (:meth:`CorpusCounts.add` and
:meth:`CorpusCounts.subtract`), so the reasoner reads them instead of reading
the corpus at its first question. (Word frequencies need no table of their own:
they are BM25's document frequencies, which the lexical index holds.)

The counts are full (every name, however rare), so that removing a chunk takes
back exactly what adding it gave. :func:`statistics_fingerprint` names the code
that counts them: an index whose counts were made by other code is recounted by
the next build or refresh, and read meanwhile by counting on first use.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from sealgraph.text.names import proper_names

__all__ = [
    "STATISTICS_VERSION",
    "CorpusCounts",
    "chunk_names",
    "statistics_fingerprint",
]

STATISTICS_VERSION = 4
"""Version of what the counts mean: bump it whenever :func:`chunk_names` (through
:func:`sealgraph.text.names.proper_names`) returns something else for some text.
Indexes whose counts have another version are recounted by their next build or
refresh. ``tests/unit_tests/text/test_statistics.py`` holds a digest of the counts
of a fixed set of texts, and fails when they change without this number changing.
3: the index also counts the documents holding each line (:mod:`sealgraph.text.lines`).
4: the index also holds the gazetteer's names of each document
(:func:`sealgraph.text.aliases.document_names`; its rules are in the golden digest too)."""


def chunk_names(text: str) -> set[str]:
    """Return the keys of the proper names ``text`` writes (:func:`proper_names`)."""
    return {key for _, key in proper_names(text)}


class CorpusCounts:
    """How many chunks write each proper name, and how many chunks were counted.

    A name counts once per chunk whose text writes it. Counting is done under the
    active lexicon (:func:`sealgraph.text.lexicon.use_lexicon`).
    """

    def __init__(self) -> None:
        self.n_chunks = 0
        """Chunks counted (added minus subtracted)."""
        self.names: Counter[str] = Counter()
        """Proper-name key -> chunks writing it."""

    def add(self, texts: Iterable[str]) -> None:
        """Count chunk texts in."""
        names = self.names
        for text in texts:
            self.n_chunks += 1
            names.update(chunk_names(text))

    def subtract(self, texts: Iterable[str]) -> None:
        """Take chunk texts out again (they must have been added)."""
        names = self.names
        for text in texts:
            self.n_chunks -= 1
            names.subtract(chunk_names(text))
        for key in [k for k, v in names.items() if v <= 0]:
            del names[key]  # a name no chunk writes any more is no name of the corpus

    def merge(self, other: CorpusCounts) -> None:
        """Add the counts of ``other`` (counted over other chunks) to these."""
        self.n_chunks += other.n_chunks
        self.names.update(other.names)


def fingerprint_sources() -> list[Path]:
    """Return the source files whose code decides what is counted."""
    root = Path(__file__).resolve().parent.parent
    return [
        root / "text" / "names.py",
        root / "text" / "aliases.py",
        root / "text" / "normalize.py",
        Path(__file__).resolve(),
        *sorted((root / "text" / "lexicon").rglob("*.py")),
    ]


@functools.cache
def statistics_fingerprint() -> str:
    """Digest of the source of the code the counts are made with.

    The names counted are what this sealgraph's text and lexicon code make of the
    chunks; counts made by other code are recounted rather than trusted (a version
    number is easily forgotten). Unreadable sources (a zipped install) count as empty.
    """
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(str(STATISTICS_VERSION).encode())
    for path in fingerprint_sources():
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()
