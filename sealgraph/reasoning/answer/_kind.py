"""The answer kind a question expects, read from its asking phrase, and its asked terms.

The asking wh-word, the head noun of a "which/what <head>" phrase and the words of the
relation asked right after it are read with the active lexicon's word lists
(:mod:`sealgraph.text.lexicon`).
"""

from __future__ import annotations

import re

from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.packing.scoring import terms
from sealgraph.text.lexicon import Lexicon, active
from sealgraph.text.names import fold

__all__ = ["answer_head", "answer_kind", "asked_terms", "in_heads", "question_hops"]

_QUESTION_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")


def question_hops(needs: QuestionNeeds) -> int:
    """Hops the question asks for: ``needs.hops`` when known, else read from its structure."""
    default = {"bridge": 2, "multi_step": 3}.get(needs.structure, 1)
    hops = getattr(needs, "hops", default)
    try:
        return max(1, min(4, int(hops)))
    except (TypeError, ValueError):
        return default


def _asking_word(tokens: list[str]) -> int | None:
    """Index of the wh-word that asks the question (not one opening a relative clause)."""
    lex = active()
    wh, preps = lex.wh_words, lex.question_prepositions
    words = [i for i, t in enumerate(tokens) if t[:1].isalnum()]
    if not words:
        return None
    first = words[0]
    if tokens[first] in wh:
        return first
    if tokens[first] in preps and len(words) > 1 and tokens[words[1]] in wh:
        return words[1]
    # Asked in place, at the end: "… named after who?", "… in what city?".
    for i in words[-4:]:
        if tokens[i] in wh:
            return i
    for k, i in enumerate(words[1:], start=1):
        if tokens[i] in wh and (tokens[words[k - 1]] in preps or tokens[i - 1] in (",", ";", ":")):
            return i
    return None


def _head_noun(tokens: list[str], at: int) -> str:
    """Head of the noun phrase after "which"/"what": its last word before a function word."""
    lex = active()
    head = ""
    j = at + 1
    while j < len(tokens) and j - at <= 5:
        t = tokens[j]
        if not t[:1].isalnum() or t in lex.stop_words or t in lex.wh_words:
            break
        nxt = tokens[j + 1] if j + 1 < len(tokens) else ""
        # A verb ends the phrase: "which actor starred", "which company owns the".
        if head and (
            (t.endswith("ed") and len(t) > 4)
            or (t.endswith("s") and nxt in lex.described_determiners)
        ):
            break
        head = t
        j += 1
    return head


def _copula_head(tokens: list[str], at: int) -> str:
    """Head of the noun phrase after "what is the": "What was the operating *income* of X"."""
    lex = active()
    j = at + 1
    if j >= len(tokens) or tokens[j] not in lex.copulas or tokens[j] in lex.possessive_suffixes:
        return ""
    j += 1
    if j >= len(tokens) or tokens[j] not in lex.articles:
        return ""
    head = ""
    j += 1
    while j < len(tokens) and tokens[j][:1].isalnum() and tokens[j] not in lex.stop_words:
        head = tokens[j]
        j += 1
    return head


def in_heads(word: str, heads: frozenset[str]) -> bool:
    """Tell whether a word (or its singular) is one of the head nouns."""
    return word in heads or word.removesuffix("s") in heads or word.removesuffix("es") in heads


def answer_head(question: str) -> str:
    """Return the head noun of the asked "which/what <head>" phrase ("" when none)."""
    tokens = [fold(t) for t in _QUESTION_TOKEN.findall(question)]
    at = _asking_word(tokens)
    if at is None or tokens[at] not in active().selective_wh:
        return ""
    return _head_noun(tokens, at)


def _all_heads(lex: Lexicon) -> tuple[frozenset[str], ...]:
    return (
        lex.person_heads,
        lex.organization_heads,
        lex.place_heads,
        lex.time_heads,
        lex.quantity_heads,
        lex.amount_heads,
    )


def asked_terms(question: str) -> frozenset[str]:
    """Stemmed words of the relation the question asks about directly.

    The words right after the asking wh-word, up to the first described or named
    entity: "Who *leads* the team that …", "How many *engineers* does …", "Which
    group is *chaired* by …". After a copula the asked noun phrase itself ("Who is
    the *site lead* of …"). The last hop's sentence must state them: a chain that
    ends on a sentence about the bridge alone has not reached the answer.
    """
    lex = active()
    raw = _QUESTION_TOKEN.findall(question)
    tokens = [fold(t) for t in raw]
    at = _asking_word(tokens)
    if at is None:
        return frozenset()
    j = at + 1
    out: list[str] = []
    head = _head_noun(tokens, at) if tokens[at] in lex.selective_wh else ""
    if j < len(tokens) and tokens[j] in lex.asking_auxiliaries:
        j += 1
        if j < len(tokens) and tokens[j] in lex.described_determiners:
            j += 1  # "Who is the site lead of": the asked phrase follows the copula
    all_heads = _all_heads(lex)
    while j < len(tokens):
        t, r = tokens[j], raw[j]
        if not t[:1].isalnum() or t in lex.described_determiners or t in lex.question_prepositions:
            break
        if r[:1].isupper() or t in lex.wh_words or t in lex.asked_phrase_breaks:
            break
        if t != head and _relation_word(t, lex, all_heads):
            out.extend(terms(t))
        j += 1
    return frozenset(out)


def _relation_word(t: str, lex: Lexicon, all_heads: tuple[frozenset[str], ...]) -> bool:
    """Tell whether an asked-phrase word names the relation.

    Function words, auxiliaries, "how many" words and head nouns of answer kinds
    ("person", "year") do not.
    """
    return (
        t not in lex.stop_words
        and t not in lex.asking_auxiliaries
        and t not in lex.how_quantity_words
        and not any(in_heads(t, heads) for heads in all_heads)
    )


def answer_kind(needs: QuestionNeeds) -> str:
    """Return the kind of answer the question expects, read from its asking phrase.

    One of ``yes_no``, ``choice``, ``date``, ``number``, ``amount``, ``person``,
    ``agent`` (a person or an organisation: what "who" asks; never a place),
    ``organization``, ``place``, ``entity`` (a named thing: "which office",
    "what series") or ``other`` (a description: "what does X return", "how does X
    work"). The asking wh-word is the question's first word (after a preposition:
    "In which office"), or one asked in place at its end ("named after who?"); a
    wh-word that opens a relative clause ("the office where …") asks nothing.
    """
    if needs.answer_type == "yes_no":
        return "yes_no"
    if needs.answer_type == "choice" and len(needs.options) >= 2:
        return "choice"
    tokens = [fold(t) for t in _QUESTION_TOKEN.findall(needs.question)]
    at = _asking_word(tokens)
    if at is None:
        return {
            "person": "agent",
            "place": "place",
            "date": "date",
            "number": "number",
            "choice": "entity",
        }.get(needs.answer_type, "other")
    lex = active()
    wh = tokens[at]
    if wh in lex.wh_kinds:
        return lex.wh_kinds[wh]
    if wh in lex.how_words:
        nxt = tokens[at + 1] if at + 1 < len(tokens) else ""
        return lex.how_kinds.get(nxt, "other")
    if wh not in lex.selective_wh:
        return "other"
    head = _head_noun(tokens, at) or _copula_head(tokens, at)
    if not head:
        return "other"
    if not _head_noun(tokens, at):
        # "What was the operating income of X?": a value when the noun names one.
        for heads, kind in (
            (lex.time_heads, "date"),
            (lex.amount_heads, "amount"),
            (lex.quantity_heads, "number"),
        ):
            if in_heads(head, heads):
                return kind
        return "other"
    for heads, kind in (
        (lex.time_heads, "date"),
        (lex.amount_heads, "amount"),
        (lex.quantity_heads, "number"),
        (lex.place_heads, "place"),
        (lex.person_heads, "person"),
        (lex.organization_heads, "organization"),
    ):
        if in_heads(head, heads):
            return kind
    return "entity"
