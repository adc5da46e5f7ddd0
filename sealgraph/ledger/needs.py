"""Question needs N(q): what a question asks for, read without a model.

:func:`question_needs` finds the entities the question names (gazetteer matches,
capitalised spans, quoted titles), the relation words left once entities and
question words are removed, the expected answer type, the question structure and
its hop count.

The hop count is read from the question's form, never assumed: a question is
multi-hop only when the clause that asks it nests a relation, i.e. describes an
entity instead of naming it ("the director of <film>", "<X>'s husband", "the town
where <X> was founded", "the team that owns <Y>"). Each such description is one
nesting; the answer is one hop further, unless the question asks for the
described entity itself ("Who is the director of <film>?"). A clause that only
sets the scope ("Consider <X>'s privacy policy; ...") adds no hop.

The words this reading relies on (question words, auxiliaries, comparatives,
determiners, prepositions, attribute and property nouns...) are the active
lexicon's (:mod:`sealgraph.text.lexicon`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sealgraph.ledger.gazetteer import Gazetteer, tokenize_with_offsets
from sealgraph.text.lexicon import active, content_words
from sealgraph.text.names import normalize_name, years_in

ANSWER_TYPES = ("person", "date", "number", "place", "yes_no", "choice", "other")
STRUCTURES = ("single", "bridge", "comparison", "multi_step")
"""``single``: one hop; ``bridge``: two; ``multi_step``: three or more; ``comparison``:
compared options (each needs its own evidence)."""
MAX_HOPS = 4
"""Hop counts are capped here: deeper nestings are read no better."""

_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
# Punctuation that ends a run of capitalised words (a full stop does not: "John A. Smith").
_NAME_BREAK = re.compile(r"[;:,?!()\"“”]")

_MASK = "\u00a7"  # stands for a named entity in the masked clause
_FORM_TOKEN = re.compile(r"\u00a7|['’]s\b|['’](?=\s)|[^\W_][\w-]*|[^\w\s]")


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


def _entity_head(word: str) -> bool:
    """Tell whether a head noun can denote an entity (a person, group, work or place)."""
    lex = active()
    if not word or word in lex.stop_words or word in lex.property_heads or word[:1].isdigit():
        return False
    singular = word[:-3] + "y" if word.endswith("ies") else word.rstrip("s")
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


def _nestings(toks: list[str], *, anchored: bool = True) -> list[tuple[int, int]]:
    """``(position, weight)`` of every description of an unnamed entity in the tokens."""
    lex = active()
    stop, relative, of = lex.stop_words, lex.relative_words, lex.of_words
    clause_openers = lex.determiners | lex.clause_subjects | {_MASK}
    found: list[tuple[int, int]] = []
    indefinite = -1
    n = len(toks)
    for i, t in enumerate(toks):
        if t in relative and i > 0:
            # "the team that owns", "the film to which", "the town where".
            after_preposition = (
                toks[i - 1] in lex.nesting_prepositions and t in lex.relative_after_preposition
            )
            head = i - 2 if after_preposition else i - 1
            if head == i - 2 and not any(x in clause_openers for x in toks[i + 1 : i + 4]):
                continue  # "with which tribe?": a question word in place, not a clause
            if head >= 0 and _word(toks[head]) and toks[head] not in lex.complement_heads:
                w = toks[head]
                if w not in stop and w not in relative and _determined(toks, head):
                    found.append((head, _nesting_weight(w)))
        elif t in of and 0 < i < n - 1:
            # "the director of <film>": a role of something the question goes on to describe.
            w = toks[i - 1]
            if (
                _word(w)
                and _entity_head(w)
                and toks[i + 1] not in relative
                # "which tribe of": the asked phrase itself, no described entity. A
                # chain of "of" phrases may drop its article ("the cause of death of
                # director of film X").
                and (
                    _determiner(toks, i - 1, 3) not in {"", *lex.selective_wh}
                    or (i >= 2 and toks[i - 2] in of)
                )
            ):
                found.append((i - 1, _nesting_weight(w)))
        elif t in (*lex.possessive_suffixes, "'", "’") and i + 1 < n and _word(toks[i + 1]):
            # "<X>'s husband", "<X>'s paternal grandfather": the head ends the phrase.
            j = i + 1
            while (
                j + 1 < n
                and j - i < 3
                and _word(toks[j + 1])
                and toks[j + 1] not in stop
                and toks[j + 1] not in lex.question_words
            ):
                j += 1
            if _entity_head(toks[j]):
                found.append((j, _nesting_weight(toks[j])))
        elif t in lex.indefinite_articles and i > 0:
            # "located on an island with a population of what?": the question asks
            # about an entity it only describes, by a question word after it.
            j = i + 1
            while j < n and (_word(toks[j]) or toks[j] == _MASK) and toks[j] not in stop:
                j += 1
            head = j - 1
            rest = toks[j:]
            wh = next((k for k, r in enumerate(rest) if r in lex.wh_in_situ), None)
            in_situ = (
                wh is not None
                and _MASK not in rest[:wh]
                and not any(r in relative for r in rest[:wh])
            )
            # Unanchored: "hosts a 500 mile race": a described entity to find first,
            # unless it is a predicate ("is a singer").
            described = not anchored and toks[i - 1] not in lex.copulas | lex.predicate_words
            if (
                head > i
                and _word(toks[head])
                and _entity_head(toks[head])
                and (in_situ or described)
            ):
                indefinite = head  # only the last one before the question word counts
        elif (
            t in lex.same_words and i + 2 < n and _word(toks[i + 1]) and toks[i + 2] in lex.as_words
        ):
            # "in the same county as <X>": <X>'s county, described, not named.
            found.append((i + 1, 1))
        elif t == _MASK and i >= 2 and i + 1 < n and toks[i + 1] in lex.auxiliaries:
            # "the severity level <X> was classified as": a relative clause with no pronoun.
            k = i - 1 if toks[i - 1] not in lex.definite_articles else i - 2
            head = toks[k] if k >= 1 else ""
            if _word(head) and head not in stop and _determined(toks, k, 3):
                found.append((k, _nesting_weight(toks[k])))
    if indefinite >= 0 and all(abs(p - indefinite) > 1 for p, _ in found):
        found.append((indefinite, 1))
    return found


_NAME_GAP = re.compile(r"^[\s,]*$")


def answer_modifiers(
    question: str, entity_spans: Sequence[tuple[int, int]]
) -> set[tuple[int, int]]:
    """Entity spans that modify the asked noun phrase ("which German philosopher").

    They sit between the question word and the lower-case head noun of its phrase:
    they describe the answer instead of naming something the answer is about.
    """
    lex = active()
    lo, hi = asked_clause(question)
    m = lex.wh_opening_re.match(question[lo:hi])
    if not m:
        return set()
    pos = lo + m.end()
    run: list[tuple[int, int]] = []
    for a, b in sorted(span for span in entity_spans if span[0] >= pos):
        if not _NAME_GAP.match(question[pos:a]):
            break
        run.append((a, b))
        pos = b
    # The names must end on the phrase's lower-case head noun ("... philosopher wrote").
    head = lex.head_after_re.match(question[pos:hi]) if run else None
    word = head.group(1) if head else ""
    if not word or word in lex.stop_words or word in lex.auxiliaries or word in lex.question_words:
        return set()
    return set(run)


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


@dataclass(frozen=True, slots=True)
class NeedEntity:
    """An entity named by the question."""

    name: str
    """Surface form in the question."""
    key: str
    """Normalised name."""
    targets: tuple[str, ...]
    """Document ids the name links to through the gazetteer (empty when unknown)."""
    source: str
    """How it was found: ``gazetteer``, ``capitalized`` or ``quoted`` (offline), ``llm``
    (named by the LLM reasoner, linked with :func:`linked_docs`)."""


@dataclass(frozen=True, slots=True)
class QuestionNeeds:
    """N(q): entities, relation, answer type, structure and hop count of a question."""

    question: str
    """The question text."""
    entities: tuple[NeedEntity, ...]
    """Entities the question names, in order of appearance."""
    relation_terms: tuple[str, ...]
    """Content words of the question outside entity names and question words."""
    answer_type: str
    """One of :data:`ANSWER_TYPES`."""
    structure: str
    """One of :data:`STRUCTURES`."""
    options: tuple[str, ...] = field(default=())
    """Named options of a choice question ("X or Y?")."""
    hops: int = 1
    """How many hops the question's form asks for (see :func:`question_hops`)."""
    answer_modifiers: tuple[str, ...] = ()
    """Keys of named entities that only describe the answer ("German" in "Which German
    philosopher wrote X?"): the answer must be shown to fit them, they anchor nothing."""

    def to_dict(self) -> dict:
        """Return a JSON-safe dict."""
        return {
            "question": self.question,
            "entities": [
                {"name": e.name, "key": e.key, "targets": list(e.targets), "source": e.source}
                for e in self.entities
            ],
            "relation_terms": list(self.relation_terms),
            "answer_type": self.answer_type,
            "structure": self.structure,
            "options": list(self.options),
            "hops": self.hops,
            "answer_modifiers": list(self.answer_modifiers),
        }

    @classmethod
    def from_dict(cls, data: dict) -> QuestionNeeds:
        """Inverse of :meth:`to_dict`."""
        return cls(
            question=data["question"],
            entities=tuple(
                NeedEntity(e["name"], e["key"], tuple(e["targets"]), e["source"])
                for e in data["entities"]
            ),
            relation_terms=tuple(data["relation_terms"]),
            answer_type=data["answer_type"],
            structure=data["structure"],
            options=tuple(data.get("options", ())),
            hops=int(data.get("hops", _default_hops(data["structure"]))),
            answer_modifiers=tuple(data.get("answer_modifiers", ())),
        )


def _default_hops(structure: str) -> int:
    """Hop count of needs written before hops were stored (read from their structure)."""
    return {"bridge": 2, "multi_step": 3}.get(structure, 1)


def answer_type_of(question: str) -> str:
    """Classify the expected answer type of a question by its wording."""
    lex = active()
    q = question.strip().lower()
    if lex.yes_no_opening_re.match(q):
        return (
            "choice"
            if lex.choice_or_re.search(q) and not lex.choice_exclusion_re.search(q)
            else "yes_no"
        )
    if lex.trailing_choice_re.match(q):
        # Checked before the wh-word types: "Who is older, X or Y?" names its answer options.
        return "choice"
    if lex.date_answer_re.search(q):
        return "date"
    if lex.number_answer_re.search(q):
        return "number"
    if lex.place_answer_re.search(q):
        return "place"
    if lex.person_answer_re.search(q):
        return "person"
    if lex.choice_or_re.search(q) and lex.choice_opening_re.search(q):
        return "choice"
    return "other"


def _options_around_or(question: str, entities: tuple[NeedEntity, ...]) -> tuple[str, ...]:
    """Return the question entities written right before and right after its last "or"."""
    lex = active()
    found = list(lex.or_split_re.finditer(question))
    if not found:
        return ()
    before = question[: found[-1].start()].rstrip(" ,?")
    after = lex.leading_article_re.sub("", question[found[-1].end() :])
    left = [e.name for e in entities if before.endswith(e.name)]
    right = [e.name for e in entities if after.startswith(e.name)]
    if not (left and right):
        return ()
    return (max(left, key=len), max(right, key=len))


def _choice_options(question: str, entities: tuple[NeedEntity, ...]) -> tuple[str, ...]:
    # Entity names first: they may hold commas or question marks of their own
    # ("Angélique, Marquise Des Anges or That Man George?").
    around = _options_around_or(question, entities)
    if around and normalize_name(around[0]) != normalize_name(around[1]):
        return around
    lex = active()
    m = lex.choice_options_re.search(question)
    if not m:
        return ()
    left, right = m.group(1).strip(), m.group(2).strip()

    # Prefer entity names inside each side; fall back to the last words of the left side.
    def pick(side: str, from_end: bool) -> str:
        inside = [e.name for e in entities if e.name in side]
        if inside:
            return inside[-1] if from_end else inside[0]
        words = side.split()
        return " ".join(words[-3:]) if from_end else " ".join(words[:3])

    a, b = pick(left, True), pick(right, False)
    a = lex.leading_article_re.sub("", a)
    b = lex.leading_article_re.sub("", b)
    return (a, b) if a and b and normalize_name(a) != normalize_name(b) else ()


def _capitalized_spans(question: str, covered: list[tuple[int, int]]) -> list[tuple[str, int, int]]:
    """Return the runs of capitalised words (with connectors) outside ``covered``.

    A run stops at punctuation and after a possessive ("DBT's Mutual Agreement" is
    DBT's agreement). The scoping verb that opens a clause ("Consider the X") is no
    part of a name.
    """
    lex = active()
    qwords, connect = lex.question_words, lex.question_name_connectors
    toks = tokenize_with_offsets(question)
    spans: list[tuple[str, int, int]] = []

    def joined(j: int) -> bool:
        # A name never runs across a clause or list break ("B; Does", "X, Y"), into
        # a question word ("Co. Which"), nor past a possessive.
        prev = question[toks[j - 1][1] : toks[j - 1][2]]
        if prev.endswith(lex.possessive_suffixes) or toks[j][0] in qwords:
            return False
        return not _NAME_BREAK.search(question[toks[j - 1][2] : toks[j][1]])

    i = 0
    while i < len(toks):
        key, s, _end, cap = toks[i]
        first_word = i == 0 or _NAME_BREAK.search(question[toks[i - 1][2] : s]) is not None
        if cap and not (first_word and key in qwords) and key not in qwords:
            j = i + 1
            while (
                j < len(toks)
                and joined(j)
                and (
                    toks[j][3]
                    or (
                        toks[j][0] in connect
                        and j + 1 < len(toks)
                        and toks[j + 1][3]
                        and joined(j + 1)
                    )
                )
            ):
                j += 1
            first = i
            if first_word and j - i > 1 and key in lex.scoping_words:
                first = i + 1
                while first < j and not toks[first][3]:
                    first += 1
            start, end = toks[first][1], toks[j - 1][2]
            if not any(a < end and start < b for a, b in covered):
                text = question[start:end]
                if not (first_word and j - first == 1 and first == i):
                    spans.append((text, start, end))
            i = j
        else:
            i += 1
    return spans


def _split_unknown(
    text: str, start: int, end: int, gazetteer: Gazetteer
) -> list[tuple[str, int, int]]:
    """Split a run the corpus does not know at "and" when its parts are known.

    "McGill University and Mitacs" may be one name or two; when the whole is unknown
    and a part names a document, it is two.
    """
    if gazetteer.lookup(text)[0] or " and " not in text:
        return [(text, start, end)]
    parts = []
    pos = 0
    for piece in text.split(" and "):
        a = text.index(piece, pos)
        parts.append((piece, start + a, start + a + len(piece)))
        pos = a + len(piece)
    if any(gazetteer.lookup(p)[0] for p, _, _ in parts):
        return parts
    return [(text, start, end)]


def linked_docs(name: str, gazetteer: Gazetteer) -> tuple[str, ...]:
    """Return the documents a name refers to: its gazetteer entry's, if it has one.

    A title, alias, acronym or a name written inside exactly one title links; a
    section heading ("Agreement") names no document. This is how the offline reader
    links a capitalised name, and how the LLM reasoner's names are linked too.
    """
    targets, kind = gazetteer.lookup(name)
    return () if kind == "heading" else targets


def relation_words(question: str, entity_spans: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """Return the question's relation words: content words outside names and question words.

    Clauses that only set the scope (:func:`scope_clauses`) are left out as well.
    """
    masked = question
    for a, b in sorted([*entity_spans, *scope_clauses(question)], reverse=True):
        masked = masked[:a] + " " * (b - a) + masked[b:]
    qwords = active().question_words
    return tuple(w for w in content_words(masked) if w not in qwords)


def question_needs(question: str, gazetteer: Gazetteer) -> QuestionNeeds:
    """Read N(q) from a question using the corpus gazetteer.

    Args:
        question: The user question.
        gazetteer: Names known to the corpus.

    """
    lex = active()
    found: list[tuple[int, NeedEntity]] = []
    covered: list[tuple[int, int]] = []
    for m in _QUOTED.finditer(question):
        name = m.group(1).strip()
        targets, _ = gazetteer.lookup(name)
        found.append((m.start(1), NeedEntity(name, normalize_name(name), targets, "quoted")))
        covered.append((m.start(1), m.end(1)))
    for mention in gazetteer.find_mentions(question, min_kind="acronym"):
        if any(a < mention.end and mention.start < b for a, b in covered):
            continue
        if not mention.capitalized and (
            mention.key in lex.attribute_nouns or mention.key.split()[-1] in lex.value_heads
        ):
            # "What year did...", "the place of birth of": they ask for a value; a page
            # titled "Year" or "Place of birth" is not meant.
            continue
        if mention.key in lex.calendar_words:
            continue  # "every May" dates the relation
        if not mention.capitalized and " " not in mention.key:
            continue  # "do they keep my data": a common word, whatever page it titles
        found.append(
            (mention.start, NeedEntity(mention.surface, mention.key, mention.targets, "gazetteer"))
        )
        covered.append((mention.start, mention.end))
    for run in _capitalized_spans(question, covered):
        for text, start, end in _split_unknown(*run, gazetteer):
            key = normalize_name(text)
            if key and key not in lex.stop_words and key not in lex.calendar_words:
                found.append(
                    (start, NeedEntity(text, key, linked_docs(text, gazetteer), "capitalized"))
                )
                covered.append((start, end))
    found.sort(key=lambda t: t[0])
    entities: list[NeedEntity] = []
    seen: set[str] = set()
    for _, ent in found:
        if ent.key not in seen:
            seen.add(ent.key)
            entities.append(ent)
    ent_tuple = tuple(entities)

    relation = relation_words(question, covered)

    lo, hi = asked_clause(question)
    atype = answer_type_of(question[lo:hi])
    options = _choice_options(question, ent_tuple) if atype == "choice" else ()
    # A comparative word alone ("first published") does not make a comparison: it
    # needs named options ("X or Y"), or a word that relates two entities.
    relating = lex.relating_re.search(question) or (
        lex.comparative_re.search(question) and lex.comparison_link_re.search(question)
    )
    hops = question_hops(question, covered, anchored=any(e.targets for e in ent_tuple))
    modifiers = answer_modifiers(question, _without_possessive(question, covered))
    describing = tuple(dict.fromkeys(normalize_name(question[a:b]) for a, b in modifiers))
    if atype == "choice" or (relating and len(ent_tuple) >= 2):
        structure = "comparison"
    elif atype == "yes_no" and hops == 1 and len({e.targets for e in ent_tuple if e.targets}) >= 2:
        # "Is X a Y?" checks two named documents against each other: each needs its
        # evidence. Names of one document ("the agreement between A and B") are one scope.
        structure = "comparison"
    else:
        structure = "single" if hops == 1 else "bridge" if hops == 2 else "multi_step"
    return QuestionNeeds(
        question=question,
        entities=ent_tuple,
        relation_terms=relation,
        answer_type=atype,
        structure=structure,
        options=options,
        hops=hops,
        answer_modifiers=tuple(k for k in describing if k in {e.key for e in ent_tuple}),
    )


def narrow_by_years(
    needs: QuestionNeeds, doc_years: Callable[[str], frozenset[str]]
) -> QuestionNeeds:
    """Keep, for a name that links to several documents, the ones of the asked years.

    Two reports titled alike ("Northwind Ltd." for 2020 and for 2021) are one name to the
    gazetteer; a question about "Northwind Ltd. in 2021" means the document that writes
    2021. A name keeps all its documents when none or all of them write a year the
    question states (nothing tells them apart then).
    """
    asked = years_in(needs.question)
    if not asked:
        return needs
    entities = []
    for e in needs.entities:
        if len(e.targets) > 1:
            keep = tuple(d for d in e.targets if doc_years(d) & asked)
            if keep and len(keep) < len(e.targets):
                e = dataclasses.replace(e, targets=keep)
        entities.append(e)
    return dataclasses.replace(needs, entities=tuple(entities))
