"""Offline extractive answers chosen by answer type.

Without a model the answer is a span copied from the packed context: ``yes``/``no``
for yes/no questions, one of the named options for choice questions, and
otherwise a date, number, person or place span from the sentence that best matches
the question's relation words. Every answer cites the spans it was read from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sealgraph.ledger.extract import DATE_RE, NUMBER_RE, PLACE_RE
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.text import STOPWORDS, content_words, normalize_name

_SENT_RE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_CAP_SPAN = re.compile(
    r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|the|de|von|van|and|da|del|la|le)\s+)?[A-Z][\w'’.-]*){0,4}"
)
_EARLY = re.compile(r"\b(earlier|earliest|first|older|oldest|before|longer ago)\b", re.I)
_LATE = re.compile(
    r"\b(later|latest|last|younger|youngest|after|(?:more|most) recent(?:ly)?|newer|newest)\b",
    re.I,
)
_LIFESPAN = re.compile(r"\blived (longer|shorter)\b|\b(longer|shorter) (life|lifespan)\b", re.I)
_MORE = re.compile(
    r"\b(more|most|larger|largest|bigger|biggest|higher|highest|greater|longer|taller)\b", re.I
)
_LESS = re.compile(r"\b(less|least|fewer|smaller|smallest|lower|lowest|shorter)\b", re.I)
_ARTICLE = re.compile(r"^(?:The|A|An)\s+(?=[A-Z])")
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")


@dataclass(frozen=True, slots=True)
class SpanText:
    """A packed span as the answerer sees it."""

    n: int
    """Citation number."""
    doc_id: str
    """Document the span comes from."""
    title: str
    """Document title."""
    text: str
    """Span text."""


@dataclass(frozen=True, slots=True)
class OfflineAnswer:
    """An extractive answer with the spans it cites."""

    answer: str
    """The answer text."""
    cited: tuple[int, ...]
    """Citation numbers of the spans it was read from."""
    confidence: float
    """0..1 heuristic confidence."""


def _sentences(spans: Sequence[SpanText]) -> list[tuple[int, str, str]]:
    out = []
    for s in spans:
        for m in _SENT_RE.finditer(s.text):
            sent = m.group(0).strip()
            if sent:
                out.append((s.n, s.title, sent))
    return out


def _first_value(pattern: re.Pattern, text: str) -> str | None:
    m = pattern.search(text)
    return m.group(0) if m else None


def _year(value: str) -> int | None:
    m = _YEAR.search(value)
    return int(m.group(1)) if m else None


def _number(value: str) -> float | None:
    m = re.search(r"\d[\d,]*(?:\.\d+)?", value)
    if not m:
        return None
    try:
        return float(m.group(0).replace(",", ""))
    except ValueError:
        return None


def _option_spans(option: str, spans: Sequence[SpanText]) -> list[SpanText]:
    key = normalize_name(option)
    words = set(content_words(option))
    exact = [s for s in spans if normalize_name(s.title) == key]
    if exact:
        return exact
    return [s for s in spans if words and words <= set(content_words(s.title + " " + s.text))]


def _first_quantity(text: str) -> str | None:
    """First number that is not part of a date: "opened in 2014, 120 people" → "120"."""
    dates = [(m.start(), m.end()) for m in DATE_RE.finditer(text)]
    for m in NUMBER_RE.finditer(text):
        if not any(a <= m.start() < b for a, b in dates):
            return m.group(0)
    return None


def _compare_values(
    question: str, options: Sequence[str], spans: Sequence[SpanText]
) -> tuple[OfflineAnswer | None, list[tuple[str, tuple[int, ...]]]]:
    """Pick the option the question's comparative word selects by dates or numbers.

    Returns the answer (None when no comparable values decide it) and, per option,
    the citation numbers of its spans.
    """
    lifespan = _LIFESPAN.search(question)
    values = []
    for opt in options[:2]:
        found = _option_spans(opt, spans)
        text = " ".join(s.text for s in found)
        year = _year(_first_value(DATE_RE, text) or "")
        if lifespan:
            # "Who lived longer?" compares birth-to-death spans, not dates.
            years = [int(y) for y in _YEAR.findall(text)[:2]]
            num = float(abs(years[1] - years[0])) if len(years) == 2 else None
            year = None
        else:
            num = _number(_first_quantity(text) or "")
        values.append((opt, year, num, tuple(s.n for s in found)))
    (a, ya, na, ca), (b, yb, nb, cb) = values
    cited = tuple(sorted(set(ca) | set(cb)))
    sides = [(a, ca), (b, cb)]
    q = question
    if ya is not None and yb is not None and ya != yb and (_EARLY.search(q) or _LATE.search(q)):
        early = a if ya < yb else b
        late = b if early == a else a
        return OfflineAnswer(early if _EARLY.search(q) else late, cited, 0.7), sides
    if na is not None and nb is not None and na != nb and (_MORE.search(q) or _LESS.search(q)):
        big = a if na > nb else b
        small = b if big == a else a
        return OfflineAnswer(big if _MORE.search(q) else small, cited, 0.6), sides
    return None, sides


def _compare(needs: QuestionNeeds, spans: Sequence[SpanText]) -> OfflineAnswer | None:
    options = list(needs.options) or [e.name for e in needs.entities[:2]]
    if len(options) < 2:
        return None
    got, ((a, ca), (b, cb)) = _compare_values(needs.question, options, spans)
    if got:
        return got
    # No comparable value: pick the option whose passages match the relation best.
    rel = set(needs.relation_terms)

    def score(opt_cites):
        text = " ".join(s.text for s in spans if s.n in opt_cites)
        return len(rel & set(content_words(text)))

    pick = a if score(ca) >= score(cb) else b
    return OfflineAnswer(pick, tuple(sorted(set(ca) | set(cb))), 0.3)


def _yes_no(needs: QuestionNeeds, spans: Sequence[SpanText]) -> OfflineAnswer:
    ents = [e.name for e in needs.entities[:2]]
    q_text = needs.question
    if len(ents) == 2 and not re.search(r"\bsame\b", q_text, re.I):
        # "Is X older than Y?": yes when the comparison picks the first-named entity.
        got, _ = _compare_values(q_text, ents, spans)
        if got:
            return OfflineAnswer("yes" if got.answer == ents[0] else "no", got.cited, 0.6)
    rel = set(needs.relation_terms)
    cited: set[int] = set()
    hits = []
    for name in ents:
        found = _option_spans(name, spans)
        cited |= {s.n for s in found}
        text = " ".join(s.text for s in found)
        hits.append(bool(found) and bool(rel & set(content_words(text))) if rel else bool(found))
    q = needs.question.lower()
    if re.search(r"\bsame\b", q) and len(ents) == 2:
        # Same X? Compare the relation-word neighbourhoods of the two entities.
        texts = [" ".join(s.text for s in _option_spans(n, spans)) for n in ents]
        shared = set(content_words(texts[0])) & set(content_words(texts[1])) & rel
        ans = "yes" if shared else "no"
    else:
        ans = "yes" if hits and all(hits) else "no"
    return OfflineAnswer(ans, tuple(sorted(cited)), 0.5)


def _typed_span(needs: QuestionNeeds, spans: Sequence[SpanText]) -> OfflineAnswer | None:
    rel = set(needs.relation_terms)
    q_words = set(content_words(needs.question))
    q_keys = {e.key for e in needs.entities}
    best: tuple[float, int, str, int] | None = None
    for order, (n, _title, sent) in enumerate(_sentences(spans)):
        overlap = len(rel & set(content_words(sent)))
        if needs.answer_type == "date":
            cands = [m.group(0) for m in DATE_RE.finditer(sent)]
        elif needs.answer_type == "number":
            cands = [
                m.group(0) for m in NUMBER_RE.finditer(sent) if not DATE_RE.fullmatch(m.group(0))
            ]
        elif needs.answer_type == "place":
            cands = [m.group(1) for m in PLACE_RE.finditer(sent)]
        else:
            cands = [m.group(0) for m in _CAP_SPAN.finditer(sent)]
        for c in cands:
            ckey = normalize_name(c)
            if not ckey or ckey in q_keys or set(ckey.split()) <= q_words or ckey in STOPWORDS:
                continue
            score = overlap + (0.5 if needs.answer_type in ("date", "number", "place") else 0.0)
            cand = (score, -order, c, n)
            if best is None or cand[:2] > best[:2]:
                best = cand
    if best is None:
        return None
    text = _ARTICLE.sub("", best[2].strip(" ,."))
    return OfflineAnswer(text, (best[3],), min(1.0, 0.2 + 0.1 * best[0]))


def extractive_answer(needs: QuestionNeeds, spans: Sequence[SpanText]) -> OfflineAnswer:
    """Choose an answer span from the packed spans by the question's answer type."""
    if not spans:
        return OfflineAnswer("", (), 0.0)
    if needs.answer_type == "yes_no":
        return _yes_no(needs, spans)
    if needs.answer_type == "choice" or (
        needs.structure == "comparison"
        and len(needs.entities) >= 2
        and needs.answer_type not in ("date", "number")
    ):
        got = _compare(needs, spans)
        if got:
            return got
    got = _typed_span(needs, spans)
    if got:
        return got
    return OfflineAnswer("", (), 0.0)
