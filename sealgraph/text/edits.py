"""Words that differ by a typo: a bounded edit distance, and the nearest written word.

A question may misspell a word the documents write ("Ledgerlinne" for "Ledgerline",
"Sydeney" for "Sydney"). A word of five letters or more is taken for a typo of a
word one edit away (two for a word of eight letters or more): insertions, deletions
and changes of one letter each. Shorter words differ from real words by one letter
too easily.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["TWO_EDITS_LENGTH", "TYPO_MIN_LENGTH", "nearest_written", "within_edits"]

TYPO_MIN_LENGTH = 5
"""Shortest word taken for a typo of another."""
TWO_EDITS_LENGTH = 8
"""Shortest word two edits may separate from the word it misspells."""


def within_edits(a: str, b: str, most: int) -> bool:
    """Whether ``a`` becomes ``b`` by at most ``most`` insertions, deletions or changes."""
    if abs(len(a) - len(b)) > most:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > most:
            return False
        previous = current
    return previous[-1] <= most


def nearest_written(word: str, written: Iterable[str]) -> str:
    """Return the written word ``word`` is a typo of ("" when none is close enough).

    Both folded. The first in sorted order among those within the allowed edits,
    so the result does not depend on the order ``written`` comes in.
    """
    if len(word) < TYPO_MIN_LENGTH:
        return ""
    allowed = 2 if len(word) >= TWO_EDITS_LENGTH else 1
    near = sorted(
        w
        for w in set(written)
        if len(w) >= TYPO_MIN_LENGTH and w != word and within_edits(word, w, allowed)
    )
    return near[0] if near else ""
