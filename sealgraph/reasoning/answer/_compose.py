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
from collections.abc import Mapping, Sequence

from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.ledger.periods import asked_month_years, month_years
from sealgraph.reasoning.answer._build import decline, with_gaps
from sealgraph.reasoning.answer._compare import choice, value_kind, yes_no
from sealgraph.reasoning.answer._context import Context, Sentence
from sealgraph.reasoning.answer._hops import chain_answer
from sealgraph.reasoning.answer._kind import answer_kind
from sealgraph.reasoning.answer._parts import asked_parts, asked_sentence, options_modify
from sealgraph.reasoning.answer._pick import held_share, polar_answer, polar_verdict, reader_answer
from sealgraph.reasoning.answer._reader import (
    AnswerAids,
    Candidate,
    Reading,
    candidate,
    read_parts,
)
from sealgraph.reasoning.answer._rows import row_answer
from sealgraph.reasoning.answer._step import answer_step
from sealgraph.reasoning.answer._typed import fits_kind
from sealgraph.reasoning.answer._types import ComposedAnswer, GapLike, OfflineAnswer, SpanText
from sealgraph.text.chunking import split_sentences
from sealgraph.text.lexicon import content_words, stem

__all__ = ["HELD_MIN", "READER_MARGIN", "compose_answer", "extractive_answer"]

READER_MARGIN = 0.3
"""Share of its own score by which the reader's best unit must beat every sentence of
the chain for a one-sentence question's answer to be the reader's (chosen on half a
of HotpotQA and FastAPI)."""

HELD_MIN = 0.45
"""Share of a part's word weight one unit must state together, below which the answer
declines when no unit is close to the part under the embedder either
(:data:`UNSTATED_SIMILARITY`)."""

UNSTATED_SIMILARITY: Mapping[str, float] = {
    "sentence-transformers/all-MiniLM-L6-v2": 0.6,
    "sealgraph/all-MiniLM-L6-v2-static-v1": 0.6,
}
"""Per embedder, the cosine similarity below which no unit states what a part asks.

Calibrated on half a of the dev sets (docs/benchmarks.md); an embedder not listed
here never declines by similarity (only a part no unit writes a word of declines)."""

_Route = tuple[ComposedAnswer | None, str]

_WRITTEN_VALUES = ("version", "number", "amount", "duration", "date", "code", "literal")
"""Answer values written in a form of their own (a version, a number, code…): found in a
relevant unit, they answer better than a chain that reached no value. A name is
not among them: any unit names something."""


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
    why = unstated(ctx, readings, aids)
    if why:
        got = decline(ctx, kind, gaps, "; ".join(m for m in (_typos(readings), why) if m))
        return dataclasses.replace(got, step=answer_step(readings, "declined", why, held))
    got, why = _answer(ctx, kind, readings, gaps)
    if got is None:
        got = decline(ctx, kind, gaps)
        why = why or "no unit of the context answers anything the question asks"
        if _typos(readings):
            got = dataclasses.replace(got, missing=f"{_typos(readings)}; {got.missing}")
        return dataclasses.replace(got, step=answer_step(readings, "declined", why, held))
    undated = _undated(ctx, got)
    if undated:
        got = decline(ctx, kind, gaps, undated)
        return dataclasses.replace(got, step=answer_step(readings, "declined", undated, held))
    got = with_gaps(ctx, got, gaps)
    typos = _typos(readings)
    if typos:
        # The question writes a word no document holds: the answer reads it as the
        # word the context writes, and says so.
        missing = "; ".join(m for m in (typos, got.missing) if m)
        got = dataclasses.replace(got, missing=missing, confidence=got.confidence / 2)
    route, _, reason = why.partition(": ")
    return dataclasses.replace(got, step=answer_step(readings, route, reason, held))


def _undated(ctx: Context, got: ComposedAnswer) -> str:
    """Say when the answer's sentences date another month than the one the question asks.

    "Who was appointed CFO in August 2021?" is not answered by a sentence about March
    2021: cited sentences that write months, none of them an asked one, are about
    another event. A cited sentence that writes no month is left to the reader (the
    month is often in the sentence before it). "" when nothing conflicts.
    """
    asked = asked_month_years(ctx.needs.question).difference(
        *(month_years(e.name) for e in ctx.needs.entities)  # "the Outage of March 2025"
    )
    if not asked or not got.support:
        return ""
    written = frozenset().union(*(month_years(text) for _, text in got.support))
    if not written or not asked.isdisjoint(written):
        return ""
    months = ", ".join(f"{year}-{month:02d}" for year, month in sorted(asked))
    return f"the cited passages date other months than the one asked ({months})"


def _typos(readings: Sequence[Reading]) -> str:
    pairs = dict(pair for r in readings for pair in r.part.typos)
    return "; ".join(
        f"the documents never write '{asked}': read as '{written}'"
        for asked, written in pairs.items()
    )


def unstated(ctx: Context, readings: Sequence[Reading], aids: AnswerAids | None) -> str:
    """Say which asked part no unit states ("" when every part is stated).

    A part is not stated when no unit writes any of its words (in a question of
    several parts: one part alone is answered or declined as before); when no unit holds
    :data:`HELD_MIN` of its word weight together and none is as close to it as the
    embedder's calibrated :data:`UNSTATED_SIMILARITY`; or, in a question of several
    parts, when its yes/no part is decided by no unit ("Does X ship a rate limiter,
    and how do I use it?").
    """
    floor = UNSTATED_SIMILARITY.get(aids.embedder or "") if aids is not None else None
    if ctx.needs.structure == "comparison":
        floor = None  # each compared entity is stated in its own unit, never all together
    for reading in readings:
        similar = reading.similarity
        if reading.held <= 0 and len(readings) > 1:
            return _lacking(reading, "no passage writes a word of")
        if (
            reading.held < HELD_MIN
            and floor is not None
            and similar is not None
            and similar < floor
        ):
            return _lacking(reading, "no passage states together")
        if len(readings) > 1 and reading.part.value == "polar" and not polar_verdict(ctx, reading):
            return f"no passage says whether {reading.part.text.rstrip('?')}"
    return ""


def _lacking(reading: Reading, says: str) -> str:
    """Name the part and the heaviest of its words its best-holding unit lacks."""
    best = max(reading.ranked, key=lambda c: c.features.get("lexical", 0.0), default=None)
    held = best.held if best is not None else frozenset()
    weights = reading.weights
    written = [w for w in dict.fromkeys(content_words(reading.part.text)) if stem(w) in weights]
    written.sort(key=lambda w: -weights[stem(w)])
    lacking = ", ".join([f"'{w}'" for w in written if stem(w) not in held][:4])
    tail = f" (none holds {lacking})" if lacking else ""
    return f"{says} '{reading.part.text.rstrip('?')}'{tail}"


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
    if any(r.part.typos for r in readings):
        return read, "reader: the question misspells a word the context writes"
    support = set(chain.support)
    units = [u for u in ctx.sentences if (u.n, u.text) in support]
    best = readings[0].best
    if best is None or not units:
        return chain, "chain: the reader found no unit"
    return _by_scores(ctx, (chain, read), readings[0], best, units)


def _by_scores(
    ctx: Context,
    answers: tuple[ComposedAnswer, ComposedAnswer],
    reading: Reading,
    best: Candidate,
    units: Sequence[Sentence],
) -> _Route:
    """Choose by what the reader's ``best`` unit and the chain's ``units`` hold and score.

    ``answers``: the chain's answer, then the reader's.
    """
    chain, read = answers
    kind = reading.part.value
    if best.features["relation"] > max(
        candidate(ctx, reading, u).features["relation"] for u in units
    ):
        return (
            read,
            f"reader: [{best.unit.n}] states the asked relation, the chain's sentences do not",
        )
    if kind == "procedure":
        return read, "reader: a procedure is answered by the unit that states it and its code"
    if not best.value:
        return chain, "chain: the reader's best unit holds no value of the asked kind"
    # A value written in its own form, where the chain reached none and nothing is
    # missing (a chain short of a hop says what is missing: the reader's value would
    # be the first hop's, "2003" for "the year the director of X was born").
    written = kind in _WRITTEN_VALUES and not chain.missing
    chained_value = chain.short and fits_kind(chain.short, kind)
    if written and (not chained_value or (best.unit in units and chain.short in best.value)):
        return read, f"reader: [{best.unit.n}] holds a {kind} as asked"
    chained = max(candidate(ctx, reading, u).score for u in units)
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
