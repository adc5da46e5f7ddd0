"""Evaluation metrics: evidence quality, context quality and answer quality.

Every function here is pure and works on plain strings and sequences, so the
metrics are testable on hand-made cases and independent of any retriever.

Character ranges (:data:`CharRange`) are ``(doc_id, start, end)`` half-open
offsets into a document's indexed text: gold spans of a corpus question, the
evidence chunks and the packed spans are all compared in these terms.

Answer scoring follows the official HotpotQA evaluation script
(``hotpot_evaluate_v1.py``): lower-case, remove punctuation, remove the articles
a/an/the, collapse white space; F1 over whitespace tokens; and a prediction or
gold that normalises to ``yes``, ``no`` or ``noanswer`` only scores when both
sides are equal.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sealgraph.text.names import lexical_overlap

__all__ = [
    "CharRange",
    "QuestionScores",
    "aggregate_scores",
    "all_gold",
    "answer_contained",
    "answer_exact_match",
    "answer_f1",
    "mean_pairwise_overlap",
    "merge_ranges",
    "normalize_answer",
    "percentile",
    "sentences_present",
    "span_char_recall",
    "title_precision",
    "title_recall",
]

_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
_EXACT_ONLY_ANSWERS = frozenset({"yes", "no", "noanswer"})

CharRange = tuple[str, int, int]
"""A half-open character range ``(doc_id, start, end)`` of a document's text."""


def title_recall(gold_titles: Iterable[str], evidence_titles: Iterable[str]) -> float:
    """Share of the gold titles found among the evidence titles.

    A question without gold titles has nothing to miss and scores 1.0.

    Args:
        gold_titles: Titles of the supporting paragraphs (duplicates are ignored).
        evidence_titles: Titles of the evidence items (duplicates are ignored).

    """
    gold = set(gold_titles)
    if not gold:
        return 1.0
    return len(gold & set(evidence_titles)) / len(gold)


def all_gold(gold_titles: Iterable[str], evidence_titles: Iterable[str]) -> bool:
    """Whether the evidence holds every gold title."""
    return set(gold_titles) <= set(evidence_titles)


def title_precision(gold_titles: Iterable[str], evidence_titles: Iterable[str]) -> float:
    """Share of the distinct evidence titles that are gold (0.0 for empty evidence)."""
    evidence = set(evidence_titles)
    if not evidence:
        return 0.0
    return len(evidence & set(gold_titles)) / len(evidence)


def sentences_present(sentences: Iterable[str], text: str) -> int:
    """Count the sentences whose stripped text occurs verbatim in ``text``.

    Sentences that are empty once stripped are not counted: an empty string is a
    substring of everything and would prove nothing.
    """
    return sum(1 for s in sentences if (stripped := s.strip()) and stripped in text)


def mean_pairwise_overlap(texts: Sequence[str]) -> float:
    """Mean lexical overlap over all unordered pairs of ``texts``.

    Overlap is the Jaccard index of content-word sets
    (:func:`sealgraph.text.lexical_overlap`), the redundancy measure of the
    context-bubble paper. Fewer than two texts have no pairs and score 0.0.
    """
    n = len(texts)
    if n < 2:
        return 0.0
    total = sum(lexical_overlap(texts[i], texts[j]) for i in range(n) for j in range(i + 1, n))
    return total / (n * (n - 1) / 2)


def normalize_answer(text: str) -> str:
    """Normalise an answer exactly as the official HotpotQA script does."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES_RE.sub(" ", text)
    return " ".join(text.split())


def answer_exact_match(prediction: str, gold: str) -> bool:
    """Whether the normalised prediction equals the normalised gold answer."""
    return normalize_answer(prediction) == normalize_answer(gold)


def answer_f1(prediction: str, gold: str) -> float:
    """Token-level F1 between the normalised prediction and gold answer.

    As in the official script, ``yes``/``no``/``noanswer`` on either side only
    match exactly (a prediction of "no" against "no way" scores 0, not 0.67).
    """
    pred = normalize_answer(prediction)
    ref = normalize_answer(gold)
    if (pred in _EXACT_ONLY_ANSWERS or ref in _EXACT_ONLY_ANSWERS) and pred != ref:
        return 0.0
    pred_tokens = pred.split()
    ref_tokens = ref.split()
    common = sum((Counter(pred_tokens) & Counter(ref_tokens)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred_tokens)
    recall = common / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


def answer_contained(prediction: str, gold: str) -> bool:
    """Whether the normalised gold answer occurs in the normalised prediction.

    Both sides are normalised with :func:`normalize_answer` and the gold must occur
    as whole tokens ("2021" is in "in october 2021" but not in "20210"). A gold
    answer that normalises to nothing (``"The"``) is never contained.
    """
    ref = normalize_answer(gold)
    if not ref:
        return False
    return f" {ref} " in f" {normalize_answer(prediction)} "


def merge_ranges(ranges: Iterable[CharRange]) -> dict[str, list[tuple[int, int]]]:
    """Return the union of ``ranges`` per document as sorted, disjoint ``(start, end)`` pairs.

    Overlapping and touching ranges merge; empty ranges (``end <= start``) are dropped.
    """
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc_id, start, end in ranges:
        if end > start:
            by_doc.setdefault(doc_id, []).append((start, end))
    merged: dict[str, list[tuple[int, int]]] = {}
    for doc_id in sorted(by_doc):
        out: list[tuple[int, int]] = []
        for start, end in sorted(by_doc[doc_id]):
            if out and start <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((start, end))
        merged[doc_id] = out
    return merged


def span_char_recall(gold: Iterable[CharRange], covering: Iterable[CharRange]) -> float | None:
    """Share of the characters of the gold spans that the covering ranges cover.

    Gold spans are merged first, so a character that two gold spans share counts
    once; so are the covering ranges (evidence chunks or packed spans), which only
    count in their own document.

    Returns:
        Covered gold characters / gold characters, in [0, 1]; None when the gold
        spans hold no character (nothing to recall: the question is left out of
        the average).

    """
    gold_merged = merge_ranges(gold)
    total = sum(end - start for spans in gold_merged.values() for start, end in spans)
    if not total:
        return None
    cover = merge_ranges(covering)
    covered = 0
    for doc_id, spans in gold_merged.items():
        others = cover.get(doc_id, [])
        for start, end in spans:
            for a, b in others:
                if a >= end:
                    break
                covered += max(0, min(end, b) - max(start, a))
    return covered / total


def percentile(values: Sequence[float], q: float) -> float:
    """Return the ``q``-th percentile (0-100) with linear interpolation (numpy's default).

    An empty sequence gives 0.0 so that reports of empty runs stay JSON numbers.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within [0, 100], got {q}")
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    fraction = position - lower
    return ordered[lower] + (ordered[upper] - ordered[lower]) * fraction


@dataclass(frozen=True, slots=True)
class QuestionScores:
    """Every per-question measurement of one method on one question.

    "Gold documents" are the titles of the supporting facts for multi-hop QA and
    the ``gold_documents`` (doc ids) of a corpus question.
    """

    recall: float
    """Share of gold documents present in the evidence."""
    all_gold: bool
    """Whether the evidence holds every gold document."""
    precision: float
    """Share of distinct evidence documents that are gold."""
    evidence_size: int
    """Number of evidence items."""
    evidence_tokens: int
    """Tokens of the evidence set before packing (sum of the chunks' ``n_tokens``)."""
    context_tokens: int
    """Tokens of the packed context as reported by the pipeline."""
    sp_sentences: int
    """Number of gold supporting sentences of the question."""
    sp_in_context: int
    """Gold supporting sentences found verbatim in the packed context."""
    sp_in_evidence: int
    """Gold supporting sentences found verbatim in the evidence texts."""
    overlap: float
    """Mean pairwise lexical overlap between the packed (cited) items."""
    exact_match: bool
    """Whether the answer matches the gold answer after normalisation (False when declined)."""
    f1: float
    """Token F1 of the answer against the gold answer (0 when declined)."""
    latency_ms: float
    """Wall time of answering the question."""
    loops: int
    """Repair loops run."""
    llm_calls: int
    """LLM calls made (0 offline)."""
    budget_violation: bool
    """Whether the context, recounted independently, exceeds the token budget."""
    answerable: bool = True
    """Whether the corpus holds the answer (False: the right behaviour is to decline)."""
    scores_documents: bool = True
    """Whether document recall applies: an answerable question that names gold documents."""
    has_reference: bool = True
    """Whether an answerable question has a reference answer to score against."""
    declined: bool = False
    """Whether the answer step declined (its structured ``insufficient`` flag)."""
    contained: bool = False
    """Whether the normalised gold answer occurs in the normalised answer (False when declined)."""
    span_recall_evidence: float | None = None
    """Gold-span character recall of the evidence chunks (None: no gold span to recall)."""
    span_recall_context: float | None = None
    """Gold-span character recall of the packed spans (None: no gold span to recall)."""


def aggregate_scores(scores: Sequence[QuestionScores]) -> dict[str, float | int | None]:
    """Average per-question scores into the metrics of one method in ``report.json``.

    Supporting-sentence recall is a micro-average over all gold sentences; every
    other rate is a macro-average over the questions it applies to:

    * ``recall``, ``all_gold``, ``precision``: questions whose ``scores_documents``;
    * ``span_recall_evidence``/``span_recall_context``: questions with gold spans;
    * ``answer_em``, ``answer_f1``, ``answer_containment``: answerable questions with
      a reference answer;
    * ``declined_answerable``/``declined_unanswerable``: answerable/unanswerable questions;
    * the rest: every question.

    A rate that applies to no question (sentence recall without gold sentences,
    answer scores without a reference answer...) is None (JSON ``null``).
    ``peak_rss_mb`` is not a per-question quantity and is added by the runner.
    """
    documents = [s for s in scores if s.scores_documents]
    answerable = [s for s in scores if s.answerable]
    unanswerable = [s for s in scores if not s.answerable]
    referenced = [s for s in answerable if s.has_reference]
    span_evidence = [s.span_recall_evidence for s in scores if s.span_recall_evidence is not None]
    span_context = [s.span_recall_context for s in scores if s.span_recall_context is not None]
    # The keys keep the order report.json has always had.
    return {
        **_document_rates(documents),
        **_size_means(scores),
        **_sentence_recalls(scores),
        "span_recall_evidence": _rate(span_evidence),
        "span_recall_context": _rate(span_context),
        "overlap_mean": _mean([s.overlap for s in scores]),
        **_answer_rates(referenced, answerable, unanswerable),
        **_cost_metrics(scores),
        "n_questions": len(scores),
        "n_answerable": len(answerable),
        "n_unanswerable": len(unanswerable),
        "n_with_reference": len(referenced),
        "n_with_spans": len(span_evidence),
    }


def _mean(values: Sequence[float]) -> float:
    # Over every question: 0.0 for an empty run.
    return sum(values) / len(values) if values else 0.0


def _rate(values: Sequence[float]) -> float | None:
    # Over the questions it applies to: None when it applies to none.
    return sum(values) / len(values) if values else None


def _document_rates(documents: Sequence[QuestionScores]) -> dict[str, float | None]:
    return {
        "recall": _rate([s.recall for s in documents]),
        "all_gold": _rate([float(s.all_gold) for s in documents]),
        "precision": _rate([s.precision for s in documents]),
    }


def _size_means(scores: Sequence[QuestionScores]) -> dict[str, float]:
    return {
        "evidence_size_mean": _mean([s.evidence_size for s in scores]),
        "evidence_tokens_mean": _mean([s.evidence_tokens for s in scores]),
        "context_tokens_mean": _mean([s.context_tokens for s in scores]),
    }


def _sentence_recalls(scores: Sequence[QuestionScores]) -> dict[str, float | None]:
    # A micro-average over all gold supporting sentences, not a mean over questions.
    sp_total = sum(s.sp_sentences for s in scores)
    if not sp_total:
        return {"sp_sentence_recall": None, "sp_sentence_recall_evidence": None}
    return {
        "sp_sentence_recall": sum(s.sp_in_context for s in scores) / sp_total,
        "sp_sentence_recall_evidence": sum(s.sp_in_evidence for s in scores) / sp_total,
    }


def _answer_rates(
    referenced: Sequence[QuestionScores],
    answerable: Sequence[QuestionScores],
    unanswerable: Sequence[QuestionScores],
) -> dict[str, float | None]:
    return {
        "answer_em": _rate([float(s.exact_match) for s in referenced]),
        "answer_f1": _rate([s.f1 for s in referenced]),
        "answer_containment": _rate([float(s.contained) for s in referenced]),
        "declined_answerable": _rate([float(s.declined) for s in answerable]),
        "declined_unanswerable": _rate([float(s.declined) for s in unanswerable]),
    }


def _cost_metrics(scores: Sequence[QuestionScores]) -> dict[str, float | int]:
    latencies = [s.latency_ms for s in scores]
    return {
        "latency_ms_p50": percentile(latencies, 50),
        "latency_ms_p95": percentile(latencies, 95),
        "loops_mean": _mean([s.loops for s in scores]),
        "llm_calls_mean": _mean([s.llm_calls for s in scores]),
        "budget_violations": sum(1 for s in scores if s.budget_violation),
    }
