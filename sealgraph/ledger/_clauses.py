"""The clauses of a question: the one that asks it, and those that only set its scope.

"Consider X's privacy policy; who can see my data?" asks in its last clause; the
clause before it picks the document the question is about. The words that mark
question forms and scoping clauses are the active lexicon's
(:mod:`sealgraph.text.lexicon`). Entity spans are read without a trailing possessive
(:func:`_without_possessive`): "X's" names X.
"""

from __future__ import annotations

from collections.abc import Sequence

from sealgraph.text.lexicon import active


def _clauses(question: str) -> list[tuple[int, int]]:
    bounds = []
    start = 0
    for m in active().clause_end_re.finditer(question):
        bounds.append((start, m.start()))
        start = m.end()
    bounds.append((start, len(question)))
    return [(a, b) for a, b in bounds if question[a:b].strip()]


def asked_clause(question: str) -> tuple[int, int]:
    """Return ``(start, end)`` of the clause that asks the question.

    A question made of several clauses ("Consider X's privacy policy; who can see my
    data?") asks in the last clause that has a question form (a question mark, a
    question word or a leading auxiliary) when the clauses before it have none: they
    set the scope. A question whose question words run across clauses is asked whole.
    """
    bounds = _clauses(question)
    asking = [i for i, (a, b) in enumerate(bounds) if active().asking_re.search(question[a:b])]
    if len(bounds) <= 1 or not asking or len(asking) > 1:
        return (0, len(question))
    return (bounds[asking[0]][0], len(question))


def scope_clauses(question: str) -> list[tuple[int, int]]:
    """Clauses before the asked one that only set the scope ("Consider X's privacy policy").

    They open with a scoping word (consider, regarding, concerning, about, for, in,
    given, according to); their words name the scope, not the asked relation.
    """
    lo, _hi = asked_clause(question)
    scoping = active().scoping_re
    return [(a, b) for a, b in _clauses(question[:lo]) if scoping.match(question[a:b])]


def focus_text(question: str) -> str:
    """Return the question without the clauses that only set its scope.

    "Consider X's privacy policy; who can see my data?" asks "who can see my data?"
    of X's document: the scope picks the document, the rest ranks its passages.
    """
    scope = scope_clauses(question)
    if not scope:
        return question
    return question[scope[-1][1] :].lstrip(" ;:,.")


def _without_possessive(question: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Entity spans with a trailing possessive ("X's", "Watts'") left outside them."""
    out = []
    for a, b in spans:
        text = question[a:b]
        if text.endswith(("'s", "’s")) and b - a > 2:
            b -= 2
        elif text.endswith(("'", "’")) and b - a > 1:
            b -= 1
        out.append((a, b))
    return out
