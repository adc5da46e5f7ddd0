"""Building composed answers: from supporting sentences, declining, with what is missing.

The answer text is what a person reads: the short answer and its cited sentences,
with document markup taken out (:func:`~sealgraph.text.readable.readable`). What
the context does not state is never appended to it: it is the answer's own
``missing`` field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from sealgraph.reasoning.answer._context import Context, Sentence
from sealgraph.reasoning.answer._types import ComposedAnswer, GapLike
from sealgraph.text.readable import readable

__all__ = ["DECLINED", "build_answer", "decline", "missing_text", "with_gaps"]

DECLINED = "Insufficient evidence: the documents found do not answer this question."
"""The answer text of a declined question (what is missing is in ``missing``)."""


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
    shown_support: list[str] = []
    for s in sentences:
        if (s.n, s.text) not in seen and (shown := readable(s.text)):
            seen.add((s.n, s.text))
            support.append((s.n, s.text))
            shown_support.append(f"{shown} [{s.n}]")
    body = " ".join(shown_support)
    short = readable(short)
    shown = short[:1].upper() + short[1:] if kind == "yes_no" else short
    text = f"{shown} — {body}" if short and body else (shown or body)
    if not text:
        return decline(ctx, kind, (), missing)
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
        answer=DECLINED,
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
    return dataclasses.replace(got, missing=missing_text(ctx, gaps))
