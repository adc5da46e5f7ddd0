"""Plain-function steps shared by the graph and the evaluation harness.

:func:`pack_evidence` and :func:`answer_from_evidence` run the pack and generate
steps on any evidence set, so flat baselines are packed and answered by exactly
the same code as the SEAL graph.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from sealgraph.config import SealConfig
from sealgraph.ledger.gaps import Gap, NeedItem, gap_spec
from sealgraph.ledger.needs import QuestionNeeds, focus_text
from sealgraph.packing import PackResult, pack
from sealgraph.reasoning.answer import AnswerAids, SpanText, answer_kind
from sealgraph.reasoning.answerability import (
    Answerability,
    answerability,
    gate_answer,
    unseen_names,
)
from sealgraph.reasoning.base import GeneratedAnswer, LLMBudget, Reasoner, StepOutcome
from sealgraph.reasoning.offline import OfflineReasoner, need_support
from sealgraph.text.lexicon import Lexicon, reads_index_lexicon, words
from sealgraph.text.readable import readable
from sealgraph.text.tokens import encoding_for_model, token_counter
from sealgraph.types import Chunk

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.index.protocol import SearchIndex
    from sealgraph.ledger.knowledge import CorpusKnowledge


def focus_terms(needs: QuestionNeeds, gaps: Sequence[Gap], doc_titles: dict[str, str]) -> list[str]:
    """Entity names and gap targets that make a span answer-bearing."""
    terms = [e.name for e in needs.entities]
    for g in gaps:
        terms.extend(doc_titles.get(d, "") for d in g.targets)
    return [t for t in dict.fromkeys(terms) if t]


OFFLINE_SUPPORT: Literal["offline"] = "offline"
"""``pack_evidence(support=...)`` default: compute the offline need support
(:func:`sealgraph.reasoning.offline.need_support`, also importable from here)."""


@reads_index_lexicon
def pack_evidence(
    needs: QuestionNeeds,
    chunks: Sequence[Chunk],
    index: SearchIndex,
    config: SealConfig,
    gaps: Sequence[Gap] = (),
    items: Sequence[NeedItem] | None = None,
    *,
    support: Mapping[str, float] | Literal["offline"] | None = OFFLINE_SUPPORT,
    knowledge: CorpusKnowledge,
) -> PackResult:
    """Pack an evidence set under ``config.budget`` with ``config.pack``.

    ``support`` is each passage's need support in [0, 1] by chunk id, as the
    reasoner judged it (:meth:`sealgraph.reasoning.base.Reasoner.support`; None: no
    support signal). The default, :data:`OFFLINE_SUPPORT`, computes the offline one
    (:func:`need_support`) from ``items``, the question's need items when the caller
    has them already (None builds them from ``needs``). The expected answer kind
    (:func:`sealgraph.reasoning.answer.answer_kind`) tells the packer which sentences
    are answer-bearing, and the lines the index's documents repeat
    (:attr:`~sealgraph.ledger.knowledge.CorpusKnowledge.common_lines`) which are
    boilerplate. ``knowledge`` is the index's corpus knowledge (a graph's
    :class:`~sealgraph.graph.context.RunContext` holds it).
    """
    kn = knowledge
    ids = [c.chunk_id for c in chunks]
    if support == OFFLINE_SUPPORT:
        support = need_support(
            items if items is not None else kn.need_items(needs), kn.features(ids)
        )
    # The scope clause ("Consider X's policy;") picked the documents; the asked
    # clause ranks their sentences.
    asked = focus_text(needs.question)
    relevance = kn.relevance(asked, ids)
    counter = token_counter(encoding_for_model(config.tokenizer_model))
    embed = None
    query_vector = None
    # Sentence embeddings cost a model forward pass per question, so packing is
    # lexical unless the embedding-similarity gate is asked for.
    if index.has_dense and config.pack.semantic_delta is not None:
        embed = index.embed_texts
        query_vector = index.embed_query(asked)
    return pack(
        asked,
        list(chunks),
        budget=config.budget,
        counter=counter,
        config=config.pack,
        relevance=[relevance.get(i, 0.0) for i in ids],
        focus_terms=focus_terms(needs, gaps, kn.doc_titles),
        answer_type=answer_kind(needs),
        embed=embed,
        query_vector=query_vector,
        neighbors=index.neighbors,
        chunk_support=support,
        common_lines=kn.common_lines,
    )


def packed_dicts(result: PackResult) -> list[dict[str, Any]]:
    """Return the packed spans as JSON-safe dicts (kept in the graph state)."""
    return [
        {
            "n": s.n,
            "doc_id": s.doc_id,
            "title": s.title,
            "chunk_ids": list(s.chunk_ids),
            "text": s.text,
            "tokens": s.tokens,
            "section": s.section,
        }
        for s in result.spans
    ]


def span_texts(packed: Sequence[dict[str, Any]]) -> list[SpanText]:
    """Return the packed spans as the answerer sees them."""
    return [
        SpanText(p["n"], p["doc_id"], p["title"], p["text"], p.get("section", "")) for p in packed
    ]


def answer_aids(index: SearchIndex, knowledge: CorpusKnowledge) -> AnswerAids:
    """Return what the index lends the offline reader: its embedder (if any), its IDF."""
    df = knowledge.document_frequency
    if not index.has_dense:
        return AnswerAids(idf=knowledge.idf, frequency=df)
    return AnswerAids(
        embed=index.embed_texts, idf=knowledge.idf, frequency=df, embedder=index.embedder_name
    )


def citations_for(
    packed: Sequence[dict[str, Any]], answer: GeneratedAnswer
) -> list[dict[str, Any]]:
    """Map every cited [n] to its chunk ids and text."""
    by_n = {p["n"]: p for p in packed}
    return [
        {
            "n": n,
            "chunk_id": by_n[n]["chunk_ids"][0],
            "chunk_ids": by_n[n]["chunk_ids"],
            "doc_id": by_n[n]["doc_id"],
            "title": readable(by_n[n]["title"]),
            "text": by_n[n]["text"],
        }
        for n in answer.cited
        if n in by_n
    ]


def judge_answer(
    question: str,
    packed: Sequence[Mapping[str, Any]],
    generated: GeneratedAnswer,
    config: SealConfig,
    knowledge: CorpusKnowledge,
    lexicon: Lexicon,
    *,
    model_judged: bool = False,
) -> tuple[GeneratedAnswer, Answerability]:
    """Score the packed context's answerability and decline the answer below the threshold.

    ``model_judged``: the answer is an LLM's, which judged answerability itself
    (it declines on its own): the score is reported, the answer kept. The offline
    score decides for offline answers and for LLM steps that fell back. An offline
    answer's score is also at most the share of the asked part that one unit states
    together (its answer step's ``held``): words held apart do not answer.
    """
    passages = [f"{p.get('title', '')}\n{p.get('text', '')}" for p in packed]
    found = answerability(
        lexicon.terms(question), [lexicon.terms(p) for p in passages], knowledge.idf
    )
    unseen = unseen_names(
        lexicon.written_names(question),
        lexicon.terms,
        knowledge.document_frequency,
        {w for p in passages for w in words(p)},
    )
    found = dataclasses.replace(found, unseen=unseen)
    held = (generated.step or {}).get("held")
    if isinstance(held, int | float) and held < found.score:
        # The offline reader's combination: the most of the asked part one unit states
        # together (the words held apart by the best passages score higher).
        found = dataclasses.replace(found, score=round(float(held), 4))
    if model_judged:
        return generated, found
    unheld = set(found.unheld)
    asked = [w for w in dict.fromkeys(lexicon.content_words(question)) if lexicon.stem(w) in unheld]
    asked.sort(key=lambda w: found.unheld.index(lexicon.stem(w)))
    gated = gate_answer(
        generated,
        found,
        config.min_answerability,
        asked,
        decline_unseen=config.decline_unseen_names,
    )
    return gated, found


def trace_dicts(result: PackResult) -> list[dict[str, Any]]:
    """Return the packing trace as JSON-safe dicts."""
    return [dataclasses.asdict(d) for d in result.trace]


def support_and_pack(
    reasoner: Reasoner,
    needs: QuestionNeeds,
    chunks: Sequence[Chunk],
    index: SearchIndex,
    config: SealConfig,
    gaps: Sequence[Gap],
    items: Sequence[NeedItem],
    *,
    knowledge: CorpusKnowledge,
    assessed: Mapping[str, float] | None = None,
    time_left: float | None = None,
) -> tuple[StepOutcome[dict[str, float] | None], PackResult]:
    """Pack an evidence set with the reasoner's need support: the pack node's work.

    The reasoner says how well each passage supports the needs
    (:meth:`~sealgraph.reasoning.base.Reasoner.support`, given the last assessment's
    judgement as ``assessed``), then :func:`pack_evidence` packs under the budget.
    Returns the support step's outcome (its notes and LLM time) and the packing.
    """
    ids = [c.chunk_id for c in chunks]
    outcome = reasoner.support(
        needs, items, knowledge.features(ids), assessed=assessed, time_left=time_left
    )
    result = pack_evidence(
        needs, chunks, index, config, gaps, items, support=outcome.value, knowledge=knowledge
    )
    return outcome, result


def answer_packed(
    reasoner: Reasoner,
    needs: QuestionNeeds,
    packed: Sequence[dict[str, Any]],
    gaps: Sequence[Gap],
    index: SearchIndex,
    config: SealConfig,
    *,
    knowledge: CorpusKnowledge,
    lexicon: Lexicon,
    time_left: float | None = None,
    budget: LLMBudget | None = None,
) -> tuple[StepOutcome[GeneratedAnswer], GeneratedAnswer, Answerability]:
    """Answer from packed spans and judge the answer: the generate node's work.

    The reasoner answers (:meth:`~sealgraph.reasoning.base.Reasoner.generate`, lent
    the index's :func:`answer_aids`), then :func:`judge_answer` scores the context's
    answerability and declines below the threshold (an LLM's own answer is kept
    unless its step fell back). Returns the generate step's outcome, the answer as
    judged, and the answerability.
    """
    outcome = reasoner.generate(
        needs,
        span_texts(packed),
        gaps,
        time_left=time_left,
        budget=budget,
        aids=answer_aids(index, knowledge),
    )
    answer, found = judge_answer(
        needs.question,
        packed,
        outcome.value,
        config,
        knowledge,
        lexicon,
        model_judged=reasoner.name != OfflineReasoner.name and not outcome.fallback,
    )
    return outcome, answer, found


@reads_index_lexicon
def answer_from_evidence(
    question: str,
    chunks: Sequence[Chunk],
    index: SearchIndex,
    config: SealConfig,
    reasoner: Reasoner | None = None,
    *,
    knowledge: CorpusKnowledge,
) -> dict[str, Any]:
    """Pack and answer an arbitrary evidence set (used for the flat baselines).

    It runs the functions the pack and generate nodes run (:func:`support_and_pack`,
    :func:`answer_packed`), so every method is packed, answered and gated under the
    same rules. Besides the readable ``answer`` the result holds ``short_answer``
    (the marked short span, "" when none), ``insufficient`` (the answer declined),
    ``missing`` (what the context does not state) and ``packed`` (the packed spans,
    each with ``doc_id``, ``start`` and ``end`` in its document).

    The needs, the passages' need support and the answer are the reasoner's (the
    offline reasoner by default); the gaps are the offline gate's, so every flat
    method is gated alike whatever reasoner answers.
    """
    reasoner = reasoner or OfflineReasoner()
    kn = knowledge
    needs = reasoner.needs(question, kn.gazetteer).value
    feats = kn.features([c.chunk_id for c in chunks])
    items = kn.need_items(needs)
    gaps = gap_spec(needs, items, feats)
    _, result = support_and_pack(reasoner, needs, chunks, index, config, gaps, items, knowledge=kn)
    packed = packed_dicts(result)
    _, generated, found = answer_packed(
        reasoner, needs, packed, gaps, index, config, knowledge=kn, lexicon=kn.lexicon
    )
    return {
        "answer": generated.answer,
        "short_answer": generated.short,
        "insufficient": generated.insufficient,
        "missing": generated.missing,
        "answerability": found.score,
        "citations": citations_for(packed, generated),
        "context": result.context,
        "context_tokens": result.tokens,
        "packed": [{"doc_id": p.doc_id, "start": p.start, "end": p.end} for p in result.spans],
        "gaps": [g.to_dict() for g in gaps],
    }
