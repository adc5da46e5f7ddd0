"""Token-true context packing: evidence chunks in, a cited context within budget out.

:func:`pack` cuts the evidence into spans (whole chunks, relevant segments, dynamic
semantic windows), selects them with the context bubble (priors, boosts, length
penalty, MMR, redundancy gate, per-section and per-document limits) and renders them
in reading order, counting the final string with the real tokenizer. Every candidate
span gets a :class:`PackDecision` in the trace.

The algorithms are pure functions and know nothing of LangGraph; the graph's pack
node is a thin caller.
"""

from sealgraph.packing.bubble import BubbleItem, Choice, marginal_values, select_spans
from sealgraph.packing.config import PackConfig
from sealgraph.packing.pack import EmbedFn, UnitScores, pack, score_units
from sealgraph.packing.render import fit_to_budget, render_block, render_context
from sealgraph.packing.segments import Segment, max_sum_segment, max_sum_segments
from sealgraph.packing.types import (
    DECISIONS,
    Decision,
    PackDecision,
    PackedSpan,
    PackResult,
    Span,
    SpanScores,
    Unit,
)
from sealgraph.packing.units import DocUnits, NeighborFn, chunk_units, collect_units
from sealgraph.packing.window import grow_window, merge_windows

__all__ = [
    "DECISIONS",
    "BubbleItem",
    "Choice",
    "Decision",
    "DocUnits",
    "EmbedFn",
    "NeighborFn",
    "PackConfig",
    "PackDecision",
    "PackResult",
    "PackedSpan",
    "Segment",
    "Span",
    "SpanScores",
    "Unit",
    "UnitScores",
    "chunk_units",
    "collect_units",
    "fit_to_budget",
    "grow_window",
    "marginal_values",
    "max_sum_segment",
    "max_sum_segments",
    "merge_windows",
    "pack",
    "render_block",
    "render_context",
    "score_units",
    "select_spans",
]
