"""Building composed answers: from supporting sentences, declining, with what is missing."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from sealgraph.reasoning.answer._context import Context, Sentence
from sealgraph.reasoning.answer._types import ComposedAnswer, GapLike

__all__ = ["build_answer", "decline", "missing_text", "with_gaps"]


def missing_text(ctx: Context, gaps: Sequence[GapLike]) -> str:
    """Say what the context does not state: the gaps' reasons, else the unstated relation."""
    reasons = [g.reason for g in gaps if getattr(g, "reason", "")]
    if reasons:
        return "; ".join(dict.fromkeys(reasons))
    what = " ".join(ctx.needs.relation_terms) or "the question"
    names = ", ".join(e.name for e in ctx.needs.entities)
    return f"no sentence states '{what}'" + (f" for {names}" if names else "")


def build_answer(
    ctx: Context,
    kind: str,
    short: str,
    sentences: Sequence[Sentence],
    confidence: float,
    missing: str = "",
) -> ComposedAnswer:
    """Build the answer from its short span and supporting sentences (each cited once)."""
    seen: set[tuple[int, str]] = set()
    support: list[tuple[int, str]] = []
    for s in sentences:
        if (s.n, s.text) not in seen:
            seen.add((s.n, s.text))
            support.append((s.n, s.text))
    body = " ".join(f"{text} [{n}]" for n, text in support)
    shown = short[:1].upper() + short[1:] if kind == "yes_no" else short
    text = f"{shown} — {body}" if short and body else (shown or body)
    if missing:
        text = f"{text} Not found in the context: {missing}." if text else missing
    return ComposedAnswer(
        answer=text,
        short=short,
        support=tuple(support),
        cited=tuple(sorted({n for n, _ in support})),
        missing=missing,
        kind=kind,
        confidence=confidence if short else 0.0,
    )


def decline(
    ctx: Context | None, kind: str, gaps: Sequence[GapLike], why: str = ""
) -> ComposedAnswer:
    """Decline: "Insufficient evidence", with ``why`` or what the gaps say is missing."""
    missing = why or (missing_text(ctx, gaps) if ctx is not None else "")
    if not missing:
        missing = why or "the context is empty"
    return ComposedAnswer(
        answer=f"Insufficient evidence: {missing}.",
        short="",
        support=(),
        cited=(),
        insufficient=True,
        missing=missing,
        kind=kind,
    )


def with_gaps(ctx: Context, got: ComposedAnswer, gaps: Sequence[GapLike]) -> ComposedAnswer:
    """Add what the gate found missing to an answer that gives no short span."""
    if got.short or got.missing or got.insufficient or not gaps:
        return got
    missing = missing_text(ctx, gaps)
    return dataclasses.replace(
        got, answer=f"{got.answer} Not found in the context: {missing}.", missing=missing
    )
