"""The offline answer composer: the reader and the question's form decide, units answer.

See :mod:`sealgraph.reasoning.answer` for how each question form is answered. The
reader (:mod:`._reader`) scores every unit of the context for each part the question
asks; the composer then answers:

* a question of several parts, each part by its own best unit;
* a yes/no question by the values or statements its entities' sentences compare
  (:func:`~._compare.yes_no`), else by the reader's deciding unit;
* a choice by the option the compared values or relations select;
* a table row the question names by its cell (:func:`~._rows.row_answer`);
* anything else by the reader's best unit, unless the chain of sentences linked by
  names (:func:`~._hops.chain_answer`, one sentence per hop) does as well: a
  question asked in one sentence keeps its chain when the reader's best unit does
  not score clearly higher (:data:`READER_MARGIN`) than every sentence of it.

It declines when no unit states what a part asks together (:data:`HELD_MIN`, the
combination the reader reads: the asked relation and its qualifiers in one unit).
Every decision is kept in the answer's :class:`~._types.AnswerStep` for the trace.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.reasoning.answer._build import decline, with_gaps
from sealgraph.reasoning.answer._compare import choice, value_kind, yes_no
from sealgraph.reasoning.answer._context import Context
from sealgraph.reasoning.answer._hops import chain_answer
from sealgraph.reasoning.answer._kind import answer_kind
from sealgraph.reasoning.answer._pick import held_share, polar_answer, reader_answer
from sealgraph.reasoning.answer._reader import (
    AnswerAids,
    Reading,
    asked_parts,
    asked_sentence,
    options_modify,
    read_parts,
    score_unit,
)
from sealgraph.reasoning.answer._rows import row_answer
from sealgraph.reasoning.answer._step import answer_step
from sealgraph.reasoning.answer._types import ComposedAnswer, GapLike, OfflineAnswer, SpanText
from sealgraph.text.chunking import split_sentences

__all__ = ["HELD_MIN", "READER_MARGIN", "compose_answer", "extractive_answer"]

READER_MARGIN = 0.25
"""Share of its own score by which the reader's best unit must beat every sentence of
the chain for a one-sentence question's answer to be the reader's (chosen on half a
of HotpotQA and FastAPI)."""

HELD_MIN = 0.0
"""Least share of a part's word weight one unit must state together for an answer."""

_Route = tuple[ComposedAnswer | None, str]


def compose_answer(
    needs: QuestionNeeds,
    spans: Sequence[SpanText],
    gaps: Sequence[GapLike] = (),
    aids: AnswerAids | None = None,
) -> ComposedAnswer:
    """Compose the offline answer from the packed spans (see the module docstring).

    Args:
        needs: The question's needs (entities, relation terms, answer type, hops).
        spans: The packed spans, with their citation numbers.
        gaps: Gaps the sufficiency gate left open: they say what is missing when the
            answer declines or a hop is not in the context; they never, alone, make
            the composer decline.
        aids: What the index lends the reader (its embedder, its word weights);
            None reads by the context's own words.

    Returns:
        The :class:`ComposedAnswer`; ``insufficient`` when no unit of the context
        states what the question asks.

    """
    kind = answer_kind(needs)
    if not spans:
        return decline(None, kind, gaps, "the context is empty")
    ctx = Context(needs, spans)
    if not ctx.sentences:
        return decline(ctx, kind, gaps)
    readings = read_parts(ctx, asked_parts(needs), aids)
    held = min((held_share(r) for r in readings), default=0.0)
    if held < HELD_MIN:
        why = _unstated(readings)
        got = decline(ctx, kind, gaps, why)
        return dataclasses.replace(got, step=answer_step(readings, "declined", why, held))
    got, why = _answer(ctx, kind, readings, gaps)
    if got is None:
        got = decline(ctx, kind, gaps)
        why = why or "no unit of the context answers anything the question asks"
        return dataclasses.replace(got, step=answer_step(readings, "declined", why, held))
    got = with_gaps(ctx, got, gaps)
    return dataclasses.replace(got, step=answer_step(readings, _route(why), why, held))


def _route(why: str) -> str:
    return why.split(":", 1)[0]


def _unstated(readings: Sequence[Reading]) -> str:
    """Say which part no unit states: its words the best unit lacks."""
    reading = min(readings, key=held_share)
    best = reading.best
    held = best.held if best is not None else frozenset()
    lacking = [t for t, _ in sorted(reading.weights.items(), key=lambda x: -x[1]) if t not in held]
    words = ", ".join(f"'{t}'" for t in lacking[:4])
    return f"no passage states {words} together with the rest of '{reading.part.text}'"


def _answer(
    ctx: Context, kind: str, readings: Sequence[Reading], gaps: Sequence[GapLike]
) -> _Route:
    """Answer by the question's form, then the reader or the chain (module docstring)."""
    needs = ctx.needs
    asked = asked_sentence(needs.question)
    if kind == "choice" and options_modify(asked, needs.options):
        kind = answer_kind(dataclasses.replace(needs, answer_type="other", options=()))
    if len(readings) > 1:
        return reader_answer(ctx, readings), "parts: each part is answered by its best unit"
    if kind == "yes_no":
        return _polar(ctx, readings)
    if kind == "choice" or (
        needs.structure == "comparison" and len(needs.entities) >= 2 and value_kind(asked)
    ):
        got = choice(ctx)
        if got is not None and (got.short or kind == "choice"):
            return got, "compare: the option the compared values or relations select"
    row = row_answer(ctx, kind)
    if row is not None:
        return row, "row: the cell of the row the question names, under the column it asks"
    return _prefer(ctx, chain_answer(ctx, kind, gaps), readings)


def _polar(ctx: Context, readings: Sequence[Reading]) -> _Route:
    got = yes_no(ctx)
    if got is not None and got.short:
        return (
            got,
            "compare: the verdict of the sentences the entities' values or statements decide",
        )
    polar = polar_answer(ctx, readings[0])
    if polar is not None and (polar.short or got is None):
        return polar, "polar: the unit that states what the question asks decides yes or no"
    return got, "compare: no sentence decides yes or no"


def _prefer(ctx: Context, chain: ComposedAnswer | None, readings: Sequence[Reading]) -> _Route:
    """Choose the reader's answer or the chain's (see the module docstring)."""
    read = reader_answer(ctx, readings)
    if read is None:
        return chain, "chain: the reader found no unit"
    if chain is None:
        return read, "reader: no chain of sentences states anything asked"
    if len(split_sentences(ctx.needs.question)) > 1:
        return read, "reader: the last sentence asks, the sentences before it set the scope"
    best = readings[0].best
    support = set(chain.support)
    units = [u for u in ctx.sentences if (u.n, u.text) in support]
    if best is None or not best.value or not units:
        return chain, "chain: the reader's best unit holds no value of the asked kind"
    chained = max(score_unit(ctx, readings[0], u) for u in units)
    if best.score - chained > READER_MARGIN * best.score:
        return read, (
            f"reader: [{best.unit.n}] scores {best.score:.2f}, the chain's best sentence "
            f"{chained:.2f}"
        )
    return chain, (
        f"chain: its best sentence scores {chained:.2f}, near the reader's best unit "
        f"[{best.unit.n}] ({best.score:.2f})"
    )


def extractive_answer(needs: QuestionNeeds, spans: Sequence[SpanText]) -> OfflineAnswer:
    """Return the short answer alone: ``yes``/``no``, an option, a date, number or name.

    Cites the sentence the short answer was read from (both compared sentences for
    a comparison). Empty when no short answer is recognised with confidence.
    """
    got = compose_answer(needs, spans)
    if not got.short:
        return OfflineAnswer("", (), 0.0)
    if got.kind in ("yes_no", "choice"):
        return OfflineAnswer(got.short, got.cited, got.confidence)
    holding = [n for n, text in got.support if got.short in text]
    cited = (holding[-1],) if holding else got.cited[-1:]
    return OfflineAnswer(got.short, cited, got.confidence)
