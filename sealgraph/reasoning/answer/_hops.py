"""The chain answer: one sentence per hop, linked by the names they share.

The answer of a question the reader does not answer better (see
:mod:`sealgraph.reasoning.answer._compose`): the best chain of sentences
(:func:`~sealgraph.reasoning.answer._chains.best_chain`), its last sentence's value
of the expected kind as the short answer when the chain reaches it; when a hop is
missing, the chain so far and the sentence closest to the answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from sealgraph.reasoning.answer._build import build_answer, missing_text
from sealgraph.reasoning.answer._chains import Chain, best_chain, reaches
from sealgraph.reasoning.answer._context import Context, Sentence
from sealgraph.reasoning.answer._kind import answer_head, question_hops
from sealgraph.reasoning.answer._types import ComposedAnswer, GapLike
from sealgraph.reasoning.answer._values import VALUED_KINDS, best_value, short_value

__all__ = ["chain_answer"]


def chain_answer(ctx: Context, kind: str, gaps: Sequence[GapLike]) -> ComposedAnswer | None:
    """Answer by the best chain of sentences, or None when no chain states anything asked."""
    hops = question_hops(ctx.needs)
    head = answer_head(ctx.needs.question)
    chain = best_chain(ctx, kind, hops, head)
    if chain is None:
        return None
    cover = ctx.coverage(chain.covered)
    anchored = ctx.anchored(chain.sentences[0])
    reached = reaches(ctx, chain, hops)
    short = ""
    if kind in VALUED_KINDS and reached:
        short = short_value(ctx, chain.sentences[-1], kind, set(chain.links), head)
    valued = kind in VALUED_KINDS and any(
        best_value(ctx, x, kind, set(chain.links), head) for x in chain.sentences
    )
    if not (cover > 0 or (anchored and (not ctx.relation or valued))):
        return None
    if reached:
        confidence = min(1.0, 0.3 + 0.5 * cover + (0.2 if anchored else 0.0)) if short else 0.0
        # Without a short answer the sentences may only be about the topic: when the
        # gate left gaps open, say what it found missing.
        missing = "" if short or not gaps else missing_text(ctx, gaps)
        return build_answer(ctx, kind, short, chain.sentences, confidence, missing)
    # A hop is missing: show what the context has, the chain so far and the sentence
    # closest to the answer, and say what is missing.
    sentences = list(chain.sentences)
    if kind in VALUED_KINDS:
        best = _closest_to_answer(ctx, kind, chain, head, sentences)
        if best is not None and ctx.coverage(best.terms) > 0:
            sentences.append(best)
    return build_answer(ctx, kind, "", sentences, 0.0, missing_text(ctx, gaps))


def _closest_to_answer(
    ctx: Context, kind: str, chain: Chain, head: str, sentences: Sequence[Sentence]
) -> Sentence | None:
    """Return the sentence outside ``sentences`` that comes closest to the answer.

    It holds a value of the expected kind; the most relation coverage wins, then the
    best-fitting value, then the earliest sentence. None when no other sentence holds one.
    """
    closest = [
        s
        for s in ctx.sentences
        if s not in sentences and best_value(ctx, s, kind, set(chain.links), head)
    ]
    if not closest:
        return None
    return max(
        closest,
        key=lambda s: (
            ctx.coverage(s.terms),
            (best_value(ctx, s, kind, set(chain.links), head) or (0.0, ""))[0],
            -s.order,
        ),
    )
