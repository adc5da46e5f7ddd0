"""The pack step: cut evidence into spans, select them under the budget, render.

:func:`pack` runs four stages, each a pure function of its inputs:

1. **Units and values.** Every sentence of the evidence chunks (and of up to
   ``neighbor_chunks`` adjacent chunks fetched through ``neighbors``) is a unit with

   * ``relevance`` = (1 − w)·sim(unit, question) + w·(1 − rank/n), the fused score of
     relevant segment extraction, where ``rank`` is the rank of the unit's evidence
     chunk by the given relevance (or by lexical similarity when none is given) and a
     neighbour chunk counts as rank n (score 0): it was not retrieved. ``sim`` is the
     IDF-weighted share of question terms the unit contains; with embeddings it is
     averaged with the cosine to the query vector (``semantic_weight``).
   * ``prior`` = π(section) + ``lead_prior`` for the first sentence of a document
     + ``position_prior``·(1 − min(i, 5)/5) for the i-th sentence of its first chunk
     + ``title_prior`` once if the question names the document's title and once more if
     another evidence document does (titles matched as whole word sequences, without a
     trailing "(disambiguator)")
     − ``unsupported_penalty`` for the units of a chunk whose need support (given by
     the caller, e.g. the SEAL ledger's need coverage) is below ``min_need_support``
     − ``boilerplate_penalty`` for boilerplate units (front matter, navigation and link
     lines, "See the guide" pointers, short fragments, lines many documents of the
     corpus repeat: :func:`~sealgraph.packing.scoring.boilerplate_reason`), which also
     do not count as positions for the lead and position priors.
   * ``boost`` = ``answerability_boost`` for mentioning a focus term, as much again for
     containing a value of the expected answer type (a date or a number; inferred from
     the question when not given), and ``bridge_boost`` for naming another evidence
     document's title (the sentence that links two hops).
   * ``value`` = relevance + prior + boost − ``rse_threshold`` (prior − ``rse_threshold``
     for a boilerplate unit: it earns no relevance or boost).
   * ``bearing``: the unit is *answer-bearing*: it holds a value of the expected
     answer kind (a date, a number, a name, a place) and enough of the question's
     relation terms, or, for the next hop, a value and a name an answer-bearing unit
     about a focus term names.

   Every weight is a :class:`PackConfig` field; the defaults and the measurements
   behind them are in that class and in ``benchmarks/bench_packing.py``.

2. **Candidate spans**, by strategy:

   * ``bubble``: every evidence chunk whole (no neighbours).
   * ``segments``: maximum-sum segments of unit values per document (Kadane, at most
     ``max_segment_length`` units, at most ``max_segments_per_doc``).
   * ``window``: every unit with a positive value seeds a dynamic semantic window;
     overlapping or touching windows merge.
   * ``auto``: the segments, each grown as a window, then merged.

   For the last three, every run of answer-bearing evidence units no span covers gets
   a span of its own (source ``answer``), and each stretch of evidence text no span
   kept becomes a ``gap`` candidate, decided ``low_relevance``, so the trace accounts
   for all evidence text.
   If no unit at all has a positive value, each document's best unit seeds a span
   (the caller chose that evidence; an empty context would help nobody).

3. **Selection** with the context bubble (:mod:`sealgraph.packing.bubble`): span score
   = (relevance of its best unit + its best prior + its boosts) × 1/(1 + tokens/θ),
   where tokens is the cost of its rendered block; MMR order; gates. Spans holding an
   answer-bearing evidence unit go first and only the budget can leave them out
   (``keep_answer_bearing``).

4. **Rendering** in reading order (documents in evidence order, then document
   position), counted with the real tokenizer; while over budget, the kept span with the
   lowest marginal value (answer-bearing spans last) is dropped and the context re-rendered
   (:mod:`sealgraph.packing.render`).

A budget below the smallest candidate block yields an empty context and every candidate
decided ``budget_exceeded``; pack never raises for a budget, and never exceeds one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sealgraph.errors import InputError
from sealgraph.packing.bubble import BubbleItem, Choice, marginal_values, select_spans
from sealgraph.packing.config import PackConfig
from sealgraph.packing.fill import FillChoice, covered_runs, fill_units
from sealgraph.packing.render import fit_to_budget, render_block, render_context
from sealgraph.packing.scoring import (
    ANSWER_KINDS_RECOGNISED,
    ANSWER_TYPES_DETECTED,
    boilerplate_reason,
    cohesion,
    contains_answer_type,
    fast_words,
    focus_term_sets,
    has_answer_value,
    idf_weights,
    infer_answer_type,
    jaccard,
    length_penalty,
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
from sealgraph.packing.segments import max_sum_segments
from sealgraph.packing.types import (
    PackDecision,
    PackedSpan,
    PackResult,
    Span,
    SpanScores,
    Unit,
)
from sealgraph.packing.units import DocUnits, NeighborFn, collect_units, make_span
from sealgraph.packing.window import grow_window, merge_windows
from sealgraph.text.lexicon import active
from sealgraph.text.names import fold
from sealgraph.text.tokens import TokenCounter
from sealgraph.types import Chunk

__all__ = ["EmbedFn", "UnitScores", "pack", "score_units"]

BEARING_FEW_TERMS = 3
"""Up to this many relation terms, one in a sentence makes it answer-bearing; two above."""

EmbedFn = Callable[[list[str]], "np.ndarray | None"]
"""``embed(texts)``: one L2-normalised row per text, or None for lexical only."""


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


def pack(
    question: str,
    chunks: Sequence[Chunk],
    *,
    budget: int,
    counter: TokenCounter,
    config: PackConfig | None = None,
    relevance: Sequence[float | None] | Mapping[str, float] | None = None,
    focus_terms: Sequence[str] = (),
    answer_type: str | None = None,
    embed: EmbedFn | None = None,
    query_vector: np.ndarray | None = None,
    neighbors: NeighborFn | None = None,
    chunk_support: Mapping[str, float] | None = None,
    common_lines: Container[str] | None = None,
) -> PackResult:
    """Pack the evidence into a cited context of at most ``budget`` tokens.

    Args:
        question: The user question.
        chunks: The evidence set, in evidence order (duplicated chunk ids are used once).
        budget: Token budget of the final rendered context (≥ 0).
        counter: Token counter of the generating model.
        config: Packing settings (defaults: :class:`PackConfig`).
        relevance: Per-chunk relevance (higher is better), aligned with ``chunks`` or
            keyed by chunk id. None, or any missing value, means lexical similarity to
            the question is used for every chunk (scores of different scales do not mix).
        focus_terms: Entity names, gap terms or answer hints: units mentioning one get
            the answerability boost.
        answer_type: Expected answer type. ``date`` and ``number`` are recognised in
            text; any other type (``person``, ``choice``...) or None is replaced by the
            type the question's wording implies, if any.
        embed: Embedding function for unit texts; None (or returning None) means
            lexical similarity everywhere.
        query_vector: Embedding of the question (computed with ``embed`` when None).
        neighbors: Accessor for adjacent chunks of a document, to grow spans beyond the
            evidence chunks (ignored by the ``bubble`` strategy).
        chunk_support: How well each evidence chunk serves the question's needs, in
            [0, 1], keyed by chunk id. Units of a chunk below ``min_need_support`` get
            the ``unsupported_penalty``; a neighbour chunk takes its document's best
            support. None (no signal, e.g. a corpus without a need ledger) penalises
            nothing, and neither does a document with no entry in the mapping.
        common_lines: Keys (:func:`~sealgraph.packing.scoring.line_key`) of the lines
            that many documents of the corpus repeat (site headers, footers, banners):
            units made only of them are boilerplate. None: no corpus-level signal
            (front matter, link lines, pointers and fragments are still recognised).

    Returns:
        The :class:`PackResult`. A budget too small for any span gives an empty context
        with every candidate decided ``budget_exceeded``.

    Raises:
        InputError: On a negative budget or a relevance list of the wrong length.

    """
    config = config or PackConfig()
    if budget < 0:
        raise InputError(f"the token budget must be >= 0, got {budget}")
    chunks = list(chunks)
    use_neighbors = neighbors if config.strategy != "bubble" else None
    docs = collect_units(chunks, neighbors=use_neighbors, neighbor_chunks=config.neighbor_chunks)
    units = [u for d in docs for u in d.units]
    if not units:
        return PackResult("", 0, (), (), budget, config.strategy)

    chunk_scores = _chunk_relevance(chunks, relevance)
    vectors, qvec = _embeddings(question, units, embed, query_vector)
    scores = score_units(
        question,
        units,
        chunk_scores,
        config,
        focus_terms=focus_terms,
        answer_type=answer_type,
        vectors=vectors,
        query_vector=qvec,
        chunk_support=chunk_support,
        common_lines=common_lines,
    )
    spans, gaps = _candidates(docs, scores, config, vectors)
    return _select_and_render(
        spans, gaps, docs, units, scores, vectors, budget=budget, counter=counter, config=config
    )


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
    """Score units (see the module docstring for the equations).

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
            :func:`pack`), or None for no support signal.
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


def _chunk_relevance(
    chunks: Sequence[Chunk],
    relevance: Sequence[float | None] | Mapping[str, float] | None,
) -> dict[str, float] | None:
    """Relevance per evidence chunk id as given, or None when any score is missing."""
    if isinstance(relevance, Mapping):
        given = [relevance.get(c.chunk_id) for c in chunks]
    elif relevance is not None:
        given = list(relevance)
        if len(given) != len(chunks):
            raise InputError(
                f"relevance has {len(given)} scores for {len(chunks)} chunks; "
                "give one per chunk or None"
            )
    else:
        given = [None] * len(chunks)
    if all(g is not None and math.isfinite(g) for g in given):
        out: dict[str, float] = {}
        for c, g in zip(chunks, given, strict=True):
            out.setdefault(c.chunk_id, float(g))  # type: ignore[arg-type]
        return out
    return None


def _embeddings(
    question: str,
    units: Sequence[Unit],
    embed: EmbedFn | None,
    query_vector: np.ndarray | None,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    if embed is None:
        return None, None
    vectors = embed([u.text for u in units])
    if vectors is None:
        return None, None
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(units):
        raise InputError(
            f"embed returned an array of shape {vectors.shape} for {len(units)} texts; "
            "expected one row per text"
        )
    if query_vector is None:
        q = embed([question])
        if q is None:
            return vectors, None
        query_vector = np.asarray(q, dtype=np.float32)[0]
    qvec = np.asarray(query_vector, dtype=np.float32).reshape(-1)
    if qvec.shape[0] != vectors.shape[1]:
        raise InputError(
            f"query vector has dimension {qvec.shape[0]}, unit embeddings {vectors.shape[1]}"
        )
    return vectors, qvec


def _candidates(
    docs: Sequence[DocUnits],
    scores: UnitScores,
    config: PackConfig,
    vectors: np.ndarray | None,
) -> tuple[list[Span], list[Span]]:
    """Cut candidate spans (and the leftover gap spans) according to the strategy."""
    if config.strategy == "bubble":
        spans = []
        for doc in docs:
            by_chunk: dict[str, list[Unit]] = {}
            for u in doc.units:
                if u.evidence:
                    by_chunk.setdefault(u.chunk_id, []).append(u)
            for chunk_id, chunk_units in by_chunk.items():
                spans.append(Span(chunk_id, tuple(chunk_units), "chunk"))
        return spans, []

    ranges = _span_ranges(docs, scores, config, vectors)
    if not any(ranges.values()):
        ranges = _fallback_ranges(docs, scores)
    if config.keep_answer_bearing:
        ranges = _with_answer_ranges(docs, scores, ranges)
    spans: list[Span] = []
    gaps: list[Span] = []
    offset = 0
    for doc in docs:
        values = scores.value[offset : offset + len(doc.units)]
        covered = [False] * len(doc.units)
        for start, end, source in ranges[doc.doc_id]:
            covered[start:end] = [True] * (end - start)
            # Heading lines at the edges repeat the rendered header: leave them out.
            while start < end and doc.units[start].heading:
                start += 1
            while end > start and doc.units[end - 1].heading:
                end -= 1
            units = doc.units[start:end]
            if not "".join(u.text for u in units).strip():
                continue
            # Neighbour text is there to extend evidence; alone it is only worth its
            # document's lead sentence (which says what the document is about).
            if not any(u.evidence or u.lead for u in units):
                continue
            spans.append(make_span(units, source, sum(values[start:end])))
        for run in _uncovered_evidence_runs(doc, covered):
            if any(not doc.units[j].heading and doc.units[j].text.strip() for j in run):
                gap_units = [doc.units[j] for j in run]
                gaps.append(make_span(gap_units, "gap", sum(values[j] for j in run)))
        offset += len(doc.units)
    return spans, gaps


def _with_answer_ranges(
    docs: Sequence[DocUnits],
    scores: UnitScores,
    ranges: Mapping[str, list[tuple[int, int, str]]],
) -> dict[str, list[tuple[int, int, str]]]:
    """Add a range (source ``answer``) for every uncovered run of answer-bearing units.

    Only evidence units count; no answer-bearing sentence is left to a
    ``low_relevance`` gap.
    """
    out: dict[str, list[tuple[int, int, str]]] = {}
    offset = 0
    for doc in docs:
        n = len(doc.units)
        covered = [False] * n
        for start, end, _ in ranges.get(doc.doc_id, []):
            covered[start:end] = [True] * (end - start)
        cut = set(doc.breaks)
        added: list[tuple[int, int, str]] = []
        for i, unit in enumerate(doc.units):
            if covered[i] or not unit.evidence or not scores.bearing[offset + i]:
                continue
            if added and added[-1][1] == i and i not in cut:
                added[-1] = (added[-1][0], i + 1, "answer")
            else:
                added.append((i, i + 1, "answer"))
        out[doc.doc_id] = sorted([*ranges.get(doc.doc_id, []), *added])
        offset += n
    return out


def _uncovered_evidence_runs(doc: DocUnits, covered: Sequence[bool]) -> list[list[int]]:
    """Maximal runs of evidence units no span covers, never across a piece boundary."""
    cut = set(doc.breaks)
    runs: list[list[int]] = []
    run: list[int] = []
    for i, unit in enumerate(doc.units):
        if run and (i in cut or covered[i] or not unit.evidence):
            runs.append(run)
            run = []
        if unit.evidence and not covered[i]:
            run.append(i)
    if run:
        runs.append(run)
    return runs


def _span_ranges(
    docs: Sequence[DocUnits],
    scores: UnitScores,
    config: PackConfig,
    vectors: np.ndarray | None,
) -> dict[str, list[tuple[int, int, str]]]:
    """Per document, the (start, end, source) unit ranges of the candidate spans."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    offset = 0
    for doc in docs:
        n = len(doc.units)
        values = scores.value[offset : offset + n]
        if config.strategy in ("segments", "auto"):
            seeds = [
                (s.start, s.end)
                for s in max_sum_segments(
                    values,
                    max_length=config.max_segment_length,
                    max_segments=config.max_segments_per_doc,
                    breaks=doc.breaks,
                )
            ]
        else:
            seeds = [(i, i + 1) for i, v in enumerate(values) if v > 0]
        if config.strategy == "segments" or not seeds:
            out[doc.doc_id] = [(s, e, "segment") for s, e in sorted(seeds)]
            offset += n
            continue
        adjacent, threshold = _adjacent_similarity(doc, scores, vectors, offset, config)
        piece_of = _piece_bounds(doc)
        grown = [
            grow_window(
                s,
                e,
                adjacent,
                threshold=threshold,
                max_expand=config.window_max_expand,
                lo=piece_of[s][0],
                hi=piece_of[s][1],
            )
            for s, e in seeds
        ]
        merged = merge_windows(grown, breaks=doc.breaks)
        seed_set = set(seeds)
        out[doc.doc_id] = [
            (s, e, "segment" if config.strategy == "auto" and (s, e) in seed_set else "window")
            for s, e in merged
        ]
        offset += n
    return out


def _fallback_ranges(
    docs: Sequence[DocUnits], scores: UnitScores
) -> dict[str, list[tuple[int, int, str]]]:
    """One single-unit span per document: its best unit (nothing had a positive value)."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    offset = 0
    for doc in docs:
        values = scores.value[offset : offset + len(doc.units)]
        usable = [i for i, u in enumerate(doc.units) if not u.heading and u.text.strip()]
        if usable:
            best = max(usable, key=lambda i: (values[i], -i))
            out[doc.doc_id] = [(best, best + 1, "fallback")]
        else:
            out[doc.doc_id] = []
        offset += len(doc.units)
    return out


def _piece_bounds(doc: DocUnits) -> list[tuple[int, int]]:
    bounds = [(0, 0)] * len(doc.units)
    for start, end in doc.pieces():
        for i in range(start, end):
            bounds[i] = (start, end)
    return bounds


def _adjacent_similarity(
    doc: DocUnits,
    scores: UnitScores,
    vectors: np.ndarray | None,
    offset: int,
    config: PackConfig,
) -> tuple[list[float], float]:
    """Similarity of consecutive units and the growth threshold that goes with it."""
    n = len(doc.units)
    if vectors is not None:
        rows = vectors[offset : offset + n]
        sims = [float(rows[i] @ rows[i + 1]) for i in range(n - 1)]
        return sims, config.window_threshold
    unit_terms = scores.terms[offset : offset + n]
    sims = [cohesion(unit_terms[i], unit_terms[i + 1], doc.units[i + 1].text) for i in range(n - 1)]
    return sims, config.window_lexical_threshold


def _select_and_render(
    spans: list[Span],
    gaps: list[Span],
    docs: Sequence[DocUnits],
    units: Sequence[Unit],
    scores: UnitScores,
    vectors: np.ndarray | None,
    *,
    budget: int,
    counter: TokenCounter,
    config: PackConfig,
) -> PackResult:
    """Score the candidates, select them, render in reading order and build the trace."""
    index_of = {u.unit_id: i for i, u in enumerate(units)}
    # Citation numbers are only known after selection; any number of the right size
    # gives the block cost (the final render is counted for real anyway).
    placeholder_n = max(1, len(spans))
    scored = [_score_span(s, index_of, scores, counter, config, placeholder_n) for s in spans]
    gap_scored = [_score_span(g, index_of, scores, counter, config, placeholder_n) for g in gaps]
    overlap, semantic = _similarities(spans, index_of, scores, vectors)

    keeps = [
        config.keep_answer_bearing
        and any(u.evidence and scores.bearing[index_of[u.unit_id]] for u in s.units)
        for s in spans
    ]
    filling = config.fill and config.strategy != "bubble"
    # Fill packs single sentences, so spans larger than the budget leave it work to do:
    # only the candidate spans themselves can be too large to cite.
    smallest = min((tok for _, tok in scored), default=0)
    if not filling:
        smallest = min((tok for _, tok in scored + gap_scored), default=0)
    too_small = f"budget {budget} is below the smallest span ({smallest} tokens)"
    gap_verdict = None
    if smallest > budget:
        # No span fits whole: say so for every candidate (fill may still cut sentences
        # out of them; without fill the caller decides what to do).
        choices = [
            Choice(i, "budget_exceeded", too_small, 1.0, config.mmr_lambda * sc.final)
            for i, (sc, _) in enumerate(scored)
        ]
        if not filling:
            gap_verdict = ("budget_exceeded", too_small)
    else:
        items = [
            BubbleItem(s.span_id, s.doc_id, s.label, tok, sc.final, keep)
            for s, (sc, tok), keep in zip(spans, scored, keeps, strict=True)
        ]
        choices = select_spans(
            items, budget=budget, config=config, overlap=overlap, semantic=semantic
        )

    # Reading order: documents in evidence order, then position in the document.
    doc_rank = {d.doc_id: r for r, d in enumerate(docs)}
    chosen = sorted(
        (c.index for c in choices if c.decision == "selected"),
        key=lambda i: (doc_rank[spans[i].doc_id], spans[i].start, spans[i].end),
    )
    finals = [sc.final for sc, _ in scored]
    mmr_sim = semantic if semantic is not None else overlap

    def render(kept: Sequence[int]) -> str:
        return render_context([_block(n, spans[chosen[k]]) for n, k in enumerate(kept, start=1)])

    def lowest_value(kept: Sequence[int]) -> int:
        idx = [chosen[k] for k in kept]
        mv = marginal_values(idx, finals, mmr_sim, config.mmr_lambda)
        # Answer-bearing spans go last; then lowest value first; on a tie the bigger
        # span (frees more room), then the later one.
        pos = min(
            range(len(kept)),
            key=lambda p: (keeps[idx[p]], mv[p], -scored[idx[p]][1], -kept[p]),
        )
        return kept[pos]

    context, tokens, kept, dropped = fit_to_budget(
        len(chosen), render, lowest_value, counter, budget
    )
    fill_trace: list[PackDecision] = []
    packed_spans: list[Span] | None = None
    if filling:
        context, tokens, packed_spans, fill_trace = _fill(
            [spans[chosen[k]] for k in kept], docs, scores, index_of, budget, counter, config
        )
    dropped_at_render = {
        chosen[k]: f"dropped at final render (lowest marginal value): context was {t} tokens"
        f" > budget {budget}"
        for k, t in dropped
    }

    trace = []
    for c in choices:
        decision, reason = c.decision, c.reason
        if c.index in dropped_at_render:
            decision, reason = "budget_exceeded", dropped_at_render[c.index]
        sc, tok = scored[c.index]
        span_scores = dataclasses.replace(sc, novelty=c.novelty, mmr=c.mmr)
        trace.append(_decision(spans[c.index], tok, span_scores, decision, reason))
    if packed_spans is not None:
        trace = _merge_fill_trace(trace, fill_trace, spans, chosen, kept, packed_spans)
    for gap, (sc, tok) in zip(gaps if packed_spans is None else (), gap_scored, strict=False):
        decision, reason = gap_verdict or (
            "low_relevance",
            f"in no relevant segment or window (unit values sum to {gap.value:.2f})",
        )
        trace.append(_decision(gap, tok, sc, decision, reason))

    choice_of = {c.index: c for c in choices}
    if packed_spans is not None:
        return PackResult(
            context,
            tokens,
            tuple(
                _packed_run(
                    n, run, spans, chosen, kept, choice_of, index_of, scores, counter, config
                )
                for n, run in enumerate(packed_spans, start=1)
            ),
            tuple(trace),
            budget,
            config.strategy,
        )
    packed = []
    for n, k in enumerate(kept, start=1):
        span, c = spans[chosen[k]], choice_of[chosen[k]]
        packed.append(
            PackedSpan(
                n=n,
                span_id=span.span_id,
                chunk_ids=span.chunk_ids,
                doc_id=span.doc_id,
                title=span.title,
                section=span.label,
                text=span.text,
                start=span.start,
                end=span.end,
                tokens=counter.count(_block(n, span)),
                scores=dataclasses.replace(scored[chosen[k]][0], novelty=c.novelty, mmr=c.mmr),
            )
        )
    return PackResult(context, tokens, tuple(packed), tuple(trace), budget, config.strategy)


def _fill(
    kept: Sequence[Span],
    docs: Sequence[DocUnits],
    scores: UnitScores,
    index_of: Mapping[str, int],
    budget: int,
    counter: TokenCounter,
    config: PackConfig,
) -> tuple[str, int, list[Span], list[PackDecision]]:
    """Fill what the kept spans leave of the budget with the best remaining sentences.

    Returns the context rendered from the packed units (merged into contiguous runs),
    its real token count, the runs, and one decision per run of fill candidates that
    met the same fate (see :mod:`sealgraph.packing.fill`).
    """
    where: list[tuple[int, int]] = []  # global unit index -> (document rank, local position)
    for r, doc in enumerate(docs):
        where.extend((r, i) for i in range(len(doc.units)))
    units = [u for d in docs for u in d.units]
    packed = {index_of[u.unit_id] for s in kept for u in s.units}

    def runs_of(selected: set[int]) -> list[Span]:
        local: dict[int, set[int]] = {}
        for g in selected:
            r, i = where[g]
            local.setdefault(r, set()).add(i)
        out = []
        for r in sorted(local):
            doc = docs[r]
            for run in covered_runs(range(len(doc.units)), doc.breaks, local[r]):
                run_units = [doc.units[i] for i in run]
                while run_units and run_units[0].heading:
                    run_units.pop(0)
                while run_units and run_units[-1].heading:
                    run_units.pop()
                if run_units and "".join(u.text for u in run_units).strip():
                    out.append(make_span(run_units, "packed"))
        return out

    def cost(selected: set[int]) -> int:
        return counter.count(
            render_context([_block(n, s) for n, s in enumerate(runs_of(selected), 1)])
        )

    relevances = [scores.relevance[i] for i, u in enumerate(units) if u.evidence and not u.heading]
    floor = config.fill_relative_floor * max(relevances, default=0.0)
    candidates: list[int] = []
    early: list[FillChoice] = []
    for g, u in enumerate(units):
        if g in packed or not u.evidence or u.heading or not u.text.strip():
            continue
        if scores.boilerplate and scores.boilerplate[g]:
            early.append(
                FillChoice(
                    g,
                    "low_relevance",
                    f"fill: boilerplate ({boilerplate_reason(u.text) or 'repeated line'})",
                    0,
                    0.0,
                    0.0,
                )
            )
        elif scores.relevance[g] < floor:
            early.append(
                FillChoice(
                    g,
                    "low_relevance",
                    f"fill: relevance {scores.relevance[g]:.3f} < {config.fill_relative_floor:g}"
                    f" × best sentence relevance ({floor:.3f})",
                    0,
                    0.0,
                    0.0,
                )
            )
        else:
            candidates.append(g)

    def adjacent(g: int, selected: set[int]) -> bool:
        r, i = where[g]
        cut = docs[r].breaks
        return (i > 0 and i not in cut and g - 1 in selected) or (
            i + 1 < len(docs[r].units) and i + 1 not in cut and g + 1 in selected
        )

    used = cost(packed)
    unit_tokens = [counter.count(u.text) if g in candidates else 0 for g, u in enumerate(units)]
    choices, final, used = fill_units(
        candidates,
        sorted(packed),
        value=scores.value,
        content=scores.content,
        unit_tokens=unit_tokens,
        adjacent=adjacent,
        cost=cost,
        used=used,
        budget=budget,
        delta=config.delta,
        mmr_lambda=config.mmr_lambda,
        adjacency_bonus=config.fill_adjacency_bonus,
    )
    runs = runs_of(final)
    context = render_context([_block(n, s) for n, s in enumerate(runs, 1)])
    tokens = counter.count(context)
    filled = {c.index: c for c in choices if c.decision == "selected"}
    left_out = early + [c for c in choices if c.decision != "selected"]
    decisions = _fill_decisions(left_out, docs, where, units, index_of, scores, counter, config)
    for n, run in enumerate(runs, 1):
        added = [filled[index_of[u.unit_id]] for u in run.units if index_of[u.unit_id] in filled]
        sc, tok = _score_span(run, index_of, scores, counter, config, n)
        if added:
            sc = dataclasses.replace(
                sc, novelty=min(c.novelty for c in added), mmr=max(c.mmr for c in added)
            )
        reason = (
            f"filled {len(added)} sentence(s) (+{sum(c.tokens for c in added)} tokens) after "
            f"the bubble's spans; context {tokens}/{budget}"
            if added
            else ""
        )
        decisions.append(_decision(run, tok, sc, "selected", reason))
    return context, tokens, runs, decisions


def _merge_fill_trace(
    trace: Sequence[PackDecision],
    fill_trace: Sequence[PackDecision],
    spans: Sequence[Span],
    chosen: Sequence[int],
    kept: Sequence[int],
    runs: Sequence[Span],
) -> list[PackDecision]:
    """Fold the fill stage's decisions into the bubble's trace.

    A packed run replaces the decisions of the kept spans it holds (their reasons
    joined to its own), so the selected decisions are exactly the packed spans; a fill
    decision with the id of a bubble decision replaces it, keeping the bubble's verdict
    in its reason, so every span id is decided once.
    """
    by_id = {d.span_id: d for d in trace}
    order = [d.span_id for d in trace]
    kept_spans = [spans[chosen[k]] for k in kept]
    run_of = {r.span_id: r for r in runs}
    for d in fill_trace:
        if d.decision == "selected":
            ids = {u.unit_id for u in run_of[d.span_id].units}
            inside = [s for s in kept_spans if {u.unit_id for u in s.units} <= ids]
            reasons = [by_id[s.span_id].reason for s in inside if s.span_id in by_id]
            for s in inside:
                by_id.pop(s.span_id, None)
            d = dataclasses.replace(d, reason="; ".join(r for r in (*reasons, d.reason) if r))
        elif d.span_id in by_id:
            old = by_id[d.span_id]
            d = dataclasses.replace(d, reason=f"{d.reason} (bubble: {old.decision}: {old.reason})")
        if d.span_id not in order:
            order.append(d.span_id)
        by_id[d.span_id] = d
    return [by_id[i] for i in dict.fromkeys(order) if i in by_id]


def _fill_decisions(
    choices: Sequence[FillChoice],
    docs: Sequence[DocUnits],
    where: Sequence[tuple[int, int]],
    units: Sequence[Unit],
    index_of: Mapping[str, int],
    scores: UnitScores,
    counter: TokenCounter,
    config: PackConfig,
) -> list[PackDecision]:
    """Group the fill verdicts into decisions: consecutive sentences with the same fate."""
    by_index = {c.index: c for c in choices}
    groups: list[list[FillChoice]] = []
    for g in sorted(by_index):
        c = by_index[g]
        r, i = where[g]
        last = groups[-1][-1] if groups else None
        if (
            last is not None
            and last.index == g - 1
            and last.decision == c.decision
            and where[g - 1][0] == r
            and i not in docs[r].breaks
        ):
            groups[-1].append(c)
        else:
            groups.append([c])
    out = []
    for group in groups:
        span = make_span([units[c.index] for c in group], "fill")
        sc, tok = _score_span(span, index_of, scores, counter, config, 1)
        first = group[0]
        reason = (
            first.reason
            if len(group) == 1
            else (f"{len(group)} sentences: " + "; ".join(c.reason for c in group))
        )
        sc = dataclasses.replace(
            sc, novelty=min(c.novelty for c in group), mmr=max(c.mmr for c in group)
        )
        out.append(_decision(span, tok, sc, first.decision, reason))
    return out


def _packed_run(
    n: int,
    run: Span,
    spans: Sequence[Span],
    chosen: Sequence[int],
    kept: Sequence[int],
    choice_of: Mapping[int, Choice],
    index_of: Mapping[str, int],
    scores: UnitScores,
    counter: TokenCounter,
    config: PackConfig,
) -> PackedSpan:
    """Build the packed span of one rendered run (kept spans and filled sentences merged)."""
    sc, _ = _score_span(run, index_of, scores, counter, config, n)
    ids = {u.unit_id for u in run.units}
    inside = [choice_of[chosen[k]] for k in kept if spans[chosen[k]].units[0].unit_id in ids]
    if inside:
        sc = dataclasses.replace(
            sc, novelty=min(c.novelty for c in inside), mmr=max(c.mmr for c in inside)
        )
    return PackedSpan(
        n=n,
        span_id=run.span_id,
        chunk_ids=run.chunk_ids,
        doc_id=run.doc_id,
        title=run.title,
        section=run.label,
        text=run.text,
        start=run.start,
        end=run.end,
        tokens=counter.count(_block(n, run)),
        scores=sc,
    )


def _block(n: int, span: Span) -> str:
    """Render the block of a span; the header falls back to the doc id without a title."""
    return render_block(n, span.title or span.doc_id, span.label, span.text)


def _score_span(
    span: Span,
    index_of: Mapping[str, int],
    scores: UnitScores,
    counter: TokenCounter,
    config: PackConfig,
    placeholder_n: int,
) -> tuple[SpanScores, int]:
    """Bubble score components of a span, and the token cost of its rendered block."""
    idx = [index_of[u.unit_id] for u in span.units]
    tokens = counter.count(_block(placeholder_n, span))
    relevance = max(scores.relevance[i] for i in idx)
    prior = max(scores.prior[i] for i in idx)
    boost = scores.boost(idx, config)
    lp = length_penalty(tokens, config.theta)
    return SpanScores(relevance, prior, boost, lp, (relevance + prior + boost) * lp), tokens


def _similarities(
    spans: Sequence[Span],
    index_of: Mapping[str, int],
    scores: UnitScores,
    vectors: np.ndarray | None,
) -> tuple[list[list[float]], list[list[float]] | None]:
    """Pairwise lexical overlap of the spans, and their embedding cosine when available.

    Lexical overlap is the Jaccard index of content-word sets, the measure of
    :func:`sealgraph.text.lexical_overlap`; a span's embedding is the normalised mean
    of its units' embeddings (no second call to ``embed``).
    """
    words = [
        frozenset().union(*(scores.content[index_of[u.unit_id]] for u in s.units)) for s in spans
    ]
    overlap = [[jaccard(a, b) for b in words] for a in words]
    if vectors is None or not spans:
        return overlap, None
    means = np.stack([vectors[[index_of[u.unit_id] for u in s.units]].mean(axis=0) for s in spans])
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
    return overlap, (means @ means.T).tolist()


def _decision(
    span: Span, tokens: int, scores: SpanScores, decision: str, reason: str
) -> PackDecision:
    return PackDecision(
        span_id=span.span_id,
        doc_id=span.doc_id,
        chunk_ids=span.chunk_ids,
        section=span.label,
        tokens=tokens,
        scores=scores,
        decision=decision,  # type: ignore[arg-type]
        reason=reason,
        source=span.source,
    )
