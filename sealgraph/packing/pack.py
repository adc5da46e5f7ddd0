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

Where each stage lives: unit scores in :mod:`sealgraph.packing.unit_scores`, candidate
spans in :mod:`sealgraph.packing.candidates`, selection and rendering in
:mod:`sealgraph.packing.select`, the budget fill after the bubble in
:mod:`sealgraph.packing.fill`; this module holds the :func:`pack` entry that composes
them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Mapping, Sequence

import numpy as np

from sealgraph.errors import InputError
from sealgraph.packing.candidates import candidate_spans
from sealgraph.packing.config import PackConfig
from sealgraph.packing.fill import fill_budget
from sealgraph.packing.select import bubble_result, select_candidates
from sealgraph.packing.types import PackResult, Unit
from sealgraph.packing.unit_scores import UnitScores, score_units
from sealgraph.packing.units import NeighborFn, collect_units
from sealgraph.text.tokens import TokenCounter
from sealgraph.types import Chunk

__all__ = ["EmbedFn", "UnitScores", "pack", "score_units"]

EmbedFn = Callable[[list[str]], "np.ndarray | None"]
"""``embed(texts)``: one L2-normalised row per text, or None for lexical only."""


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
    spans, gaps = candidate_spans(docs, scores, config, vectors)
    filling = config.fill and config.strategy != "bubble"
    selection = select_candidates(
        spans,
        gaps,
        docs,
        units,
        scores,
        vectors,
        budget=budget,
        counter=counter,
        config=config,
        filling=filling,
    )
    if filling:
        return fill_budget(selection, docs, scores, budget=budget, counter=counter, config=config)
    return bubble_result(selection, budget=budget, counter=counter, config=config)


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
