import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fakes import question_scores

from sealgraph.eval.dataset import gold_sentences, gold_titles, question_from_record
from sealgraph.eval.metrics import (
    aggregate_scores,
    all_gold,
    answer_exact_match,
    answer_f1,
    mean_pairwise_overlap,
    normalize_answer,
    percentile,
    sentences_present,
    title_precision,
    title_recall,
)

# --- evidence metrics -------------------------------------------------------


def test_title_recall_counts_distinct_gold_titles_found():
    assert title_recall(["Ada", "Bea"], ["Ada", "Cyd", "Ada"]) == 0.5
    assert title_recall(["Ada", "Bea"], ["Bea", "Ada"]) == 1.0
    assert title_recall(["Ada", "Bea"], []) == 0.0
    assert title_recall(["Ada", "Ada", "Bea", "Cyd"], ["Cyd"]) == pytest.approx(1 / 3)


def test_title_recall_without_gold_is_vacuously_complete():
    assert title_recall([], ["Ada"]) == 1.0


def test_all_gold_needs_every_gold_title():
    assert all_gold(["Ada", "Bea"], ["Bea", "Cyd", "Ada"]) is True
    assert all_gold(["Ada", "Bea"], ["Bea", "Cyd"]) is False
    assert all_gold(["Ada"], []) is False


def test_title_precision_uses_distinct_evidence_titles():
    # Two chunks of the same gold document count once: 1 gold of 2 distinct titles.
    assert title_precision(["Ada", "Bea"], ["Ada", "Ada", "Cyd"]) == 0.5
    assert title_precision(["Ada"], ["Ada"]) == 1.0
    assert title_precision(["Ada"], ["Cyd", "Dot", "Eve", "Ada"]) == 0.25


def test_title_precision_of_empty_evidence_is_zero():
    assert title_precision(["Ada"], []) == 0.0


def test_sentences_present_strips_and_matches_substrings():
    context = "[1] Quillfield (town)\nQuillfield is a harbour town. It was founded in 1702."
    sentences = [" It was founded in 1702.", "Quillfield is a harbour town.", "It is inland."]
    assert sentences_present(sentences, context) == 2


def test_sentences_present_ignores_blank_sentences():
    assert sentences_present(["   ", ""], "anything at all") == 0


def test_sentences_present_is_case_and_whitespace_sensitive_inside():
    assert sentences_present(["founded in 1702"], "Founded in 1702") == 0
    assert sentences_present(["founded in  1702"], "founded in 1702") == 0


def test_mean_pairwise_overlap_averages_all_pairs():
    a = "red apples grow"  # content words {red, apples, grow}
    b = "red apples fall"  # J(a, b) = 2/4
    c = "blue sky"  # J(a, c) = J(b, c) = 0
    assert mean_pairwise_overlap([a, b]) == pytest.approx(0.5)
    assert mean_pairwise_overlap([a, b, c]) == pytest.approx(0.5 / 3)


def test_mean_pairwise_overlap_needs_two_items():
    assert mean_pairwise_overlap([]) == 0.0
    assert mean_pairwise_overlap(["only one passage here"]) == 0.0


def test_mean_pairwise_overlap_of_identical_texts_is_one():
    assert mean_pairwise_overlap(["the tall lighthouse", "The tall lighthouse!"]) == 1.0


# --- answer metrics (official HotpotQA normalisation) ----------------------


def test_normalize_answer_lowercases_removes_punctuation_articles_and_spaces():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert normalize_answer("An apple, a day.") == "apple day"
    assert normalize_answer("  U.S.A.  ") == "usa"


def test_normalize_answer_only_removes_whole_word_articles():
    assert normalize_answer("Theatre and Anatomy") == "theatre and anatomy"
    assert normalize_answer("Thea") == "thea"


def test_normalize_answer_removes_punctuation_before_articles():
    # "the-end" loses its hyphen first, so "theend" is one word, not an article.
    assert normalize_answer("the-end") == "theend"


def test_exact_match_after_normalisation():
    assert answer_exact_match("the Beatles.", "Beatles")
    assert answer_exact_match("Ringo  Starr", "ringo starr")
    assert not answer_exact_match("Ringo", "Ringo Starr")


def test_f1_partial_token_overlap():
    # prediction tokens: ringo starr drums; gold: ringo starr -> P=2/3, R=1, F1=0.8
    assert answer_f1("Ringo Starr drums", "Ringo Starr") == pytest.approx(0.8)
    assert answer_f1("Paul", "Ringo Starr") == 0.0
    assert answer_f1("The Ringo", "Ringo Starr") == pytest.approx(2 * 1 * 0.5 / 1.5)


def test_f1_counts_repeated_tokens_by_multiplicity():
    # common = min(2, 1) = 1 -> P = 1/2, R = 1 -> F1 = 2/3
    assert answer_f1("new new", "new") == pytest.approx(2 / 3)


def test_f1_yes_no_only_match_exactly():
    assert answer_f1("yes", "yes") == 1.0
    assert answer_f1("Yes.", "yes") == 1.0
    assert answer_f1("no", "no way") == 0.0
    assert answer_f1("no way", "no") == 0.0
    assert answer_f1("yes it is", "yes") == 0.0
    assert answer_f1("noanswer", "noanswer found") == 0.0
    assert not answer_exact_match("yes", "no")


def test_f1_of_empty_prediction_is_zero():
    assert answer_f1("", "Ringo") == 0.0
    assert answer_f1("the", "Ringo") == 0.0


@given(st.text(max_size=30), st.text(max_size=30))
def test_f1_is_symmetric_and_bounded(a, b):
    assert answer_f1(a, b) == pytest.approx(answer_f1(b, a))
    assert 0.0 <= answer_f1(a, b) <= 1.0


@given(st.text(max_size=30))
def test_exact_match_implies_full_f1_unless_empty(a):
    if normalize_answer(a):
        assert answer_f1(a, a) == 1.0


# --- percentile ------------------------------------------------------------


def test_percentile_interpolates_linearly_like_numpy():
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 25.0
    assert percentile(values, 95) == pytest.approx(38.5)
    assert percentile(values, 0) == 10.0
    assert percentile(values, 100) == 40.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) == 0.0


def test_percentile_rejects_out_of_range_q():
    with pytest.raises(ValueError):
        percentile([1.0], 101)


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50), st.floats(0, 100))
def test_percentile_lies_within_the_values(values, q):
    result = percentile(values, q)
    assert min(values) - 1e-6 <= result <= max(values) + 1e-6


# --- aggregation -----------------------------------------------------------


_scores = question_scores


def test_aggregate_macro_averages_rates_and_micro_averages_sentences():
    first = _scores(recall=0.5, all_gold=False, precision=0.25, sp_sentences=1, sp_in_context=0)
    second = _scores(sp_sentences=3, sp_in_context=3, sp_in_evidence=1, budget_violation=True)
    result = aggregate_scores([first, second])
    assert result["recall"] == 0.75
    assert result["all_gold"] == 0.5
    assert result["precision"] == 0.625
    # micro: (0 + 3) / (1 + 3), not the mean of 0/1 and 3/3
    assert result["sp_sentence_recall"] == 0.75
    assert result["sp_sentence_recall_evidence"] == 0.75
    assert result["budget_violations"] == 1
    assert result["n_questions"] == 2


def test_aggregate_latency_percentiles_and_means():
    runs = [_scores(latency_ms=float(ms), loops=ms % 3, llm_calls=1) for ms in range(1, 101)]
    result = aggregate_scores(runs)
    assert result["latency_ms_p50"] == pytest.approx(50.5)
    assert result["latency_ms_p95"] == pytest.approx(95.05)
    assert result["llm_calls_mean"] == 1.0
    assert result["evidence_size_mean"] == 2.0
    assert result["evidence_tokens_mean"] == 100.0
    assert result["context_tokens_mean"] == 80.0


def test_aggregate_of_nothing_is_finite_or_not_applicable():
    result = aggregate_scores([])
    assert result["n_questions"] == 0
    # Rates over no question do not apply (JSON null); every other value is a finite number.
    assert result["recall"] is None
    assert result["answer_f1"] is None
    assert all(v is None or math.isfinite(v) for v in result.values())


def test_aggregate_keys_are_the_report_contract():
    expected = {
        "recall",
        "all_gold",
        "precision",
        "evidence_size_mean",
        "evidence_tokens_mean",
        "context_tokens_mean",
        "sp_sentence_recall",
        "sp_sentence_recall_evidence",
        "overlap_mean",
        "answer_em",
        "answer_f1",
        "latency_ms_p50",
        "latency_ms_p95",
        "loops_mean",
        "llm_calls_mean",
        "budget_violations",
        "span_recall_evidence",
        "span_recall_context",
        "answer_containment",
        "declined_answerable",
        "declined_unanswerable",
        "n_answerable",
        "n_unanswerable",
        "n_with_reference",
        "n_with_spans",
    }
    assert expected <= set(aggregate_scores([_scores()]))


# --- gold labels from QA records -------------------------------------------

RECORD = {
    "id": "q1",
    "dataset": "handmade",
    "type": "bridge",
    "level": None,
    "question": "Which river runs through the town where Ilse Marrow was born?",
    "answer": "Vell",
    "paragraphs": [
        {
            "title": "Ilse Marrow",
            "sentences": ["Ilse Marrow is a potter.", " She was born in Dunmere."],
        },
        {"title": "Dunmere", "sentences": ["Dunmere is a town.", " The Vell runs through it."]},
        {"title": "Dunmere", "sentences": ["Dunmere is also a surname."]},
        {"title": "Pottery", "sentences": ["Pottery is old."]},
    ],
    "supporting_facts": [["Ilse Marrow", 1], ["Dunmere", 1], ["Dunmere", 1], ["Dunmere", 7]],
}


def test_gold_titles_are_distinct_in_order():
    assert gold_titles(RECORD) == ("Ilse Marrow", "Dunmere")


def test_gold_sentences_skip_out_of_range_and_duplicate_facts():
    assert gold_sentences(RECORD) == (" She was born in Dunmere.", " The Vell runs through it.")


def test_gold_sentence_resolves_in_a_same_titled_paragraph_that_has_the_index():
    record = {
        "paragraphs": [
            {"title": "Dunmere", "sentences": ["Short one."]},
            {"title": "Dunmere", "sentences": ["First.", "Second."]},
        ],
        "supporting_facts": [["Dunmere", 1]],
    }
    assert gold_sentences(record) == ("Second.",)


def test_question_from_record_keeps_gold_labels():
    question = question_from_record(RECORD)
    assert question.qid == "q1"
    assert question.answer == "Vell"
    assert question.gold_titles == ("Ilse Marrow", "Dunmere")
    assert question.type == "bridge"
