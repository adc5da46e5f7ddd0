"""Answers from the reader's readings: one cited unit per asked part.

A part asking for a value is answered by its best unit, the value leading as the
short answer; a polar part by "yes" or "no" when its best unit states what it asks
(a negation in it says no), by the unit alone when it does not; a procedure by its
best unit and, when that unit announces it ("…, use `use_cache=False`:"), the code
block right after it; a description by the unit alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from sealgraph.reasoning.answer._build import build_answer
from sealgraph.reasoning.answer._context import TOKEN, Context, Sentence
from sealgraph.reasoning.answer._reader import Reading
from sealgraph.reasoning.answer._types import ComposedAnswer
from sealgraph.text.lexicon import active
from sealgraph.text.names import fold, normalize_name

__all__ = ["POLAR_HELD", "held_share", "polar_answer", "polar_verdict", "reader_answer"]

POLAR_HELD = 0.6
"""Share of a polar part's word weight its deciding unit must hold for a verdict."""


def _negated(text: str) -> bool:
    lex = active()
    toks = [fold(t) for t in TOKEN.findall(text)]
    return any(t in lex.negations or t.endswith(lex.negation_suffixes) for t in toks)


def held_share(reading: Reading) -> float:
    """Share of the part's word weight its best-holding unit states (headings count half).

    The combination the decline reads: the asked relation with its qualifiers,
    written together in one unit (or its heading, or the unit it refers back to).
    """
    return reading.held


def polar_verdict(ctx: Context, reading: Reading) -> str:
    """Yes or no from the best unit of a polar part, "" when it does not decide.

    The unit must state what the part asks (:data:`POLAR_HELD` of its word weight)
    and name every entity the question names ("Are X and Y both …?" is not decided
    by a sentence about X alone).
    """
    best = reading.best
    if best is None or best.features.get("lexical", 0.0) < POLAR_HELD:
        return ""
    modifiers = set(ctx.needs.answer_modifiers)
    keys = [normalize_name(e.name) for e in ctx.needs.entities if e.key not in modifiers]
    if len(keys) >= 2 and not all(ctx.names_entity(best.unit, k) for k in keys):
        return ""
    rw = active().reader
    negated = _negated(best.unit.text) != _negated(reading.part.text)
    return rw.no if negated else rw.yes


def polar_answer(ctx: Context, reading: Reading) -> ComposedAnswer | None:
    """Answer a polar part by its deciding unit (no verdict when it decides nothing)."""
    best = reading.best
    if best is None:
        return None
    verdict = polar_verdict(ctx, reading)
    return build_answer(ctx, "yes_no", verdict, [best.unit], 0.5 if verdict else 0.0)


def reader_answer(ctx: Context, readings: Sequence[Reading]) -> ComposedAnswer | None:
    """Answer each part by its best unit (see the module docstring); None without any."""
    units: list[Sentence] = []
    shorts: list[str] = []
    for reading in readings:
        best = reading.best
        if best is None or reading.held <= 0:
            continue  # no unit writes a word of what this part asks
        units.extend(_with_code(ctx, reading, best.unit))
        short = polar_verdict(ctx, reading) if reading.part.value == "polar" else best.value
        shorts.append(short)
    if not units:
        return None
    kind = readings[0].part.kind if len(readings) == 1 else "other"
    short = shorts[0] if len(shorts) == 1 else ("; ".join(shorts) if all(shorts) else "")
    return build_answer(ctx, kind, short, units, 0.5 if short else 0.0)


def _with_code(ctx: Context, reading: Reading, unit: Sentence) -> list[Sentence]:
    """Return the unit, and the code block it announces for a procedure ("…, like this:")."""
    if reading.part.value != "procedure" or unit.kind == "code" or not unit.text.endswith(":"):
        return [unit]
    after = ctx.sentences[unit.order + 1] if unit.order + 1 < len(ctx.sentences) else None
    if after is not None and after.kind == "code" and after.n == unit.n:
        return [unit, after]
    return [unit]
