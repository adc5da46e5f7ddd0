"""Offsets between a file's raw text and the text a loader extracted from it.

An HTML page, an MDX page with components or a reStructuredText file is indexed
as the text its loader extracts: tags, comments, imports and directives gone,
entities decoded, Markdown escapes added. A gold span a person marked in the raw
file must still be scored against the indexed text, so the two are aligned here,
after the fact and for any loader, instead of every loader carrying a map:

* both texts are read as words (runs of word characters, case folded); the raw
  text's words inside markup (``<…>`` tags, ``<!-- … -->`` comments, ``&name;``
  references) do not count;
* walking the extracted words in order, each is matched to the first raw word at
  or after the last match that begins the same run of :data:`ANCHOR` words: a
  word alone (``the``) could match far ahead and skip a stretch, three in a row
  rarely do by chance. A word whose run cannot be found (an entity decoded to a
  dash, a word the loader wrote itself such as a PDF's ``Page 3`` heading) stays
  unmatched, and the walk goes on.

Linear in the two texts' words (one sorted list of positions per run of words).
A raw span then maps onto the extracted words matched inside it: from the first
one's start to the last one's end; a span holding no matched word (only markup)
maps to an empty span.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass

__all__ = ["ANCHOR", "TextAlignment", "align_texts"]

ANCHOR = 3
"""Words in a row that must agree for one extracted word to be matched."""

_GAP_WORK = 250_000  # raw x extracted words of a gap searched word by word, at most
_WORD_RE = re.compile(r"\w+")
# Tags, comments and character references: their words are not the page's text.
_MARKUP_RE = re.compile(
    r"<!--.*?(?:-->|\Z)|<[A-Za-z/!?][^<>]*>|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class TextAlignment:
    """Matched words of a raw text and of the text extracted from it, in order.

    Both texts advance together: the raw starts and the extracted starts grow
    along the lists, so a raw offset is found by bisection.
    """

    raw_starts: tuple[int, ...]
    """Start offset in the raw text of each matched word."""
    raw_ends: tuple[int, ...]
    """End offset in the raw text of each matched word."""
    starts: tuple[int, ...]
    """Start offset in the extracted text of each matched word."""
    ends: tuple[int, ...]
    """End offset in the extracted text of each matched word."""
    length: int
    """Length of the extracted text."""

    def to_extracted(self, start: int, end: int) -> tuple[int, int]:
        """Map the raw span ``[start, end)`` onto the extracted text.

        The result runs from the first matched word that overlaps the span to the
        last one; ``(p, p)`` (empty, at the place the span would be) when no matched
        word overlaps it.
        """
        first = bisect.bisect_right(self.raw_ends, start)  # first word ending after start
        last = bisect.bisect_left(self.raw_starts, end) - 1  # last word starting before end
        if first > last:
            at = self.starts[first] if first < len(self.starts) else self.length
            return at, at
        return self.starts[first], self.ends[last]

    def shifted(self, offset: int, length: int) -> TextAlignment:
        """Return this alignment with extracted offsets moved by ``offset``.

        For an extracted text that is a part of a longer one (a PDF page's section
        in the document), ``length`` being the longer text's.
        """
        return TextAlignment(
            raw_starts=self.raw_starts,
            raw_ends=self.raw_ends,
            starts=tuple(s + offset for s in self.starts),
            ends=tuple(e + offset for e in self.ends),
            length=length,
        )

    @property
    def n_matched(self) -> int:
        """Number of matched words."""
        return len(self.starts)


def align_texts(raw: str, extracted: str) -> TextAlignment:
    """Align ``extracted`` (a loader's text of ``raw``) with ``raw`` word by word."""
    raw_words = _words(raw, _markup_mask(raw))
    words = _words(extracted, None)
    runs: dict[tuple[str, ...], list[int]] = {}
    for i in range(len(raw_words)):
        runs.setdefault(_run(raw_words, i), []).append(i)
    matched: list[tuple[int, int]] = []  # (raw word index, extracted word index)
    after = 0
    for j in range(len(words)):
        positions = runs.get(_run(words, j))
        if not positions:
            continue
        at = bisect.bisect_left(positions, after)
        if at < len(positions):
            matched.append((positions[at], j))
            after = positions[at] + 1
    matched = _fill_gaps(matched, raw_words, words)
    return TextAlignment(
        raw_starts=tuple(raw_words[i][1] for i, _ in matched),
        raw_ends=tuple(raw_words[i][2] for i, _ in matched),
        starts=tuple(words[j][1] for _, j in matched),
        ends=tuple(words[j][2] for _, j in matched),
        length=len(extracted),
    )


def _fill_gaps(
    matched: list[tuple[int, int]],
    raw_words: list[tuple[str, int, int]],
    words: list[tuple[str, int, int]],
) -> list[tuple[int, int]]:
    """Match single words between two anchored matches (and before the first, after the last).

    A word next to one the loader wrote itself (a heading, a decoded entity) cannot
    begin a whole run; between two anchors a word alone is safe to match, in order.
    """
    out: list[tuple[int, int]] = []
    bounds = [(-1, -1), *matched, (len(raw_words), len(words))]
    for (i0, j0), (i1, j1) in itertools.pairwise(bounds):
        if (i1 - i0 - 1) * (j1 - j0 - 1) <= _GAP_WORK:
            after = i0 + 1
            for j in range(j0 + 1, j1):
                i = next((i for i in range(after, i1) if raw_words[i][0] == words[j][0]), -1)
                if i >= 0:
                    out.append((i, j))
                    after = i + 1
        if i1 < len(raw_words):
            out.append((i1, j1))
    return out


def _words(text: str, hidden: list[tuple[int, int]] | None) -> list[tuple[str, int, int]]:
    """Return ``(case-folded word, start, end)`` of every word outside the hidden stretches."""
    out = []
    stretch = 0
    for match in _WORD_RE.finditer(text):
        if hidden:
            while stretch < len(hidden) and hidden[stretch][1] <= match.start():
                stretch += 1
            if stretch < len(hidden) and hidden[stretch][0] <= match.start():
                continue
        out.append((match.group().casefold(), match.start(), match.end()))
    return out


def _markup_mask(text: str) -> list[tuple[int, int]]:
    """Return the stretches of markup, in order (their words are not text)."""
    return [(m.start(), m.end()) for m in _MARKUP_RE.finditer(text)]


def _run(words: list[tuple[str, int, int]], i: int) -> tuple[str, ...]:
    """Return the run of up to :data:`ANCHOR` words from ``i`` (shorter at the end)."""
    return tuple(w for w, _, _ in words[i : i + ANCHOR])
