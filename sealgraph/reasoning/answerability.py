"""Offline answerability: does the packed context hold what the question is specific about.

A question is specific about its rare words: "Brotli", "gRPC", "retry" carry it,
"how", "FastAPI" (on FastAPI's own docs) do not. The score is the share of the
question's word weight, each content word weighted by its inverse document
frequency in the corpus, that the best one or two packed passages hold together
(two: a multi-hop answer joins two passages). A word the corpus never uses has
the highest weight and is held by no passage, so a question about something the
documents never mention scores low.

The score is a number in [0, 1], reported with every answer; below the config's
``min_answerability`` the offline answer declines. That threshold is 0 (off) by
default: on the development sets the score separates unanswerable questions too
weakly for one threshold to fit every corpus (docs/benchmarks.md), so calibrate it
on your own questions. Pure functions: the caller passes the words and weights.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from sealgraph.reasoning.answer import DECLINED
from sealgraph.reasoning.base import GeneratedAnswer

__all__ = ["Answerability", "answerability", "gate_answer"]


@dataclass(frozen=True, slots=True)
class Answerability:
    """How much of the question the best passages hold."""

    score: float
    """Held weight over total weight, in [0, 1] (1.0 for a question with no content word)."""
    passages: tuple[int, ...]
    """Positions of the one or two passages that hold the most."""
    unheld: tuple[str, ...]
    """The question's words those passages do not hold, heaviest first."""


def answerability(
    question_terms: Iterable[str],
    passage_terms: Sequence[frozenset[str]],
    weight: Callable[[str], float],
) -> Answerability:
    """Score how much of the question's specific vocabulary the best passages hold.

    Args:
        question_terms: The question's stemmed content words.
        passage_terms: Each packed passage's stemmed words (its title included).
        weight: A word's weight (its inverse document frequency in the corpus).

    Returns:
        The :class:`Answerability`; ties between passage pairs go to the earliest.

    """
    weights: Mapping[str, float] = {t: max(0.0, weight(t)) for t in dict.fromkeys(question_terms)}
    total = sum(weights.values())
    if total <= 0.0:
        return Answerability(1.0, (), ())
    held = [frozenset(t for t in weights if t in terms) for terms in passage_terms]
    best: tuple[float, tuple[int, ...], frozenset[str]] = (0.0, (), frozenset())
    for size in (1, 2):
        for group in itertools.combinations(range(len(held)), size):
            covered = frozenset().union(*(held[i] for i in group))
            value = sum(weights[t] for t in covered) / total
            if value > best[0] + 1e-12:
                best = (value, group, covered)
    unheld = sorted((t for t in weights if t not in best[2]), key=lambda t: (-weights[t], t))
    return Answerability(round(min(1.0, best[0]), 4), best[1], tuple(unheld))


def gate_answer(
    answer: GeneratedAnswer,
    found: Answerability,
    threshold: float,
    unheld_words: Sequence[str],
) -> GeneratedAnswer:
    """Decline ``answer`` when ``found.score`` is below ``threshold``.

    Args:
        answer: The composed answer.
        found: The context's answerability for the question.
        threshold: Lowest score that is answered (0 never declines).
        unheld_words: The question's words the best passages lack, as the question
            writes them (named in ``missing``).

    Returns:
        ``answer`` itself, or a declined answer whose ``missing`` says which of the
        question's words the passages found do not hold.

    """
    if answer.insufficient or found.score >= threshold:
        return answer
    named = ", ".join(f"'{w}'" for w in unheld_words[:4])
    missing = f"the passages found do not mention {named}" if named else "nothing answers"
    return dataclasses.replace(
        answer, answer=DECLINED, cited=(), insufficient=True, short="", support=(), missing=missing
    )
