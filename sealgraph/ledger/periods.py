"""Reporting periods: the period a question asks about, the period a document covers.

A filing, a quarterly or annual report, covers one period. Its period is read from
what the document itself says (the period its opening states, "For the quarterly
period ended October 1, 2022"), and from its title and file name ("2023 Q1 AMZN.pdf");
the period a question asks about is read from its words ("Q2 2023", "the first
quarter of 2023", "the quarter ending July 1, 2023", "fiscal 2023", "the latest
10-Q"). A name linked to several documents of different periods (one company's four
filings) is narrowed to the asked period's (:func:`narrow_by_period`); a question
asked over a set of periods ("over time", "across these quarters") asks for all of
them, ordered by period (:func:`set_needs`).

The words are the active lexicon's (:class:`sealgraph.text.lexicon.PeriodWords`); a
lexicon without them reads no period. Pure functions: the documents' periods come
from a callable (:meth:`sealgraph.ledger.knowledge.CorpusKnowledge.doc_period`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from sealgraph.model import NeedEntity, QuestionNeeds, SetNeed
from sealgraph.text.lexicon import PeriodWords, active, fold
from sealgraph.text.lexicon import words as text_words

__all__ = [
    "AskedPeriods",
    "DocPeriod",
    "asked_periods",
    "document_period",
    "narrow_by_period",
    "period_spans",
    "period_words_read",
    "set_needs",
]

T = TypeVar("T")
Quarter = tuple[int, int]
"""(year, quarter number 1-4)."""

# A quarter's report ends on its last day, or a few days after it for companies whose
# fiscal quarters end on a weekday ("the quarter ended April 1, 2023" is the first).
_QUARTER_SLACK_DAYS = 10


@dataclass(frozen=True, slots=True)
class DocPeriod:
    """The period a document covers, as far as it says."""

    quarters: frozenset[Quarter] = frozenset()
    """Quarters its title or file name name, else the calendar quarter its stated
    period end falls in."""
    end: str = ""
    """ISO date of the period end its opening states ("" when it states none)."""

    @property
    def known(self) -> bool:
        """Whether the document says anything about its period."""
        return bool(self.quarters or self.end)

    def order(self) -> tuple[str, tuple[int, int]]:
        """Sort key: later periods sort later (end date first, then the latest quarter)."""
        return (self.end, max(self.quarters, default=(0, 0)))

    def label(self) -> str:
        """Return a short name of the period: "2023 Q1", else the end date, else ""."""
        if self.quarters:
            year, q = max(self.quarters)
            return f"{year} Q{q}"
        return self.end


@dataclass(frozen=True, slots=True)
class AskedPeriods:
    """The periods a question asks about."""

    quarters: tuple[tuple[Quarter, int], ...] = ()
    """Each asked quarter with where it is written (its start offset in the question)."""
    ends: tuple[tuple[str, int], ...] = ()
    """Each asked period end (ISO date) with its offset."""
    fiscal_years: tuple[tuple[int, int], ...] = ()
    """Each asked fiscal year with its offset."""
    recent: int = -1
    """Offset of a phrase asking for the latest period ("the latest 10-Q"); -1: none."""
    over_set: str = ""
    """The phrase asking over a set of periods ("over the reported quarters"); "": none."""

    @property
    def any(self) -> bool:
        """Whether the question names a period at all (a set, the latest, or one)."""
        return bool(self.quarters or self.ends or self.fiscal_years or self.over_set) or (
            self.recent >= 0
        )


def _words() -> PeriodWords | None:
    return active().periods


def _date(match_groups: dict[str, str | None], words: PeriodWords) -> dt.date | None:
    month = words.months.get(fold(match_groups.get("month") or ""))
    try:
        return dt.date(int(match_groups["year"] or 0), month or 0, int(match_groups["day"] or 0))
    except (TypeError, ValueError):
        return None


def read_date(text: str) -> dt.date | None:
    """Return the first full date written in ``text`` (None when there is none)."""
    words = _words()
    if words is None:
        return None
    found = [(m.start(), m) for p in words.date_res for m in p.finditer(text)]
    for _, m in sorted(found, key=lambda t: t[0]):
        date = _date(m.groupdict(), words)
        if date is not None:
            return date
    return None


@functools.lru_cache(maxsize=8)
def _month_year_re(months: tuple[str, ...]) -> re.Pattern[str]:
    # Month names are matched capitalised, as a date writes them ("May 2020", not "may").
    names = "|".join(
        sorted((m[:1].upper() + m[1:] for m in months if len(m) >= 3), key=len, reverse=True)
    )
    return re.compile(
        rf"\b(?:(?P<day1>\d{{1,2}})\s+)?(?P<month>{names})\.?\s+"
        r"(?:(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?,?\s+)?(?:of\s+)?(?P<year>(?:19|20)\d{2})\b"
    )


def month_years(text: str) -> frozenset[tuple[int, int]]:
    """Return the ``(year, month)`` pairs ``text`` writes.

    "April 2020", "April 3, 2020", "3 April 2020", "April of 2020"; none when the
    lexicon reads no periods.
    """
    words = _words()
    if words is None:
        return frozenset()
    return frozenset(
        (int(m["year"]), words.months[fold(m["month"])])
        for m in _month_year_re(tuple(words.months)).finditer(text)
        if fold(m["month"]) in words.months
    )


def asked_month_years(question: str) -> frozenset[tuple[int, int]]:
    """Return the months a question dates what it asks by ("updated in April 2020").

    A period the question picks documents by ("the quarter ending July 1, 2023", "Q2
    2023") is not among them: a filing's sentences need not write its own period.
    """
    words = _words()
    if words is None:
        return frozenset()
    spans = period_spans(question) + [m.span() for m in words.period_end_re.finditer(question)]
    chars = list(question)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return month_years("".join(chars))


def quarters_in(text: str) -> list[tuple[Quarter, int, int]]:
    """Every quarter written in ``text``: ``((year, quarter), start, end)``, in order."""
    words = _words()
    if words is None:
        return []
    out = []
    for pattern in words.quarter_res:
        for m in pattern.finditer(text):
            g = m.groupdict()
            q = int(g["q"]) if g.get("q") else words.ordinals.get(fold(g.get("ordinal") or ""))
            year = int(g["year"]) if g.get("year") else 2000 + int(g["yy"]) if g.get("yy") else 0
            if q and year:
                out.append(((year, q), m.start(), m.end()))
    return sorted(out, key=lambda t: t[1])


def _calendar_quarter(end: dt.date) -> Quarter:
    day = end - dt.timedelta(days=_QUARTER_SLACK_DAYS)
    return (day.year, (day.month - 1) // 3 + 1)


def document_period(doc_id: str, title: str, opening: str) -> DocPeriod:
    """Read the period a document covers from its file name, title and opening text.

    The quarters its file name and title write ("2023 Q1 AMZN.pdf") are its own; the
    period end its opening states ("For the quarterly period ended April 1, 2023")
    gives its end date, and its calendar quarter when nothing names a quarter (a
    period that ends a few days into the next quarter belongs to the one before).
    """
    words = _words()
    if words is None:
        return DocPeriod()
    quarters = {q for text in (doc_id, title) for q, _, _ in quarters_in(text)}
    end = None
    m = words.period_end_re.search(opening)
    if m:
        end = read_date(m.group("date"))
    if not quarters and end is not None:
        quarters = {_calendar_quarter(end)}
    return DocPeriod(frozenset(quarters), end.isoformat() if end else "")


def asked_periods(question: str) -> AskedPeriods:
    """Read the periods a question asks about (see :class:`AskedPeriods`)."""
    words = _words()
    if words is None:
        return AskedPeriods()
    quarters = tuple((q, a) for q, a, _ in quarters_in(question))
    ends = []
    for m in words.period_end_re.finditer(question):
        date = read_date(m.group("date"))
        if date is not None:
            ends.append((date.isoformat(), m.start()))
    fiscal = tuple(
        (int(m.group("year")), m.start()) for m in words.fiscal_year_re.finditer(question)
    )
    recent = words.recent_re.search(question)
    over = words.set_re.search(question)
    return AskedPeriods(
        quarters=quarters,
        ends=tuple(ends),
        fiscal_years=fiscal,
        recent=recent.start() if recent else -1,
        over_set=over.group(0) if over else "",
    )


def period_spans(question: str) -> list[tuple[int, int]]:
    """Where the question writes a period or a document code ("Q1 2023", "10-Q").

    No part of a name: "In Q1 2023" and the "Q" of "10-Q" are read as periods and
    codes, not as entities the question names.
    """
    words = _words()
    if words is None:
        return []
    spans = [(a, b) for _, a, b in quarters_in(question)]
    spans += [m.span() for m in words.code_re.finditer(question)]
    spans += [m.span() for m in words.fiscal_year_re.finditer(question)]
    return spans


def _matches(period: DocPeriod, quarters: set[Quarter], ends: set[str], years: set[int]) -> bool:
    if period.end and period.end in ends:
        return True
    if period.quarters & quarters:
        return True
    return bool(years and {y for y, _ in period.quarters} & years)


def _owner(offset: int, mentions: Sequence[tuple[int, str]]) -> str:
    """Return the key of the entity a period phrase at ``offset`` qualifies.

    The nearest mention before it, else the first after it ("Intel's Q2 2023 10-Q",
    "in Q1 2023, how did Intel …").
    """
    before = [key for start, key in mentions if start <= offset]
    if before:
        return before[-1]
    return mentions[0][1] if mentions else ""


def narrow_by_period(needs: QuestionNeeds, doc_period: Callable[[str], DocPeriod]) -> QuestionNeeds:
    """Keep, for a name linked to documents of several periods, those of the asked period.

    "Intel's Q2 2023 10-Q" means the one Intel document covering Q2 2023; "Amazon's
    latest 10-Q" the Amazon document of the latest period. Each period phrase
    qualifies the name written nearest before it ("Intel in Q2 2023 and Amazon in Q1
    2023"). A question over a set of periods narrows nothing (:func:`set_needs` reads
    it), and a name keeps all its documents when none of them matches.
    """
    asked = asked_periods(needs.question)
    if asked.over_set or not asked.any:
        return needs
    mentions = _mentions(needs)
    entities = []
    for e in needs.entities:
        if len(e.targets) > 1:
            e = _narrowed(e, asked, mentions, doc_period)
        entities.append(e)
    return dataclasses.replace(needs, entities=tuple(entities))


def _mentions(needs: QuestionNeeds) -> list[tuple[int, str]]:
    """(offset, key) of each entity with documents, in question order."""
    out = []
    for e in needs.entities:
        if e.targets:
            at = needs.question.find(e.name)
            out.append((at if at >= 0 else 0, e.key))
    return sorted(out)


def _narrowed(
    entity: NeedEntity,
    asked: AskedPeriods,
    mentions: Sequence[tuple[int, str]],
    doc_period: Callable[[str], DocPeriod],
) -> NeedEntity:
    def own(found: tuple[tuple[T, int], ...]) -> set[T]:
        return {value for value, at in found if _owner(at, mentions) == entity.key}

    periods = {d: doc_period(d) for d in entity.targets}
    quarters, ends, years = own(asked.quarters), own(asked.ends), own(asked.fiscal_years)
    keep = [d for d in entity.targets if _matches(periods[d], quarters, ends, years)]
    if not keep and asked.recent >= 0 and _owner(asked.recent, mentions) == entity.key:
        keep = _latest(periods)
    if keep and len(keep) < len(entity.targets):
        return dataclasses.replace(entity, targets=tuple(keep))
    return entity


def _latest(periods: dict[str, DocPeriod]) -> list[str]:
    """Return the documents of the latest period among those that state one."""
    dated = [d for d, p in periods.items() if p.known]
    if not dated:
        return []
    latest = max(periods[d].order() for d in dated)
    return [d for d in dated if periods[d].order() == latest]


def set_needs(needs: QuestionNeeds, doc_period: Callable[[str], DocPeriod]) -> QuestionNeeds:
    """Add the set needs of a question asked over a set of periods.

    "How has Intel's net sales changed over time?": every document of the name, one per
    period, ordered by period, is a member the evidence must hold. Only names linked
    to two or more documents that state periods make a set.
    """
    asked = asked_periods(needs.question)
    if not asked.over_set:
        return needs
    sets = []
    for e in needs.entities:
        periods = {d: doc_period(d) for d in e.targets}
        dated = sorted((d for d in e.targets if periods[d].known), key=lambda d: periods[d].order())
        if len(dated) < 2 or len({periods[d].order() for d in dated}) < 2:
            continue
        sets.append(
            SetNeed(
                name=e.name,
                key=e.key,
                members=tuple(dated),
                labels=tuple(periods[d].label() for d in dated),
                reason=asked.over_set,
            )
        )
    if not sets:
        return needs
    return dataclasses.replace(needs, sets=(*needs.sets, *sets))


def period_words_read(before: QuestionNeeds, after: QuestionNeeds) -> QuestionNeeds:
    """Drop from the relation words those of the period phrases the corpus reading used.

    Once "the latest 10-Q" picked Intel's latest filing, or "over these quarters" made a
    set of Intel's filings, those words name documents, not the asked relation: a
    passage need not state "latest" or "quarters" to state Intel's gross margin.
    """
    narrowed = any(
        len(a.targets) < len(b.targets)
        for a, b in zip(after.entities, before.entities, strict=False)
    )
    if not (narrowed or len(after.sets) > len(before.sets)):
        return after
    words = _words()
    if words is None:
        return after
    question = after.question
    patterns = (*words.quarter_res, words.period_end_re, words.fiscal_year_re, words.code_re)
    spans = [m.span() for p in patterns for m in p.finditer(question)]
    spans += [m.span() for p in (words.recent_re, words.set_re) for m in p.finditer(question)]
    used = {w for a, b in spans for w in text_words(question[a:b])}
    kept = tuple(w for w in after.relation_terms if not set(text_words(w)) & used)
    return dataclasses.replace(after, relation_terms=kept or after.relation_terms)
