"""Scoring primitives of the pack step: similarity, priors, boosts, length penalty.

All lexical matching works on *terms*: content words (:func:`sealgraph.text.content_words`)
reduced by a light suffix-stripping stemmer, so that "portrayed" matches "portrays"
and "films" matches "film". The redundancy gate and MMR use plain content-word sets
instead (:func:`sealgraph.text.lexical_overlap`'s Jaccard), the measure the context
bubble paper and our evaluation report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from sealgraph.text import _WORD_RE, STOPWORDS, fold, normalize_name, words

__all__ = [
    "ANSWER_TYPES_DETECTED",
    "cohesion",
    "contains_answer_type",
    "fast_content_words",
    "fast_words",
    "focus_term_sets",
    "idf_weights",
    "infer_answer_type",
    "jaccard",
    "length_penalty",
    "match_section_key",
    "matches_focus",
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
"""Answer types whose values are recognised in text; other types get no boost."""

_MONTHS = "january february march april may june july august september october november december"
_DATE_RE = re.compile(
    rf"\b(?:1[0-9]{{3}}|20[0-9]{{2}})s?\b|\b(?:{'|'.join(_MONTHS.split())})\b|\bcentur(?:y|ies)\b",
    re.IGNORECASE,
)
_NUMBER_RE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|dozen)\b",
    re.IGNORECASE,
)
_DATE_Q_RE = re.compile(
    r"\b(?:when|what year|which year|what date|which date|what decade|what century|"
    r"in what year|born on|first|earlier|earliest|later|latest|older|oldest|younger|youngest|"
    r"founded|established|released)\b"
)
_NUMBER_Q_RE = re.compile(
    r"\bhow (?:many|much|old|long|tall|far|large|big|high)\b|"
    r"\b(?:number|percentage|population|age|more|most|fewer|fewest|larger|largest|bigger|"
    r"biggest|higher|highest|taller|tallest|longer|longest|numerous)\b"
)
# Openings that refer back to the previous sentence's subject.
_ANAPHORA_RE = re.compile(
    r"^\W*(?:he|she|it|they|his|her|its|their|him|them|this|these|those|there|"
    r"the (?:band|group|film|album|song|company|city|town|team|club|show|series|book|game|"
    r"station|school|university|river|building|party|magazine|newspaper|novel|species|"
    r"latter|former)|both|also|however|later|in addition)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """Reduce a folded word to a crude stem (plural, -ing, -ed and -ly endings removed).

    Deliberately light: it only has to make inflections of the same word meet, and a
    wrong merge of two words costs little in a bag-of-terms similarity.
    """
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix in ("'s", "’s"):
        if word.endswith(suffix):
            word = word[: -len(suffix)]
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "ches", "shes", "xes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif (word.endswith("ed") and len(word) > 4) or (word.endswith("ly") and len(word) > 4):
        word = word[:-2]
    return word[:7]


def fast_words(text: str) -> list[str]:
    """Return :func:`sealgraph.text.words` of ``text``, fast for ASCII text.

    Folding (NFKD, strip combining marks, casefold) is a per-character Python loop;
    on ASCII text it is exactly ``casefold()``, and most text is ASCII. Packing
    tokenises every sentence of the evidence, so this keeps it within its time budget.
    """
    if text.isascii():
        return _WORD_RE.findall(text.casefold())
    return words(text)


def fast_content_words(text: str) -> list[str]:
    """Return :func:`sealgraph.text.content_words` of ``text`` (via :func:`fast_words`)."""
    return [w for w in fast_words(text) if w not in STOPWORDS]


def terms(text: str) -> frozenset[str]:
    """Return the set of stemmed content words of ``text``."""
    return frozenset(stem(w) for w in fast_content_words(text))


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
    present = [t for t in question_terms if t in weights]
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
    date = _DATE_Q_RE.search(q)
    number = _NUMBER_Q_RE.search(q)
    if date and (not number or date.start() <= number.start()):
        return "date"
    return "number" if number else None


def contains_answer_type(text: str, answer_type: str | None) -> bool:
    """Whether ``text`` contains a value of ``answer_type`` (``date`` or ``number``)."""
    if answer_type == "date":
        return _DATE_RE.search(text) is not None
    if answer_type == "number":
        return _NUMBER_RE.search(text) is not None
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
    if _ANAPHORA_RE.match(right_text):
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
