"""The corpus gazetteer: titles, headings and their aliases mapped to documents.

The offline reasoner links entity mentions to documents through the corpus's own
structure: a document title (``"Harbourlight (album)"``), the aliases derived from it
(``"Harbourlight"``, an acronym, a surname) and section headings. Mentions are found by
longest-match over word n-grams, so ``"the Payments Platform Team's budget"``
links to the document titled *Payments Platform Team*.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from sealgraph.text.lexicon import WORD_RE, active, fold
from sealgraph.text.names import normalize_name, token_key, tokenize_with_offsets

_TOKEN_RE = WORD_RE
# A title with no space that joins its words with separators or capitals: a file name.
_FILE_NAME_TITLE = re.compile(r"^(?=\S*(?:[_%.-]|[a-z][A-Z]))\S+$")
_MAX_KEY_WORDS = 16

# Alias kinds in decreasing reliability; a mention keeps the best kind it matched.
# Headings rank below a document's own names: a glossary heading "PPT" must not
# steal the acronym of the team page it describes.
KIND_RANK = {"title": 0, "alias": 1, "acronym": 2, "heading": 3, "partial": 4}


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


def _sentence_start(text: str, pos: int) -> bool:
    """Tell whether only spaces and quotes separate ``pos`` from a sentence end or the start."""
    before = text[:pos].rstrip(" \t\"'“‘(")
    return not before or before[-1] in ".!?\n:;"


def strip_org_suffix(key: str) -> str:
    """Drop trailing legal-form words (the lexicon's ``org_suffixes``): ``"apple computer"`` → ``"apple"``."""
    suffixes = active().org_suffixes
    parts = key.split()
    while len(parts) > 1 and parts[-1] in suffixes:
        parts.pop()
    return " ".join(parts)


def acronym(key: str) -> str:
    """Return the initials of the content words of a normalised name (``"payments platform team"`` → ``"ppt"``)."""
    stop = active().stop_words
    parts = [p for p in key.split() if p not in stop]
    return "".join(p[0] for p in parts) if len(parts) >= 3 else ""


def title_aliases(title: str) -> list[tuple[str, str]]:
    """Derive ``(key, kind)`` aliases of a document title, the title key first.

    Rules (each keeps only non-empty keys that are not stopwords):
    - the normalised title (parenthetical disambiguator dropped);
    - the part before a comma (``"Concord, California"`` → ``"concord"``);
    - the name without legal-form suffixes (``"Apple Inc."`` → ``"apple"``);
    - an acronym of names with three or more content words;
    - the last word of a two- or three-word capitalised name (a surname), as ``partial``;
      not for ``"Place, Region"`` titles, file names or a legal-form last word, which
      are no surnames.
    """
    key = normalize_name(title)
    lex = active()
    stop = lex.stop_words
    out: list[tuple[str, str]] = []
    if not key:
        return out
    out.append((key, "title"))
    if "," in title:
        head = normalize_name(title.split(",", 1)[0])
        if head and head != key:
            out.append((head, "alias"))
    stripped = strip_org_suffix(key)
    if stripped != key:
        out.append((stripped, "alias"))
    acr = acronym(key)
    if acr and len(acr) >= 3 and acr not in stop:
        out.append((acr, "acronym"))
    raw_words = [w for w in _TOKEN_RE.findall(re.sub(r"\([^)]*\)", "", title))]
    # A person's name is written with spaces; a file name's last word is no surname.
    named = " " in title.strip() and "," not in title
    if 2 <= len(raw_words) <= 3 and all(w[:1].isupper() for w in raw_words) and named:
        last = token_key(raw_words[-1])
        if len(last) > 3 and last not in stop | lex.org_suffixes and last != key:
            out.append((last, "partial"))
    return [(k, kind) for k, kind in out if k and k not in stop]


class Gazetteer:
    """Maps normalised names to the documents they denote.

    Args:
        titles: ``(doc_id, title)`` pairs.
        headings: ``(doc_id, heading)`` pairs (section titles).
        aliases: ``(doc_id, name)`` pairs of names a document declares for itself
            ("Payments Platform Team (PPT)", "usually just called Beacon").

    """

    def __init__(
        self,
        titles: Iterable[tuple[str, str]],
        headings: Iterable[tuple[str, str]] = (),
        aliases: Iterable[tuple[str, str]] = (),
    ) -> None:
        titles = list(titles)
        # Titles that are file names ("CopAcc_NDA-and-ToP-Mentors_2.0_2017") name no
        # entity as a whole; their words do (see :meth:`lookup`).
        self._file_words: dict[str, tuple[str, ...]] = {
            doc_id: tuple(token_key(t) for t in _TOKEN_RE.findall(unquote(title)))
            for doc_id, title in titles
            if _FILE_NAME_TITLE.match(title.strip())
        }
        # Every title's words, for names of several words written inside a longer
        # title ("Data Use Agreement" in "Data Use Agreement New York City").
        self._title_words: dict[str, tuple[str, ...]] = {
            doc_id: self._file_words.get(doc_id) or tuple(normalize_name(title).split())
            for doc_id, title in titles
        }
        # Every key's documents, each at the rank of its most reliable kind.
        entries: dict[str, dict[str, int]] = {}
        self.title_key: dict[str, str] = _rank_titles(entries, titles)
        _rank_declared(entries, aliases, headings)
        self._entries: dict[str, tuple[tuple[str, ...], str]] = _best_kinds(entries)
        self.max_words = min(
            _MAX_KEY_WORDS, max((len(k.split()) for k in self._entries), default=1)
        )

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def lookup(self, name: str) -> tuple[tuple[str, ...], str | None]:
        """Return ``(doc_ids, kind)`` for a name, or ``((), None)`` when unknown.

        A name no title or alias matches may still be written inside exactly one
        title: a name of several words inside any title ("Data Use Agreement" in
        "Data Use Agreement New York City"), a single word inside a file-name title
        ("CopAcc" in ``CopAcc_NDA-and-ToP-Mentors_2.0_2017``, "EFCA" in
        ``EFCAConfidentialityAgreement``). That document is returned as ``partial``.
        """
        key = normalize_name(name)
        hit = self._entries.get(key) or self._entries.get(strip_org_suffix(key))
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
        pool = self._title_words if len(want) >= 2 else self._file_words

        def has(word: str, tokens: tuple[str, ...]) -> bool:
            return any(
                t == word or (len(word) >= 3 and len(t) >= len(word) + 4 and word in t)
                for t in tokens
            )

        return tuple(sorted(d for d, toks in pool.items() if all(has(w, toks) for w in want)))

    def find_mentions(self, text: str, *, min_kind: str = "partial") -> list[Mention]:
        """Find gazetteer names in ``text`` by greedy longest match, left to right.

        Single lower-case words are only accepted when the name is a title or alias
        of its own (not a surname or acronym), because common nouns ("music",
        "lady") would otherwise link everything to everything.
        """
        limit = KIND_RANK[min_kind]
        stop = active().stop_words
        toks = tokenize_with_offsets(text)
        out: list[Mention] = []
        i, n = 0, len(toks)
        while i < n:
            found = self._longest_match(text, toks, i, limit, stop)
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
        i: int,
        limit: int,
        stop: frozenset[str],
    ) -> tuple[Mention, int] | None:
        """Return the longest name starting at ``toks[i]`` and the token it ends before."""
        n = len(toks)
        for j in range(min(n, i + self.max_words), i, -1):
            if toks[i][0] in stop and j - i == 1:
                break
            key = " ".join(t[0] for t in toks[i:j])
            hit = self._entries.get(key)
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


def _rank_titles(
    entries: dict[str, dict[str, int]], titles: Iterable[tuple[str, str]]
) -> dict[str, str]:
    """Rank every title's aliases into ``entries``; return each document's title key."""
    title_key: dict[str, str] = {}
    for doc_id, title in titles:
        for i, (key, kind) in enumerate(title_aliases(title)):
            if i == 0:
                title_key[doc_id] = key
            entries.setdefault(key, {})
            best = entries[key].get(doc_id)
            rank = KIND_RANK[kind]
            if best is None or rank < best:
                entries[key][doc_id] = rank
    return title_key


def _rank_declared(
    entries: dict[str, dict[str, int]],
    aliases: Iterable[tuple[str, str]],
    headings: Iterable[tuple[str, str]],
) -> None:
    """Rank the names documents declare for themselves, then their headings, into ``entries``.

    A declared alias counts as an alias; a heading only names a document no other
    name of that key already denotes.
    """
    stop = active().stop_words
    for doc_id, name in aliases:
        key = normalize_name(name)
        if key and key not in stop and len(key) > 1:
            current = entries.setdefault(key, {})
            if current.get(doc_id, 99) > KIND_RANK["alias"]:
                current[doc_id] = KIND_RANK["alias"]
    for doc_id, heading in headings:
        key = normalize_name(heading)
        if key and key not in stop and len(key) > 2:
            rank = KIND_RANK["heading"]
            current = entries.setdefault(key, {})
            if doc_id not in current:
                current[doc_id] = rank


def _best_kinds(entries: dict[str, dict[str, int]]) -> dict[str, tuple[tuple[str, ...], str]]:
    """Keep, for each key, only the targets of its most reliable kind.

    A title match beats an alias of another document with the same key.
    """
    out: dict[str, tuple[tuple[str, ...], str]] = {}
    inv_rank = {v: k for k, v in KIND_RANK.items()}
    for key, targets in entries.items():
        best = min(targets.values())
        docs = tuple(sorted(d for d, r in targets.items() if r == best))
        out[key] = (docs, inv_rank[best])
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


def declared_aliases(title: str, lead_text: str) -> list[str]:
    """Names a document declares for its own subject in its opening text.

    Reads an acronym in brackets right after the title ("Payments Platform Team
    (PPT)") and names introduced by "also known as", "called", "or simply".
    """
    out = []
    head = lead_text[:600]
    for m in active().declared_alias_re.finditer(head):
        name = m.group(1) or m.group(2) or m.group(3)
        if m.group(1):
            # Only an acronym that follows the title itself, not any bracketed word.
            before = head[: m.start()].rstrip()
            if not fold(before).endswith(fold(title.split(" (")[0])[-20:]):
                continue
        if name and normalize_name(name) != normalize_name(title):
            out.append(name.strip(" .,"))
    return list(dict.fromkeys(out))
