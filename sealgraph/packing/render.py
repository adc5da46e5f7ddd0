"""Rendering of the packed context and token-true fitting to the budget.

Format: one block per span, blocks separated by one blank line, no trailing newline::

    [1] Title > Section > Subsection
    span text

    [2] Other title
    span text

The header is the citation marker, the document title (the doc id when the title is
empty) and, when the span has one, its heading chain, each bounded
(:func:`header_part`: a stranger's 2,400-word title must not take the budget its own
evidence needs). The text is the span's exact source text stripped of outer
whitespace, so every sentence appears verbatim.

The budget applies to the whole rendered string counted with the real tokenizer:
BPE merges across block boundaries make a sum of per-block counts an estimate only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sealgraph.text.tokens import TokenCounter

__all__ = [
    "BLOCK_SEPARATOR",
    "MAX_SECTION",
    "MAX_TITLE",
    "fit_to_budget",
    "header_part",
    "render_block",
    "render_context",
]

BLOCK_SEPARATOR = "\n\n"
"""Text between two rendered blocks."""

MAX_TITLE = (48, 320)
"""Most words and characters of a title in a block's header (and a packed span's title).
Real titles stay far below (the longest of the dev sets: 89 characters; FastAPI's
longest heading: 165)."""
MAX_SECTION = (96, 640)
"""Most words and characters of a heading chain in a header (FastAPI's longest: 38
words, 404 characters)."""


def header_part(text: str, limit: tuple[int, int]) -> str:
    """Return ``text`` cut to at most ``limit`` = (words, characters), ending in ``…`` when cut.

    A text within the limit comes back unchanged; a cut one keeps its first words,
    whitespace collapsed, and ends at a word when one fits.
    """
    words, chars = limit
    if len(text) <= chars and len(text.split(maxsplit=words)) <= words:
        return text
    kept = " ".join(text.split()[:words])
    if len(kept) >= chars:
        cut = kept[: chars - 1]
        kept = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return kept.rstrip() + "…"


def render_block(n: int, title: str, section: str, text: str) -> str:
    """Render one span: header line ``[n] Title > Section``, newline, stripped text.

    The ``> Section`` part is omitted when the span has no section; title and section
    are bounded by :data:`MAX_TITLE` and :data:`MAX_SECTION`.
    """
    header = f"[{n}] {header_part(title, MAX_TITLE)}"
    if section:
        header += f" > {header_part(section, MAX_SECTION)}"
    return f"{header}\n{text.strip()}"


def render_context(blocks: Sequence[str]) -> str:
    """Join rendered blocks into the context."""
    return BLOCK_SEPARATOR.join(blocks)


def fit_to_budget(
    count: int,
    render: Callable[[Sequence[int]], str],
    lowest_value: Callable[[Sequence[int]], int],
    counter: TokenCounter,
    budget: int,
) -> tuple[str, int, list[int], list[tuple[int, int]]]:
    """Render, and while the real count exceeds the budget drop the lowest-value span.

    Args:
        count: Number of spans to start from (indices ``0..count-1``, in reading order).
        render: Renders the context from the kept indices (numbering them 1..).
        lowest_value: Returns which kept index has the lowest marginal value.
        counter: The token counter.
        budget: Token budget.

    Returns:
        ``(context, tokens, kept, dropped)`` where ``dropped`` lists
        ``(index, tokens of the context it overflowed)`` in drop order.

    """
    kept = list(range(count))
    dropped: list[tuple[int, int]] = []
    context = render(kept)
    tokens = counter.count(context)
    while tokens > budget and kept:
        victim = lowest_value(kept)
        kept.remove(victim)
        dropped.append((victim, tokens))
        context = render(kept)
        tokens = counter.count(context)
    return context, tokens, kept, dropped
