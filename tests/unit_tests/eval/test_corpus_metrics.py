"""Metrics, loader and split of the evaluation on questions about a corpus folder."""

import json

import pytest
from support.fakes import question_scores

from sealgraph.errors import IngestError, InputError
from sealgraph.eval.corpus_questions import (
    CorpusQuestion,
    CorpusSources,
    GoldSpan,
    detect_format,
    is_unanswerable,
    load_corpus_questions,
    normalise_source,
)
from sealgraph.eval.methods import MethodOutput
from sealgraph.eval.metrics import (
    aggregate_scores,
    answer_contained,
    merge_ranges,
    span_char_recall,
)
from sealgraph.eval.runner import make_record, score_output
from sealgraph.eval.split import SPLITS, check_split, select_split, split_of
from sealgraph.types import Chunk

# --- gold-span character recall ----------------------------------------------


def test_merge_ranges_unions_per_document_and_drops_empty_ranges():
    merged = merge_ranges([("b", 5, 9), ("a", 0, 4), ("a", 3, 6), ("a", 6, 8), ("a", 10, 10)])
    assert merged == {"a": [(0, 8)], "b": [(5, 9)]}


def test_span_recall_counts_covered_gold_characters():
    # 10 gold characters; the chunk [5, 20) covers 5 of them.
    assert span_char_recall([("d", 0, 10)], [("d", 5, 20)]) == 0.5
    assert span_char_recall([("d", 0, 10)], [("d", 0, 3), ("d", 8, 30)]) == 0.5
    assert span_char_recall([("d", 0, 10)], [("d", 0, 10)]) == 1.0
    assert span_char_recall([("d", 0, 10)], []) == 0.0


def test_span_recall_only_counts_ranges_of_the_same_document():
    assert span_char_recall([("d", 0, 10)], [("e", 0, 10)]) == 0.0
    # Two gold spans in two documents, 10 + 30 characters; only d is covered.
    assert span_char_recall([("d", 0, 10), ("e", 0, 30)], [("d", 0, 100)]) == 0.25


def test_span_recall_counts_overlapping_gold_and_covering_ranges_once():
    # Gold [0, 10) and [5, 15) merge into 15 characters; overlapping covers into [0, 12).
    assert span_char_recall([("d", 0, 10), ("d", 5, 15)], [("d", 0, 8), ("d", 4, 12)]) == 12 / 15


def test_span_recall_without_gold_characters_does_not_apply():
    assert span_char_recall([], [("d", 0, 10)]) is None
    assert span_char_recall([("d", 4, 4)], [("d", 0, 10)]) is None


# --- answer containment -------------------------------------------------------


def test_containment_normalises_both_sides():
    assert answer_contained("It happened in October, 2021.", "october 2021")
    assert answer_contained("The Fell Hills", "fell hills")


def test_containment_needs_whole_tokens():
    assert not answer_contained("in 20210", "2021")
    assert not answer_contained("fellow hills", "fell hills")


def test_containment_of_an_empty_gold_never_matches():
    assert not answer_contained("anything at all", "The")
    assert not answer_contained("", "")


# --- unanswerable questions -------------------------------------------------


def test_unanswerable_by_type_or_by_no_answer_and_no_document():
    assert is_unanswerable("Unable to answer", ["a.txt"], "Irrelevant Unsolvable Question")
    assert is_unanswerable("x", [], "unanswerable")
    assert is_unanswerable(None, [], "factual")
    assert not is_unanswerable(None, ["a.txt"], "privacy_qa")
    assert not is_unanswerable("42", [], "factual")
    assert not is_unanswerable("42", ["a.txt"], "Multi-hop Reasoning Question")


def test_an_explicit_answerable_flag_decides():
    assert not is_unanswerable(None, [], "unsolvable", answerable=True)
    assert is_unanswerable("42", ["a.txt"], "factual", answerable=False)


# --- aggregation with corpus questions --------------------------------------


def _scores(**overrides):
    # Corpus questions: no supporting sentences, no reference short answer.
    return question_scores(
        **{
            "sp_sentences": 0,
            "sp_in_context": 0,
            "sp_in_evidence": 0,
            "exact_match": False,
            "f1": 0.0,
            **overrides,
        }
    )


def test_aggregate_splits_declines_by_answerability():
    result = aggregate_scores(
        [
            _scores(declined=True),
            _scores(declined=False),
            _scores(declined=False),
            _scores(declined=False),
            _scores(answerable=False, scores_documents=False, declined=True),
            _scores(answerable=False, scores_documents=False, declined=False),
        ]
    )
    assert result["declined_answerable"] == 0.25
    assert result["declined_unanswerable"] == 0.5
    assert (result["n_answerable"], result["n_unanswerable"]) == (4, 2)


def test_aggregate_answer_scores_only_over_answerable_questions_with_a_reference():
    result = aggregate_scores(
        [
            _scores(has_reference=True, contained=True, f1=0.5),
            _scores(has_reference=True, contained=False, f1=0.0),
            _scores(has_reference=False, contained=False, f1=0.0),
            _scores(answerable=False, has_reference=True, contained=True, f1=1.0),
        ]
    )
    assert result["answer_containment"] == 0.5
    assert result["answer_f1"] == 0.25
    assert result["n_with_reference"] == 2


def test_aggregate_span_recall_is_a_macro_average_over_questions_with_spans():
    result = aggregate_scores(
        [
            _scores(span_recall_evidence=1.0, span_recall_context=0.5),
            _scores(span_recall_evidence=0.0, span_recall_context=0.0),
            _scores(),  # no gold span: left out
        ]
    )
    assert result["span_recall_evidence"] == 0.5
    assert result["span_recall_context"] == 0.25
    assert result["n_with_spans"] == 2


def test_aggregate_document_recall_leaves_out_questions_it_does_not_apply_to():
    result = aggregate_scores(
        [_scores(recall=0.5, all_gold=False), _scores(recall=1.0, scores_documents=False)]
    )
    assert result["recall"] == 0.5
    assert result["all_gold"] == 0.0


def test_aggregate_rates_that_apply_to_no_question_are_none():
    result = aggregate_scores([_scores(has_reference=False)])
    assert result["span_recall_evidence"] is None
    assert result["answer_containment"] is None
    assert result["answer_f1"] is None
    assert result["declined_unanswerable"] is None
    assert result["sp_sentence_recall"] is None
    assert result["declined_answerable"] == 0.0


# --- scoring one output -------------------------------------------------------


def _chunk(doc_id, order, start, text):
    return Chunk(f"{doc_id}#{order}", doc_id, doc_id, (), order, start, start + len(text), text, 5)


def _question(**overrides):
    base = dict(
        qid="q1",
        question="When?",
        answer="October 2021",
        type="Factual Question",
        gold_documents=("a.txt",),
        gold_spans=(GoldSpan("a.txt", 10, 30),),
        answerable=True,
    )
    base.update(overrides)
    return CorpusQuestion(**base)


def _output(**overrides):
    base = dict(
        evidence=(_chunk("a.txt", 0, 0, "x" * 20), _chunk("b.txt", 0, 0, "y" * 50)),
        answer="It was in October 2021.",
        context="ctx",
        context_tokens=3,
        packed=(("a.txt", 15, 20), ("b.txt", 10, 30)),
    )
    base.update(overrides)
    return MethodOutput(**base)


def test_score_corpus_output_against_documents_spans_and_answer():
    scores = score_output(_question(), _output(), latency_ms=5.0, budget_exceeded=False)
    assert scores.recall == 1.0
    assert scores.all_gold
    assert scores.precision == 0.5  # a.txt and b.txt in the evidence, one gold
    assert scores.span_recall_evidence == 0.5  # chunk [0, 20) covers [10, 20) of [10, 30)
    assert scores.span_recall_context == 0.25  # packed [15, 20) of a.txt
    assert scores.contained
    assert scores.f1 > 0
    assert not scores.declined


def test_a_declined_answer_scores_nothing_on_answer_metrics():
    output = _output(answer="Insufficient evidence: October 2021 is not stated.", declined=True)
    scores = score_output(_question(), output, latency_ms=5.0, budget_exceeded=False)
    assert scores.declined
    assert not scores.contained
    assert not scores.exact_match
    assert scores.f1 == 0.0


def test_unanswerable_question_scores_only_the_decline():
    question = _question(
        answer="Unable to answer", type="Irrelevant Unsolvable Question", answerable=False
    )
    output = _output(answer="Unable to answer", declined=True)
    scores = score_output(question, output, latency_ms=5.0, budget_exceeded=False)
    assert not scores.answerable
    assert not scores.scores_documents
    assert not scores.has_reference
    assert scores.span_recall_evidence is None
    record = make_record(question, "seal", output, scores)
    assert record["declined"] is True
    assert record["scores"]["answer_f1"] is None
    assert record["scores"]["recall"] is None


def test_corpus_record_carries_the_per_question_values():
    question, output = _question(answer=None), _output()
    scores = score_output(question, output, latency_ms=5.25, budget_exceeded=False)
    record = make_record(question, "flat-bm25", output, scores)
    assert record["latency_ms"] == 5.25
    assert record["gold_documents"] == ["a.txt"]
    assert record["gold_spans"] == [{"document": "a.txt", "start": 10, "end": 30}]
    assert record["packed"][0] == {"doc_id": "a.txt", "start": 15, "end": 20}
    assert record["evidence"][0] == {
        "doc_id": "a.txt",
        "chunk_id": "a.txt#0",
        "start": 0,
        "end": 20,
    }
    assert record["scores"]["span_recall_evidence"] == 0.5
    assert record["scores"]["span_recall_context"] == 0.25
    assert record["scores"]["answer_containment"] is None  # no reference answer
    assert record["scores"]["declined"] is False


# --- source text normalisation ----------------------------------------------


def test_crlf_offsets_map_onto_the_normalised_text():
    raw = "one\r\ntwo\r\nthree"
    source = normalise_source(raw)
    assert source.text == "one\ntwo\nthree"
    start, end = raw.index("two"), raw.index("three") + len("three")
    mapped = source.text[source.to_normalised(start) : source.to_normalised(end)]
    assert mapped == raw[start:end].replace("\r\n", "\n")
    # The CR and the LF of a CRLF both map onto the LF.
    assert source.to_normalised(3) == source.to_normalised(4) == 3
    assert source.to_normalised(len(raw)) == len(source.text)


def test_lone_cr_and_byte_order_mark():
    source = normalise_source("\ufeffa\rb\r\r\nc")
    assert source.text == "a\nb\n\nc"
    raw = "\ufeffa\rb\r\r\nc"
    assert source.text[source.to_normalised(raw.index("b")) :] == "b\n\nc"
    assert source.text[source.to_normalised(raw.index("c")) :] == "c"


# --- the loader ----------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_bytes(b"Alpha line.\r\nThe launch was in October 2021.\r\nEnd.\r\n")
    (folder / "sub" / "b.txt").write_text("Beta document text.", encoding="utf-8")
    return folder


def sources_of(folder):
    return CorpusSources({"a.txt": folder / "a.txt", "sub/b.txt": folder / "sub/b.txt"}, "corpus")


def write_questions(tmp_path, *records):
    path = tmp_path / "questions.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_loader_maps_crlf_span_offsets(tmp_path, corpus):
    raw = (corpus / "a.txt").read_bytes().decode("utf-8")
    start = raw.index("The launch")
    end = raw.index("End.")  # the span ends after the CRLF
    path = write_questions(
        tmp_path,
        {
            "id": "q1",
            "question": "When was the launch?",
            "answer": "October 2021",
            "type": "factual",
            "gold_documents": ["a.txt"],
            "gold_spans": [{"document": "a.txt", "start": start, "end": end}],
        },
    )
    [question] = load_corpus_questions(path, sources_of(corpus))
    normalised = raw.replace("\r\n", "\n")
    span = question.gold_spans[0]
    assert normalised[span.start : span.end] == "The launch was in October 2021.\n"
    assert question.answerable
    assert question.line == 1


def test_loader_adds_span_documents_and_defaults_missing_fields(tmp_path, corpus):
    path = write_questions(
        tmp_path,
        {
            "id": 7,
            "question": "What is beta?",
            "gold_spans": [{"document": "sub/b.txt", "start": 0, "end": 4}],
        },
        {"id": "q2", "question": "Unrelated?", "answer": None, "gold_documents": []},
    )
    first, second = load_corpus_questions(path, sources_of(corpus))
    assert first.qid == "7"
    assert first.answer is None
    assert first.type == ""
    assert first.gold_documents == ("sub/b.txt",)
    assert first.answerable
    assert not second.answerable


GOOD = {"id": "q1", "question": "Q?", "answer": "A", "gold_documents": ["a.txt"]}


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (
            (GOOD, {**GOOD, "id": "q2", "gold_documents": ["nope.txt"]}),
            ":2: gold document 'nope.txt'",
        ),
        (
            ({**GOOD, "gold_spans": [{"document": "missing.txt", "start": 0, "end": 1}]},),
            ":1: gold document 'missing.txt'",
        ),
        (
            ({**GOOD, "gold_spans": [{"document": "a.txt", "start": 10, "end": 999}]},),
            ":1: gold span 0 [10, 999) of 'a.txt' is out of range",
        ),
        (
            ({**GOOD, "gold_spans": [{"document": "a.txt", "start": 5, "end": 2}]},),
            "out of range",
        ),
        (({**GOOD, "gold_spans": [{"document": "a.txt", "start": "0"}]},), "gold span 0 must be"),
        ((GOOD, "not json"), ":2: invalid JSON"),
        ((GOOD, GOOD), ":2: duplicate question id 'q1' (first on line 1)"),
        (({**GOOD, "question": ""},), '"question"'),
        (({**GOOD, "answer": 3},), '"answer"'),
        (({**GOOD, "gold_documents": "a.txt"},), '"gold_documents"'),
        (({k: v for k, v in GOOD.items() if k != "id"},), '"id"'),
        (({**GOOD, "paragraphs": []},), "multi-hop QA record"),
        (("[1, 2]",), "expected a JSON object"),
    ],
)
def test_loader_rejects_bad_lines_naming_file_and_line(tmp_path, corpus, records, message):
    path = write_questions(tmp_path, *records)
    with pytest.raises(IngestError) as excinfo:
        load_corpus_questions(path, sources_of(corpus))
    assert str(path) in str(excinfo.value)
    assert message in str(excinfo.value)


def test_loader_rejects_a_missing_or_empty_file(tmp_path, corpus):
    with pytest.raises(InputError, match="no such file"):
        load_corpus_questions(tmp_path / "none.jsonl", sources_of(corpus))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no question"):
        load_corpus_questions(empty, sources_of(corpus))


def test_a_document_without_a_file_cannot_carry_spans(tmp_path, corpus):
    sources = CorpusSources({"a.txt": None}, "the index in idx")
    path = write_questions(
        tmp_path, {**GOOD, "gold_spans": [{"document": "a.txt", "start": 0, "end": 1}]}
    )
    with pytest.raises(IngestError, match=r":1: .*no file.*--corpus"):
        load_corpus_questions(path, sources)


def test_detect_format(tmp_path):
    path = tmp_path / "q.jsonl"
    for text, expected in [
        ('\n{"question": "q", "paragraphs": []}\n', "multihop"),
        ('{"id": "1", "question": "q", "gold_documents": []}\n', "corpus"),
        ('{"id": "1", "question": "q", "gold_spans": []}\n', "corpus"),
        ('{"id": "1", "question": "q"}\n', "unknown"),
        ("not json\n", "unknown"),
        ("", "unknown"),
    ]:
        path.write_text(text, encoding="utf-8")
        assert detect_format(path) == expected, text
    with pytest.raises(InputError, match="no such file"):
        detect_format(tmp_path / "missing.jsonl")


# --- halves -------------------------------------------------------------------


def test_split_is_a_stable_hash_of_the_id():
    # sha256("q1")[0] = 0xc7 (odd), sha256("q2")[0] = 0xbe (even)
    assert split_of("q1") == "b"
    assert split_of("q2") == "a"
    assert {split_of(f"id-{i}") for i in range(20)} == set(SPLITS)


def test_select_split_partitions_and_keeps_order():
    ids = [f"question-{i}" for i in range(200)]
    a = select_split(ids, "a", lambda q: q)
    b = select_split(ids, "b", lambda q: q)
    assert sorted(a + b) == sorted(ids)
    assert not set(a) & set(b)
    assert a == [q for q in ids if q in set(a)]
    assert 60 < len(a) < 140  # roughly half
    # A question's half does not depend on the others.
    assert select_split(ids[:50], "a", lambda q: q) == [q for q in a if q in ids[:50]]
    assert select_split(ids, None, lambda q: q) == ids


def test_unknown_split_is_a_clear_error():
    with pytest.raises(InputError, match="--split must be one of a, b"):
        check_split("c")


def test_a_deeply_nested_line_is_a_clear_error(tmp_path, corpus):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"id": "q", "gold_spans": ' + "[" * 50_000 + "]" * 50_000 + "}\n")
    assert detect_format(path) == "unknown"
    with pytest.raises(IngestError, match=r"deep.jsonl:1: JSON nested too deeply"):
        load_corpus_questions(path, sources_of(corpus))


def test_exact_match_and_f1_score_the_marked_short_answer():
    long_answer = "October 2021 — The violations occurred in October 2021 at the plant. [1]"
    plain = score_output(
        _question(), _output(answer=long_answer), latency_ms=5.0, budget_exceeded=False
    )
    marked = score_output(
        _question(),
        _output(answer=long_answer, short_answer="October 2021"),
        latency_ms=5.0,
        budget_exceeded=False,
    )
    assert not plain.exact_match and plain.f1 < 0.5
    assert marked.exact_match and marked.f1 == 1.0
    assert plain.contained and marked.contained
