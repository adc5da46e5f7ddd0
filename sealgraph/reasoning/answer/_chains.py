"""Chains of sentences, one per hop, linked by the names they share.

A beam search grows chains from every sentence of the context; :func:`best_chain`
picks the one that covers most of the question's relation and reaches a value of the
expected kind, and :func:`reaches` tells whether a chain reaches the answer at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from sealgraph.reasoning.answer._context import Context, Sentence, date_parts
from sealgraph.reasoning.answer._values import VALUED_KINDS, best_value

__all__ = ["FULL_COVER", "Chain", "best_chain", "reaches"]

FULL_COVER = 0.75
"""Share of the question's relation-term weight above which one sentence is taken to
state every hop of a multi-hop question (its hops are written in one sentence)."""


@dataclass(frozen=True, slots=True)
class Chain:
    """Sentences, one per hop; the names linking them; the terms they cover."""

    sentences: tuple[Sentence, ...]
    links: frozenset[str]
    covered: frozenset[str]


def _chains(ctx: Context, hops: int, beam: int = 12) -> list[Chain]:
    sents = ctx.sentences
    # Every sentence may open a chain (the entity the question names may be written
    # differently); anchored ones score higher (see _chain_score).
    layer = [Chain((s,), frozenset(), s.terms) for s in sents]
    chains = list(layer)
    layer.sort(
        key=lambda c: (
            -(ctx.coverage(c.covered) + (0.5 if ctx.anchored(c.sentences[0]) else 0.0)),
            c.sentences[0].order,
        )
    )
    layer = layer[: beam * 2]
    # One hop more than the question's form says: a hop count read from wording can
    # be short by one ("the stipend an engineer on PPT receives").
    for _ in range(1, max(hops, 2)):
        grown: list[Chain] = []
        for ch in layer:
            last = ch.sentences[-1]
            for s in sents:
                # A hop moves on: the next sentence is not about a question entity.
                if s in ch.sentences or s.text == last.text or ctx.anchored(s):
                    continue
                links = ctx.links(last, s)
                if links:
                    grown.append(Chain((*ch.sentences, s), ch.links | links, ch.covered | s.terms))
        grown.sort(key=lambda c: (-ctx.coverage(c.covered), [x.order for x in c.sentences]))
        layer = grown[:beam]
        chains.extend(layer)
    return chains


def reaches(ctx: Context, ch: Chain, hops: int) -> bool:
    """Whether a chain reaches the answer.

    It needs one sentence per hop (two at least for a multi-hop question) or one
    sentence stating (nearly) every relation asked; a last sentence that states the
    asked relation ("leads" in "Who leads the team …", "cash flow" in "What was the
    cash flow of X?"); no sentence dated otherwise than the question ("in August 2021"
    for "in March 2021"); and some relation word at all.
    """
    n = len(ch.sentences)
    last = ch.sentences[-1]
    if ctx.relation and not ctx.relation & ch.covered:
        return False
    if n < min(hops, 2) and ctx.coverage(ch.covered) < FULL_COVER:
        return False
    if ctx.asked and not ctx.asked & last.terms:
        return False
    return not any(_date_conflict(ctx, s.text) for s in ch.sentences)


def _date_conflict(ctx: Context, text: str) -> bool:
    """Tell whether a sentence is dated otherwise than the question.

    Its months (or years) are all other than the ones the question states.
    """
    months, years = date_parts(text)
    if ctx.q_months and months and not ctx.q_months & months:
        return True
    return bool(ctx.q_years and years and not ctx.q_years & years)


def _chain_score(ctx: Context, ch: Chain, kind: str, hops: int, head: str) -> float:
    last = ch.sentences[-1]
    score = 2.0 * ctx.coverage(ch.covered)
    if kind in VALUED_KINDS and reaches(ctx, ch, hops):
        got = best_value(ctx, last, kind, set(ch.links), head)
        score += 1.5 * got[0] if got else 0.0
    if ctx.relation & last.terms:
        score += 0.3
    if ctx.asked and ctx.asked & last.terms:
        score += 0.5
    if ctx.anchored(ch.sentences[0]):
        score += 0.5
    # A hop that states none of the question's relation words it still lacks adds
    # nothing: "X is the IC" after "the IC joined late" only repeats it.
    covered: frozenset[str] = ch.sentences[0].terms & ctx.relation
    for s in ch.sentences[1:]:
        new = (s.terms & ctx.relation) - covered
        if not new:
            score -= 0.3
        covered |= new
    return score - 0.4 * abs(hops - len(ch.sentences))


def best_chain(ctx: Context, kind: str, hops: int, head: str) -> Chain | None:
    """Return the best-scoring chain (ties: the earliest sentences), None when there is none."""
    chains = _chains(ctx, hops)
    if not chains:
        return None
    return max(
        chains,
        key=lambda c: (
            round(_chain_score(ctx, c, kind, hops, head), 9),
            -sum(s.order for s in c.sentences),
        ),
    )
