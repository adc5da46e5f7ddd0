"""Values of the asked kind in a unit: versions, durations, numbers, dates, code, names.

The short answer a unit gives for a part (:class:`~._parts.Part`): a version number,
a number with its measure unit ("10 MB", "every 15 seconds"), a date, a name written
as code (`` `@asynccontextmanager` ``, ``secrets.compare_digest()``), a person or an
organisation (read as the chain reads them, :func:`~._values.best_value`), or the
value a stated default gives ("Defaults to `500`"). A value the question writes
itself is never its answer.
"""

from __future__ import annotations

import re

from sealgraph.packing.scoring import phrase, terms
from sealgraph.reasoning.answer._context import TOKEN, Context, Sentence
from sealgraph.reasoning.answer._kind import answer_head
from sealgraph.reasoning.answer._parts import Part
from sealgraph.reasoning.answer._values import NAME_KINDS, best_value, name_candidates
from sealgraph.text.lexicon import active, stem
from sealgraph.text.names import fold
from sealgraph.text.readable import readable

__all__ = ["CODE_SPAN", "DEFAULT_VALUES", "LITERAL", "default_stems", "fits_kind", "unit_value"]

_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+){0,3}(?![\w.]*\d)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
_IDENTIFIER = re.compile(
    r"(?<![\w@.-])(?:@|--?)?[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)+(?:\(\))?"
    r"|(?<![\w@.-])@[A-Za-z_]\w*|(?<![\w-])--[a-z][\w-]*"
    r"|(?<![\w.])[a-z]+_[a-z_0-9]+(?:\(\))?|(?<![\w.])[a-z]+[A-Z]\w*|(?<![\w.])[A-Z][a-z]+[A-Z]\w*"
)

LITERAL = re.compile(r"`[^`\n]+`|\"[^\"\n]+\"|\b(?:True|False|None|null|true|false)\b")

DEFAULT_VALUES = ("literal", "number", "duration", "code", "entity", "description")
"""Answer values a stated default gives (a version or a date is not a default)."""


def default_stems() -> frozenset[str]:
    return frozenset(stem(w) for w in active().reader.default_words)


def fits_kind(value: str, kind: str) -> bool:
    """Whether a short answer is written as a value of ``kind`` (a version, a number…).

    Only the kinds written in a form of their own are checked; any other fits.
    """
    lex = active()
    text = value.strip()
    checks = {
        "version": lambda: _VERSION.search(text) is not None,
        "number": lambda: lex.number_re.search(text) is not None,
        "amount": lambda: lex.number_re.search(text) is not None,
        "duration": lambda: lex.number_re.search(text) is not None,
        "date": lambda: lex.date_re.search(text) is not None,
        "code": lambda: bool(_code_names(text) or CODE_SPAN.search(value)),
    }
    check = checks.get(kind)
    return check() if check is not None else True


def unit_value(ctx: Context, part: Part, unit: Sentence) -> str:
    """Return the unit's value of the kind ``part`` asks for, nearest its words ("" if none)."""
    if part.value in ("polar", "procedure", "description"):
        return ""
    if part.default and part.value in DEFAULT_VALUES:
        m = active().reader.default_re.search(unit.text)
        if m:
            return _strip_code(m.group(1))
    if part.value in NAME_KINDS and part.value != "entity":
        # People, organisations, places: the fit to the kind, a current holder for a
        # present-tense question, then the nearest the relation (the chain's reading).
        got = best_value(ctx, unit, part.value, set(), answer_head(part.text))
        if got and phrase(got[1]) not in phrase(ctx.needs.question):
            return got[1]
    cands = _values(ctx, part, unit)
    if not cands:
        return ""
    # Nearest the asked relation's words ("led by X" for "who leads"), else any of its words.
    toks = [(m.start(), stem(fold(m.group(0)))) for m in TOKEN.finditer(unit.text)]
    rel = [p for p, t in toks if t in part.relation] or [p for p, t in toks if t in part.terms]
    _pos, text = min(cands, key=lambda c: (min((abs(c[0] - r) for r in rel), default=0), c[0]))
    return _strip_code(text)


def _values(ctx: Context, part: Part, unit: Sentence) -> list[tuple[int, str]]:
    """Candidate values of the asked kind in a unit, as ``(offset, text)``; none the question writes."""
    text = unit.text
    lex = active()
    asked = ctx.needs.question
    kind = part.value
    if kind == "version":
        found = [(m.start(), m.group(0)) for m in _VERSION.finditer(text)]
    elif kind == "duration":
        found = _durations(text)
    elif kind in ("number", "amount"):
        found = _numbers(text, kind)
    elif kind == "date":
        found = [(m.start(), m.group(0)) for m in lex.date_re.finditer(text)]
    elif kind == "code":
        found = _code_names(text)
    elif kind == "literal":
        found = [(m.start(), m.group(0)) for m in LITERAL.finditer(text)]
        found += _numbers(text, "number")
    elif kind in NAME_KINDS:
        found = name_candidates(ctx, unit, kind, set(), answer_head(part.text))
        if kind == "entity":
            found += _code_names(text) + _item_key(unit)
    else:
        found = []
    q = phrase(asked)
    return [
        (p, v) for p, v in found if phrase(_strip_code(v)) not in q and not terms(v) <= ctx.q_terms
    ]


def _item_key(unit: Sentence) -> list[tuple[int, str]]:
    """Return the key of a definition item or row ("**X-Forwarded-Proto**: The original …")."""
    if unit.kind not in ("item", "row"):
        return []
    key = re.split(r"\s+[-–—]\s+|:\s", readable(unit.text), maxsplit=1)[0].strip()
    return [(0, key)] if key and len(key.split()) <= 4 and key != readable(unit.text) else []


def _numbers(text: str, kind: str) -> list[tuple[int, str]]:
    lex = active()
    if kind == "amount":
        amounts = [(m.start(), m.group(0).strip()) for m in lex.amount_re.finditer(text)]
        if amounts:
            return amounts
    skip = [(m.start(), m.end()) for m in lex.date_re.finditer(text)]
    skip += [(m.start(), m.end()) for m in _VERSION.finditer(text)]
    measures = lex.reader.measure_units | lex.reader.time_units
    out = []
    for m in lex.number_re.finditer(text):
        if any(a <= m.start() < b for a, b in skip):
            continue
        unit = _unit_after(text, m.start(), m.group(0))
        measured = unit and fold(unit) in measures
        out.append((m.start(), f"{m.group(0)} {unit}" if measured else m.group(0)))
    return out


def _durations(text: str) -> list[tuple[int, str]]:
    units = active().reader.time_units
    return [
        (p, v) for p, v in _numbers(text, "number") if " " in v and fold(v.split()[-1]) in units
    ]


def _unit_after(text: str, pos: int, number: str) -> str:
    """Return the word right after a number ("minutes" in "30 minutes"), "" when none."""
    end = pos + len(number)
    after = TOKEN.match(text, end + 1) if text[end : end + 1] == " " else None
    return after.group(0) if after else ""


def _code_names(text: str) -> list[tuple[int, str]]:
    found = [(m.start(), m.group(1)) for m in CODE_SPAN.finditer(text)]
    spans = [(m.start(), m.end()) for m in CODE_SPAN.finditer(text)]
    found += [
        (m.start(), m.group(0))
        for m in _IDENTIFIER.finditer(text)
        if not any(a <= m.start() < b for a, b in spans)
    ]
    return sorted(found)


def _strip_code(text: str) -> str:
    text = text.strip()
    if len(text) > 2 and text[0] == text[-1] == "`":
        return text[1:-1].strip()
    return text.strip(" ,.;:")
