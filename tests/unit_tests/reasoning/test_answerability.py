"""Offline answerability: the rare words of the question, held by the best passages."""

from __future__ import annotations

from sealgraph.reasoning.answer import DECLINED
from sealgraph.reasoning.answerability import answerability, gate_answer
from sealgraph.reasoning.base import GeneratedAnswer

IDF = {"brotli": 8.0, "compress": 3.0, "middlewar": 2.0, "gzip": 6.0, "enabl": 1.0}


def weight(term: str) -> float:
    return IDF.get(term, 0.0)


def test_score_is_the_weight_share_of_the_best_passage_pair():
    q = ["enabl", "brotli", "compress", "middlewar"]
    passages = [
        frozenset({"gzip", "compress"}),
        frozenset({"middlewar", "enabl"}),
        frozenset({"unrelat"}),
    ]
    found = answerability(q, passages, weight)
    assert found.passages == (0, 1)
    assert found.score == round((3.0 + 2.0 + 1.0) / 14.0, 4)
    assert found.unheld == ("brotli",)  # the rarest word the documents never mention


def test_one_passage_holding_everything_scores_one():
    found = answerability(["gzip", "compress"], [frozenset({"gzip", "compress", "x"})], weight)
    assert found.score == 1.0 and found.passages == (0,) and found.unheld == ()


def test_no_passage_and_no_content_word():
    assert answerability(["gzip"], [], weight).score == 0.0
    assert answerability([], [frozenset({"gzip"})], weight).score == 1.0


def test_gate_declines_below_the_threshold_and_names_the_unheld_words():
    answer = GeneratedAnswer("Use GZipMiddleware. [1]", (1,), short="GZipMiddleware")
    found = answerability(["brotli", "compress"], [frozenset({"compress"})], weight)
    kept = gate_answer(answer, found, 0.2, ["brotli"])
    assert kept is answer
    declined = gate_answer(answer, found, 0.5, ["brotli"])
    assert declined.insufficient and declined.answer == DECLINED
    assert declined.cited == () and declined.short == ""
    assert declined.missing == "the passages found do not mention 'brotli'"
    assert gate_answer(answer, found, 0.0, ["brotli"]) is answer  # 0: never declines
