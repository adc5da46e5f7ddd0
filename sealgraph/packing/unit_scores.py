"""Stage 1 of :func:`~sealgraph.packing.pack`: the score components of every unit.

:func:`score_units` gives each unit (sentence) of a pack call its fused relevance,
structural prior, focus/answer/bridge boosts, segment value, boilerplate flag and
whether it is answer-bearing; the equations are in :mod:`sealgraph.packing.pack`.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sealgraph.packing.config import PackConfig
from sealgraph.packing.scoring import (
    ANSWER_KINDS_RECOGNISED,
    ANSWER_TYPES_DETECTED,
    boilerplate_reason,
    contains_answer_type,
    fast_words,
    focus_term_sets,
    has_answer_value,
    idf_weights,
    infer_answer_type,
    matches_focus,
    name_spans,
    phrase,
    question_similarity,
    rank_scores,
    section_label,
    section_prior,
    stem,
    terms,
    title_phrase,
)
from sealgraph.packing.types import Unit
from sealgraph.text.lexicon import active
from sealgraph.text.names import fold

__all__ = ["BEARING_FEW_TERMS", "UnitScores", "score_units"]

BEARING_FEW_TERMS = 3
"""Up to this many relation terms, one in a sentence makes it answer-bearing; two above."""


@dataclass(frozen=True, slots=True)
class UnitScores:
    """Score components of every unit of a pack call, aligned with the unit list."""

    relevance: tuple[float, ...]
    """Fused similarity to the question."""
    prior: tuple[float, ...]
    """Structural prior: section prior + lead, position and title priors − unsupported penalty."""
    focus: tuple[bool, ...]
    """Whether the unit mentions a focus term."""
    answer: tuple[bool, ...]
    """Whether the unit contains a value of the expected answer type."""
    bridge: tuple[bool, ...]
    """Whether the unit names the title of another evidence document."""
    value: tuple[float, ...]
    """relevance + prior + boosts − rse_threshold."""
    terms: tuple[frozenset[str], ...]
    """Stemmed content words (lexical similarity and cohesion)."""
    content: tuple[frozenset[str], ...]
    """Plain content words (redundancy: the Jaccard of :func:`sealgraph.text.lexical_overlap`)."""
    bearing: tuple[bool, ...] = ()
    """Whether the unit is answer-bearing (question terms and a value of the expected
    kind): the packer keeps every such evidence unit while budget remains."""
    boilerplate: tuple[bool, ...] = ()
    """Whether the unit is boilerplate (front matter, navigation, links, pointers,
    lines repeated across the corpus): demoted by ``boilerplate_penalty``."""

    def boost(self, indices: Sequence[int], config: PackConfig) -> float:
        """Keyword/answerability boost of a span made of the given units."""
        return config.answerability_boost * (
            any(self.focus[i] for i in indices) + any(self.answer[i] for i in indices)
        ) + config.bridge_boost * any(self.bridge[i] for i in indices)


def score_units(
    question: str,
    units: Sequence[Unit],
    chunk_scores: Mapping[str, float] | None,
    config: PackConfig,
    *,
    focus_terms: Sequence[str] = (),
    answer_type: str | None = None,
    vectors: np.ndarray | None = None,
    query_vector: np.ndarray | None = None,
    chunk_support: Mapping[str, float] | None = None,
    common_lines: Container[str] | None = None,
) -> UnitScores:
    """Score units (the equations are in :mod:`sealgraph.packing.pack`).

    Args:
        question: The question.
        units: The units of the pack call.
        chunk_scores: Relevance of each evidence chunk id; chunks absent from it
            (neighbours) get rank score 0. None: the lexical similarity of each evidence
            chunk (its sentences and title) to the question.
        config: Packing settings.
        focus_terms: Terms that earn the answerability boost.
        answer_type: Expected answer type or kind. The boost recognises ``date`` and
            ``number`` values (any other type, or None, is replaced by the one inferred
            from the question's wording); answer-bearing units recognise every kind of
            :data:`~sealgraph.packing.scoring.ANSWER_KINDS_RECOGNISED`.
        vectors: Unit embeddings (rows aligned with ``units``) or None.
        query_vector: Question embedding or None.
        chunk_support: Need support of the evidence chunks in [0, 1] by chunk id (see
            :func:`~sealgraph.packing.pack`), or None for no support signal.
        common_lines: Keys (:func:`~sealgraph.packing.scoring.line_key`) of lines many
            documents of the corpus repeat; a unit made only of such lines is boilerplate.

    Returns:
        The components, aligned with ``units``.

    """
    content, unit_terms, phrases = _unit_words(units)
    q_terms = terms(question)
    relevance = _unit_relevance(
        q_terms, units, unit_terms, chunk_scores, config, vectors, query_vector
    )
    title_hits, bridge = _title_links(question, units, phrases)
    boiler = _boilerplate(units, common_lines)
    prior = _priors(units, title_hits, boiler, chunk_support, config)
    focus_sets = focus_term_sets(focus_terms)
    focus = [matches_focus(focus_sets, t) for t in unit_terms]
    answer, kind = _answer_values(question, units, answer_type)
    bearing = _answer_bearing(q_terms, focus_sets, units, unit_terms, boiler, kind)
    bearing = _bridge_bearing(q_terms, units, bearing, focus, boiler, phrases, kind)
    value = _unit_values(units, relevance, prior, focus, answer, bridge, boiler, config)
    return UnitScores(
        tuple(relevance),
        tuple(prior),
        tuple(focus),
        tuple(answer),
        tuple(bridge),
        tuple(value),
        tuple(unit_terms),
        tuple(content),
        tuple(bearing),
        tuple(boiler),
    )


def _unit_words(
    units: Sequence[Unit],
) -> tuple[list[frozenset[str]], list[frozenset[str]], list[str]]:
    """Content words, stemmed terms and padded phrase of every unit.

    Redundancy compares plain words; relevance and cohesion compare stems,
    so that "album" meets "albums"; the phrase (folded words between spaces) lets a
    title or name match as whole words only.
    """
    unit_words = [fast_words(u.text) for u in units]
    stop = active().stop_words
    content = [frozenset(w for w in ws if w not in stop) for ws in unit_words]
    unit_terms = [frozenset(stem(w) for w in c) for c in content]
    phrases = [" " + " ".join(ws) + " " for ws in unit_words]
    return content, unit_terms, phrases


def _boilerplate(units: Sequence[Unit], common_lines: Container[str] | None) -> list[bool]:
    """Tell whether each unit is boilerplate.

    Navigation and repeated lines carry the page's title words without content,
    so they would match the question as well as the content does. A heading is
    never boilerplate: the rendered header needs it.
    """
    return [not u.heading and bool(boilerplate_reason(u.text, common_lines)) for u in units]


def _answer_values(
    question: str, units: Sequence[Unit], answer_type: str | None
) -> tuple[list[bool], str | None]:
    """Whether each unit holds a value of the expected type, and the answer kind.

    The boost trusts only the types recognised in text (``date``, ``number``): any
    other type gives way to the one the question's wording implies. Answer-bearing
    units recognise more kinds, so they keep the given one (see :func:`_answer_bearing`).
    """
    atype = answer_type if answer_type in ANSWER_TYPES_DETECTED else infer_answer_type(question)
    answer = [contains_answer_type(u.text, atype) for u in units]
    return answer, answer_type or atype


def _unit_values(
    units: Sequence[Unit],
    relevance: Sequence[float],
    prior: Sequence[float],
    focus: Sequence[bool],
    answer: Sequence[bool],
    bridge: Sequence[bool],
    boiler: Sequence[bool],
    config: PackConfig,
) -> list[float]:
    """Value of every unit for the segment search: relevance + prior + boosts − threshold.

    A heading line has no value of its own: the rendered header shows it already.
    Boilerplate earns no relevance or boost: a navigation line repeats the page's
    title words, so it would match the question as well as the content does.
    """
    ab, bb = config.answerability_boost, config.bridge_boost
    return [
        0.0 if u.heading else (p if bo else r + p + ab * (f + a) + bb * b) - config.rse_threshold
        for u, r, p, f, a, b, bo in zip(
            units, relevance, prior, focus, answer, bridge, boiler, strict=True
        )
    ]


def _unit_relevance(
    q_terms: frozenset[str],
    units: Sequence[Unit],
    unit_terms: Sequence[frozenset[str]],
    chunk_scores: Mapping[str, float] | None,
    config: PackConfig,
    vectors: np.ndarray | None,
    query_vector: np.ndarray | None,
) -> list[float]:
    """Fused relevance: (1 − w)·sim(unit, question) + w·rank score of the unit's chunk."""
    weights = idf_weights(unit_terms)
    sims = [question_similarity(q_terms, t, weights) for t in unit_terms]
    if chunk_scores is None:
        chunk_scores = _lexical_chunk_scores(q_terms, units, unit_terms)
    if vectors is not None and query_vector is not None:
        cos = vectors @ query_vector
        w = config.semantic_weight
        sims = [(1 - w) * s + w * max(0.0, float(c)) for s, c in zip(sims, cos, strict=True)]
    ids = list(chunk_scores)
    ranks = dict(zip(ids, rank_scores([chunk_scores[c] for c in ids]), strict=True))
    rw = config.rank_weight
    return [
        (1 - rw) * s + rw * ranks.get(u.chunk_id, 0.0) for s, u in zip(sims, units, strict=True)
    ]


def _title_links(
    question: str, units: Sequence[Unit], phrases: Sequence[str]
) -> tuple[dict[str, int], list[bool]]:
    """Read titles as entity anchors.

    Returns, per document, whether the question and whether another evidence document
    name its title (0-2), and per unit, whether it names another document's title (the
    sentence that links two hops).
    """
    titles: dict[str, str | None] = {}
    for u in units:
        if u.doc_id not in titles:
            titles[u.doc_id] = title_phrase(u.title)
    q_phrase = phrase(question)
    joined = _doc_texts(units, phrases)
    title_hits = {d: _title_hits(d, t, q_phrase, joined) for d, t in titles.items()}
    bridge = [
        any(t is not None and o != u.doc_id and t in p for o, t in titles.items())
        for u, p in zip(units, phrases, strict=True)
    ]
    return title_hits, bridge


def _doc_texts(units: Sequence[Unit], phrases: Sequence[str]) -> dict[str, str]:
    """Phrases of each document's units joined: where another document's title is sought.

    A title named anywhere in a document's evidence links the two, whichever
    sentence names it.
    """
    doc_text: dict[str, list[str]] = {}
    for u, p in zip(units, phrases, strict=True):
        doc_text.setdefault(u.doc_id, []).append(p)
    return {d: "".join(ps) for d, ps in doc_text.items()}


def _title_hits(doc_id: str, title: str | None, q_phrase: str, joined: Mapping[str, str]) -> int:
    """Count whether the question and whether another evidence document name the title (0-2).

    A document the question names is a first hop; one another document names is
    a hop reached from it. Either makes its lead sentences worth keeping.
    """
    if title is None:
        return 0
    return (title in q_phrase) + any(title in text for o, text in joined.items() if o != doc_id)


def _priors(
    units: Sequence[Unit],
    title_hits: Mapping[str, int],
    boiler: Sequence[bool],
    chunk_support: Mapping[str, float] | None,
    config: PackConfig,
) -> list[float]:
    """Structural prior of every unit (section, lead, position, title, support, boilerplate).

    Boilerplate units (front matter, navigation, link lists, pointers) get
    ``boilerplate_penalty`` and do not count as positions: the lead and position
    priors go to the document's first *content* sentences.
    """
    unsupported = _unsupported_chunks(units, chunk_support, config.min_need_support)
    skipped: dict[str, int] = {}
    out = []
    for u, b in zip(units, boiler, strict=True):
        position = u.position - skipped.get(u.chunk_id, 0)
        if b and not u.heading:
            skipped[u.chunk_id] = skipped.get(u.chunk_id, 0) + 1
        out.append(_unit_prior(u, b, position, title_hits, unsupported[u.chunk_id], config))
    return out


def _unit_prior(
    u: Unit,
    b: bool,
    position: int,
    title_hits: Mapping[str, int],
    unsupported: bool,
    config: PackConfig,
) -> float:
    """Structural prior of one unit at ``position`` among its chunk's content units.

    A document's opening content sentences define its subject, so they earn the
    lead and position priors; a heading or boilerplate line (``b``) earns neither.
    """
    lead = u.chunk_order == 0 and position == 0 and not u.heading and not b
    return (
        section_prior(section_label(u.section, u.title), config.section_priors)
        + (config.lead_prior if lead else 0.0)
        + (
            config.position_prior * (1 - min(position, 5) / 5)
            if u.chunk_order == 0 and not u.heading and not b
            else 0.0
        )
        + config.title_prior * title_hits[u.doc_id]
        - (config.unsupported_penalty if unsupported else 0.0)
        - (config.boilerplate_penalty if b else 0.0)
    )


def _answer_bearing(
    q_terms: frozenset[str],
    focus_sets: Sequence[frozenset[str]],
    units: Sequence[Unit],
    unit_terms: Sequence[frozenset[str]],
    boiler: Sequence[bool],
    kind: str | None,
) -> list[bool]:
    """Tell whether each unit is answer-bearing.

    An answer-bearing unit states a value of the expected answer kind and holds enough
    of the question's relation terms.

    Relation terms are the question's terms outside the focus terms (entity names);
    a unit needs one of them, two when the question has more than
    :data:`BEARING_FEW_TERMS`. The value must not be one of
    the question's own words. Headings and boilerplate never bear the answer.
    """
    if kind not in ANSWER_KINDS_RECOGNISED:
        return [False] * len(units)
    named = frozenset().union(*focus_sets) if focus_sets else frozenset()
    relation = (q_terms - named) or q_terms
    if not relation:
        return [False] * len(units)
    need = 1 if len(relation) <= BEARING_FEW_TERMS else 2
    return [
        not u.heading
        and not b
        and len(relation & t) >= need
        and has_answer_value(u.text, kind, q_terms)
        for u, t, b in zip(units, unit_terms, boiler, strict=True)
    ]


def _bridge_bearing(
    q_terms: frozenset[str],
    units: Sequence[Unit],
    bearing: Sequence[bool],
    focus: Sequence[bool],
    boiler: Sequence[bool],
    phrases: Sequence[str],
    kind: str | None,
) -> list[bool]:
    """Add the next hop's answer-bearing units to the answer-bearing ones.

    They hold a value of the expected kind and name an entity that an answer-bearing
    unit about a focus term names.

    "Project Kestrel makes the Ledgerline Billing Service ready…" bears the first hop
    of "When did the service that Kestrel prepares go live?"; "PPT shipped Ledgerline
    in October 2018" bears the second: it names the bridge (by its full name or by the
    distinctive first word of a multi-word name) and states a date. Names the question
    itself writes are not bridges.
    """
    out = list(bearing)
    if kind not in ANSWER_KINDS_RECOGNISED:
        return out
    bridges = _bridge_phrases(q_terms, units, bearing, focus)
    if not bridges:
        return out
    for i, (u, p) in enumerate(zip(units, phrases, strict=True)):
        if out[i] or u.heading or boiler[i] or not u.evidence:
            continue
        if any(b in p for b in bridges) and has_answer_value(u.text, kind, q_terms):
            out[i] = True
    return out


def _bridge_phrases(
    q_terms: frozenset[str],
    units: Sequence[Unit],
    bearing: Sequence[bool],
    focus: Sequence[bool],
) -> set[str]:
    """Phrases that name a bridge: names in the answer-bearing units about a focus term.

    The first hop's answer-bearing sentence names the entity the second hop is
    about; a name the question writes itself leads nowhere new.
    """
    bridges: set[str] = set()
    for u, b, f in zip(units, bearing, focus, strict=True):
        if not (b and f):
            continue
        for _, name in name_spans(u.text):
            if terms(name) and not terms(name) <= q_terms:
                bridges.add(phrase(name))
                first = _distinctive_first_word(name)
                if first is not None:
                    bridges.add(f" {first} ")
    return bridges


def _distinctive_first_word(name: str) -> str | None:
    """Return the folded first word of a multi-word name when it can stand for the name.

    Text often shortens a name to its first word ("Ledgerline" for "Ledgerline
    Billing Service"); only a long, non-stopword first word of a name whose every
    word is capitalised is distinctive enough to be read as the name.
    """
    words = name.split()
    first = fold(words[0])
    if (
        len(words) >= 2
        and len(first) >= 4
        and first not in active().stop_words
        and not any(w[:1].islower() or w[:1].isdigit() for w in words)
    ):
        return first
    return None


def _unsupported_chunks(
    units: Sequence[Unit], chunk_support: Mapping[str, float] | None, min_support: float
) -> dict[str, bool]:
    """Whether each unit's chunk serves the question's needs less than ``min_support``.

    A chunk absent from ``chunk_support`` (a fetched neighbour) takes the best support
    of its document's assessed chunks: it continues the same text. Without any signal
    (None, or a document none of whose chunks was assessed) nothing is unsupported.
    """
    if chunk_support is None:
        return dict.fromkeys((u.chunk_id for u in units), False)
    best_in_doc: dict[str, float] = {}
    for u in units:
        if u.chunk_id in chunk_support:
            best_in_doc[u.doc_id] = max(
                best_in_doc.get(u.doc_id, 0.0), float(chunk_support[u.chunk_id])
            )
    out: dict[str, bool] = {}
    for u in units:
        support = chunk_support.get(u.chunk_id, best_in_doc.get(u.doc_id))
        out[u.chunk_id] = support is not None and support < min_support
    return out


def _lexical_chunk_scores(
    q_terms: frozenset[str], units: Sequence[Unit], unit_terms: Sequence[frozenset[str]]
) -> dict[str, float]:
    """Lexical relevance of each evidence chunk: question terms its sentences and title hold."""
    by_chunk: dict[str, set[str]] = {}
    for u, t in zip(units, unit_terms, strict=True):
        if u.evidence:
            if u.chunk_id not in by_chunk:
                by_chunk[u.chunk_id] = set(terms(u.title))
            by_chunk[u.chunk_id].update(t)
    chunk_terms = {cid: frozenset(t) for cid, t in by_chunk.items()}
    weights = idf_weights(chunk_terms.values())
    return {cid: question_similarity(q_terms, t, weights) for cid, t in chunk_terms.items()}
