from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sealgraph.config import SealConfig
from sealgraph.errors import InputError
from sealgraph.eval.dataset import EvalQuestion
from sealgraph.eval.methods import (
    METHODS,
    Pipeline,
    adaptive_cutoff,
    adaptive_pool_size,
    declined_from_log,
    default_pipeline,
    expand_evidence,
    get_method,
    packed_ranges_from_trace,
    parse_methods,
    rewrite_query,
    span_id_range,
)
from sealgraph.eval.runner import evaluate_method
from sealgraph.types import Chunk, Hit


def make_chunk(chunk_id, title, text, n_tokens=10):
    return Chunk(
        chunk_id=chunk_id,
        doc_id=chunk_id.split("#")[0],
        title=title,
        section=(),
        order=0,
        start=0,
        end=len(text),
        text=text,
        n_tokens=n_tokens,
    )


CHUNKS = {
    c.chunk_id: c
    for c in (
        make_chunk("a#0", "Alder", "Alder is a village on the Brisk river.", 12),
        make_chunk("b#0", "Brisk", "The Brisk river rises in the Fell hills.", 11),
        make_chunk("c#0", "Corran", "Corran is a lighthouse keeper.", 7),
        make_chunk("d#0", "Dorm", "Dorm is a mountain.", 5),
    )
}


@dataclass
class FakeIndex:
    """Scores per retriever as {chunk_id: score}; records every call."""

    lexical: dict
    dense: dict = field(default_factory=dict)
    hybrid: dict = field(default_factory=dict)
    has_dense: bool = True
    calls: list = field(default_factory=list)

    def _search(self, name, scores, query, k):
        self.calls.append((name, query, k))
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [Hit(cid, score, rank, name) for rank, (cid, score) in enumerate(ranked)]

    def search_lexical(self, query, k):
        return self._search("lexical", self.lexical, query, k)

    def search_dense(self, query, k):
        return self._search("dense", self.dense, query, k)

    def search_hybrid(self, query, k, retrieval=None):
        assert retrieval is not None, "hybrid search must receive the config's retrieval settings"
        return self._search("hybrid", self.hybrid, query, k)

    def get_chunks(self, ids):
        return [CHUNKS[i] for i in ids]  # in order; KeyError on unknown ids, like Index


class RecordingPipeline:
    """Stands in for answer_from_evidence and build_graph, recording calls."""

    def __init__(self, graph_result=None, context="ctx"):
        self.answer_calls = []
        self.graph_configs = []
        self.graph_result = graph_result
        self.context = context

    def answer_from_evidence(self, question, chunks, index, config):
        self.answer_calls.append((question, [c.chunk_id for c in chunks], config))
        return {
            "answer": "Brisk",
            "citations": [
                {"n": i + 1, "chunk_id": c.chunk_id, "title": c.title, "text": c.text}
                for i, c in enumerate(chunks)
            ],
            "context": self.context,
            "context_tokens": 3,
        }

    def build_graph(self, *, index, config):
        self.graph_configs.append(config)
        outer = self

        class Graph:
            invocations = 0

            def invoke(self, state):
                Graph.invocations += 1
                assert set(state) == {"question"}
                return outer.graph_result

        return Graph()

    def as_pipeline(self):
        return Pipeline(
            answer_from_evidence=self.answer_from_evidence, build_graph=self.build_graph
        )


# --- adaptive-k gap rule ---------------------------------------------------


def test_adaptive_cutoff_keeps_candidates_above_the_largest_gap():
    assert adaptive_cutoff([0.9, 0.85, 0.3, 0.25]) == 2
    assert adaptive_cutoff([0.9, 0.2, 0.19, 0.18]) == 1
    assert adaptive_cutoff([0.9, 0.8, 0.7, 0.1]) == 3


def test_adaptive_cutoff_sorts_its_input():
    assert adaptive_cutoff([0.25, 0.9, 0.3, 0.85]) == 2


def test_adaptive_cutoff_takes_the_earliest_of_equal_gaps():
    assert adaptive_cutoff([3.0, 2.0, 1.0]) == 1


def test_adaptive_cutoff_keeps_everything_without_a_gap():
    assert adaptive_cutoff([0.5, 0.5, 0.5]) == 3


def test_adaptive_cutoff_edge_sizes():
    assert adaptive_cutoff([]) == 0
    assert adaptive_cutoff([0.4]) == 1


@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=40))
def test_adaptive_cutoff_is_between_one_and_the_pool(scores):
    keep = adaptive_cutoff(scores)
    assert 1 <= keep <= len(scores)
    ordered = sorted(scores, reverse=True)
    if keep < len(scores):
        cut_gap = ordered[keep - 1] - ordered[keep]
        gaps = [ordered[i] - ordered[i + 1] for i in range(len(ordered) - 1)]
        assert cut_gap == max(gaps)


def test_adaptive_pool_size():
    assert adaptive_pool_size(1) == 10
    assert adaptive_pool_size(3) == 10
    assert adaptive_pool_size(5) == 15


# --- registry --------------------------------------------------------------


def test_registry_holds_the_six_methods_and_the_append_ablation():
    assert list(METHODS) == [
        "flat-bm25",
        "flat-dense",
        "flat-hybrid",
        "expand",
        "adaptive-k",
        "seal-append",
        "seal",
    ]
    assert {name for name, m in METHODS.items() if m.uses_loops} == {
        "expand",
        "seal-append",
        "seal",
    }
    assert {name for name, m in METHODS.items() if m.needs_dense} == {"flat-dense"}


def test_unknown_method_error_lists_valid_names():
    with pytest.raises(InputError) as excinfo:
        get_method("flat-bm52")
    message = str(excinfo.value)
    assert "flat-bm52" in message
    for name in METHODS:
        assert name in message


def test_parse_methods_keeps_order_drops_duplicates_and_blanks():
    chosen = parse_methods(" seal, flat-bm25,,seal ")
    assert [m.name for m in chosen] == ["seal", "flat-bm25"]
    assert [m.name for m in parse_methods(["expand"])] == ["expand"]


def test_parse_methods_rejects_empty_and_unknown():
    with pytest.raises(InputError, match="no method"):
        parse_methods(" , ")
    with pytest.raises(InputError, match="unknown method 'bm25'"):
        parse_methods("seal,bm25")


# --- flat and adaptive methods ---------------------------------------------


def test_flat_bm25_packs_the_top_k_in_rank_order():
    index = FakeIndex(lexical={"a#0": 3.0, "b#0": 5.0, "c#0": 1.0})
    pipeline = RecordingPipeline()
    config = SealConfig(k=2)
    run = get_method("flat-bm25").build(index, config, pipeline.as_pipeline())
    output = run("Where does the Brisk rise?")
    assert index.calls == [("lexical", "Where does the Brisk rise?", 2)]
    assert [c.chunk_id for c in output.evidence] == ["b#0", "a#0"]
    assert pipeline.answer_calls[0][1] == ["b#0", "a#0"]
    assert pipeline.answer_calls[0][2] is config
    assert output.answer == "Brisk"
    assert output.loops == 0
    assert [c["chunk_id"] for c in output.citations] == ["b#0", "a#0"]


def test_flat_dense_and_hybrid_use_their_retrievers():
    index = FakeIndex(lexical={}, dense={"c#0": 0.9}, hybrid={"d#0": 0.1})
    pipeline = RecordingPipeline().as_pipeline()
    config = SealConfig(k=4)
    dense = get_method("flat-dense").build(index, config, pipeline)("q")
    hybrid = get_method("flat-hybrid").build(index, config, pipeline)("q")
    assert [c.chunk_id for c in dense.evidence] == ["c#0"]
    assert [c.chunk_id for c in hybrid.evidence] == ["d#0"]
    assert [call[0] for call in index.calls] == ["dense", "hybrid"]


def test_flat_dense_without_dense_index_is_a_clear_error():
    index = FakeIndex(lexical={}, has_dense=False)
    with pytest.raises(InputError, match=r"flat-dense.*dense"):
        get_method("flat-dense").build(index, SealConfig(), RecordingPipeline().as_pipeline())


def test_adaptive_k_draws_a_pool_and_cuts_at_the_largest_gap():
    # Ties on score break on chunk id; the gap after the two 0.8s is the largest.
    index = FakeIndex(lexical={}, hybrid={"b#0": 0.8, "a#0": 0.8, "c#0": 0.3, "d#0": 0.25})
    pipeline = RecordingPipeline()
    run = get_method("adaptive-k").build(index, SealConfig(k=4), pipeline.as_pipeline())
    output = run("q")
    assert index.calls == [("hybrid", "q", 12)]
    assert [c.chunk_id for c in output.evidence] == ["a#0", "b#0"]


# --- graph methods ---------------------------------------------------------

GRAPH_RESULT = {
    "answer": "Fell hills",
    "citations": [{"n": 1, "chunk_id": "b#0", "title": "Brisk", "text": "The Brisk river"}],
    "evidence": [
        {"chunk_id": "b#0", "title": "Brisk", "doc_id": "b", "text": "The Brisk river ..."},
        {"chunk_id": "a#0", "title": "Alder", "doc_id": "a", "text": "Alder is ..."},
    ],
    "context": "[1] Brisk\nThe Brisk river",
    "context_tokens": 6,
    "loops": 2,
    "seal_log": [{"llm_calls": 0}, {"llm_calls": 2}, {"llm_calls": 1}],
}


def test_seal_and_seal_append_differ_only_by_replacement():
    pipeline = RecordingPipeline(graph_result=GRAPH_RESULT)
    index = FakeIndex(lexical={})
    config = SealConfig(k=3, max_loops=2, budget=300)
    get_method("seal").build(index, config, pipeline.as_pipeline())
    get_method("seal-append").build(index, config, pipeline.as_pipeline())
    seal_config, append_config = pipeline.graph_configs
    assert seal_config.replacement is True
    assert append_config.replacement is False
    assert append_config.model_copy(update={"replacement": True}) == seal_config


def test_rewrite_query_adds_distinctive_new_terms_only():
    text = "The Harbour Lamp was designed by Ada Brightwater in Valmora."
    chunks = [Chunk("a#0", "a", "Harbour Lamp", (), 0, 0, len(text), text, 12)]
    from sealgraph.text.lexicon import stem

    # The idf table is keyed by stems (the lexicon's Snowball stems).
    idf = {stem("valmora"): 5.0, stem("brightwater"): 4.0, stem("designed"): 0.1}
    query = rewrite_query(
        "Who designed the Harbour Lamp?", chunks, lambda t: idf.get(t, 1.0), n_terms=2
    )
    assert query.startswith("Who designed the Harbour Lamp? ")
    added = query.split("? ", 1)[1].split()
    # Question words are never re-added; the rarest new terms come first.
    assert added == ["valmora", "brightwater"]


def test_expand_adds_k_new_results_per_loop_and_never_evicts(tiny_index):
    config = SealConfig(k=2, max_loops=2)
    question = "Who designed the Lumen Lamp?"
    chunks, loops = expand_evidence(question, tiny_index, config)
    ids = [c.chunk_id for c in chunks]
    assert len(ids) == len(set(ids))
    assert len(ids) <= config.k * (1 + config.max_loops)
    assert ids[:2] == [h.chunk_id for h in tiny_index.search_hybrid(question, 2)]
    assert loops >= 1


def test_graph_method_builds_once_and_reads_the_graph_output():
    pipeline = RecordingPipeline(graph_result=GRAPH_RESULT)
    run = get_method("seal").build(FakeIndex(lexical={}), SealConfig(), pipeline.as_pipeline())
    first = run("q1")
    run("q2")
    assert len(pipeline.graph_configs) == 1
    assert [c.chunk_id for c in first.evidence] == ["b#0", "a#0"]
    # Evidence chunks come from the index, with their true text and n_tokens.
    assert [c.n_tokens for c in first.evidence] == [11, 12]
    assert first.evidence[0].text == CHUNKS["b#0"].text
    assert first.loops == 2
    assert first.llm_calls == 3
    assert first.context_tokens == 6
    assert first.answer == "Fell hills"


# --- evaluate_method -------------------------------------------------------


QUESTIONS = [
    EvalQuestion(
        qid="q1",
        question="Where does the river through Alder rise?",
        answer="the Fell hills",
        gold_titles=("Alder", "Brisk"),
        gold_sentences=("The Brisk river rises in the Fell hills.", "Not anywhere."),
    ),
    EvalQuestion(
        qid="q2",
        question="What is Dorm?",
        answer="Brisk",
        gold_titles=("Dorm",),
        gold_sentences=("Dorm is a mountain.",),
    ),
]


def test_evaluate_method_scores_records_and_warms_up_untimed():
    index = FakeIndex(lexical={"b#0": 2.0, "c#0": 1.0})
    pipeline = RecordingPipeline(context="The Brisk river rises in the Fell hills.")
    ticks = []
    result = evaluate_method(
        get_method("flat-bm25"),
        QUESTIONS,
        index,
        SealConfig(k=2, budget=16),
        pipeline.as_pipeline(),
        on_question=lambda: ticks.append(1),
    )
    # one warm-up call on the first question, then one per question
    assert [call[1] for call in index.calls] == [
        QUESTIONS[0].question,
        *(q.question for q in QUESTIONS),
    ]
    assert len(ticks) == 2
    m = result.metrics
    assert m["recall"] == pytest.approx((0.5 + 0.0) / 2)
    assert m["all_gold"] == 0.0
    assert m["precision"] == pytest.approx((0.5 + 0.0) / 2)
    assert m["evidence_size_mean"] == 2.0
    assert m["evidence_tokens_mean"] == 18.0
    assert m["sp_sentence_recall"] == pytest.approx(1 / 3)
    assert m["answer_em"] == 0.5
    assert m["budget_violations"] == 0
    assert m["peak_rss_mb"] > 0
    assert m["latency_ms_p95"] >= m["latency_ms_p50"] >= 0

    record = result.records[0]
    assert record["id"] == "q1"
    assert record["method"] == "flat-bm25"
    assert record["evidence"] == [
        {"title": "Brisk", "chunk_id": "b#0"},
        {"title": "Corran", "chunk_id": "c#0"},
    ]
    assert record["context"] == "The Brisk river rises in the Fell hills."
    assert record["context_tokens"] == 3
    assert record["gold_titles"] == ["Alder", "Brisk"]
    assert record["gold_answer"] == "the Fell hills"
    assert {"answer", "latency_ms"} <= set(record)


def test_evaluate_method_recounts_the_context_against_the_budget():
    long_context = "word " * 40  # far over 16 tokens although the pipeline claims 3
    pipeline = RecordingPipeline(context=long_context)
    result = evaluate_method(
        get_method("flat-bm25"),
        QUESTIONS,
        FakeIndex(lexical={"b#0": 1.0}),
        SealConfig(k=1, budget=16),
        pipeline.as_pipeline(),
    )
    assert result.metrics["budget_violations"] == 2
    assert result.records[0]["scores"]["budget_violation"] is True


# --- where packed spans lie, and declines --------------------------------------

DOC = "First one. Second one. Third one.  Fourth one. Fifth one."
# Two chunks of doc "x-1.txt" (a dash and a dot in the doc id), two spaces between them.
SPANNED = [
    Chunk("x-1.txt#0", "x-1.txt", "X", (), 0, 0, 33, DOC[0:33], 9, ((0, 11), (11, 23), (23, 33))),
    Chunk("x-1.txt#1", "x-1.txt", "X", (), 1, 35, 57, DOC[35:57], 6, ((0, 12), (12, 22))),
]


class SpannedIndex:
    def get_chunk(self, chunk_id):
        return next(c for c in SPANNED if c.chunk_id == chunk_id)

    def doc_chunks(self, doc_id):
        return [c for c in SPANNED if c.doc_id == doc_id]


@pytest.mark.parametrize(
    ("span_id", "chunk_ids", "text"),
    [
        ("x-1.txt#0", ["x-1.txt#0"], DOC[0:33]),
        ("x-1.txt#0:1", ["x-1.txt#0"], "Second one. "),
        ("x-1.txt#0:1-2", ["x-1.txt#0"], "Second one. Third one."),
        ("x-1.txt#1:0-1", ["x-1.txt#1"], "Fourth one. Fifth one."),
        ("x-1.txt#0:2-x-1.txt#1:0", ["x-1.txt#0", "x-1.txt#1"], "Third one.  Fourth one. "),
    ],
)
def test_span_id_range_reads_every_span_id_form(span_id, chunk_ids, text):
    start, end = span_id_range(span_id, chunk_ids, SpannedIndex())
    assert DOC[start:end] == text


@pytest.mark.parametrize(
    "span_id", ["x-1.txt#0:a", "other#0:1", "x-1.txt#0:1-z#3:1", "x-1.txt#0:7"]
)
def test_span_id_range_refuses_ids_it_cannot_read(span_id):
    with pytest.raises(ValueError):
        span_id_range(span_id, ["x-1.txt#0"], SpannedIndex())


def test_packed_ranges_come_from_the_selected_decisions_of_the_last_pack_event():
    def decision(span_id, verdict, chunk_ids=("x-1.txt#0",)):
        return {
            "span_id": span_id,
            "doc_id": "x-1.txt",
            "chunk_ids": list(chunk_ids),
            "decision": verdict,
        }

    log = [
        {"node": "search", "kind": "retrieved", "data": {}},
        {
            "node": "pack",
            "kind": "pack",
            "data": {"decisions": [decision("x-1.txt#0", "selected")]},
        },
        {
            "node": "pack",
            "kind": "pack",
            "data": {
                "decisions": [
                    decision("x-1.txt#1:1", "selected", ["x-1.txt#1"]),
                    decision("x-1.txt#0:0", "selected"),
                    decision("x-1.txt#0:2", "budget_exceeded"),
                ]
            },
        },
    ]
    ranges = packed_ranges_from_trace(log, SpannedIndex())
    assert ranges == [("x-1.txt", 0, 11), ("x-1.txt", 47, 57)]  # in reading order
    assert packed_ranges_from_trace([], SpannedIndex()) == []


def test_declined_reads_the_answer_event_flag():
    answer = {"node": "generate", "kind": "answer"}
    assert declined_from_log([{**answer, "data": {"insufficient": True}}])
    assert not declined_from_log([{**answer, "data": {"insufficient": False}}])
    assert not declined_from_log([{"llm_calls": 0}])


def test_flat_methods_pass_on_packed_ranges_and_declines():
    class Declining(RecordingPipeline):
        def answer_from_evidence(self, question, chunks, index, config):
            result = super().answer_from_evidence(question, chunks, index, config)
            return {
                **result,
                "insufficient": True,
                "packed": [{"doc_id": "b", "start": 2, "end": 9}],
            }

    output = get_method("flat-bm25").build(
        FakeIndex(lexical={"b#0": 1.0}), SealConfig(k=1), Declining().as_pipeline()
    )("q")
    assert output.declined
    assert output.packed == (("b", 2, 9),)


def test_graph_method_reads_declines_and_packed_spans_from_its_log():
    log = [
        {
            "node": "pack",
            "kind": "pack",
            "data": {
                "decisions": [
                    {
                        "span_id": "x-1.txt#0:1",
                        "doc_id": "x-1.txt",
                        "chunk_ids": ["x-1.txt#0"],
                        "decision": "selected",
                    }
                ]
            },
        },
        {"node": "generate", "kind": "answer", "data": {"insufficient": True}},
    ]
    result = {**GRAPH_RESULT, "evidence": [], "seal_log": log}

    class Index(SpannedIndex):
        def get_chunks(self, ids):
            return [self.get_chunk(i) for i in ids]

    pipeline = RecordingPipeline(graph_result=result)
    output = get_method("seal").build(Index(), SealConfig(), pipeline.as_pipeline())("q")
    assert output.declined
    assert output.packed == (("x-1.txt", 11, 23),)


def test_default_pipeline_records_packed_ranges_and_declines(tiny_index):
    from sealgraph.graph.steps import answer_from_evidence
    from sealgraph.ledger.knowledge import CorpusKnowledge

    pipeline = default_pipeline()
    question = "Who designed the Lumen Lamp?"
    chunks = tiny_index.get_chunks([h.chunk_id for h in tiny_index.search_hybrid(question, 3)])
    config = SealConfig(k=3, budget=300)
    result = pipeline.answer_from_evidence(question, chunks, tiny_index, config)
    plain = answer_from_evidence(
        question, chunks, tiny_index, config, knowledge=CorpusKnowledge(tiny_index)
    )
    assert result["answer"] == plain["answer"]
    assert result["context"] == plain["context"]
    assert isinstance(result["insufficient"], bool)
    assert result["packed"]
    for span in result["packed"]:
        doc = tiny_index.doc_chunks(span["doc_id"])
        text = "".join(c.text for c in doc)  # the tiny corpus chunks tile their documents
        assert (
            text[span["start"] - doc[0].start : span["end"] - doc[0].start].strip()
            in result["context"]
        )


def test_short_answer_is_read_from_the_answer_event():
    from sealgraph.eval.methods import short_answer_from_log

    log = [
        {"node": "search", "kind": "retrieved", "data": {}},
        {"node": "generate", "kind": "answer", "data": {"short": "Dana Whitcombe"}},
    ]
    assert short_answer_from_log(log) == "Dana Whitcombe"
    assert short_answer_from_log(log[:1]) == ""
