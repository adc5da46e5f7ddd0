"""Text is normalised once: at ingest for documents, and for the question.

The same words must read the same whatever tool wrote them. macOS tools save
``é`` as ``e`` + a combining accent (NFD) where others write one character (NFC);
a word split by a zero-width space or a soft hyphen looks whole on screen. Read
as they are, ``José`` in NFD tokenises as ``Jose`` plus a stray accent, and a
name with a soft hyphen is two words. :func:`normalize_text` therefore:

- composes the text to NFC (canonical composition only: compatibility forms such
  as ``ﬁ`` or full-width letters stay as written);
- removes the characters that are invisible and only split words for matching:
  soft hyphen (U+00AD), zero-width space (U+200B), word joiner (U+2060) and the
  zero-width no-break space / byte-order mark (U+FEFF); the joiners that change
  how a script or an emoji is written (U+200C, U+200D) stay;
- turns CRLF and CR line ends into LF.

It returns the text with an :class:`OffsetMap` between the text given and the
normalised one, so an offset into either (a citation's characters, an
evaluation's gold span in the raw file) can be mapped onto the other.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["NORMALIZER_VERSION", "OffsetMap", "normalize_for_matching", "normalize_text"]

NORMALIZER_VERSION = 1
"""Version of what :func:`normalize_text` does; indexes and eval caches record it."""

_INVISIBLE = "\u00ad\u200b\u2060\ufeff"
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")
# One match is a stretch normalised on its own: a line end, an invisible character,
# or a run of other non-ASCII characters with the ASCII character before it (which
# an accent after it may compose with). An ASCII character never composes with what
# precedes it, so every stretch can be normalised alone.
_STRETCH_RE = re.compile(f"\r\n?|[{_INVISIBLE}]|[\x00-\x7f]?[^\x00-\x7f{_INVISIBLE}]+")
# Hangul vowel and final jamo compose with the syllable before them (algorithmically,
# so unicodedata.decomposition does not list them).
_HANGUL_SECONDS = ((0x1161, 0x1175), (0x11A8, 0x11C2))
# A stretch up to this long is normalised whole; a longer one (a run of another script
# without ASCII spaces) is cut where composition cannot cross.
_SHORT_STRETCH = 48
# Every character that is the second of a canonical pair lies below this code point.
_LAST_PAIR_SECOND = 0x1E000


@dataclass(frozen=True, slots=True)
class OffsetMap:
    """Offsets between a text (``raw``) and its normalised form.

    Stored as the stretches whose length changed, in order; between them the two
    texts advance together. An offset inside a changed stretch maps to the
    stretch's start (or, for the end of a span, its end), so a span always maps
    onto a span that covers it.
    """

    raw_length: int
    """Length of the text given."""
    length: int
    """Length of the normalised text."""
    raw_starts: tuple[int, ...] = ()
    """Start of each changed stretch in the text given."""
    raw_ends: tuple[int, ...] = ()
    """End of each changed stretch in the text given."""
    starts: tuple[int, ...] = ()
    """Start of each changed stretch in the normalised text."""
    ends: tuple[int, ...] = ()
    """End of each changed stretch in the normalised text."""

    @property
    def is_identity(self) -> bool:
        """Whether every offset maps onto itself."""
        return not self.starts

    def to_normalised(self, offset: int, *, end: bool = False) -> int:
        """Map an offset into the text given onto the normalised text."""
        return _map(offset, end, self.raw_starts, self.raw_ends, self.starts, self.ends)

    def to_raw(self, offset: int, *, end: bool = False) -> int:
        """Map an offset into the normalised text onto the text given."""
        return _map(offset, end, self.starts, self.ends, self.raw_starts, self.raw_ends)


def _map(
    offset: int,
    end: bool,
    from_starts: tuple[int, ...],
    from_ends: tuple[int, ...],
    to_starts: tuple[int, ...],
    to_ends: tuple[int, ...],
) -> int:
    i = bisect.bisect_right(from_starts, offset) - 1
    if i < 0:
        return offset
    if offset < from_ends[i]:  # inside a changed stretch: its start, or its end for an end
        return to_ends[i] if end and offset > from_starts[i] else to_starts[i]
    return to_ends[i] + (offset - from_ends[i])


def normalize_for_matching(text: str) -> str:
    """Return ``text`` normalised as :func:`normalize_text` does, without the map."""
    if text.isascii() and "\r" not in text:
        return text
    return normalize_text(text)[0]


def normalize_text(raw: str) -> tuple[str, OffsetMap]:
    """Return ``raw`` normalised (NFC, invisible characters removed, LF line ends) and the map.

    Linear in the text: ASCII text without CR comes back as it is, and only the
    stretches that change are rebuilt.
    """
    if (raw.isascii() and "\r" not in raw) or (
        "\r" not in raw and not _INVISIBLE_RE.search(raw) and unicodedata.is_normalized("NFC", raw)
    ):
        return raw, OffsetMap(len(raw), len(raw))
    pieces: list[str] = []
    raw_starts: list[int] = []
    raw_ends: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    done = 0  # raw offset copied up to
    out = 0  # length of the output so far
    for match in _STRETCH_RE.finditer(raw):
        for a, b, piece in _normalised_stretches(match.group(), match.start()):
            if piece == raw[a:b]:
                continue
            pieces.append(raw[done:a])
            out += a - done
            if len(piece) != b - a:
                raw_starts.append(a)
                raw_ends.append(b)
                starts.append(out)
                ends.append(out + len(piece))
            pieces.append(piece)
            out += len(piece)
            done = b
    pieces.append(raw[done:])
    text = "".join(pieces)
    return text, OffsetMap(
        len(raw), len(text), tuple(raw_starts), tuple(raw_ends), tuple(starts), tuple(ends)
    )


def _normalised_stretches(stretch: str, offset: int) -> list[tuple[int, int, str]]:
    """Split a matched stretch where normalisation cannot cross; normalise each part."""
    if stretch == "\r\n":  # the CR goes: offsets on either side of it meet at the LF
        return [(offset, offset + 1, "")]
    if stretch == "\r":
        return [(offset, offset + 1, "\n")]
    if stretch in _INVISIBLE:
        return [(offset, offset + 1, "")]
    if unicodedata.is_normalized("NFC", stretch):
        return []
    if len(stretch) <= _SHORT_STRETCH:  # a word or so: one stretch is fine-grained enough
        return [(offset, offset + len(stretch), unicodedata.normalize("NFC", stretch))]
    # A long run of another script in NFD: cut it before each character that can
    # neither follow a character it composes with nor be reordered (a starter that
    # is the second half of no canonical pair), so the map stays fine-grained.
    parts: list[tuple[int, int, str]] = []
    cut = 0
    seconds = _composing_seconds()
    for i, char in enumerate(stretch):
        if i and unicodedata.combining(char) == 0 and char not in seconds:
            parts.append(_part(stretch, cut, i, offset))
            cut = i
    parts.append(_part(stretch, cut, len(stretch), offset))
    return parts


def _part(stretch: str, a: int, b: int, offset: int) -> tuple[int, int, str]:
    return offset + a, offset + b, unicodedata.normalize("NFC", stretch[a:b])


@lru_cache(maxsize=1)
def _composing_seconds() -> frozenset[str]:
    """Characters of combining class 0 that compose with the character before them."""
    seconds = {chr(cp) for low, high in _HANGUL_SECONDS for cp in range(low, high + 1)}
    for cp in range(0x80, _LAST_PAIR_SECOND):
        decomposition = unicodedata.decomposition(chr(cp))
        if decomposition and not decomposition.startswith("<"):
            parts = decomposition.split()
            if len(parts) == 2:
                second = chr(int(parts[1], 16))
                if unicodedata.combining(second) == 0:
                    seconds.add(second)
    return frozenset(seconds)
