"""The offline answer composer: the question form decides, a chain of sentences answers.

See :mod:`sealgraph.reasoning.answer` for how each question form is answered.
"""

from __future__ import annotations

from collections.abc import Sequence

from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.reasoning.answer._build import build_answer, decline, missing_text, with_gaps
from sealgraph.reasoning.answer._chains import Chain, best_chain, reaches
from sealgraph.reasoning.answer._compare import choice, value_kind, yes_no
from sealgraph.reasoning.answer._context import Context, Sentence
from sealgraph.reasoning.answer._kind import answer_head, answer_kind, question_hops
from sealgraph.reasoning.answer._rows import row_answer
from sealgraph.reasoning.answer._types import ComposedAnswer, GapLike, OfflineAnswer, SpanText
from sealgraph.reasoning.answer._values import VALUED_KINDS, best_value, short_value

__all__ = ["compose_answer", "extractive_answer"]


def _chain_answer(ctx: Context, kind: str, gaps: Sequence[GapLike]) -> ComposedAnswer | None:
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


def compose_answer(
    needs: QuestionNeeds, spans: Sequence[SpanText], gaps: Sequence[GapLike] = ()
) -> ComposedAnswer:
    """Compose the offline answer from the packed spans (see the module docstring).

    Args:
        needs: The question's needs (entities, relation terms, answer type, hops).
        spans: The packed spans, with their citation numbers.
        gaps: Gaps the sufficiency gate left open: they say what is missing when the
            answer declines or a hop is not in the context; they never, alone, make
            the composer decline.

    Returns:
        The :class:`ComposedAnswer`; ``insufficient`` only when no sentence of the
        context answers anything the question asks.

    """
    kind = answer_kind(needs)
    if not spans:
        return decline(None, kind, gaps, "the context is empty")
    ctx = Context(needs, spans)
    if not ctx.sentences:
        return decline(ctx, kind, gaps)
    got: ComposedAnswer | None = None
    if kind == "yes_no":
        got = yes_no(ctx)
    elif kind == "choice" or (
        needs.structure == "comparison" and len(needs.entities) >= 2 and value_kind(needs.question)
    ):
        got = choice(ctx)
        if got is not None and not got.short and kind != "choice":
            got = None
    if got is None and kind != "yes_no":
        got = row_answer(ctx, kind)
    if got is None:
        got = _chain_answer(ctx, kind, gaps)
    if got is None:
        return decline(ctx, kind, gaps)
    return with_gaps(ctx, got, gaps)


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
