"""Question needs N(q): what a question asks for, read without a model.

:func:`question_needs` finds the entities the question names (gazetteer matches,
capitalised spans, quoted titles), the relation words left once entities and
question words are removed, the expected answer type, the question structure and
its hop count.

The hop count is read from the question's form, never assumed
(:func:`question_hops`, in :mod:`sealgraph.ledger._hops`); which clause asks the
question and which only set its scope is read by :mod:`sealgraph.ledger._clauses`.
Both are importable from here.

The words this reading relies on (question words, auxiliaries, comparatives,
determiners, prepositions, attribute and property nouns...) are the active
lexicon's (:mod:`sealgraph.text.lexicon`). The needs themselves
(:class:`QuestionNeeds`, :class:`NeedEntity`) are plain values of
:mod:`sealgraph.model`, importable from here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from sealgraph.ledger._clauses import (
    _without_possessive,
    asked_clause,
    focus_text,
    scope_clauses,
)
from sealgraph.ledger._hops import MAX_HOPS, hop_relations, question_hops
from sealgraph.ledger.gazetteer import Gazetteer, Mention
from sealgraph.ledger.periods import period_spans
from sealgraph.model import ANSWER_TYPES, STRUCTURES, NeedEntity, QuestionNeeds
from sealgraph.text.lexicon import active, content_words
from sealgraph.text.names import normalize_name, tokenize_with_offsets, years_in

__all__ = [
    "ANSWER_TYPES",
    "MAX_HOPS",
    "STRUCTURES",
    "NeedEntity",
    "QuestionNeeds",
    "answer_modifiers",
    "answer_type_of",
    "asked_clause",
    "focus_text",
    "hop_relations",
    "linked_docs",
    "narrow_by_years",
    "question_hops",
    "question_needs",
    "relation_words",
    "scope_clauses",
]

_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
# Punctuation that ends a run of capitalised words (a full stop does not: "John A. Smith").
_NAME_BREAK = re.compile(r"[;:,?!()\"“”]")


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
    if any(_asks(q, m) for m in lex.date_answer_re.finditer(q)):
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


def _asks(question: str, match: re.Match[str]) -> bool:
    """Whether a date phrase asks: "when" only where it is the asking word.

    "When did …", "Until when …", "… ended when?" and a "when" opening a sentence or
    clause ask for a date; "… cached when using CORS" is a subordinate clause.
    """
    if match.group(1) != "when":
        return True
    lex = active()
    before = question[: match.start()].rstrip()
    if not before or before[-1] in ".?!;:" or question[match.end() :].strip() in ("", "?"):
        return True
    lead = before.split()[-1]
    return lead in lex.nesting_prepositions or lead in lex.asking_word_leads


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


def _run_end(
    toks: Sequence[tuple[str, int, int, bool]],
    i: int,
    joined: Callable[[int], bool],
    connect: frozenset[str],
) -> int:
    """Return the end (exclusive) of the run of capitalised words that starts at ``toks[i]``.

    A lower-case connector ("of", "de") stays in the run only between capitalised words.
    """
    j = i + 1
    while (
        j < len(toks)
        and joined(j)
        and (
            toks[j][3]
            or (toks[j][0] in connect and j + 1 < len(toks) and toks[j + 1][3] and joined(j + 1))
        )
    ):
        j += 1
    return j


def _capitalized_spans(question: str, covered: list[tuple[int, int]]) -> list[tuple[str, int, int]]:
    """Return the runs of capitalised words (with connectors) outside ``covered``.

    A run stops at punctuation and after a possessive ("DBT's Mutual Agreement" is
    DBT's agreement). The word that opens a sentence ("Consider the X", "In Amazon's
    …", "Has Intel …") is no part of a name.
    """
    lex = active()
    qwords, connect = lex.question_words, lex.question_name_connectors
    openers = lex.scoping_words | lex.name_openers | lex.asking_auxiliaries
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
            j = _run_end(toks, i, joined, connect)
            first = i
            # "Consider X", "In Amazon's", "Has Intel": the word that opens the
            # sentence is no part of the name after it.
            if first_word and j - i > 1 and key in openers:
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


def _overlaps(covered: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    return any(a < end and start < b for a, b in covered)


def _names_entity(mention: Mention) -> bool:
    """Tell whether a gazetteer mention in a question names an entity of the question."""
    lex = active()
    if not mention.capitalized and (
        mention.key in lex.attribute_nouns or mention.key.split()[-1] in lex.value_heads
    ):
        # "What year did...", "the place of birth of": they ask for a value; a page
        # titled "Year" or "Place of birth" is not meant.
        return False
    if mention.key in lex.calendar_words:
        return False  # "every May" dates the relation
    # "do they keep my data": a common word, whatever page it titles.
    return mention.capitalized or " " in mention.key


def _named_entities(
    question: str, gazetteer: Gazetteer
) -> tuple[tuple[NeedEntity, ...], list[tuple[int, int]]]:
    """Return the entities a question names, in order, and the spans of all their mentions.

    Quoted titles first, then gazetteer names outside them, then capitalised runs
    outside both; a key named twice keeps its first mention.
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
        if _overlaps(covered, mention.start, mention.end) or not _names_entity(mention):
            continue
        found.append(
            (mention.start, NeedEntity(mention.surface, mention.key, mention.targets, "gazetteer"))
        )
        covered.append((mention.start, mention.end))
    # "In Q1 2023", the "Q" of "10-Q": a period or a document code is no name.
    periods = period_spans(question)
    for run in _capitalized_spans(question, covered):
        if _overlaps(periods, run[1], run[2]):
            continue
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
    return tuple(entities), covered


def _structure(question: str, answer_type: str, hops: int, entities: Sequence[NeedEntity]) -> str:
    """Return the question's structure (one of :data:`STRUCTURES`)."""
    lex = active()
    # A comparative word alone ("first published") does not make a comparison: it
    # needs named options ("X or Y"), or a word that relates two entities.
    relating = lex.relating_re.search(question) or (
        lex.comparative_re.search(question) and lex.comparison_link_re.search(question)
    )
    if answer_type == "choice" or (relating and len(entities) >= 2):
        return "comparison"
    if (
        answer_type == "yes_no"
        and hops == 1
        and len({e.targets for e in entities if e.targets}) >= 2
    ):
        # "Is X a Y?" checks two named documents against each other: each needs its
        # evidence. Names of one document ("the agreement between A and B") are one scope.
        return "comparison"
    return "single" if hops == 1 else "bridge" if hops == 2 else "multi_step"


def question_needs(question: str, gazetteer: Gazetteer) -> QuestionNeeds:
    """Read N(q) from a question using the corpus gazetteer.

    Args:
        question: The user question.
        gazetteer: Names known to the corpus.

    """
    entities, covered = _named_entities(question, gazetteer)
    relation = relation_words(question, covered)
    lo, hi = asked_clause(question)
    atype = answer_type_of(question[lo:hi])
    options = _choice_options(question, entities) if atype == "choice" else ()
    # A period ("the first quarter of 2023") describes no entity: read like a name.
    masked = [*covered, *period_spans(question)]
    hops = question_hops(question, masked, anchored=any(e.targets for e in entities))
    modifiers = answer_modifiers(question, _without_possessive(question, covered))
    describing = tuple(dict.fromkeys(normalize_name(question[a:b]) for a, b in modifiers))
    return QuestionNeeds(
        question=question,
        entities=entities,
        relation_terms=relation,
        answer_type=atype,
        structure=_structure(question, atype, hops, entities),
        options=options,
        hops=hops,
        answer_modifiers=tuple(k for k in describing if k in {e.key for e in entities}),
        hop_relations=hop_relations(question, masked, hops) if hops > 1 else (),
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
