"""The answer step as a person reads it: each part's candidate units and why one won."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sealgraph.reasoning.answer._reader import Reading
from sealgraph.reasoning.answer._types import AnswerStep
from sealgraph.text.readable import readable

__all__ = ["CANDIDATES_SHOWN", "answer_step"]

CANDIDATES_SHOWN = 5
"""Candidate units kept per part in the trace."""
_TEXT_CHARS = 240


def answer_step(readings: Sequence[Reading], route: str, why: str, held: float) -> AnswerStep:
    """Return the :class:`AnswerStep` of an answer chosen by ``route`` for ``why``."""
    return AnswerStep(route, why, round(held, 4), tuple(_part(r) for r in readings))


def _part(reading: Reading) -> dict[str, Any]:
    part = reading.part
    return {
        "part": part.text,
        "asks": part.value,
        "relation": sorted(part.relation),
        "candidates": [
            {
                "n": c.unit.n,
                "kind": c.unit.kind,
                "heading": c.unit.heading,
                "text": readable(c.unit.text)[:_TEXT_CHARS],
                "score": round(c.score, 4),
                "features": dict(c.features),
                "value": c.value,
            }
            for c in reading.ranked[:CANDIDATES_SHOWN]
        ],
    }
