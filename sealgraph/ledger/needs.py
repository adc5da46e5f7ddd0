"""Question needs N(q): what a question asks for, read without a model.

:func:`question_needs` finds the entities the question names (gazetteer matches,
capitalised spans, quoted titles), the relation words left once entities and
question words are removed, the expected answer type and the question structure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sealgraph.ledger.gazetteer import Gazetteer, tokenize_with_offsets
from sealgraph.text import STOPWORDS, content_words, normalize_name

ANSWER_TYPES = ("person", "date", "number", "place", "yes_no", "choice", "other")
STRUCTURES = ("bridge", "comparison", "multi_step")

_AUX_START = re.compile(
    r"^\s*(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|shall|may)\b",
    re.I,
)
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_COMPARATIVE = re.compile(
    r"\b(older|younger|earlier|later|first|last|longer|shorter|larger|smaller|bigger|"
    r"higher|lower|more|less|fewer|greater|earliest|latest|oldest|youngest|"
    r"both|same|either|neither|different|also|common|compared?)\b",
    re.I,
)
# "…, X or Y?": the question ends by naming the alternatives to choose from.
_TRAILING_CHOICE = re.compile(r"^(which|who|whom|whose|what)\b.*\bor\b[^,;:]*\?*\s*$")
_RELATING = re.compile(r"\b(both|same|common|either|neither|compared?|different)\b", re.I)
_CONNECT = frozenset({"of", "the", "and", "de", "von", "van", "der", "du", "la", "le", "&", "y"})
# Nouns that name a value the question asks for ("what year", "the place of birth"),
# never an entity of the question nor a role linking its hops.
ATTRIBUTE_NOUNS = frozenset(
    [
        "year",
        "date",
        "time",
        "name",
        "place",
        "city",
        "country",
        "county",
        "state",
        "nationality",
        "population",
        "age",
        "number",
        "language",
        "type",
        "kind",
        "part",
        "one",
        "first",
        "last",
        "same",
        "birth",
        "death",
        "title",
        "height",
        "size",
        "capital",
    ]
)

_QWORDS = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
    ]
)
_MULTI_STEP = re.compile(
    r"\b(of the|whose|that|which|who)\b.*\b(of the|whose|that|which|who)\b", re.I
)


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
    """How it was found: ``gazetteer``, ``capitalized`` or ``quoted``."""


@dataclass(frozen=True, slots=True)
class QuestionNeeds:
    """N(q): entities, relation, answer type and structure of a question."""

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
        )


def answer_type_of(question: str) -> str:
    """Classify the expected answer type of a question by its wording."""
    q = question.strip().lower()
    if _AUX_START.match(q):
        return (
            "choice"
            if re.search(r"\bor\b", q) and not re.search(r"\bboth\b|\bsame\b", q)
            else "yes_no"
        )
    if _TRAILING_CHOICE.match(q):
        # Checked before the wh-word types: "Who is older, X or Y?" names its answer options.
        return "choice"
    if re.search(
        r"\b(when|what year|which year|what date|which date|what decade|what century|born on)\b", q
    ):
        return "date"
    if re.search(
        r"\bhow (many|much|old|long|tall|far|large|big|high)\b|\bwhat (number|percentage|population|age)\b",
        q,
    ):
        return "number"
    if re.search(
        r"\b(where|what (city|country|state|town|county|place|region|continent|island|location))\b|\bwhich (city|country|state|town|county|place|region|continent|island)\b|\bin what (city|country|state|town)\b",
        q,
    ):
        return "place"
    if re.search(
        r"\b(who|whom|whose)\b|\bwhich (person|actor|actress|director|author|writer|player|singer|musician|president|man|woman)\b",
        q,
    ):
        return "person"
    if re.search(r"\bor\b", q) and re.search(r"^(which|who|what)\b", q):
        return "choice"
    return "other"


def _options_around_or(question: str, entities: tuple[NeedEntity, ...]) -> tuple[str, ...]:
    """Return the question entities written right before and right after its last "or"."""
    found = list(re.finditer(r"\s+or\s+", question))
    if not found:
        return ()
    before = question[: found[-1].start()].rstrip(" ,?")
    after = re.sub(r"^(?:the|a|an)\s+", "", question[found[-1].end() :], flags=re.I)
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
    m = re.search(r"[,:]?\s*([^,:?]+?)\s+or\s+([^,?]+?)\s*\?*\s*$", question)
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
    a = re.sub(r"^(the|a|an)\s+", "", a, flags=re.I)
    b = re.sub(r"^(the|a|an)\s+", "", b, flags=re.I)
    return (a, b) if a and b and normalize_name(a) != normalize_name(b) else ()


def _capitalized_spans(question: str, covered: list[tuple[int, int]]) -> list[tuple[str, int, int]]:
    toks = tokenize_with_offsets(question)
    spans: list[tuple[str, int, int]] = []
    i = 0
    while i < len(toks):
        key, s, _end, cap = toks[i]
        first_word = i == 0
        if cap and not (first_word and key in _QWORDS) and key not in _QWORDS:
            j = i + 1
            while j < len(toks) and (
                toks[j][3] or (toks[j][0] in _CONNECT and j + 1 < len(toks) and toks[j + 1][3])
            ):
                j += 1
            start, end = s, toks[j - 1][2]
            if not any(a < end and start < b for a, b in covered):
                text = question[start:end]
                if not (first_word and j - i == 1):
                    spans.append((text, start, end))
            i = j
        else:
            i += 1
    return spans


def question_needs(question: str, gazetteer: Gazetteer) -> QuestionNeeds:
    """Read N(q) from a question using the corpus gazetteer.

    Args:
        question: The user question.
        gazetteer: Names known to the corpus.

    """
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
        if not mention.capitalized and mention.key in ATTRIBUTE_NOUNS:
            continue  # "What year did..." asks for a value; a page titled "Year" is not meant
        found.append(
            (mention.start, NeedEntity(mention.surface, mention.key, mention.targets, "gazetteer"))
        )
        covered.append((mention.start, mention.end))
    for text, start, end in _capitalized_spans(question, covered):
        key = normalize_name(text)
        if key and key not in STOPWORDS:
            targets, _ = gazetteer.lookup(text)
            found.append((start, NeedEntity(text, key, targets, "capitalized")))
            covered.append((start, end))
    found.sort(key=lambda t: t[0])
    entities: list[NeedEntity] = []
    seen: set[str] = set()
    for _, ent in found:
        if ent.key not in seen:
            seen.add(ent.key)
            entities.append(ent)
    ent_tuple = tuple(entities)

    masked = question
    for a, b in sorted(covered, reverse=True):
        masked = masked[:a] + " " + masked[b:]
    relation = tuple(w for w in content_words(masked) if w not in _QWORDS)

    atype = answer_type_of(question)
    options = _choice_options(question, ent_tuple) if atype == "choice" else ()
    # A comparative word alone ("first published") does not make a comparison: it
    # needs named options ("X or Y"), or a word that relates two entities.
    relating = _RELATING.search(question) or (
        _COMPARATIVE.search(question) and re.search(r"\b(or|than)\b", question)
    )
    if atype in ("choice", "yes_no") or (relating and len(ent_tuple) >= 2):
        structure = "comparison"
    elif _MULTI_STEP.search(question) and len(relation) >= 4:
        structure = "multi_step"
    else:
        structure = "bridge"
    return QuestionNeeds(
        question=question,
        entities=ent_tuple,
        relation_terms=relation,
        answer_type=atype,
        structure=structure,
        options=options,
    )
