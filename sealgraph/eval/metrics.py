"""Evaluation metrics: evidence quality, context quality and answer quality.

Every function here is pure and works on plain strings and sequences, so the
metrics are testable on hand-made cases and independent of any retriever.

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

from sealgraph.text import lexical_overlap

__all__ = [
    "QuestionScores",
    "aggregate_scores",
    "all_gold",
    "answer_exact_match",
    "answer_f1",
    "mean_pairwise_overlap",
    "normalize_answer",
    "percentile",
    "sentences_present",
    "title_precision",
    "title_recall",
]

_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
_EXACT_ONLY_ANSWERS = frozenset({"yes", "no", "noanswer"})


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
    """Every per-question measurement of one method on one question."""

    recall: float
    """Share of gold titles present in the evidence."""
    all_gold: bool
    """Whether the evidence holds every gold title."""
    precision: float
    """Share of distinct evidence titles that are gold."""
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
    """Whether the answer matches the gold answer after normalisation."""
    f1: float
    """Token F1 of the answer against the gold answer."""
    latency_ms: float
    """Wall time of answering the question."""
    loops: int
    """Repair loops run."""
    llm_calls: int
    """LLM calls made (0 offline)."""
    budget_violation: bool
    """Whether the context, recounted independently, exceeds the token budget."""


def aggregate_scores(scores: Sequence[QuestionScores]) -> dict[str, float | int]:
    """Average per-question scores into the metrics of one method in ``report.json``.

    Supporting-sentence recall is a micro-average over all gold sentences; every
    other rate is a macro-average over questions. ``peak_rss_mb`` is not a
    per-question quantity and is added by the runner.
    """
    n = len(scores)

    def mean(values: Iterable[float]) -> float:
        return sum(values) / n if n else 0.0

    sp_total = sum(s.sp_sentences for s in scores)
    latencies = [s.latency_ms for s in scores]
    return {
        "recall": mean(s.recall for s in scores),
        "all_gold": mean(float(s.all_gold) for s in scores),
        "precision": mean(s.precision for s in scores),
        "evidence_size_mean": mean(s.evidence_size for s in scores),
        "evidence_tokens_mean": mean(s.evidence_tokens for s in scores),
        "context_tokens_mean": mean(s.context_tokens for s in scores),
        "sp_sentence_recall": sum(s.sp_in_context for s in scores) / sp_total if sp_total else 0.0,
        "sp_sentence_recall_evidence": (
            sum(s.sp_in_evidence for s in scores) / sp_total if sp_total else 0.0
        ),
        "overlap_mean": mean(s.overlap for s in scores),
        "answer_em": mean(float(s.exact_match) for s in scores),
        "answer_f1": mean(s.f1 for s in scores),
        "latency_ms_p50": percentile(latencies, 50),
        "latency_ms_p95": percentile(latencies, 95),
        "loops_mean": mean(s.loops for s in scores),
        "llm_calls_mean": mean(s.llm_calls for s in scores),
        "budget_violations": sum(1 for s in scores if s.budget_violation),
        "n_questions": n,
    }
