"""How a language writes reporting periods, and questions over a set of them.

One value, :class:`PeriodWords`, held by a lexicon's ``periods`` field. The ledger reads
it (:mod:`sealgraph.ledger.periods`) to match the period a question asks about ("Q2
2023", "the first quarter of 2023", "the quarter ending July 1, 2023", "the latest
10-Q") with the period a document covers (its title, its file name, the period its
opening states: "For the quarterly period ended October 1, 2022"), and to tell a
question asked over a set of periods ("over time", "across these quarters", "in these
10-Qs") from one asked of a single period.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["PeriodWords"]


@dataclass(frozen=True)
class PeriodWords:
    """The words and patterns of reporting periods (see the module docstring)."""

    months: Mapping[str, int]
    """Folded month names and abbreviations → month number (1-12)."""
    ordinals: Mapping[str, int]
    """Folded ordinal words of quarters → quarter number ("first" → 1 … "fourth" → 4)."""
    quarter_res: tuple[re.Pattern[str], ...]
    """Ways of writing a quarter of a year. Named groups: ``q`` (a digit) or ``ordinal``
    (a word of :attr:`ordinals`), and ``year`` (four digits) or ``yy`` (two digits):
    "Q1 2023", "2023 Q1", "Q1 of fiscal 2023", "the first quarter of 2023", "Q3'22"."""
    date_res: tuple[re.Pattern[str], ...]
    """Ways of writing a full date. Named groups ``month`` (a key of :attr:`months`),
    ``day`` and ``year``: "October 1, 2022", "1 October 2022"."""
    period_end_re: re.Pattern[str]
    """A period said to end on a date: "the quarterly period ended October 1, 2022", "the
    quarter ending July 1, 2023", "three months ended March 31, 2023". Named group
    ``date``, read with :attr:`date_re`."""
    fiscal_year_re: re.Pattern[str]
    """A whole fiscal year: "fiscal 2023", "fiscal year 2023", "FY2023". Named group ``year``."""
    recent_re: re.Pattern[str]
    """A question asking about the latest period of a set: "the latest 10-Q", "the most
    recent quarter", "its last quarterly report"."""
    set_re: re.Pattern[str]
    """A question asked over a set of periods or reports: "over time", "over the
    reported quarters", "across these quarters", "for each reported period", "in these
    10-Qs", "relative to past quarters", "over historical periods"."""
    code_re: re.Pattern[str]
    """A document code written with a hyphen ("10-Q", "8-K"): no name, and no period."""
