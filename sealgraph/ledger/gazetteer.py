"""The corpus gazetteer: titles, headings and their aliases mapped to documents.

The offline reasoner links entity mentions to documents through the corpus's own
structure: a document title (``"Harbourlight (album)"``), the aliases derived from it
(``"Harbourlight"``, an acronym, a surname) and section headings. Mentions are found by
longest-match over word n-grams, so ``"the Payments Platform Team's budget"``
links to the document titled *Payments Platform Team*.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from sealgraph.text.aliases import (
    KIND_OF_RANK,
    KIND_RANK,
    acronym,
    declared_aliases,
    document_entries,
    strip_org_suffix,
    title_aliases,
    title_words,
    word_in_title,
)
from sealgraph.text.lexicon import active
from sealgraph.text.names import normalize_name, tokenize_with_offsets

__all__ = [
    "KIND_RANK",
    "Gazetteer",
    "GazetteerTables",
    "MemoryTables",
    "Mention",
    "acronym",
    "declared_aliases",
    "strip_org_suffix",
    "title_aliases",
]

MAX_KEY_WORDS = 16
"""Longest name, in words, that a mention is matched against."""


@dataclass(frozen=True, slots=True)
class Mention:
    """A gazetteer name found in a text."""

    key: str
    """Normalised name (see :func:`sealgraph.text.normalize_name`)."""
    surface: str
    """The text as written."""
    start: int
    """Character offset of the mention in the text."""
    end: int
    """Character offset one past the mention."""
    targets: tuple[str, ...]
    """Document ids the name refers to (several when ambiguous)."""
    kind: str
    """How the name is known: ``title``, ``alias``, ``heading``, ``acronym`` or ``partial``."""
    capitalized: bool
    """True when the surface form starts with a capital letter (a proper-noun signal)."""


class GazetteerTables(Protocol):
    """Where a :class:`Gazetteer` reads the corpus's names from.

    :class:`MemoryTables` derives them from titles, headings and aliases given to
    it; an index that stored them at build time offers its own (see
    :meth:`sealgraph.index.folder._statistics.CorpusStatistics.gazetteer`), read on demand.
    Keys are normalised names (:func:`sealgraph.text.names.normalize_name`) under the
    lexicon the names were read with.
    """

    max_words: int
    """Words of the longest key (at most :data:`MAX_KEY_WORDS`)."""

    def __len__(self) -> int:
        """Return the number of keys."""

    def entry(self, key: str) -> tuple[tuple[str, ...], str] | None:
        """``(doc_ids, kind)`` of a key's most reliable kind (ids sorted); None when unknown."""

    def known(self, keys: Sequence[str]) -> set[str]:
        """Keys of ``keys`` that may have an entry: all that do, perhaps a few that do not."""

    def title_key(self, doc_id: str) -> str | None:
        """Return the key of a document's title (its first alias); None for an unknown document."""

    def in_titles(self, words: Sequence[str], *, file_names_only: bool) -> tuple[str, ...]:
        """Sorted ids of the documents whose title words hold every word of ``words``.

        A word is held when it is a title word or glued inside a longer one
        (:func:`sealgraph.text.aliases.word_in_title`); with ``file_names_only``,
        only titles that are file names are looked at.
        """


class MemoryTables:
    """The corpus's names derived, in memory, from titles, headings and declared aliases.

    Args:
        titles: ``(doc_id, title)`` pairs.
        headings: ``(doc_id, heading)`` pairs (section titles).
        aliases: ``(doc_id, name)`` pairs of names a document declares for itself.

    """

    def __init__(
        self,
        titles: Iterable[tuple[str, str]],
        headings: Iterable[tuple[str, str]] = (),
        aliases: Iterable[tuple[str, str]] = (),
    ) -> None:
        titles = list(titles)
        title_of = dict(titles)
        aliases_of: dict[str, list[str]] = {}
        for doc_id, name in aliases:
            aliases_of.setdefault(doc_id, []).append(name)
        headings_of: dict[str, list[str]] = {}
        for doc_id, heading in headings:
            headings_of.setdefault(doc_id, []).append(heading)
        # Every key's documents, each at the rank of its most reliable kind.
        entries: dict[str, dict[str, int]] = {}
        for doc_id in dict.fromkeys([*title_of, *aliases_of, *headings_of]):
            ranked = document_entries(
                title_of.get(doc_id, ""), aliases_of.get(doc_id, ()), headings_of.get(doc_id, ())
            )
            for key, rank in ranked.items():
                entries.setdefault(key, {})[doc_id] = rank
        self._entries = _best_kinds(entries)
        self._title_keys = {
            doc_id: aliases[0][0] for doc_id, title in titles if (aliases := title_aliases(title))
        }
        words = {doc_id: title_words(title) for doc_id, title in titles}
        self._file_words = {d: w for d, (w, file_name) in words.items() if file_name}
        self._title_words = {d: w for d, (w, _) in words.items()}
        self.max_words = min(MAX_KEY_WORDS, max((len(k.split()) for k in self._entries), default=1))

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, key: str) -> tuple[tuple[str, ...], str] | None:
        """See :meth:`GazetteerTables.entry`."""
        return self._entries.get(key)

    def known(self, keys: Sequence[str]) -> set[str]:
        """See :meth:`GazetteerTables.known` (exact here)."""
        entries = self._entries
        return {k for k in keys if k in entries}

    def title_key(self, doc_id: str) -> str | None:
        """See :meth:`GazetteerTables.title_key`."""
        return self._title_keys.get(doc_id)

    def in_titles(self, words: Sequence[str], *, file_names_only: bool) -> tuple[str, ...]:
        """See :meth:`GazetteerTables.in_titles`."""
        pool = self._file_words if file_names_only else self._title_words
        return tuple(
            sorted(d for d, toks in pool.items() if all(word_in_title(w, toks) for w in words))
        )


class Gazetteer:
    """Maps normalised names to the documents they denote.

    Args:
        titles: ``(doc_id, title)`` pairs.
        headings: ``(doc_id, heading)`` pairs (section titles).
        aliases: ``(doc_id, name)`` pairs of names a document declares for itself
            ("Payments Platform Team (PPT)", "usually just called Beacon").

    :meth:`over` reads the names from tables made elsewhere (an index's).

    """

    def __init__(
        self,
        titles: Iterable[tuple[str, str]],
        headings: Iterable[tuple[str, str]] = (),
        aliases: Iterable[tuple[str, str]] = (),
    ) -> None:
        self._tables: GazetteerTables = MemoryTables(titles, headings, aliases)

    @classmethod
    def over(cls, tables: GazetteerTables) -> Gazetteer:
        """Return a gazetteer reading its names from ``tables``."""
        gazetteer = cls.__new__(cls)
        gazetteer._tables = tables
        return gazetteer

    @property
    def max_words(self) -> int:
        """Words of the longest name."""
        return self._tables.max_words

    def __len__(self) -> int:
        return len(self._tables)

    def __contains__(self, key: str) -> bool:
        return self._tables.entry(key) is not None

    def title_key(self, doc_id: str) -> str | None:
        """Return the normalised title of a document (its first alias), or None."""
        return self._tables.title_key(doc_id)

    def lookup(self, name: str) -> tuple[tuple[str, ...], str | None]:
        """Return ``(doc_ids, kind)`` for a name, or ``((), None)`` when unknown.

        A name no title or alias matches may still be written inside exactly one
        title: a name of several words inside any title ("Data Use Agreement" in
        "Data Use Agreement New York City"), a single word inside a file-name title
        ("CopAcc" in ``CopAcc_NDA-and-ToP-Mentors_2.0_2017``, "EFCA" in
        ``EFCAConfidentialityAgreement``). That document is returned as ``partial``.
        """
        key = normalize_name(name)
        hit = self._tables.entry(key) or self._tables.entry(strip_org_suffix(key))
        if hit:
            return hit
        docs = self._in_titles(strip_org_suffix(key))
        return (docs, "partial") if len(docs) == 1 else ((), None)

    def _in_titles(self, key: str) -> tuple[str, ...]:
        """Titles that write every word of ``key``.

        A name of one word is only looked for in file-name titles (as a word, or
        glued to others: "EFCA" in ``EFCAConfidentialityAgreement``); a name of
        several words in any title.
        """
        stop = active().stop_words
        want = [w for w in key.split() if w not in stop and len(w) >= 2]
        if not want:
            return ()
        return self._tables.in_titles(want, file_names_only=len(want) < 2)

    def find_mentions(self, text: str, *, min_kind: str = "partial") -> list[Mention]:
        """Find gazetteer names in ``text`` by greedy longest match, left to right.

        Single lower-case words are only accepted when the name is a title or alias
        of its own (not a surname or acronym), because common nouns ("music",
        "lady") would otherwise link everything to everything.
        """
        limit = KIND_RANK[min_kind]
        stop = active().stop_words
        toks = tokenize_with_offsets(text)
        # Every word n-gram up to the longest name, asked about at once: a stored
        # gazetteer answers "which of these may be names" in one step.
        grams = _ngrams(toks, self.max_words)
        known = self._tables.known([k for row in grams for k in row])
        out: list[Mention] = []
        i, n = 0, len(toks)
        while i < n:
            found = self._longest_match(text, toks, grams[i], known, i, limit, stop)
            if found is None:
                i += 1
            else:
                mention, i = found
                out.append(mention)
        return out

    def _longest_match(
        self,
        text: str,
        toks: list[tuple[str, int, int, bool]],
        grams: list[str],
        known: set[str],
        i: int,
        limit: int,
        stop: frozenset[str],
    ) -> tuple[Mention, int] | None:
        """Return the longest name starting at ``toks[i]`` and the token it ends before.

        ``grams[m]`` is the key of ``toks[i : i + m + 1]``.
        """
        for j in range(i + len(grams), i, -1):
            if toks[i][0] in stop and j - i == 1:
                break
            key = grams[j - i - 1]
            hit = self._tables.entry(key) if key in known else None
            if hit is None:
                continue
            docs, kind = hit
            if KIND_RANK[kind] > limit or not _accepted(text, toks, i, j, key, kind, stop):
                continue
            mention = Mention(
                key=key,
                surface=text[toks[i][1] : toks[j - 1][2]],
                start=toks[i][1],
                end=toks[j - 1][2],
                targets=docs,
                kind=kind,
                capitalized=toks[i][3],
            )
            return mention, j
        return None


def _ngrams(toks: list[tuple[str, int, int, bool]], max_words: int) -> list[list[str]]:
    """For each token, the keys of the n-grams starting there, shortest first."""
    n = len(toks)
    out = []
    for i in range(n):
        row = [toks[i][0]]
        for j in range(i + 1, min(n, i + max_words)):
            row.append(f"{row[-1]} {toks[j][0]}")
        out.append(row)
    return out


def _sentence_start(text: str, pos: int) -> bool:
    """Tell whether only spaces and quotes separate ``pos`` from a sentence end or the start."""
    before = text[:pos].rstrip(" \t\"'“‘(")
    return not before or before[-1] in ".!?\n:;"


def _best_kinds(entries: dict[str, dict[str, int]]) -> dict[str, tuple[tuple[str, ...], str]]:
    """Keep, for each key, only the targets of its most reliable kind.

    A title match beats an alias of another document with the same key.
    """
    out: dict[str, tuple[tuple[str, ...], str]] = {}
    for key, targets in entries.items():
        best = min(targets.values())
        docs = tuple(sorted(d for d, r in targets.items() if r == best))
        out[key] = (docs, KIND_OF_RANK[best])
    return out


def _accepted(
    text: str,
    toks: list[tuple[str, int, int, bool]],
    i: int,
    j: int,
    key: str,
    kind: str,
    stop: frozenset[str],
) -> bool:
    """Tell whether the name ``key`` written as ``toks[i:j]`` is a mention of it."""
    cap = toks[i][3]
    if j - i == 1 and not cap and (kind != "title" or len(key) < 4):
        return False
    if kind in ("partial", "acronym") and not cap:
        return False
    # A lower-case phrase that starts with a function word ("how many
    # words") is running text, not the work titled that way.
    if not any(t[3] for t in toks[i:j]) and toks[i][0] in stop:
        return False
    return not (j - i == 1 and cap and _inside_longer_name(text, toks, i, j, stop))


def _inside_longer_name(
    text: str, toks: list[tuple[str, int, int, bool]], i: int, j: int, stop: frozenset[str]
) -> bool:
    """Tell whether the capitalised word ``toks[i]`` is part of a longer capitalised run.

    "Ada" in "Ada Brightwater", "Valmora" in "University of North Valmora" belong
    to another name. A run never crosses a sentence end ("We asked PPT. Whitcombe
    agreed.").
    """
    n = len(toks)
    return bool(
        (j < n and toks[j][3] and not _sentence_start(text, toks[j][1]))
        or (
            i > 0
            and toks[i - 1][3]
            and toks[i - 1][0] not in stop
            and not _sentence_start(text, toks[i][1])
            and not _sentence_start(text, toks[i - 1][1])
        )
    )
