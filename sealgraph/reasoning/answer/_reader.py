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

from sealgraph.packing.scoring import terms
from sealgraph.reasoning.answer._context import TOKEN, Context, Sentence
from sealgraph.reasoning.answer._parts import Part
from sealgraph.reasoning.answer._typed import (
    CODE_SPAN,
    LITERAL,
    default_stems,
    unit_value,
)
from sealgraph.text.edits import nearest_written
from sealgraph.text.lexicon import active, stem
from sealgraph.text.names import fold
from sealgraph.text.readable import readable

__all__ = [
    "AnswerAids",
    "Candidate",
    "Reading",
    "candidate",
    "combine",
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

_TOP = 8
"""Candidates kept in a reading for the trace."""
_EMBED_CHARS = 240


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


DENSE_POOL = 12
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
    # Under its document's title ("Advanced Middleware: …"): on half a of the dev sets
    # the title alone served better than the whole section path or no heading at all.
    title = readable(unit.title)
    return f"{title}: {text}" if title else text


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

    Its own words count whole; its document's title and section headings half, its
    innermost heading whole when it names only what the question names; when it opens by referring back
    ("This behavior …"), the previous unit's of the same document half; when it is
    the second hop from a unit about a question entity, that unit's words half if a
    name both write links them ("classified as SEV1" → "SEV1 pages must …"), a quarter
    if the first unit only names the second's document.
    """
    held: dict[str, float] = {}

    def add(words: frozenset[str], share: float) -> None:
        for t in words:
            held[t] = max(held.get(t, 0.0), share)

    if unit.path:
        add(terms(unit.path), 0.5)  # the document and sections the unit is in
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
        or (LITERAL.search(unit.text) and part.terms & unit.terms & default_stems())
    ):
        return 1.0
    if part.value == "procedure":
        return 1.0 if unit.kind == "code" else 0.3 if CODE_SPAN.search(unit.text) else 0.0
    if unit.kind in ("item", "row"):
        key = re.split(r"\s+[-–—:]\s+|:\s", readable(unit.text), maxsplit=1)[0]
        key_terms = terms(key)
        if key_terms and len(key.split()) <= 6 and key_terms <= ctx.q_terms:
            return 0.5
    return 0.0
