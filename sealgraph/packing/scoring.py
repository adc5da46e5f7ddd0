"""Scoring primitives of the pack step: similarity, priors, boosts, length penalty.

All lexical matching works on *terms*: content words (:func:`sealgraph.text.content_words`)
reduced by the lexicon's stemmer (:meth:`sealgraph.text.lexicon.Lexicon.stem`), so that
"portrayed" matches "portrays" and "films" matches "film". The words and patterns
that recognise dates, numbers, names, pointers and anaphora are the active
lexicon's (:mod:`sealgraph.text.lexicon`). The redundancy gate and MMR use plain content-word sets
instead (:func:`sealgraph.text.lexical_overlap`'s Jaccard), the measure the context
bubble paper and our evaluation report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Iterable, Mapping, Sequence

from sealgraph.text.lexicon import WORD_RE, Lexicon, active, fold, stem, words
from sealgraph.text.lines import (
    document_line_keys,
    line_key,
    repeated_floor,
)
from sealgraph.text.names import normalize_name
from sealgraph.types import Chunk

__all__ = [
    "ANSWER_KINDS_RECOGNISED",
    "ANSWER_TYPES_DETECTED",
    "boilerplate_reason",
    "cohesion",
    "contains_answer_type",
    "fast_content_words",
    "fast_words",
    "focus_term_sets",
    "has_answer_value",
    "idf_weights",
    "infer_answer_type",
    "jaccard",
    "length_penalty",
    "line_key",
    "match_section_key",
    "matches_focus",
    "name_spans",
    "phrase",
    "question_similarity",
    "rank_scores",
    "section_label",
    "section_prior",
    "stem",
    "terms",
    "title_phrase",
]

ANSWER_TYPES_DETECTED = ("date", "number")
"""Answer types whose values earn the answerability boost; other types get none."""

ANSWER_KINDS_RECOGNISED = (
    "date",
    "number",
    "amount",
    "person",
    "agent",
    "organization",
    "place",
    "entity",
)
"""Answer kinds :func:`has_answer_value` recognises in text (what makes a sentence
answer-bearing; see :func:`sealgraph.reasoning.answer.answer_kind`)."""

_YEAR_RE = re.compile(r"^(?:1[0-9]{3}|20[0-9]{2})s?$")
_DIGITS_RE = re.compile(r"\d[\d,.]*")
_LINE_OPENING = " \t\n-*+•>#|\"'“‘([0123456789."
# Markdown and HTML links, bare URLs and wiki links.
_LINK_RE = re.compile(
    r"!?\[([^\]\n]*)\]\([^)\n]*\)|<https?://[^>\s]+>|https?://\S+|\[\[[^\]\n]+\]\]"
)
_KEY_VALUE_LINE_RE = re.compile(r"^\s*[A-Za-z_][\w-]*\s*:(?:\s+\S|\s*$)")
_FENCE_LINE = ("---", "+++", "...")
_TERMINAL_RE = re.compile(r"[.!?:;…][\"'”’)\]*_]*\s*$")


def fast_words(text: str) -> list[str]:
    """Return :func:`sealgraph.text.words` of ``text``, fast for ASCII text.

    Folding (NFKD, strip combining marks, casefold) is a per-character Python loop;
    on ASCII text it is exactly ``casefold()``, and most text is ASCII. Packing
    tokenises every sentence of the evidence, so this keeps it within its time budget.
    """
    if text.isascii():
        return WORD_RE.findall(text.casefold())
    return words(text)


def fast_content_words(text: str) -> list[str]:
    """Return :func:`sealgraph.text.content_words` of ``text`` (via :func:`fast_words`)."""
    stop = active().stop_words
    return [w for w in fast_words(text) if w not in stop]


def terms(text: str) -> frozenset[str]:
    """Return the set of stemmed content words of ``text`` (the active lexicon's stems)."""
    lex = active()
    stop = lex.stop_words
    return frozenset(lex.stem(w) for w in fast_words(text) if w not in stop)


def phrase(text: str) -> str:
    """Folded words of ``text`` joined by single spaces and padded with one space each side.

    ``phrase(name) in phrase(text)`` tests whether ``text`` mentions ``name`` as a whole
    word sequence, ignoring case, accents and punctuation.
    """
    return " " + " ".join(fast_words(text)) + " "


def title_phrase(title: str) -> str | None:
    """Return the :func:`phrase` of a title without its disambiguator, or None.

    ``"Parklife (album)"`` gives ``" parklife "``; a title without any content word
    (nothing to match on) gives None.
    """
    name = normalize_name(title)
    if not fast_content_words(name):
        return None
    return phrase(name)


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    """Jaccard index of two sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def idf_weights(term_sets: Iterable[frozenset[str]]) -> dict[str, float]:
    """Smoothed inverse document frequency over the given units: ln(1 + N / df).

    Computed over the units of one pack call, so that a word every sentence shares
    (typically the subject's name) weighs less than the words that single one out.
    """
    sets = list(term_sets)
    df: dict[str, int] = {}
    for s in sets:
        for t in s:
            df[t] = df.get(t, 0) + 1
    n = len(sets)
    return {t: math.log(1.0 + n / c) for t, c in df.items()}


def question_similarity(
    question_terms: frozenset[str], unit_terms: frozenset[str], weights: Mapping[str, float]
) -> float:
    """IDF-weighted share of the question's terms found in a unit, in [0, 1].

    Only question terms that occur somewhere in the pool count in the denominator:
    a question word absent from every unit cannot tell units apart.
    """
    # Sorted: a float sum in a set's order would change with the hash seed.
    present = sorted(t for t in question_terms if t in weights)
    if not present:
        return 0.0
    total = sum(weights[t] for t in present)
    hit = sum(weights[t] for t in present if t in unit_terms)
    return hit / total


def rank_scores(scores: Sequence[float]) -> list[float]:
    """Rank-based scores 1 − rank/n (rank 0 = highest score; ties keep input order)."""
    n = len(scores)
    order = sorted(range(n), key=lambda i: (-scores[i], i))
    out = [0.0] * n
    for rank, i in enumerate(order):
        out[i] = 1.0 - rank / n
    return out


def infer_answer_type(question: str) -> str | None:
    """Guess the expected answer type from the question's wording (``date``/``number``).

    Besides wh-phrases ("when", "how many"), comparatives count: "which came out
    first" or "who is older" are settled by dates, "which has more species" by
    numbers. Only the types whose values :func:`contains_answer_type` can recognise
    are returned; anything else gives None (no answer-type boost).
    """
    q = fold(question)
    lex = active()
    date = lex.date_question_re.search(q)
    number = lex.number_question_re.search(q)
    if date and (not number or date.start() <= number.start()):
        return "date"
    return "number" if number else None


def contains_answer_type(text: str, answer_type: str | None) -> bool:
    """Whether ``text`` contains a value of ``answer_type`` (``date`` or ``number``)."""
    if answer_type == "date":
        return active().date_mention_re.search(text) is not None
    if answer_type == "number":
        return active().number_mention_re.search(text) is not None
    return False


def focus_term_sets(focus_terms: Iterable[str]) -> list[frozenset[str]]:
    """Term sets of the focus terms (empty ones dropped, duplicates removed, order kept)."""
    out: list[frozenset[str]] = []
    for term in focus_terms:
        ts = terms(term)
        if ts and ts not in out:
            out.append(ts)
    return out


def matches_focus(focus: Sequence[frozenset[str]], unit_terms: frozenset[str]) -> bool:
    """Whether a unit mentions a focus term: at least half of its terms (one minimum)."""
    for ts in focus:
        hit = len(ts & unit_terms)
        if hit and 2 * hit >= len(ts):
            return True
    return False


def cohesion(left_terms: frozenset[str], right_terms: frozenset[str], right_text: str) -> float:
    """Lexical similarity of two consecutive units, used for windows without embeddings.

    The overlap coefficient of their term sets (|A∩B| / min(|A|, |B|), which does not
    punish a short sentence for being short), raised to 1.0 when the right unit opens
    with a word that refers back to the left one ("He", "It", "The band", ...): such a
    sentence cannot be read without its antecedent.
    """
    if active().anaphora_re.match(right_text):
        return 1.0
    if not left_terms or not right_terms:
        return 0.0
    return len(left_terms & right_terms) / min(len(left_terms), len(right_terms))


def length_penalty(tokens: int, theta: float) -> float:
    """Context-bubble length penalty 1 / (1 + tokens/θ)."""
    return 1.0 / (1.0 + max(tokens, 0) / theta)


def section_label(section: Sequence[str], title: str = "") -> str:
    """Human label of a heading chain: headings joined by ``" > "`` (empty when untagged).

    A first heading that repeats the document title (a Markdown file's ``# Title``) is
    left out: the rendered header shows the title already, and section priors and
    budgets should see ``"Ownership"``, not ``"Ledgerline > Ownership"``.
    """
    parts = [s for s in section if s]
    if parts and title and normalize_name(parts[0]) == normalize_name(title):
        parts = parts[1:]
    return " > ".join(parts)


def match_section_key(label: str, keys: Iterable[str]) -> str | None:
    """Return the most specific key (longest; then alphabetical) contained in ``label``.

    Matching is case-insensitive substring matching, so ``"results"`` matches the
    label ``"Chapter 2 > Results"``. An empty key matches only untagged spans.
    """
    folded = label.casefold()
    best: str | None = None
    for key in keys:
        k = key.casefold()
        ok = (k in folded) if k else (folded == "")
        if ok and (best is None or len(key) > len(best) or (len(key) == len(best) and key < best)):
            best = key
    return best


def section_prior(label: str, priors: Mapping[str, float]) -> float:
    """Structural prior π(section): the value of the most specific matching key, else 0."""
    key = match_section_key(label, priors)
    return 0.0 if key is None else float(priors[key])


def name_spans(
    text: str,
    *,
    known_openers: frozenset[str] = frozenset(),
    common_words: frozenset[str] = frozenset(),
) -> list[tuple[int, str]]:
    """Proper names written in ``text``: ``(offset, name)`` of each capitalised run.

    Leading function words ("The", "In") are dropped, and so is a trailing
    possessive. A single capitalised word that opens a sentence or a line is
    capitalised by position, not because it is a name: it counts only when it is an
    acronym ("PPT") or one of ``known_openers`` (folded words known to be names, e.g.
    because the same text writes them capitalised mid-sentence). The opening word of
    a longer run is dropped when it is one of ``common_words`` (folded words the text
    also writes in lower case) and not a known opener: "Every SEV1" is "SEV1". Month
    and day names and numbers at the edges of a run date it, they name nothing
    ("June 2021"), unless a connector binds them ("Outage of March 2025").
    """
    out: list[tuple[int, str]] = []
    lex = active()
    for m in lex.name_run_re.finditer(text):
        found = _run_name(text, m, lex, known_openers, common_words)
        if found is not None:
            out.append(found)
    return out


def _run_name(
    text: str,
    m: re.Match[str],
    lex: Lexicon,
    known_openers: frozenset[str],
    common_words: frozenset[str],
) -> tuple[int, str] | None:
    """Return the name a capitalised run writes, ``(offset, name)``, or None.

    See :func:`name_spans` for what is trimmed and when a lone opening word counts.
    """
    start = m.start()
    parts = _without_possessive(m.group(0), lex).split()
    before = text[:start].rstrip(_LINE_OPENING)
    opens = not before or before.endswith((".", "!", "?", ":", ";", "\n"))
    if opens and len(parts) > 1 and parts[1].islower():
        # "Owns the Ledgerline Billing Service": a capitalised verb, then a name.
        parts[0] = parts[0].lower()
    elif (
        opens
        and len(parts) > 1
        and fold(parts[0]) in common_words
        and fold(parts[0]) not in known_openers
    ):
        parts[0] = parts[0].lower()
    parts, opens = _trim_name_parts(parts, opens, lex)
    if not parts:
        return None
    start = m.start() + m.group(0).find(parts[0])
    name = " ".join(parts)
    if opens and len(parts) == 1 and start != m.start():
        opens = False
    if opens and len(parts) == 1:
        word = parts[0]
        if not (word.isupper() and len(word) > 1) and fold(word) not in known_openers:
            return None
    return start, name


def _without_possessive(name: str, lex: Lexicon) -> str:
    """Drop a trailing possessive ("Dana's" is "Dana")."""
    for suffix in (*lex.possessive_suffixes, "'", "’"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _trim_name_parts(parts: list[str], opens: bool, lex: Lexicon) -> tuple[list[str], bool]:
    """Trim the words of a run that name nothing, and tell whether it still opens a line.

    Leading function words, lower-case and calendar words go; trailing calendar words
    and numbers go unless a connector binds them; trailing connectors go. A run whose
    dropped opening word was lower case no longer opens the line.
    """
    stop, calendar, connectors = lex.stop_words, lex.calendar_words, lex.name_connectors
    while parts and (fold(parts[0]) in stop or parts[0].islower() or fold(parts[0]) in calendar):
        opens = False if not parts[0][:1].isupper() else opens
        parts = parts[1:]
    while (
        parts
        and (fold(parts[-1]) in calendar or parts[-1].isdigit())
        and not any(p in connectors for p in parts[:-1])
    ):
        parts = parts[:-1]
    while parts and parts[-1] in connectors:
        parts = parts[:-1]
    return parts, opens


def has_answer_value(text: str, kind: str | None, exclude: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` states a value of the answer ``kind`` (see :data:`ANSWER_KINDS_RECOGNISED`).

    ``date``: a year, an ISO date or a (capitalised) month name with a day or year;
    ``number``/``amount``: a number that is not a year; names (``person``, ``agent``,
    ``organization``, ``entity``): a proper name (:func:`name_spans`) none of whose
    stemmed words all belong to ``exclude`` (the question's own words: the entity the
    question names is not its answer); ``place``: a capitalised name after a place
    preposition ("based in Lisbon"), likewise not one of the question's. Any other
    kind has no recognisable value.
    """
    if kind == "date":
        return active().strict_date_re.search(text) is not None
    if kind in ("number", "amount"):
        return any(not _YEAR_RE.match(m.group(0).rstrip(",.")) for m in _DIGITS_RE.finditer(text))
    if kind in ("person", "agent", "organization", "entity"):
        names = [n for _, n in name_spans(text)]
    elif kind == "place":
        names = [m.group(1) for m in active().place_re.finditer(text)]
    else:
        return False
    return any(not terms(n) <= exclude for n in names if terms(n))


def _link_chars(text: str) -> int:
    return sum(len(m.group(0).strip()) for m in _LINK_RE.finditer(text))


def boilerplate_reason(text: str, common_lines: Container[str] | None = None) -> str:
    """Why a unit of text is boilerplate rather than content ("" when it is content).

    Decided by structure, so it works on any site or corpus:

    * ``front matter``: a ``---`` fenced block of ``key: value`` lines, or only such lines;
    * ``links``: link-heavy text (links and URLs make half its characters, or all but
      two of its content words are link text) such as navigation bars and link lists;
    * ``pointer``: a short line (at most ten words) opening with a pointer word
      (the lexicon's ``pointer_words``): "See the guide", "Next: Setup";
    * ``fragment``: a single line of at most three content words, with no digit and no
      sentence-ending punctuation ("Edit this page", "On this page");
    * ``repeated``: every line of it is in ``common_lines`` (keys, see :func:`line_key`,
      of lines that many documents of the corpus repeat: headers, footers, banners).

    Table rows (lines starting with ``|``) are never fragments.
    """
    s = text.strip()
    if not s:
        return ""
    lines = [ln.strip() for ln in s.splitlines() if ln.strip()]
    if _is_front_matter(lines):
        return "front matter"
    if _is_repeated(lines, common_lines):
        return "repeated"
    lex = active()
    if _is_link_heavy(s, lex):
        return "links"
    body_words = fast_words(s)
    opener = body_words[0] if body_words else ""
    if opener in lex.pointer_words and len(body_words) <= 10:
        return "pointer"
    if _is_fragment(s, lines, body_words, lex):
        return "fragment"
    return ""


def _is_front_matter(lines: Sequence[str]) -> bool:
    """Tell whether the lines are front matter.

    A ``---`` fenced block of ``key: value`` lines, or two lines or more of only such
    lines (and fences).
    """
    if any(ln in _FENCE_LINE for ln in lines[:1]) and any(
        _KEY_VALUE_LINE_RE.match(ln) for ln in lines
    ):
        return True
    return len(lines) >= 2 and all(
        _KEY_VALUE_LINE_RE.match(ln) or ln in _FENCE_LINE for ln in lines
    )


def _is_repeated(lines: Sequence[str], common_lines: Container[str] | None) -> bool:
    """Tell whether every line with words is one many documents of the corpus repeat."""
    keys = [line_key(ln) for ln in lines]
    return bool(common_lines and any(keys) and all(k in common_lines for k in keys if k))


def _is_link_heavy(s: str, lex: Lexicon) -> bool:
    """Tell whether the text is link-heavy.

    Links and URLs make half its characters, or all but two of its content words are
    link text.
    """
    if not _LINK_RE.search(s):
        return False
    outside = [w for w in fast_words(_LINK_RE.sub(" ", s)) if w not in lex.stop_words]
    visible = len("".join(s.split()))
    return 2 * _link_chars(s) >= visible or len(outside) <= 2


def _is_fragment(s: str, lines: Sequence[str], body_words: Sequence[str], lex: Lexicon) -> bool:
    """Tell whether it is one short line: ≤ 3 content words, no digit, no sentence end."""
    return (
        len(lines) == 1
        and not s.startswith("|")
        and not _TERMINAL_RE.search(s)
        and not any(ch.isdigit() for ch in s)
        and len([w for w in body_words if w not in lex.stop_words]) <= 3
    )


def repeated_lines(chunks: Iterable[Chunk]) -> frozenset[str]:
    """Keys of the lines that many documents of a corpus repeat (navigation, footers...).

    A line counts once per document; headings and lines longer than 300 characters
    are left out. A line is repeated when at least :data:`REPEATED_LINE_MIN_DOCS`
    documents and :data:`REPEATED_LINE_DOC_SHARE` of all documents hold it. Keys are
    :func:`line_key`. (An index counts these at build time; see
    :mod:`sealgraph.text.lines`.)
    """
    texts_of: dict[str, list[str]] = {}
    for chunk in chunks:
        texts_of.setdefault(chunk.doc_id, []).append(chunk.text)
    docs_with: dict[str, int] = {}
    for texts in texts_of.values():
        for key in document_line_keys(texts):
            docs_with[key] = docs_with.get(key, 0) + 1
    floor = repeated_floor(len(texts_of))
    return frozenset(k for k, n in docs_with.items() if n >= floor)
