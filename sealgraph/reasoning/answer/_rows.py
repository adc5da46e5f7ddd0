"""Table rows: the value of the row whose key the question names, under the column it asks.

The loaders write a table row as one self-contained line, ``Plan: Falcon; Monthly
price: EUR 29; Seats: 5`` (:func:`sealgraph.ingest.loaders.base.render_rows`). For
"What is the monthly price of the Falcon plan?" the row is the one with a cell the
question names (``Falcon``), and the answer is that row's cell under the header the
question's other words name best (``Monthly price``), not the first value in sight.
"""

from __future__ import annotations

from sealgraph.packing.scoring import terms
from sealgraph.reasoning.answer._build import build_answer
from sealgraph.reasoning.answer._context import ROW_LINE, Context, Sentence
from sealgraph.reasoning.answer._types import ComposedAnswer

__all__ = ["row_answer", "row_cells"]


def row_cells(text: str) -> list[tuple[str, str]] | None:
    """Return a row line's ``(header, value)`` cells, or None when it is not a row line."""
    if not ROW_LINE.fullmatch(text):
        return None
    cells = [cell.partition(": ") for cell in text.split("; ")]
    return [(h.strip(), v.strip()) for h, _, v in cells]


def row_answer(ctx: Context, kind: str) -> ComposedAnswer | None:
    """Answer from the table row the question names, or None when no row fits.

    A row fits when one of its cell values is written in the question (all of its
    words are question words) and another cell's header shares words with the rest
    of the question. The best fit is the row and header sharing the most question
    words; ties go to the earliest row.
    """
    best: tuple[float, int, Sentence, str] | None = None
    for s in ctx.sentences:
        cells = row_cells(s.text)
        if not cells:
            continue
        keys = [i for i, (_, v) in enumerate(cells) if (vt := terms(v)) and vt <= ctx.q_terms]
        if not keys:
            continue
        named = frozenset().union(*(terms(cells[i][1]) for i in keys))
        asked = ctx.q_terms - named
        for i, (header, value) in enumerate(cells):
            overlap = terms(header) & asked
            if i in keys or not overlap or not value:
                continue
            fit = len(overlap) / max(1, len(terms(header))) + len(keys)
            if best is None or (fit, -s.order) > (best[0], -best[1]):
                best = (fit, s.order, s, value)
    if best is None:
        return None
    _, _, sentence, value = best
    if len(value) > 2 and value[0] == value[-1] == "`":
        value = value[1:-1]  # a cell written as code: its text is the value
    return build_answer(ctx, kind, value, [sentence], 0.8)
