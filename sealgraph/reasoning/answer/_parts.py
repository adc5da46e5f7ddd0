"""What a question asks: its parts, the value that answers each, the asked relation.

"The Docker guide says …. Which decorator turns the function into an async context
manager?" asks in its last sentence (the ones before it set the scope); "Does X ship
a rate limiter, and how do I use it?" asks two things. Each :class:`Part` says what
answers it (a version, a duration, a number, a date, a name written as code, a
person, yes/no, a procedure or a description), whether it asks for a default, the
relation it asks ("own" in "What does PPT own?") and the head noun of its
"which/what <head>" phrase. The words are the active lexicon's
(:attr:`~sealgraph.text.lexicon.Lexicon.reader`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sealgraph.packing.scoring import terms
from sealgraph.reasoning.answer._context import TOKEN, synonym_keys
from sealgraph.reasoning.answer._kind import answer_head, answer_kind, asked_terms, in_heads
from sealgraph.reasoning.answer._values import NAME_KINDS
from sealgraph.text.chunking import split_sentences
from sealgraph.text.lexicon import active, stem
from sealgraph.text.names import fold

__all__ = ["Part", "asked_parts", "asked_relation", "asked_sentence", "options_modify"]


@dataclass(frozen=True, slots=True)
class Part:
    """One thing a question asks."""

    text: str
    """The part as the question writes it."""
    kind: str
    """Its answer kind (:func:`~sealgraph.reasoning.answer.answer_kind`)."""
    value: str
    """What answers it: ``version``, ``duration``, ``number``, ``amount``, ``date``,
    ``code``, a name kind (``person``, ``agent``, ``organization``, ``place``,
    ``entity``), ``polar``, ``procedure`` or ``description``."""
    terms: frozenset[str]
    """Its stemmed content words."""
    default: bool = False
    """It asks for a default value."""
    relation: frozenset[str] = frozenset()
    """The stemmed words of the relation it asks ("own" in "What does PPT own?")."""
    head: str = ""
    """The stemmed head noun of its "which/what <head>" phrase ("" when none)."""
    typos: tuple[tuple[str, str], ...] = ()
    """``(as asked, as the context writes it)`` of each word of the part that no chunk
    holds and that is read as a word of the context it is one or two edits from."""
    conditions: frozenset[str] = frozenset()
    """Words only its opening conditions write ("When checking the password, …"): they
    weigh half."""


def asked_parts(needs: Any) -> list[Part]:
    """Return the parts a question asks, in order.

    The asked sentence is the last one with a question form (earlier sentences set
    the scope: "The Docker guide says …. Which decorator …?"); it is split where it
    asks a second thing (the lexicon's ``part_split_re``). Each part's answer kind is
    :func:`answer_kind` of the needs narrowed to it.
    """
    lex = active()
    asked = asked_sentence(needs.question)
    pieces = [p.strip(" ,;") for p in lex.reader.part_split_re.split(asked) if p.strip(" ,;")]
    pieces = pieces or [asked]
    parts = []
    for piece in pieces:
        narrowed = dataclasses.replace(needs, question=piece)
        if len(pieces) > 1:
            polar = lex.yes_no_opening_re.match(piece) is not None
            narrowed = dataclasses.replace(
                narrowed, answer_type="yes_no" if polar else "other", options=()
            )
        parts.append(_part(piece, answer_kind(narrowed)))
    return parts


def asked_sentence(question: str) -> str:
    """Return the sentence of a question that asks it: the last one with a question form."""
    sentences = [question[a:b].strip() for a, b in split_sentences(question)]
    asking = [s for s in sentences if active().asking_re.search(s)]
    return asking[-1] if asking else question.strip()


def options_modify(question: str, options: Sequence[str]) -> bool:
    """Whether a question's "A or B" modifies a noun ("a Flask or Django *app*").

    Then the options are not what it asks to choose from ("Which package should I add
    to mount a Flask or Django app?"); a choice ends with its options ("…, A or B?").
    """
    if len(options) < 2:
        return False
    at = question.rfind(options[-1])
    if at < 0:
        return False
    after = TOKEN.match(question, at + len(options[-1]) + 1)
    return bool(after and question[at + len(options[-1])] == " ")


def _part(text: str, kind: str) -> Part:
    lex = active()
    rw = lex.reader
    asking, condition = _asking_clause(text)
    if condition:
        kind = answer_kind_of(asking, kind)
    words = [fold(w) for w in TOKEN.findall(asking)]
    head = answer_head(asking) or _partitive_head(words)
    if head and kind == "other":
        kind = "entity"  # "Which of those headers …": a named thing
    default = any(w in rw.default_words for w in words)
    value = _value_kind(asking, kind, head, words)
    if default and value == "description":
        value = "literal"  # "What is the default value of X?": the value as written
    relation = asked_relation(asking)
    head_stem = stem(head) if head else ""
    return Part(text, kind, value, terms(text) | synonym_keys(text), default, relation, head_stem)


def _asking_clause(text: str) -> tuple[str, str]:
    """Split off the conditions a part opens with: ``(asking clause, conditions)``.

    "When checking the password, which function do the docs use?" asks in its last
    clause; the clause before it (opened by a condition word) only narrows it. A
    part without such an opening is returned whole.
    """
    lex = active()
    clauses = [c for c in re.split(r"(?<=,)\s+", text) if c]
    first = fold(TOKEN.findall(clauses[0])[0]) if TOKEN.findall(clauses[0]) else ""
    if len(clauses) < 2 or first not in lex.reader.condition_words:
        return text, ""
    for i in range(1, len(clauses)):
        opener = TOKEN.findall(clauses[i])
        if opener and fold(opener[0]) in lex.wh_words | lex.how_words:
            return " ".join(clauses[i:]), " ".join(clauses[:i])
    return text, ""


def answer_kind_of(text: str, kind: str) -> str:
    """Return the answer kind of an asking clause alone (``kind`` when it reads none)."""
    got = answer_kind(_Needs(text))
    return got if got != "other" else kind


@dataclass(frozen=True, slots=True)
class _Needs:
    """The least of a question's needs that :func:`answer_kind` reads."""

    question: str
    answer_type: str = "other"
    options: tuple[str, ...] = ()


def _partitive_head(words: list[str]) -> str:
    """Return the noun of "which of those *headers*" ("" when the part has none)."""
    lex = active()
    for i, w in enumerate(words[:-2]):
        if (
            w in lex.selective_wh
            and words[i + 1] in lex.of_words
            and words[i + 2] in lex.determiners
        ):
            rest = [x for x in words[i + 3 : i + 6] if x not in lex.stop_words]
            return rest[0] if rest else ""
    return ""


def asked_relation(text: str) -> frozenset[str]:
    """Stemmed words of the relation a part asks, with their synonyms' keys.

    The words right after the asking phrase (:func:`asked_terms`: "Who *leads* …",
    "Which group is *chaired* …"), and the verb after an asking auxiliary's subject:
    "What does PPT *own*?", "Where does FastAPI *run* a dependency …?" (the last word
    of the run of content words after the auxiliary).
    """
    lex = active()
    out = set(asked_terms(text))
    raw = TOKEN.findall(text)
    words = [fold(w) for w in raw]
    aux = next((i for i, w in enumerate(words[:6]) if w in lex.asking_auxiliaries), None)
    if aux is not None and aux + 2 < len(words):
        subject, verb = raw[aux + 1], words[aux + 2]
        # "does PPT own", "does FastAPI run", "do I use": a name or a pronoun, then the
        # verb, a function word or not ("own" is one).
        named = subject[:1].isupper() or fold(subject) in lex.reader.subject_pronouns
        function = lex.asking_auxiliaries | lex.determiners | lex.question_prepositions
        if (
            named
            and verb.isalpha()
            and verb not in function | lex.wh_words
            and raw[aux + 2].islower()
        ):
            out.add(stem(verb))
    found = frozenset(t for t in out if t)
    return found | synonym_keys(" ".join(sorted(found)))


def _value_kind(text: str, kind: str, head: str, words: list[str]) -> str:
    lex = active()
    rw = lex.reader
    if kind == "yes_no" or lex.yes_no_opening_re.match(text):
        return "polar"
    if rw.procedure_re.match(text):
        return "procedure"
    if head and in_heads(head, rw.version_heads):
        return "version"
    if head and in_heads(head, rw.code_heads):
        return "code"
    if head and in_heads(head, rw.number_heads):
        return "number"
    how = [i for i, w in enumerate(words) if w in lex.how_words]
    if how and how[0] + 1 < len(words) and words[how[0] + 1] in rw.duration_words:
        return "duration"
    if kind in ("date", "number", "amount", *NAME_KINDS):
        return kind
    return "description"
