"""The reader: which unit of the context answers what the question asks.

A question asks one thing or several ("Does X ship a rate limiter, and how do I use
it?"): :func:`asked_parts` reads each part and what its answer is (a version, a
duration, a number, a date, a name written as code, a person, yes/no, a procedure or
a description). :func:`read_part` scores every unit of the context for one part:

* **lexical**: the share of the part's words the unit holds, each word weighted by
  its rarity in the corpus (its IDF); a word the unit's heading holds counts half;
* **dense**: the cosine similarity of the part and the unit under the embedder the
  index loaded (:class:`AnswerAids`; absent without one);
* **type**: the unit holds a value of the kind the part asks for that the question
  does not write itself;
* **structure**: a stated default ("Defaults to `500`") when the part asks for a
  default, a code block when it asks how to do something, a list item or table row
  whose key the question names.

The best unit answers the part, and its typed value is the short answer. Every
candidate's features stay in the :class:`Reading` so that a person can see why one
unit won (the run page's answer step).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sealgraph.packing.scoring import phrase, terms
from sealgraph.reasoning.answer._context import TOKEN, Context, Sentence, synonym_keys
from sealgraph.reasoning.answer._kind import answer_head, answer_kind, asked_terms, in_heads
from sealgraph.reasoning.answer._values import NAME_KINDS, best_value, name_candidates
from sealgraph.text.chunking import split_sentences
from sealgraph.text.edits import nearest_written
from sealgraph.text.lexicon import active, stem
from sealgraph.text.names import fold
from sealgraph.text.readable import readable

__all__ = [
    "AnswerAids",
    "Candidate",
    "Part",
    "Reading",
    "asked_parts",
    "asked_sentence",
    "options_modify",
    "read_parts",
]

WEIGHTS: Mapping[str, float] = {
    "lexical": 1.0,
    "relation": 0.3,
    "head": 0.1,
    "dense": 0.5,
    "type": 1.2,
    "structure": 0.25,
}
"""Weight of each feature in a unit's score (chosen on half a of the dev sets)."""

_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+){0,3}(?![\w.]*\d)")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_IDENTIFIER = re.compile(
    r"(?<![\w@.-])(?:@|--?)?[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)+(?:\(\))?"
    r"|(?<![\w@.-])@[A-Za-z_]\w*|(?<![\w-])--[a-z][\w-]*"
    r"|(?<![\w.])[a-z]+_[a-z_0-9]+(?:\(\))?|(?<![\w.])[a-z]+[A-Z]\w*|(?<![\w.])[A-Z][a-z]+[A-Z]\w*"
)
_TOP = 8
"""Candidates kept in a reading for the trace."""
_EMBED_CHARS = 400


@dataclass(frozen=True, slots=True)
class AnswerAids:
    """What the index lends the offline reader; each is optional."""

    embed: Callable[[Sequence[str]], Any] | None = None
    """The index's embedder: texts to unit vectors (one row each), or None without one."""
    idf: Callable[[str], float] | None = None
    """A stemmed word's inverse document frequency in the corpus."""
    frequency: Callable[[str], int] | None = None
    """Chunks of the corpus holding a stemmed word (a question word none holds, close to
    a word of the context, is read as that word: a typo)."""
    embedder: str | None = None
    """The embedder's name (its similarity threshold for declining is calibrated per
    model, :data:`~sealgraph.reasoning.answer._compose.UNSTATED_SIMILARITY`)."""


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


@dataclass(frozen=True, slots=True)
class Candidate:
    """A unit scored for one part."""

    unit: Sentence
    """The unit."""
    score: float
    """Its weighted score."""
    features: Mapping[str, float]
    """Each feature's value in [0, 1] (see :data:`WEIGHTS`)."""
    value: str = ""
    """The value of the asked kind it holds ("" when none)."""
    held: frozenset[str] = frozenset()
    """The part's words it holds (its heading's included)."""


@dataclass(frozen=True, slots=True)
class Reading:
    """The units read for one part, best first, and how much of it the best one states."""

    part: Part
    """The part."""
    ranked: tuple[Candidate, ...]
    """The best candidates, best first (ties: the earliest unit)."""
    weights: Mapping[str, float]
    """Each of the part's words' weight."""
    held: float = 0.0
    """The largest share of the part's word weight one unit states (its lexical feature)."""
    similarity: float | None = None
    """The largest cosine similarity of the part and a unit under the embedder (None
    without one)."""

    @property
    def best(self) -> Candidate | None:
        """The winning candidate, None for an empty context."""
        return self.ranked[0] if self.ranked else None


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


_LITERAL = re.compile(r"`[^`\n]+`|\"[^\"\n]+\"|\b(?:True|False|None|null|true|false)\b")


def read_parts(ctx: Context, parts: Sequence[Part], aids: AnswerAids | None) -> list[Reading]:
    """Score every unit of the context for each part (see the module docstring).

    Every unit is scored without the embedder first; the :data:`DENSE_POOL` best of
    each part are then embedded (one batch for all parts) and scored again with it.
    """
    parts = [_read_typos(ctx, part, aids) for part in parts]
    weights = [_weights(ctx, part, aids) for part in parts]
    ranked = [
        sorted(
            (_candidate(ctx, part, unit, w, None) for unit in ctx.sentences),
            key=lambda c: (-round(c.score, 9), c.unit.order),
        )
        for part, w in zip(parts, weights, strict=True)
    ]
    held = [max((c.features["lexical"] for c in r), default=0.0) for r in ranked]
    pools = [[c.unit for c in r[:DENSE_POOL]] for r in ranked]
    dense = _dense(ctx, parts, pools, aids)
    out = []
    for i, part in enumerate(parts):
        if dense is not None:
            ranked[i] = sorted(
                (_candidate(ctx, part, u, weights[i], dense[i][u.order]) for u in pools[i]),
                key=lambda c: (-round(c.score, 9), c.unit.order),
            )
        similar = max((c.features["dense"] for c in ranked[i]), default=0.0) if dense else None
        out.append(Reading(part, tuple(ranked[i][:_TOP]), weights[i], held[i], similar))
    return out


DENSE_POOL = 16
"""Units per part scored with the embedder (the best of the lexical scores)."""


def _dense(
    ctx: Context,
    parts: Sequence[Part],
    pools: Sequence[Sequence[Sentence]],
    aids: AnswerAids | None,
) -> list[dict[int, float]] | None:
    """Cosine similarity of each part with each unit of its pool (None without an embedder)."""
    if aids is None or aids.embed is None:
        return None
    units = list({u.order: u for pool in pools for u in pool}.values())
    texts = [p.text for p in parts] + [_embed_text(u) for u in units]
    try:
        matrix = aids.embed(texts)
    except Exception:  # the reader answers without the embedder, never fails for it
        return None
    if matrix is None or len(matrix) != len(texts):
        return None
    rows = {u.order: matrix[len(parts) + j] for j, u in enumerate(units)}
    return [
        {u.order: max(0.0, float(rows[u.order] @ matrix[i])) for u in pool}
        for i, pool in enumerate(pools)
    ]


def _embed_text(unit: Sentence) -> str:
    text = readable(unit.text)[:_EMBED_CHARS]
    return f"{unit.heading}: {text}" if unit.heading else text


def candidate(ctx: Context, reading: Reading, unit: Sentence) -> Candidate:
    """Return any unit scored for a reading's part (as ranked, else without the embedder)."""
    for c in reading.ranked:
        if c.unit is unit:
            return c
    return _candidate(ctx, reading.part, unit, reading.weights, None)


def _read_typos(ctx: Context, part: Part, aids: AnswerAids | None) -> Part:
    """Read each word of the part that no chunk holds as the context word it misspells.

    "Ledgerlinne" is read as "Ledgerline" when the context writes that: the part's
    terms hold the written word's stem, and :attr:`Part.typos` keeps both forms.
    """
    if aids is None or aids.frequency is None:
        return part
    written: dict[str, str] = {}
    for unit in ctx.sentences:
        for m in TOKEN.finditer(unit.text):
            written.setdefault(fold(m.group(0)), m.group(0))
    typos: list[tuple[str, str]] = []
    found = set(part.terms)
    for word in dict.fromkeys(TOKEN.findall(part.text)):
        t = stem(fold(word))
        if t not in part.terms or aids.frequency(t) > 0:
            continue
        near = nearest_written(fold(word), written)
        if near:
            typos.append((word, written[near]))
            found.discard(t)
            found |= terms(near)
    if not typos:
        return part
    return dataclasses.replace(part, terms=frozenset(found), typos=tuple(typos))


def _weights(ctx: Context, part: Part, aids: AnswerAids | None) -> dict[str, float]:
    """Each of the part's words' weight.

    Its corpus IDF (its rarity in the context without one), times how few units of
    the context hold it: a word every unit holds tells none apart.
    """
    n = max(1, len(ctx.sentences))
    df: dict[str, int] = {}
    for s in ctx.sentences:
        for t in s.terms & part.terms:
            df[t] = df.get(t, 0) + 1
    top = math.log(1.0 + n)
    out = {}
    for t in part.terms:
        local = math.log(1.0 + n / (1.0 + df.get(t, 0))) / top if top > 0 else 1.0
        if aids is not None and aids.idf is not None:
            out[t] = max(0.0, aids.idf(t)) * (_LOCAL_FLOOR + (1.0 - _LOCAL_FLOOR) * local)
        else:
            out[t] = local
        if t in part.conditions:
            out[t] *= 0.5
    return out


_WEAK_ENTITY = 0.0
"""Type fit of a name in a unit that does not write the asked head noun."""

_LOCAL_FLOOR = 0.5
"""Share of a word's corpus weight it keeps when every unit of the context holds it."""


def _held(
    ctx: Context, unit: Sentence, part_terms: frozenset[str] = frozenset()
) -> dict[str, float]:
    """Return the words a unit holds, each with the share of its weight it counts for.

    Its own words count whole; its heading's half; when it opens by referring back
    ("This behavior …"), the previous unit's of the same document half; when it is
    the second hop from a unit about a question entity, that unit's words half if a
    name both write links them ("classified as SEV1" → "SEV1 pages must …"), a quarter
    if the first unit only names the second's document.
    """
    held: dict[str, float] = {}

    def add(words: frozenset[str], share: float) -> None:
        for t in words:
            held[t] = max(held.get(t, 0.0), share)

    if unit.heading:
        # A heading that names only what the question names ("--retries") makes its
        # units about that thing; any other heading counts half.
        heading = terms(unit.heading)
        add(heading, 1.0 if heading and heading <= part_terms else 0.5)
    if unit.order > 0 and active().anaphora_re.match(readable(unit.text)):
        prev = ctx.sentences[unit.order - 1]
        if prev.doc_id == unit.doc_id:
            add(prev.terms, 0.5)
    anchored = ctx.anchored(unit)
    for a in ctx.sentences:
        if a is unit:
            continue
        if (a.mentions & unit.mentions) - ctx.anchors:
            add(a.terms, 0.5)  # both write a name the question does not
        elif not anchored and ctx.anchored(a) and ctx.links(a, unit):
            add(a.terms, 0.25)  # a unit about the question's entity names this document
    add(unit.terms, 1.0)
    return held


def _stems(unit: Sentence) -> frozenset[str]:
    """Every word of a unit stemmed, function words too ("owns" for "What does X own?")."""
    return frozenset(stem(fold(w)) for w in TOKEN.findall(unit.text))


def _candidate(
    ctx: Context,
    part: Part,
    unit: Sentence,
    weights: Mapping[str, float],
    dense: float | None,
) -> Candidate:
    total = sum(weights.values())
    shares = _held(ctx, unit, part.terms)
    own = unit.terms
    held = frozenset(t for t in weights if t in shares)
    got = sum(w * shares[t] for t, w in weights.items() if t in held)
    lexical = got / total if total > 0 else 0.0
    value = unit_value(ctx, part, unit)
    typed = 1.0 if value else 0.0
    if value and part.value == "entity" and part.head not in own:
        typed = _WEAK_ENTITY  # any unit names something: only the asked head makes it fit
    structure = _structure(ctx, part, unit)
    stems = _stems(unit) if part.relation else frozenset()
    relation = sum(1.0 if t in stems else shares.get(t, 0.0) for t in part.relation) / max(
        1, len(part.relation)
    )
    features = {
        "lexical": round(lexical, 4),
        "relation": round(relation, 4),
        "head": 1.0 if part.head and part.head in own else 0.0,
        "type": typed,
        "structure": structure,
    }
    if dense is not None:
        features["dense"] = round(dense, 4)
    return Candidate(unit, round(combine(features, WEIGHTS), 6), features, value, held)


def combine(features: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Score a unit: how much it says of what is asked, times how well it answers.

    Relevance (lexical, relation, head and dense features) is multiplied by the fit of
    what the unit holds (1 + the type and structure features): a value of the asked
    kind makes a relevant unit better, never an irrelevant one relevant.
    """
    relevance = sum(weights[k] * features.get(k, 0.0) for k in _RELEVANCE)
    fit = 1.0 + sum(weights[k] * features.get(k, 0.0) for k in _FIT)
    return relevance * fit


_RELEVANCE = ("lexical", "relation", "head", "dense")
_FIT = ("type", "structure")


def _structure(ctx: Context, part: Part, unit: Sentence) -> float:
    """Structure as evidence: a stated default, a code block for "how do I", a named key."""
    rw = active().reader
    if part.default and (
        rw.default_re.search(unit.text)
        or (_LITERAL.search(unit.text) and part.terms & unit.terms & _default_stems())
    ):
        return 1.0
    if part.value == "procedure":
        return 1.0 if unit.kind == "code" else 0.3 if _CODE_SPAN.search(unit.text) else 0.0
    if unit.kind in ("item", "row"):
        key = re.split(r"\s+[-–—:]\s+|:\s", readable(unit.text), maxsplit=1)[0]
        key_terms = terms(key)
        if key_terms and len(key.split()) <= 6 and key_terms <= ctx.q_terms:
            return 0.5
    return 0.0


_DEFAULT_VALUES = ("literal", "number", "duration", "code", "entity", "description")
"""Answer values a stated default gives (a version or a date is not a default)."""


def _default_stems() -> frozenset[str]:
    return frozenset(stem(w) for w in active().reader.default_words)


# -- values of the asked kind ---------------------------------------------------------


def unit_value(ctx: Context, part: Part, unit: Sentence) -> str:
    """Return the unit's value of the kind ``part`` asks for, nearest its words ("" if none)."""
    if part.value in ("polar", "procedure", "description"):
        return ""
    if part.default and part.value in _DEFAULT_VALUES:
        m = active().reader.default_re.search(unit.text)
        if m:
            return _strip_code(m.group(1))
    if part.value in NAME_KINDS and part.value != "entity":
        # People, organisations, places: the fit to the kind, a current holder for a
        # present-tense question, then the nearest the relation (the chain's reading).
        got = best_value(ctx, unit, part.value, set(), answer_head(part.text))
        if got and phrase(got[1]) not in phrase(ctx.needs.question):
            return got[1]
    cands = _values(ctx, part, unit)
    if not cands:
        return ""
    # Nearest the asked relation's words ("led by X" for "who leads"), else any of its words.
    toks = [(m.start(), stem(fold(m.group(0)))) for m in TOKEN.finditer(unit.text)]
    rel = [p for p, t in toks if t in part.relation] or [p for p, t in toks if t in part.terms]
    _pos, text = min(cands, key=lambda c: (min((abs(c[0] - r) for r in rel), default=0), c[0]))
    return _strip_code(text)


def _values(ctx: Context, part: Part, unit: Sentence) -> list[tuple[int, str]]:
    """Candidate values of the asked kind in a unit, as ``(offset, text)``; none the question writes."""
    text = unit.text
    lex = active()
    asked = ctx.needs.question
    kind = part.value
    if kind == "version":
        found = [(m.start(), m.group(0)) for m in _VERSION.finditer(text)]
    elif kind == "duration":
        found = _durations(text)
    elif kind in ("number", "amount"):
        found = _numbers(text, kind)
    elif kind == "date":
        found = [(m.start(), m.group(0)) for m in lex.date_re.finditer(text)]
    elif kind == "code":
        found = _code_names(text)
    elif kind == "literal":
        found = [(m.start(), m.group(0)) for m in _LITERAL.finditer(text)]
        found += _numbers(text, "number")
    elif kind in NAME_KINDS:
        found = name_candidates(ctx, unit, kind, set(), answer_head(part.text))
        if kind == "entity":
            found += _code_names(text) + _item_key(unit)
    else:
        found = []
    q = phrase(asked)
    return [
        (p, v) for p, v in found if phrase(_strip_code(v)) not in q and not terms(v) <= ctx.q_terms
    ]


def _item_key(unit: Sentence) -> list[tuple[int, str]]:
    """Return the key of a definition item or row ("**X-Forwarded-Proto**: The original …")."""
    if unit.kind not in ("item", "row"):
        return []
    key = re.split(r"\s+[-–—]\s+|:\s", readable(unit.text), maxsplit=1)[0].strip()
    return [(0, key)] if key and len(key.split()) <= 4 and key != readable(unit.text) else []


def _numbers(text: str, kind: str) -> list[tuple[int, str]]:
    lex = active()
    if kind == "amount":
        amounts = [(m.start(), m.group(0).strip()) for m in lex.amount_re.finditer(text)]
        if amounts:
            return amounts
    skip = [(m.start(), m.end()) for m in lex.date_re.finditer(text)]
    skip += [(m.start(), m.end()) for m in _VERSION.finditer(text)]
    measures = lex.reader.measure_units | lex.reader.time_units
    out = []
    for m in lex.number_re.finditer(text):
        if any(a <= m.start() < b for a, b in skip):
            continue
        unit = _unit_after(text, m.start(), m.group(0))
        measured = unit and fold(unit) in measures
        out.append((m.start(), f"{m.group(0)} {unit}" if measured else m.group(0)))
    return out


def _durations(text: str) -> list[tuple[int, str]]:
    units = active().reader.time_units
    return [
        (p, v) for p, v in _numbers(text, "number") if " " in v and fold(v.split()[-1]) in units
    ]


def _unit_after(text: str, pos: int, number: str) -> str:
    """Return the word right after a number ("minutes" in "30 minutes"), "" when none."""
    end = pos + len(number)
    after = TOKEN.match(text, end + 1) if text[end : end + 1] == " " else None
    return after.group(0) if after else ""


def _code_names(text: str) -> list[tuple[int, str]]:
    found = [(m.start(), m.group(1)) for m in _CODE_SPAN.finditer(text)]
    spans = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(text)]
    found += [
        (m.start(), m.group(0))
        for m in _IDENTIFIER.finditer(text)
        if not any(a <= m.start() < b for a, b in spans)
    ]
    return sorted(found)


def _strip_code(text: str) -> str:
    text = text.strip()
    if len(text) > 2 and text[0] == text[-1] == "`":
        return text[1:-1].strip()
    return text.strip(" ,.;:")
