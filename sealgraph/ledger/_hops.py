"""The hop count of a question, read from its form (see :func:`question_hops`).

The hop count is read from the question's form, never assumed: a question is
multi-hop only when the clause that asks it nests a relation, i.e. describes an
entity instead of naming it ("the director of <film>", "<X>'s husband", "the town
where <X> was founded", "the team that owns <Y>"). Each such description is one
nesting; the answer is one hop further, unless the question asks for the
described entity itself ("Who is the director of <film>?"). A clause that only
sets the scope ("Consider <X>'s privacy policy; ...") adds no hop.

Each form of description is one construct of :data:`_CONSTRUCTS`: a test of the
token that opens it and a reader of the entity it describes. The words they rely
on (auxiliaries, determiners, prepositions, property nouns...) are the active
lexicon's (:mod:`sealgraph.text.lexicon`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sealgraph.ledger._clauses import _without_possessive, asked_clause
from sealgraph.text.lexicon import Lexicon, active

MAX_HOPS = 4
"""Hop counts are capped here: deeper nestings are read no better."""

_MASK = "\u00a7"  # stands for a named entity in the masked clause
_FORM_TOKEN = re.compile(r"\u00a7|['’]s\b|['’](?=\s)|[^\W_][\w-]*|[^\w\s]")


def _entity_head(word: str) -> bool:
    """Tell whether a head noun can denote an entity (a person, group, work or place)."""
    lex = active()
    if not word or word in lex.stop_words or word in lex.property_heads or word[:1].isdigit():
        return False
    singular = word[:-3] + "y" if word.endswith("ies") else word.rstrip("s")
    if singular in lex.property_heads:
        return False  # "inventory levels", "the figures"
    suffixes = lex.property_suffixes
    return not (word.endswith(suffixes) or singular.endswith(suffixes))


def _nesting_weight(word: str) -> int:
    lex = active()
    return 2 if word in lex.composed_kin or word.endswith(lex.composed_kin_suffixes) else 1


def _masked_tokens(question: str, spans: Sequence[tuple[int, int]], lo: int, hi: int) -> list[str]:
    """Tokens of ``question[lo:hi]``, lower-cased, each named entity replaced by a mask."""
    pieces = []
    pos = lo
    for a, b in sorted(spans):
        a, b = max(a, lo), min(b, hi)
        if a >= b or a < pos:
            continue
        pieces.append(question[pos:a].lower())
        pieces.append(f" {_MASK} ")
        pos = b
    pieces.append(question[pos:hi].lower())
    return _FORM_TOKEN.findall("".join(pieces))


def _word(tok: str) -> bool:
    return tok[:1].isalnum() and tok != _MASK


def _determiner(toks: list[str], head: int, window: int = 5) -> str:
    """Return the determiner that opens the noun phrase ending at ``toks[head]`` ('' if none)."""
    lex = active()
    for j in range(head - 1, max(-1, head - window - 1), -1):
        t = toks[j]
        if t in lex.determiners or t in lex.selective_wh:
            return t
        if not (_word(t) or t == _MASK) or t in lex.relative_words or t in lex.auxiliaries:
            return ""
    return ""


def _determined(toks: list[str], head: int, window: int = 5) -> bool:
    """Tell whether a determiner opens the noun phrase that ends at ``toks[head]``."""
    return bool(_determiner(toks, head, window))


@dataclass(frozen=True, slots=True)
class _Form:
    """The masked tokens of the asked clause, with what the construct readers look up."""

    toks: list[str]
    """Lower-cased tokens, each named entity replaced by :data:`_MASK`."""
    lex: Lexicon
    """The active lexicon."""
    anchored: bool
    """Whether some named entity has a document (see :func:`question_hops`)."""
    clause_openers: frozenset[str]
    """Words that open a relative clause after "<preposition> which"."""


def _opens_relative_clause(form: _Form, i: int) -> bool:
    return i > 0 and form.toks[i] in form.lex.relative_words


def _relative_clause(form: _Form, i: int) -> tuple[int, int] | None:
    """Read a relative clause: "the team that owns", "the film to which", "the town where"."""
    toks, lex = form.toks, form.lex
    after_preposition = (
        toks[i - 1] in lex.nesting_prepositions and toks[i] in lex.relative_after_preposition
    )
    head = i - 2 if after_preposition else i - 1
    if head == i - 2 and not any(x in form.clause_openers for x in toks[i + 1 : i + 4]):
        return None  # "with which tribe?": a question word in place, not a clause
    # "indicate that", "the fact that", "does the policy specify which": a head that
    # takes a clause describes nothing; right after its article and before no
    # conjunction it is a noun ("the state where X is located").
    noun = (
        bool(lex.conjunctions)
        and toks[i] not in lex.conjunctions
        and head >= 1
        and toks[head - 1] in lex.determiners
    )
    if head >= 0 and _word(toks[head]) and (noun or toks[head] not in lex.complement_heads):
        w = toks[head]
        if w not in lex.stop_words and w not in lex.relative_words and _determined(toks, head):
            return (head, _nesting_weight(w))
    return None


def _opens_of_phrase(form: _Form, i: int) -> bool:
    return form.toks[i] in form.lex.of_words and 0 < i < len(form.toks) - 1


def _of_phrase(form: _Form, i: int) -> tuple[int, int] | None:
    """Read an "of" phrase: "the director of <film>", a role of something described next."""
    toks, lex = form.toks, form.lex
    w = toks[i - 1]
    if (
        _word(w)
        and _entity_head(w)
        and toks[i + 1] not in lex.relative_words
        # "which tribe of": the asked phrase itself, no described entity. A
        # chain of "of" phrases may drop its article ("the cause of death of
        # director of film X").
        and (
            _determiner(toks, i - 1, 3) not in {"", *lex.selective_wh}
            or (i >= 2 and toks[i - 2] in lex.of_words)
        )
    ):
        return (i - 1, _nesting_weight(w))
    return None


def _opens_possessive(form: _Form, i: int) -> bool:
    toks = form.toks
    return (
        toks[i] in (*form.lex.possessive_suffixes, "'", "’")
        and i + 1 < len(toks)
        and _word(toks[i + 1])
    )


def _possessive(form: _Form, i: int) -> tuple[int, int] | None:
    """Read a possessive: "<X>'s husband", "<X>'s paternal grandfather" (the head ends it)."""
    toks, lex = form.toks, form.lex
    n = len(toks)
    j = i + 1
    while (
        j + 1 < n
        and j - i < 3
        and _word(toks[j + 1])
        and toks[j + 1] not in lex.stop_words
        and toks[j + 1] not in lex.question_words
        and toks[j] not in lex.property_heads  # "X's total net sales changed": "total"
    ):
        j += 1
    if _entity_head(toks[j]):
        return (j, _nesting_weight(toks[j]))
    return None


def _opens_indefinite(form: _Form, i: int) -> bool:
    return i > 0 and form.toks[i] in form.lex.indefinite_articles


def _indefinite_description(form: _Form, i: int) -> tuple[int, int] | None:
    """Read an indefinite description: "located on an island with a population of what?".

    The question asks about an entity it only describes, by a question word after it.
    """
    toks, lex = form.toks, form.lex
    n = len(toks)
    j = i + 1
    while j < n and (_word(toks[j]) or toks[j] == _MASK) and toks[j] not in lex.stop_words:
        j += 1
    head = j - 1
    rest = toks[j:]
    wh = next((k for k, r in enumerate(rest) if r in lex.wh_in_situ), None)
    in_situ = (
        wh is not None
        and _MASK not in rest[:wh]
        and not any(r in lex.relative_words for r in rest[:wh])
    )
    # Unanchored: "hosts a 500 mile race": a described entity to find first,
    # unless it is a predicate ("is a singer").
    described = not form.anchored and toks[i - 1] not in lex.copulas | lex.predicate_words
    if head > i and _word(toks[head]) and _entity_head(toks[head]) and (in_situ or described):
        return (head, 1)
    return None


def _opens_same_as(form: _Form, i: int) -> bool:
    toks, lex = form.toks, form.lex
    return (
        toks[i] in lex.same_words
        and i + 2 < len(toks)
        and _word(toks[i + 1])
        and toks[i + 2] in lex.as_words
    )


def _same_as(form: _Form, i: int) -> tuple[int, int] | None:
    """Read "the same ... as": "in the same county as <X>" is <X>'s county, not named."""
    return (i + 1, 1)


def _opens_reduced_relative(form: _Form, i: int) -> bool:
    toks = form.toks
    return toks[i] == _MASK and i >= 2 and i + 1 < len(toks) and toks[i + 1] in form.lex.auxiliaries


def _reduced_relative(form: _Form, i: int) -> tuple[int, int] | None:
    """Read a relative clause with no pronoun: "the severity level <X> was classified as"."""
    toks, lex = form.toks, form.lex
    k = i - 1 if toks[i - 1] not in lex.definite_articles else i - 2
    head = toks[k] if k >= 1 else ""
    if _word(head) and head not in lex.stop_words and _determined(toks, k, 3):
        return (k, _nesting_weight(toks[k]))
    return None


def _opens_name_role(form: _Form, i: int) -> bool:
    toks = form.toks
    return toks[i] == _MASK and i >= 1 and i + 1 < len(toks) and toks[i - 1] in form.lex.determiners


def _name_role(form: _Form, i: int) -> tuple[int, int] | None:
    """Read a role noun after a name: "the Another Page performer" is its performer."""
    lex = form.lex
    role = form.toks[i + 1]
    if role in lex.agent_roles or role in lex.person_heads:
        return (i + 1, _nesting_weight(role))
    return None


@dataclass(frozen=True, slots=True)
class _Construct:
    """A form that describes an unnamed entity, and how to read it."""

    opens: Callable[[_Form, int], bool]
    """Whether the token at a position opens the construct."""
    read: Callable[[_Form, int], tuple[int, int] | None]
    """``(position, weight)`` of the described entity's head, or None when there is none."""
    last_only: bool = False
    """Only the last reading counts, and only when no other nesting sits next to it."""


_CONSTRUCTS = (
    _Construct(_opens_relative_clause, _relative_clause),
    _Construct(_opens_of_phrase, _of_phrase),
    _Construct(_opens_possessive, _possessive),
    _Construct(_opens_indefinite, _indefinite_description, last_only=True),
    _Construct(_opens_same_as, _same_as),
    _Construct(_opens_reduced_relative, _reduced_relative),
    _Construct(_opens_name_role, _name_role),
)
"""The constructs a nesting is read from. A token opens at most one: the first that
matches reads it, whether it finds a nesting or not."""


def _nestings(toks: list[str], *, anchored: bool = True) -> list[tuple[int, int]]:
    """``(position, weight)`` of every description of an unnamed entity in the tokens."""
    lex = active()
    form = _Form(toks, lex, anchored, lex.determiners | lex.clause_subjects | {_MASK})
    found: list[tuple[int, int]] = []
    indefinite: tuple[int, int] | None = None
    for i in range(len(toks)):
        construct = next((c for c in _CONSTRUCTS if c.opens(form, i)), None)
        if construct is None:
            continue
        nesting = construct.read(form, i)
        if nesting is None:
            continue
        if construct.last_only:
            indefinite = nesting  # only the last one before the question word counts
        else:
            found.append(nesting)
    if indefinite is not None and all(abs(p - indefinite[0]) > 1 for p, _ in found):
        found.append(indefinite)
    return found


def question_hops(
    question: str, entity_spans: Sequence[tuple[int, int]] = (), *, anchored: bool = True
) -> int:
    """Count the hops a question asks for, from its form (1 to :data:`MAX_HOPS`).

    Args:
        question: The question text.
        entity_spans: Character spans of the entities the question names (masked, so a
            name's own words, "Bank of England", are never read as a nesting).
        anchored: Whether some named entity has a document in the corpus. A question
            that names none ("What race track hosts a 500 mile race every May?")
            reaches its answer through what it describes ("a 500 mile race"): an
            indefinite description counts as a nesting there.

    """
    lo, hi = asked_clause(question)
    toks = _masked_tokens(question, _without_possessive(question, entity_spans), lo, hi)
    found = _nestings(toks, anchored=anchored)
    if not found:
        return 1
    nest = sum(w for _, w in found)
    # "Who is the director of X?": the answer is the outermost described entity
    # itself, no further hop. "What is the name of the director of X?" likewise.
    first = min(p for p, _ in found)
    # The described entity must be the noun phrase right after the copula: its head
    # comes after modifiers (and a possessor) only, no "of" in between.
    opening = toks[2:first]
    lex = active()
    identity = (
        len(toks) > 2
        and toks[0] in lex.identity_wh
        and toks[1] in lex.copulas
        and (toks[2] in lex.determiners or toks[2] == _MASK)
        and (
            (
                len(opening) <= 4
                and all(t not in lex.of_words and t not in lex.relative_words for t in opening)
            )
            or (
                len(toks) > 4
                and toks[2] in lex.definite_articles
                and toks[3] in lex.naming_nouns
                and toks[4] in lex.of_words
            )
        )
    )
    return max(1, min(MAX_HOPS, nest if identity else nest + 1))


def hop_relations(
    question: str, entity_spans: Sequence[tuple[int, int]], hops: int
) -> tuple[tuple[str, ...], ...]:
    """Return the relation words of each hop, innermost (from the named entity) first.

    The asked clause is cut at the head of each description it nests ("the team that
    owns | the system whose lag caused | X"): the words from one head to the next are
    the hop that head names, the words before the outermost head the hop the question
    asks last ("who leads"), with what follows the last name ("... was born?").
    Descriptions beyond ``hops`` are read into the last hop.
    Each hop's words are its content words (names masked); a hop may have none.
    """
    lex = active()
    lo, hi = asked_clause(question)
    toks = _masked_tokens(question, _without_possessive(question, entity_spans), lo, hi)
    heads = sorted({p for p, _ in _nestings(toks)})
    bounds = [0, *heads, len(toks)]
    segments = [toks[a:b] for a, b in itertools.pairwise(bounds)]
    # "In which town was the person who ... caused X born?": what follows the last name
    # closes the asked clause, unless the innermost description is a reduced relative
    # clause ("the person X was named after"), which ends with it.
    last = max((i for i, t in enumerate(toks) if t == _MASK), default=-1)
    if heads and last > heads[-1] + 1 and last + 1 < len(toks):
        segments[0] = [*segments[0], *toks[last + 1 :]]
        segments[-1] = segments[-1][: last + 1 - heads[-1]]
    words = [
        tuple(
            t for t in seg if _word(t) and t not in lex.stop_words and t not in lex.question_words
        )
        for seg in reversed(segments)
    ]
    words = [w for w in words if w] or [()]
    if len(words) > hops:  # more descriptions than hops: the outer ones ask the last hop
        words = [*words[: hops - 1], tuple(t for w in words[hops - 1 :] for t in w)]
    return tuple(words)
