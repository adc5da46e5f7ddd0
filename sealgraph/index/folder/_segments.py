"""BM25 over segments of memory-mapped postings: built in bounded memory, grown by adds.

A lexical index is a list of **segments**, each the postings of a contiguous range of
rows (chunk positions), written once and never changed: a build writes one segment
per batch of rows it flushes, an add writes one more, and a removal only marks rows
as deleted (``deleted.npy``). Segments are merged later, as search engines do
(:func:`merge_segments`), when there are many of them.

Corpus statistics (live rows, average length, each term's document frequency) are
taken at query time over every segment minus the deleted rows, so an index grown by
adds scores exactly as a fresh build of the same rows. Scores are the Lucene BM25
variant computed in float32 in the same order of operations as ``bm25s`` (the
library earlier indexes were built with), so a one-segment index scores exactly as
before:

``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))``,
``score(t, d) = idf(t) · tf / (k1 · (1 − b + b · |d| / avgdl) + tf)``.

Files of a segment ``seg-NNNNNN/`` (all ``.npy`` without pickle, opened memory-mapped):

``terms.bin`` / ``term_offsets.npy``
    The segment's terms, sorted, as UTF-8 joined end to end, and where each starts.
``indptr.npy`` / ``rows.npy`` / ``tfs.npy``
    Postings by term (CSR): term ``i``'s rows are ``rows[indptr[i]:indptr[i+1]]``.
``lengths.npy``
    Token count of each row of the segment's range (``info.json`` gives the range).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sealgraph.errors import IndexCorruptError
from sealgraph.index._bm25 import BM25

__all__ = [
    "BM25",
    "Segment",
    "SegmentWriter",
    "Segments",
    "merge_segments",
]


SEGMENT_PREFIX = "seg-"
DELETED_FILE = "deleted.npy"
_SEGMENT_FILES = ("terms.bin", "term_offsets.npy", "indptr.npy", "rows.npy", "tfs.npy")


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    """Where a segment's rows lie and how many postings it holds."""

    name: str
    """Folder name (``seg-000001``)."""
    first_row: int
    """First row of the segment's range."""
    n_rows: int
    """Rows in the range (deleted ones included)."""
    n_terms: int
    """Distinct terms."""
    n_postings: int
    """(term, row) pairs."""
    total_length: int
    """Tokens of all its rows."""

    def to_dict(self) -> dict[str, int | str]:
        """Return the JSON form kept in ``info.json`` and the manifest."""
        return {
            "name": self.name,
            "first_row": self.first_row,
            "n_rows": self.n_rows,
            "n_terms": self.n_terms,
            "n_postings": self.n_postings,
            "total_length": self.total_length,
        }

    @classmethod
    def from_dict(cls, data: dict) -> SegmentInfo:
        """Read the JSON form (raises ValueError on a malformed one)."""
        try:
            return cls(
                name=str(data["name"]),
                first_row=int(data["first_row"]),
                n_rows=int(data["n_rows"]),
                n_terms=int(data["n_terms"]),
                n_postings=int(data["n_postings"]),
                total_length=int(data["total_length"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed segment info: {exc}") from None


class SegmentWriter:
    """Collects the token counts of consecutive rows and writes them as one segment.

    Memory is that of the segment's own postings and vocabulary: a build flushes a
    segment every so many rows.
    """

    def __init__(self, first_row: int) -> None:
        self.first_row = first_row
        self._vocab: dict[str, int] = {}
        self._term_ids: list[np.ndarray] = []
        self._rows: list[np.ndarray] = []
        self._tfs: list[np.ndarray] = []
        self._lengths: list[int] = []

    @property
    def n_rows(self) -> int:
        """Rows added so far."""
        return len(self._lengths)

    def add(self, tokens: Sequence[str]) -> None:
        """Add the next row: its (already stop-worded and stemmed) tokens, in order."""
        row = self.first_row + len(self._lengths)
        self._lengths.append(len(tokens))
        if not tokens:
            return
        vocab = self._vocab
        counts: dict[int, int] = {}
        for token in tokens:
            tid = vocab.get(token)
            if tid is None:
                tid = vocab[token] = len(vocab)
            counts[tid] = counts.get(tid, 0) + 1
        self._term_ids.append(np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)))
        self._tfs.append(np.fromiter(counts.values(), dtype=np.float32, count=len(counts)))
        self._rows.append(np.full(len(counts), row, dtype=np.int64))

    def write(self, directory: Path, name: str) -> SegmentInfo:
        """Write the segment into ``directory/name`` and return its info."""
        folder = directory / name
        folder.mkdir(parents=True)
        terms = sorted(self._vocab)
        order = np.empty(len(terms), dtype=np.int64)  # old term id -> sorted position
        for position, term in enumerate(terms):
            order[self._vocab[term]] = position
        term_ids = order[np.concatenate(self._term_ids)] if self._term_ids else np.zeros(0, int)
        rows = np.concatenate(self._rows) if self._rows else np.zeros(0, np.int64)
        tfs = np.concatenate(self._tfs) if self._tfs else np.zeros(0, np.float32)
        by_term = np.lexsort((rows, term_ids))  # postings by term, then by row
        counts = np.bincount(term_ids, minlength=len(terms))
        indptr = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        _write_arrays(folder, terms, indptr, rows[by_term].astype(np.int32), tfs[by_term])
        np.save(folder / "lengths.npy", np.asarray(self._lengths, np.int32), allow_pickle=False)
        info = SegmentInfo(
            name=name,
            first_row=self.first_row,
            n_rows=len(self._lengths),
            n_terms=len(terms),
            n_postings=int(rows.size),
            total_length=int(sum(self._lengths)),
        )
        (folder / "info.json").write_text(json.dumps(info.to_dict()), encoding="utf-8")
        return info


_TERM_CACHE = 100_000  # term ids a segment remembers (then it starts again)


class Segment:
    """One segment, memory-mapped: term lookup and postings."""

    def __init__(self, folder: Path, info: SegmentInfo) -> None:
        self.info = info
        self._terms = (
            np.memmap(folder / "terms.bin", dtype=np.uint8, mode="r")
            if (folder / "terms.bin").stat().st_size
            else np.zeros(0, np.uint8)
        )
        self._offsets = np.load(folder / "term_offsets.npy", mmap_mode="r")
        self._indptr = np.load(folder / "indptr.npy", mmap_mode="r")
        self._rows = np.load(folder / "rows.npy", mmap_mode="r")
        self._tfs = np.load(folder / "tfs.npy", mmap_mode="r")
        self.lengths = np.load(folder / "lengths.npy", mmap_mode="r")
        self._term_ids: dict[str, int] = {}
        if (
            len(self._offsets) != info.n_terms + 1
            or len(self._indptr) != info.n_terms + 1
            or len(self._rows) != info.n_postings
            or len(self._tfs) != info.n_postings
            or len(self.lengths) != info.n_rows
        ):
            raise ValueError(f"segment {info.name} does not match its info")

    def term_id(self, term: str) -> int:
        """Return the position of ``term`` in the sorted terms, or -1 when absent.

        Remembered (a bounded table): a question's terms are looked up again by
        every loop's scoring, and each lookup is a binary search over mapped bytes.
        """
        found = self._term_ids.get(term)
        if found is None:
            found = self._find_term(term)
            if len(self._term_ids) >= _TERM_CACHE:
                self._term_ids.clear()
            self._term_ids[term] = found
        return found

    def _find_term(self, term: str) -> int:
        key = term.encode("utf-8")
        lo, hi = 0, self.info.n_terms
        offsets, terms = self._offsets, self._terms
        while lo < hi:
            mid = (lo + hi) // 2
            probe = bytes(terms[offsets[mid] : offsets[mid + 1]])
            if probe < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.info.n_terms and bytes(terms[offsets[lo] : offsets[lo + 1]]) == key:
            return lo
        return -1

    def postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the rows and term frequencies of a term (by :meth:`term_id`)."""
        start, end = int(self._indptr[term_id]), int(self._indptr[term_id + 1])
        return self._rows[start:end], self._tfs[start:end]


class Segments:
    """The lexical index of an index folder: every segment, minus the deleted rows."""

    def __init__(self, directory: Path, infos: Sequence[SegmentInfo], k1: float, b: float):
        self.directory = directory
        self.k1, self.b = k1, b
        self.segments = [Segment(directory / info.name, info) for info in infos]
        self.n_rows = max((i.first_row + i.n_rows for i in infos), default=0)
        deleted_file = directory / DELETED_FILE
        self.deleted = (
            np.load(deleted_file, allow_pickle=False)
            if deleted_file.is_file()
            else np.zeros(0, np.int64)
        )
        if self.deleted.size and (
            self.deleted.ndim != 1
            or self.deleted.dtype.kind not in "iu"
            or int(self.deleted.min()) < 0
            or int(self.deleted.max()) >= self.n_rows
        ):
            raise ValueError(f"{DELETED_FILE} names rows the segments do not hold")
        self.live = np.ones(self.n_rows, dtype=bool)
        if self.deleted.size:
            self.live[self.deleted] = False
        self.n_live = int(self.live.sum())
        total = sum(i.total_length for i in infos)
        if self.deleted.size:
            total -= int(self.row_lengths(self.deleted).sum())
        self.total_length = total

    def row_lengths(self, rows: np.ndarray) -> np.ndarray:
        """Token counts of the given rows."""
        out = np.zeros(len(rows), dtype=np.int64)
        for segment in self.segments:
            start, n = segment.info.first_row, segment.info.n_rows
            inside = (rows >= start) & (rows < start + n)
            if inside.any():
                out[inside] = segment.lengths[rows[inside] - start]
        return out

    def document_frequency(self, term: str) -> int:
        """Live rows holding ``term`` (what BM25's idf counts)."""
        df = 0
        for segment in self.segments:
            tid = segment.term_id(term)
            if tid >= 0:
                rows, _ = segment.postings(tid)
                df += int(self.live[rows].sum()) if self.deleted.size else len(rows)
        return df

    def scores(self, terms: Iterable[str]) -> np.ndarray:
        """BM25 score of every row for the query's distinct ``terms`` (in query order)."""
        scores = np.zeros(self.n_rows, dtype=np.float32)
        if self.n_live == 0:
            return scores
        avg = np.float64(self.total_length) / self.n_live  # what np.mean of the lengths gives
        for term in terms:
            hits = [(s, s.term_id(term)) for s in self.segments]
            hits = [(s, tid) for s, tid in hits if tid >= 0]
            if not hits:
                continue
            postings = []
            for segment, tid in hits:
                rows, tfs = segment.postings(tid)
                start = segment.info.first_row
                # Postings are sorted by row: the ends bound them. A damaged or crafted
                # segment is refused here, where it is read, not at open (which reads none).
                if rows.size and (rows[0] < start or rows[-1] >= start + segment.info.n_rows):
                    raise IndexCorruptError(
                        f"damaged index: lexical segment {segment.info.name} holds rows outside "
                        f"its range; check it with `sealgraph index --verify`"
                    )
                keep = self.live[rows]
                if not keep.all():
                    rows, tfs = rows[keep], tfs[keep]
                postings.append((segment, rows, tfs))
            df = sum(len(rows) for _, rows, _ in postings)
            if df == 0:
                continue
            # bm25s's Lucene scorer, operation for operation: the idf kept in float32,
            # each (term, row) score computed in float64 and stored in float32, the
            # query's terms summed in float32 in query order.
            idf = np.float64(np.float32(math.log(1 + (self.n_live - df + 0.5) / (df + 0.5))))
            for segment, rows, tfs in postings:
                lengths = np.asarray(segment.lengths[rows - segment.info.first_row])
                norm = self.k1 * ((1 - self.b) + self.b * lengths / avg)
                scores[rows] += (idf * (tfs / (norm + tfs))).astype(np.float32)
        return scores


def merge_segments(directory: Path, infos: Sequence[SegmentInfo], name: str) -> SegmentInfo:
    """Write one segment holding the live rows of ``infos`` (rows keep their numbers).

    The merged segment spans the rows of all of them; deleted rows keep a length of
    0 and no postings. The deletion list must go on naming them: it is what keeps
    them out of the row count that BM25's statistics use.
    """
    lexical = Segments(directory, infos, BM25["k1"], BM25["b"])
    first = min(i.first_row for i in infos)
    writer = _MergedWriter(first, lexical.n_rows - first)
    for segment in lexical.segments:
        writer.take(segment, lexical.live)
    info = writer.write(directory, name)
    return info


class _MergedWriter:
    """Concatenates the live postings of segments, term by term."""

    def __init__(self, first_row: int, n_rows: int) -> None:
        self.first_row = first_row
        self.lengths = np.zeros(n_rows, dtype=np.int32)
        self.postings: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}

    def take(self, segment: Segment, live: np.ndarray) -> None:
        start, n = segment.info.first_row, segment.info.n_rows
        own = np.arange(start, start + n)
        self.lengths[start - self.first_row : start - self.first_row + n] = np.where(
            live[own], segment.lengths, 0
        )
        offsets, terms = segment._offsets, segment._terms
        for tid in range(segment.info.n_terms):
            term = bytes(terms[offsets[tid] : offsets[tid + 1]]).decode("utf-8")
            rows, tfs = segment.postings(tid)
            keep = live[rows]
            if keep.any():
                self.postings.setdefault(term, []).append((rows[keep], tfs[keep]))

    def write(self, directory: Path, name: str) -> SegmentInfo:
        folder = directory / name
        tmp = directory / f".{name}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        terms = sorted(self.postings)
        parts = [self.postings[t] for t in terms]
        rows = [np.concatenate([r for r, _ in p]) for p in parts]
        tfs = [np.concatenate([f for _, f in p]) for p in parts]
        counts = [len(r) for r in rows]
        indptr = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        all_rows = np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, np.int32)
        all_tfs = np.concatenate(tfs).astype(np.float32) if tfs else np.zeros(0, np.float32)
        _write_arrays(tmp, terms, indptr, all_rows, all_tfs)
        np.save(tmp / "lengths.npy", self.lengths, allow_pickle=False)
        info = SegmentInfo(
            name=name,
            first_row=self.first_row,
            n_rows=len(self.lengths),
            n_terms=len(terms),
            n_postings=int(all_rows.size),
            total_length=int(self.lengths.sum()),
        )
        (tmp / "info.json").write_text(json.dumps(info.to_dict()), encoding="utf-8")
        os.replace(tmp, folder)
        return info


def _write_arrays(
    folder: Path, terms: list[str], indptr: np.ndarray, rows: np.ndarray, tfs: np.ndarray
) -> None:
    """Write a segment's sorted terms and its postings (by term, then by row)."""
    encoded = [term.encode("utf-8") for term in terms]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    (folder / "terms.bin").write_bytes(b"".join(encoded))
    np.save(folder / "term_offsets.npy", offsets, allow_pickle=False)
    np.save(folder / "indptr.npy", indptr, allow_pickle=False)
    np.save(folder / "rows.npy", rows, allow_pickle=False)
    np.save(folder / "tfs.npy", tfs, allow_pickle=False)
