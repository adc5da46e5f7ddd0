"""BM25 over chunk text with the lexicon's deterministic tokenizer, in memory-mapped segments.

:func:`write_lexical` tokenizes rows and writes them as segments (one per
:data:`SEGMENT_ROWS` rows, so a build never holds more than one segment's postings);
:class:`LexicalIndex` opens them memory-mapped and scores queries
(:mod:`sealgraph.index.folder._segments` holds the format and the scoring).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.index._bm25 import BM25, _Tokenizer, lexical_tokens
from sealgraph.index.folder._segments import SEGMENT_PREFIX, SegmentInfo, Segments, SegmentWriter
from sealgraph.text.lexicon import Lexicon

__all__ = [
    "LEXICAL_DIR",
    "LexicalIndex",
    "field_weight_of",
    "lexical_tokens",
    "segment_files",
    "top_k",
    "write_lexical",
]

LEXICAL_DIR = "lexical"
SEGMENT_ROWS = 200_000
"""Rows per segment a build writes: the postings a build holds in memory at most."""
SEGMENT_FILES = (
    "info.json",
    "terms.bin",
    "term_offsets.npy",
    "indptr.npy",
    "rows.npy",
    "tfs.npy",
    "lengths.npy",
)
"""Files of one segment folder."""


def write_lexical(
    directory: Path,
    texts: Iterable[str],
    lex: Lexicon,
    *,
    first_row: int = 0,
    first_number: int = 1,
) -> list[SegmentInfo]:
    """Write the BM25 segments of ``texts`` (row ``first_row + i`` is the i-th) into ``directory``.

    Segments are numbered from ``first_number`` (an add goes on after the index's).
    Returns the segments' infos, in row order (what the manifest lists).
    """
    writer = LexicalWriter(directory, first_row=first_row, first_number=first_number)
    tokenize = _Tokenizer(lex)
    for text in texts:
        writer.add(tokenize(text))
    return writer.finish()


class LexicalWriter:
    """Writes BM25 segments of tokenized rows, a new segment every :data:`SEGMENT_ROWS` rows."""

    def __init__(self, directory: Path, *, first_row: int = 0, first_number: int = 1) -> None:
        self._folder = directory / LEXICAL_DIR
        self._folder.mkdir(parents=True, exist_ok=True)
        self._number = first_number
        self._writer = SegmentWriter(first_row)
        self._infos: list[SegmentInfo] = []

    def add(self, tokens: Sequence[str]) -> None:
        """Add the next row's tokens."""
        self._writer.add(tokens)
        if self._writer.n_rows >= SEGMENT_ROWS:
            self._roll()

    def _roll(self) -> None:
        self._infos.append(self._writer.write(self._folder, _segment_name(self._number)))
        self._number += 1
        self._writer = SegmentWriter(self._writer.first_row + self._writer.n_rows)

    def finish(self) -> list[SegmentInfo]:
        """Write the last segment; return every segment's info, in row order."""
        if self._writer.n_rows or not self._infos:
            self._roll()
        return self._infos


def _segment_name(number: int) -> str:
    return f"{SEGMENT_PREFIX}{number:06d}"


def segment_files(manifest_lexical: dict[str, Any]) -> list[str]:
    """Paths (relative to the index) of every file of the segments a manifest lists."""
    return [
        f"{LEXICAL_DIR}/{seg['name']}/{name}"
        for seg in manifest_lexical.get("segments") or ()
        for name in SEGMENT_FILES
    ]


_RECENT_QUERIES = 8  # queries whose scores of every row are kept (4 MB each at 1M rows)


class LexicalIndex:
    """The BM25 index of an index folder: its segments, memory-mapped."""

    def __init__(self, segments: Segments, lexicon: Lexicon) -> None:
        self._segments = segments
        self.lexicon = lexicon
        """The lexicon whose tokenizer built the index and reads queries."""
        self._recent: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def load(
        cls, directory: Path, manifest_lexical: dict[str, Any], lexicon: Lexicon
    ) -> LexicalIndex:
        """Open the segments a manifest's ``lexical`` entry lists, in ``directory``/lexical.

        Raises:
            ValueError: The manifest's entry or a segment is malformed.

        """
        infos = [SegmentInfo.from_dict(s) for s in manifest_lexical.get("segments") or ()]
        if not infos:
            raise ValueError("the manifest lists no lexical segment")
        params = {k: manifest_lexical.get(k, v) for k, v in BM25.items()}
        return cls(Segments(directory / LEXICAL_DIR, infos, params["k1"], params["b"]), lexicon)

    @property
    def n_docs(self) -> int:
        """Rows that are not deleted."""
        return self._segments.n_live

    @property
    def live(self) -> np.ndarray | None:
        """Mask of the rows that are not deleted; None when none is."""
        return self._segments.live if self._segments.deleted.size else None

    @property
    def n_rows(self) -> int:
        """Rows of the row space (deleted ones included)."""
        return self._segments.n_rows

    def document_frequency(self, term: str) -> int:
        """Rows (not deleted) whose indexed text holds the token ``term`` (a stem)."""
        return self._segments.document_frequency(term)

    def query_terms(self, query: str) -> list[str]:
        """Return the query's distinct tokens, in query order."""
        return list(dict.fromkeys(lexical_tokens(query, self.lexicon)))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of ``query`` for every row (zeros when no token is known), read-only.

        The scores of the last few queries are kept: a run scores its question for
        the first search, again for every loop's relevance and for packing.
        """
        terms = tuple(self.query_terms(query))
        with self._lock:
            found = self._recent.get(terms)
            if found is not None:
                self._recent.move_to_end(terms)
                return found
        found = self._segments.scores(list(terms))
        found.setflags(write=False)
        with self._lock:
            self._recent[terms] = found
            while len(self._recent) > _RECENT_QUERIES:
                self._recent.popitem(last=False)
        return found

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


def field_weight_of(manifest: dict[str, Any]) -> int:
    """Return the title and heading weight an index's lexical part was built with.

    Indexes built before it was recorded have 1.

    Adds and removals write with it, so one index never mixes two weights; a
    refresh (``sealgraph index --index DIR``) rebuilds with the current one.
    """
    value = (manifest.get("lexical") or {}).get("field_weight", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 1
