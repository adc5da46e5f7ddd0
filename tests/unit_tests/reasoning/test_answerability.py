"""Offline answerability: the rare words of the question, held by the best passages."""

from __future__ import annotations

import dataclasses

import pytest

from sealgraph.reasoning.answer import DECLINED
from sealgraph.reasoning.answerability import answerability, gate_answer, unseen_names
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


def test_judge_answer_keeps_a_models_own_judgement_and_gates_offline_answers(tiny_index):
    from sealgraph.config import SealConfig
    from sealgraph.graph.steps import judge_answer
    from sealgraph.ledger.knowledge import CorpusKnowledge
    from sealgraph.text.lexicon import lexicon_of

    chunk = next(tiny_index.iter_chunks())
    packed = [{"n": 1, "doc_id": chunk.doc_id, "title": chunk.title, "text": chunk.text}]
    answer = GeneratedAnswer("An answer. [1]", (1,), short="An answer")
    config = SealConfig(min_answerability=0.99, decline_unseen_names=False)
    args = ("Which Zorblat does the Quuxmire hold?", packed, answer, config)
    knowledge, lexicon = CorpusKnowledge(tiny_index), lexicon_of(tiny_index)
    kept, found = judge_answer(*args, knowledge, lexicon, model_judged=True)
    assert kept is answer and found.score < 0.99  # the model judged: reported, not overridden
    gated, again = judge_answer(*args, knowledge, lexicon)
    assert gated.insufficient and again == found  # offline (or a fallback): the score decides
    assert "zorblat" in gated.missing


def test_judge_answer_declines_a_question_naming_what_no_chunk_holds(tiny_index):
    from sealgraph.config import SealConfig
    from sealgraph.graph.steps import judge_answer
    from sealgraph.ledger.knowledge import CorpusKnowledge
    from sealgraph.text.lexicon import lexicon_of

    chunk = next(tiny_index.iter_chunks())
    packed = [{"n": 1, "doc_id": chunk.doc_id, "title": chunk.title, "text": chunk.text}]
    answer = GeneratedAnswer("An answer. [1]", (1,), short="An answer")
    knowledge, lexicon = CorpusKnowledge(tiny_index), lexicon_of(tiny_index)
    question = "How do I expose gRPC services from a Zorblat server?"
    gated, found = judge_answer(question, packed, answer, SealConfig(), knowledge, lexicon)
    assert found.unseen == ("gRPC", "Zorblat")
    assert gated.insufficient and gated.answer == DECLINED
    assert gated.missing == "the documents never mention 'gRPC', 'Zorblat'"
    off = SealConfig(decline_unseen_names=False)
    assert judge_answer(question, packed, answer, off, knowledge, lexicon)[0] is answer


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("How do I expose gRPC services?", ["gRPC"]),
        ("How do I enable Brotli compression in FastAPI?", ["Brotli", "FastAPI"]),
        ("Brotli or gzip? Which does Starlette use?", ["Starlette"]),  # sentence starts
        ("Serve it over HTTP/3 (QUIC) at the end of WW2.", []),  # acronyms are left out
        ('She said "Hello" to "Anna".', []),  # a capital after a quote opens a quotation
    ],
)
def test_written_names_are_capitalised_inside_a_sentence_or_have_inner_capitals(text, names):
    from sealgraph.text.lexicon import active

    assert active().written_names(text) == names


DF = {"fastapi": 40, "sydney": 3, "starlett": 5}


def stems(name: str) -> list[str]:
    return [name.casefold().removesuffix("e")]


def test_unseen_names_are_those_no_chunk_holds_typos_of_a_passage_word_aside():
    found = unseen_names(
        ["gRPC", "FastAPI", "Sydeney", "Brotli", "gRPC"],
        stems,
        lambda t: DF.get(t, 0),
        {"sydney", "olympic", "the"},
    )
    assert found == ("gRPC", "Brotli")  # "Sydeney": one letter from "sydney" in a passage


def test_a_short_name_is_never_taken_for_a_typo():
    # "Ruby" is one letter from "rugby", but four letters are too few to tell a typo.
    assert unseen_names(["Ruby"], stems, lambda t: 0, {"rugby"}) == ("Ruby",)
    assert unseen_names(["Yeshahework"], stems, lambda t: 0, {"yeshashework"}) == ()


def test_gate_declines_a_question_naming_the_unseen_only_when_asked_to():
    answer = GeneratedAnswer("Use GZipMiddleware. [1]", (1,), short="GZipMiddleware")
    found = dataclasses.replace(
        answerability(["brotli", "compress"], [frozenset({"compress"})], weight),
        unseen=("Brotli",),
    )
    assert gate_answer(answer, found, 0.0, ["brotli"]) is answer
    declined = gate_answer(answer, found, 0.0, ["brotli"], decline_unseen=True)
    assert declined.insufficient and declined.missing == "the documents never mention 'Brotli'"
