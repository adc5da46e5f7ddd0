"""Offline answerability: does the packed context hold what the question is specific about.

A question is specific about its rare words: "Brotli", "gRPC", "retry" carry it,
"how", "FastAPI" (on FastAPI's own docs) do not. The score is the share of the
question's word weight, each content word weighted by its inverse document
frequency in the corpus, that the best one or two packed passages hold together
(two: a multi-hop answer joins two passages). A word the corpus never uses has
the highest weight and is held by no passage, so a question about something the
documents never mention scores low.

A question may also name something the corpus never uses at all: "How do I
expose gRPC services?" over docs that never write "gRPC". :func:`unseen_names`
finds the words the question writes as names (the lexicon's
:meth:`~sealgraph.text.lexicon.Lexicon.written_names`) that no chunk holds, a typo
of a word of the packed passages aside ("Sydeney" for "Sydney"). The answer then
declines (config ``decline_unseen_names``, on by default), ``missing`` saying
which names the documents never mention: at 0.4-2.8 % of the answerable questions
of the development sets, against 2 of 10 unanswerable FastAPI questions
(docs/benchmarks.md).

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
from sealgraph.text.edits import TWO_EDITS_LENGTH, TYPO_MIN_LENGTH, within_edits

__all__ = ["Answerability", "answerability", "gate_answer", "unseen_names"]


@dataclass(frozen=True, slots=True)
class Answerability:
    """How much of the question the best passages hold."""

    score: float
    """Held weight over total weight, in [0, 1] (1.0 for a question with no content word)."""
    passages: tuple[int, ...]
    """Positions of the one or two passages that hold the most."""
    unheld: tuple[str, ...]
    """The question's words those passages do not hold, heaviest first."""
    unseen: tuple[str, ...] = ()
    """Names the question writes that no chunk of the corpus holds (:func:`unseen_names`)."""


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


def unseen_names(
    names: Iterable[str],
    stems: Callable[[str], Iterable[str]],
    document_frequency: Callable[[str], int],
    passage_words: Iterable[str],
) -> tuple[str, ...]:
    """Return the names no chunk of the corpus holds, in order, each once.

    Args:
        names: Words the question writes as names, as written.
        stems: A name's stemmed content words (a name of stop words alone is skipped).
        document_frequency: Chunks of the corpus holding a stem.
        passage_words: The packed passages' folded words: a name one edit from one
            of them (two for a name of eight letters or more) is taken for its typo.

    """
    near = {w for w in passage_words if len(w) >= TYPO_MIN_LENGTH}
    out: list[str] = []
    for name in dict.fromkeys(names):
        found = list(stems(name))
        if not found or any(document_frequency(t) > 0 for t in found):
            continue
        folded = name.casefold()
        allowed = 2 if len(folded) >= TWO_EDITS_LENGTH else 1
        if len(folded) >= TYPO_MIN_LENGTH and any(within_edits(folded, w, allowed) for w in near):
            continue
        out.append(name)
    return tuple(out)


def gate_answer(
    answer: GeneratedAnswer,
    found: Answerability,
    threshold: float,
    unheld_words: Sequence[str],
    *,
    decline_unseen: bool = False,
) -> GeneratedAnswer:
    """Decline ``answer`` when ``found.score`` is below ``threshold``, or it names the unseen.

    Args:
        answer: The composed answer.
        found: The context's answerability for the question.
        threshold: Lowest score that is answered (0 never declines).
        unheld_words: The question's words the best passages lack, as the question
            writes them (named in ``missing``).
        decline_unseen: Also decline when the question names something no chunk
            holds (``found.unseen``).

    Returns:
        ``answer`` itself, or a declined answer whose ``missing`` says which of the
        question's words the passages found do not hold.

    """
    if answer.insufficient:
        return answer
    if decline_unseen and found.unseen:
        named = ", ".join(f"'{w}'" for w in found.unseen[:4])
        missing = f"the documents never mention {named}"
    elif found.score >= threshold:
        return answer
    else:
        named = ", ".join(f"'{w}'" for w in unheld_words[:4])
        missing = f"the passages found do not mention {named}" if named else "nothing answers"
    return dataclasses.replace(
        answer, answer=DECLINED, cited=(), insufficient=True, short="", support=(), missing=missing
    )
