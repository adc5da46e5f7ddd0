"""The names a document is known by, each with how reliably it names the document.

A document is named by its title (``"Harbourlight (album)"``), the aliases derived
from it (``"Harbourlight"``, an acronym, a surname), the names it declares for itself
in its opening text ("Payments Platform Team (PPT)", "usually just called Beacon")
and its section headings. :func:`document_entries` ranks them for one document; the
offline reasoner's gazetteer (:mod:`sealgraph.ledger.gazetteer`) is the union over
the corpus, and an index writes the same entries at build time
(:mod:`sealgraph.index.folder._gazetteer`) so that nothing is derived at a user's first question.
Everything here reads the active lexicon (:func:`sealgraph.text.lexicon.use_lexicon`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote

from sealgraph.text.lexicon import WORD_RE, active, fold
from sealgraph.text.names import normalize_name, token_key

__all__ = [
    "KIND_RANK",
    "acronym",
    "declared_aliases",
    "document_entries",
    "document_names",
    "is_file_name_title",
    "strip_org_suffix",
    "title_aliases",
    "title_words",
]

# Alias kinds in decreasing reliability; a mention keeps the best kind it matched.
# Headings rank below a document's own names: a glossary heading "PPT" must not
# steal the acronym of the team page it describes.
KIND_RANK = {"title": 0, "alias": 1, "acronym": 2, "heading": 3, "partial": 4}
"""Rank of each kind of name: lower is more reliable."""
KIND_OF_RANK = {rank: kind for kind, rank in KIND_RANK.items()}
"""The kind of each rank."""

# A title with no space that joins its words with separators or capitals: a file name.
_FILE_NAME_TITLE = re.compile(r"^(?=\S*(?:[_%.-]|[a-z][A-Z]))\S+$")
_LEAD_CHARS = 600  # how much of a document's opening text may declare its names


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
    last = _surname(title, key)
    if last:
        out.append((last, "partial"))
    return [(k, kind) for k, kind in out if k and k not in stop]


def _surname(title: str, key: str) -> str:
    """Return the last word of a two- or three-word capitalised name (a surname), else ""."""
    lex = active()
    raw_words = [w for w in WORD_RE.findall(re.sub(r"\([^)]*\)", "", title))]
    # A person's name is written with spaces; a file name's last word is no surname.
    named = " " in title.strip() and "," not in title
    if not (2 <= len(raw_words) <= 3 and all(w[:1].isupper() for w in raw_words) and named):
        return ""
    last = token_key(raw_words[-1])
    if len(last) > 3 and last not in lex.stop_words | lex.org_suffixes and last != key:
        return last
    return ""


def declared_aliases(title: str, lead_text: str) -> list[str]:
    """Names a document declares for its own subject in its opening text.

    Reads an acronym in brackets right after the title ("Payments Platform Team
    (PPT)") and names introduced by "also known as", "called", "or simply".
    """
    out = []
    head = lead_text[:_LEAD_CHARS]
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


def document_entries(
    title: str, aliases: Iterable[str] = (), headings: Iterable[str] = ()
) -> dict[str, int]:
    """Rank every name of one document: ``{key: rank}`` (:data:`KIND_RANK`).

    A key keeps its most reliable kind among the title's aliases
    (:func:`title_aliases`) and the declared ``aliases`` (an alias); a heading only
    names the document under a key none of its other names has.
    """
    ranks: dict[str, int] = {}
    for key, kind in title_aliases(title):
        rank = KIND_RANK[kind]
        if rank < ranks.get(key, 99):
            ranks[key] = rank
    stop = active().stop_words
    for name in aliases:
        key = normalize_name(name)
        if key and key not in stop and len(key) > 1 and ranks.get(key, 99) > KIND_RANK["alias"]:
            ranks[key] = KIND_RANK["alias"]
    for heading in headings:
        key = normalize_name(heading)
        if key and key not in stop and len(key) > 2 and key not in ranks:
            ranks[key] = KIND_RANK["heading"]
    return ranks


def document_names(title: str, first_text: str, headings: Iterable[str]) -> dict[str, int]:
    """Rank the names of a document given its title, first chunk's text and headings."""
    return document_entries(title, declared_aliases(title, first_text), headings)


def is_file_name_title(title: str) -> bool:
    """Tell whether a title is a file name (no space; words joined by separators or case)."""
    return bool(_FILE_NAME_TITLE.match(title.strip()))


def title_words(title: str) -> tuple[tuple[str, ...], bool]:
    """Return the word keys of a title, and whether it is a file name.

    A file name's words are its tokens (``CopAcc_NDA-and-ToP`` → ``copacc``, ``nda``,
    …, percent-escapes undone); another title's are those of its normalised name.
    A name no gazetteer entry matches may still be written inside one title's words.
    """
    if is_file_name_title(title):
        return tuple(token_key(t) for t in WORD_RE.findall(unquote(title))), True
    return tuple(normalize_name(title).split()), False


def word_in_title(word: str, tokens: Iterable[str]) -> bool:
    """Tell whether ``word`` is one of a title's word keys, or glued inside a longer one.

    "efca" is inside "efcaconfidentialityagreement": a word of three or more
    letters counts inside a token at least four letters longer.
    """
    return any(
        t == word or (len(word) >= 3 and len(t) >= len(word) + 4 and word in t) for t in tokens
    )
