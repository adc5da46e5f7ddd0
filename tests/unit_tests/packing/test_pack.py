"""End-to-end packing: budgets, traces, span reconstruction, strategies, inputs."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fakes import make_doc

from sealgraph.errors import InputError
from sealgraph.packing import DECISIONS, PackConfig, pack
from sealgraph.packing.render import render_block
from sealgraph.text.tokens import TokenCounter, token_counter
from sealgraph.types import Chunk, Document

COUNTER = token_counter()

LAMP = [
    "The Lumen Lamp is a desk lamp designed by Ada Brightwater in 1998. ",
    "It was produced by Northwind Studio for export. ",
    "The lamp has a steel hinge and a linen shade. ",
    "Early models were painted green. ",
    "A second edition followed after a long pause. ",
]
STUDIO = [
    "Northwind Studio is a design firm founded in Port Ellis in 1972. ",
    "The studio employs forty designers. ",
    "Its founder was Mara Quill, a carpenter. ",
    "The firm also makes oak chairs.",
]
TOWN = [
    "Port Ellis is a harbour town in the province of Valmora. ",
    "The town has a population of 12,000. ",
    "Fishing was its main trade for centuries. ",
    "A ferry links it to Greyhaven.",
]
BRASS = [
    "Brass is an alloy of copper and zinc. ",
    "It is used for hinges, locks and musical instruments. ",
    "Brass has been made since antiquity.",
]


def chunks_of(chunks, doc_id):
    return [c for c in chunks if c.doc_id == doc_id]


def neighbor_fn(chunks):
    by_id = {c.chunk_id: c for c in chunks}
    calls = []

    def neighbors(chunk_id, before, after):
        calls.append((chunk_id, before, after))
        c = by_id[chunk_id]
        return [
            o
            for o in chunks
            if o.doc_id == c.doc_id and c.order - before <= o.order <= c.order + after
        ]

    neighbors.calls = calls
    return neighbors


def fake_embed(dim=16):
    """Deterministic bag-of-words hashing embedder (normalised rows)."""

    def embed(texts):
        rows = []
        for t in texts:
            v = np.zeros(dim)
            for w in t.lower().split():
                h = int(hashlib.md5(w.strip(".,").encode()).hexdigest(), 16)
                v[h % dim] += 1.0
            n = np.linalg.norm(v)
            rows.append(v / n if n else v)
        return np.array(rows)

    return embed


QUESTION = (
    "In which province is the town where the studio that produced the Lumen Lamp was founded?"
)


def evidence():
    docs = [make_doc("lamp", "Lumen Lamp", LAMP), make_doc("studio", "Northwind Studio", STUDIO)]
    docs += [make_doc("town", "Port Ellis", TOWN), make_doc("brass", "Brass", BRASS)]
    return {d.doc_id: d for d, _ in docs}, [c for _, cs in docs for c in cs]


def assert_consistent(result, budget, documents, counter=COUNTER):
    assert counter.count(result.context) == result.tokens <= budget
    assert [s.n for s in result.spans] == list(range(1, len(result.spans) + 1))
    selected = [d.span_id for d in result.trace if d.decision == "selected"]
    assert sorted(selected) == sorted(s.span_id for s in result.spans)
    assert len({d.span_id for d in result.trace}) == len(result.trace)
    assert all(d.decision in DECISIONS for d in result.trace)
    for span in result.spans:
        assert span.text == documents[span.doc_id].text[span.start : span.end]
        title = span.title or span.doc_id  # the header falls back to the doc id
        assert render_block(span.n, title, span.section, span.text) in result.context
        assert span.scores.final == pytest.approx(
            (span.scores.relevance + span.scores.prior + span.scores.boost)
            * span.scores.length_penalty
        )


@pytest.mark.parametrize("strategy", ["auto", "segments", "window", "bubble"])
def test_every_strategy_packs_a_consistent_cited_context(strategy):
    documents, chunks = evidence()
    result = pack(
        QUESTION, chunks, budget=400, counter=COUNTER, config=PackConfig(strategy=strategy)
    )
    assert result.strategy == strategy
    assert result.spans
    assert_consistent(result, 400, documents)
    # The answer-bearing sentence survives in every strategy.
    assert "province of Valmora" in result.context


def test_auto_keeps_answer_chain_and_drops_the_irrelevant():
    documents, chunks = evidence()
    # The bubble stage alone (the fill stage would spend the rest of the budget).
    result = pack(QUESTION, chunks, budget=400, counter=COUNTER, config=PackConfig(fill=False))
    for sentence in (LAMP[0], LAMP[1], STUDIO[0], TOWN[0]):
        assert sentence.strip() in result.context
    assert "musical instruments" not in result.context
    assert result.tokens < sum(c.n_tokens for c in chunks)
    low = [d for d in result.trace if d.decision == "low_relevance"]
    assert low and all(d.source == "gap" for d in low)
    # The trace accounts for every evidence sentence: selected spans and gaps tile it.
    assert {d.doc_id for d in result.trace} == set(documents)
    for doc_id in documents:
        ids = sorted(
            (d.span_id for d in result.trace if d.doc_id == doc_id),
            key=lambda s: int(s.split(":")[1].split("-")[0]),
        )
        first = int(ids[0].split(":")[1].split("-")[0])
        last = ids[-1].split(":")[1].split("-")[-1]
        assert first == 0
        assert int(last) == len(chunks_of(chunks, doc_id)[0].sentences) - 1


def test_spans_are_ordered_for_reading_not_by_score():
    _, chunks = evidence()
    # Evidence order: brass first, town last; the town's lead scores highest.
    reordered = [c for c in chunks if c.doc_id == "brass"] + [
        c for c in chunks if c.doc_id != "brass"
    ]
    result = pack(QUESTION, reordered, budget=400, counter=COUNTER, config=PackConfig())
    doc_order = [s.doc_id for s in result.spans]
    evidence_order = list(dict.fromkeys(c.doc_id for c in reordered))
    assert doc_order == sorted(doc_order, key=evidence_order.index)
    finals = [s.scores.final for s in result.spans]
    assert finals != sorted(finals, reverse=True)
    positions = [(evidence_order.index(s.doc_id), s.start) for s in result.spans]
    assert positions == sorted(positions)


def test_exact_span_reconstruction_across_chunks_with_neighbours():
    doc, chunks = make_doc("lamp", "Lumen Lamp", LAMP, per_chunk=2)
    neighbors = neighbor_fn(chunks)
    question = "Who designed the Lumen Lamp with a steel hinge, and who produced it?"
    config = PackConfig(strategy="segments", rse_threshold=0.0)
    result = pack(
        question, [chunks[1]], budget=400, counter=COUNTER, config=config, neighbors=neighbors
    )
    assert neighbors.calls == [("lamp#1", 1, 1)]
    assert_consistent(result, 400, {"lamp": doc})
    crossing = [s for s in result.spans if len(s.chunk_ids) > 1]
    assert crossing, "a segment should grow from the evidence chunk into its neighbours"
    for span in crossing:
        assert span.text == doc.text[span.start : span.end]
        assert span.text == "".join(LAMP)[span.start : span.end]
    # The lead sentence lives in the neighbour chunk #0 and is reached through it.
    assert LAMP[0].strip() in result.context


def test_neighbours_are_not_used_by_the_bubble_strategy():
    _, chunks = make_doc("lamp", "Lumen Lamp", LAMP, per_chunk=2)
    neighbors = neighbor_fn(chunks)
    result = pack(
        "steel hinge",
        [chunks[1]],
        budget=400,
        counter=COUNTER,
        config=PackConfig(strategy="bubble"),
        neighbors=neighbors,
    )
    assert neighbors.calls == []
    assert [s.span_id for s in result.spans] == ["lamp#1"]


def test_a_gap_between_chunks_breaks_segments():
    # Chunk #1 starts two characters after chunk #0 ends (whitespace the index dropped).
    _, chunks = make_doc("lamp", "Lumen Lamp", LAMP, per_chunk=2)
    c0, c1 = chunks[0], chunks[1]
    shifted = Chunk(
        c1.chunk_id,
        c1.doc_id,
        c1.title,
        c1.section,
        c1.order,
        c1.start + 2,
        c1.end + 2,
        c1.text,
        c1.n_tokens,
        c1.sentences,
    )
    config = PackConfig(strategy="segments", rse_threshold=-5.0)
    result = pack("lamp", [c0, shifted], budget=400, counter=COUNTER, config=config)
    assert all(len(s.chunk_ids) == 1 for s in result.spans)


def test_budget_too_small_gives_empty_context_and_all_budget_exceeded():
    _, chunks = evidence()
    for strategy in ("auto", "bubble", "segments", "window"):
        result = pack(
            QUESTION, chunks, budget=3, counter=COUNTER, config=PackConfig(strategy=strategy)
        )
        assert result.context == "" and result.tokens == 0 and result.spans == ()
        assert result.trace
        assert {d.decision for d in result.trace} == {"budget_exceeded"}
        assert "below the smallest span" in result.trace[0].reason


def test_zero_budget_and_empty_evidence():
    _, chunks = evidence()
    result = pack(QUESTION, chunks, budget=0, counter=COUNTER)
    assert result.context == "" and result.tokens == 0
    empty = pack(QUESTION, [], budget=100, counter=COUNTER)
    assert empty.context == "" and empty.trace == () and empty.spans == ()


def test_tight_budget_keeps_the_best_spans_and_reports_the_rest():
    documents, chunks = evidence()
    result = pack(QUESTION, chunks, budget=60, counter=COUNTER, config=PackConfig())
    assert_consistent(result, 60, documents)
    assert result.spans
    assert "budget_exceeded" in result.decisions() and result.decisions()["budget_exceeded"] > 0


class MergingCounter(TokenCounter):
    """A counter under which a whole context costs more than its blocks.

    Every block separator costs 12 extra tokens, standing in for BPE merges across
    boundaries that a sum of per-block counts cannot see.
    """

    def count(self, text):
        return super().count(text) + 12 * text.count("\n\n")


def test_final_render_overshoot_drops_the_lowest_marginal_value_span_not_the_last():
    counter = MergingCounter()
    _, lamp = make_doc("lamp", "Lumen Lamp", LAMP[:1])
    _, brass = make_doc("brass", "Brass", ["Brass is an alloy."])
    _, town = make_doc("town", "Port Ellis", TOWN[:1])
    chunks = [brass[0], lamp[0], town[0]]  # the weak span renders first
    config = PackConfig(strategy="bubble")
    question = "Which lamp designed in 1998 is sold in the harbour town in Valmora?"
    roomy = pack(question, chunks, budget=1000, counter=counter, config=config)
    assert [s.doc_id for s in roomy.spans] == ["brass", "lamp", "town"]
    blocks = sum(counter.count(render_block(1, s.title, "", s.text)) for s in roomy.spans)
    # Enough for the three blocks as counted one by one, not for the rendered whole.
    budget = blocks + 2
    result = pack(question, chunks, budget=budget, counter=counter, config=config)
    assert result.tokens <= budget == blocks + 2
    assert [s.doc_id for s in result.spans] == ["lamp", "town"]
    dropped = {d.doc_id: d for d in result.trace}["brass"]
    assert dropped.decision == "budget_exceeded"
    assert "final render" in dropped.reason


def test_redundant_duplicate_document_is_gated():
    _, chunks = evidence()
    _, copy = make_doc("lamp-copy", "Lumen Lamp (mirror)", LAMP)
    result = pack(
        "Who designed the Lumen Lamp?",
        chunks[:5] + copy,
        budget=400,
        counter=COUNTER,
        config=PackConfig(strategy="bubble"),
    )
    decisions = {d.span_id: d for d in result.trace}
    assert decisions["lamp#0"].decision == "selected"
    assert decisions["lamp-copy#0"].decision == "too_redundant"


def test_doc_cap_and_low_relevance_decisions():
    _, lamp = make_doc("lamp", "Lumen Lamp", LAMP, per_chunk=1, section=("Design",))
    _, town = make_doc("town", "Port Ellis", TOWN, per_chunk=2, section=("Geography",))
    config = PackConfig(strategy="bubble", per_doc_cap=2, delta=1.0)
    result = pack(
        "Who designed the Lumen Lamp, and where is Port Ellis?",
        lamp + town,
        budget=110,
        counter=COUNTER,
        config=config,
    )
    kinds = result.decisions()
    assert kinds["selected"] == 4  # two per document
    assert kinds["doc_cap"] == len(lamp) - 2
    assert {s.doc_id for s in result.spans} == {"lamp", "town"}
    high = PackConfig(strategy="bubble", min_relevance=10.0)
    result = pack("anything", lamp, budget=400, counter=COUNTER, config=high)
    assert {d.decision for d in result.trace} == {"low_relevance"}
    assert result.context == ""


def test_section_budget_decision_under_quota_pressure():
    _, design = make_doc("a", "Lumen Lamp", LAMP, per_chunk=1, section=("Design",))
    _, other = make_doc("b", "Port Ellis", TOWN[:1], section=("Geography",))
    config = PackConfig(
        strategy="bubble", per_doc_cap=10, delta=1.0, section_budgets={"design": 0.3}
    )
    block = COUNTER.count(render_block(9, "Lumen Lamp", "Design", LAMP[0]))
    result = pack(
        "Lumen Lamp designed steel hinge green models edition Port Ellis",
        design + other,
        budget=3 * block + 30,
        counter=COUNTER,
        config=config,
    )
    assert result.decisions()["section_budget"] >= 1
    reason = next(d.reason for d in result.trace if d.decision == "section_budget")
    assert "quota" in reason and "slack pool" in reason


def test_focus_terms_and_answer_type_boost_units():
    _, town = make_doc("town", "Port Ellis", TOWN)

    def boost_of(result, needle):
        return next(d.scores.boost for d in result.trace if needle in town_text(d.span_id))

    def town_text(span_id):
        rng = span_id.split(":")[1].split("-")
        return "".join(TOWN[int(rng[0]) : int(rng[-1]) + 1])

    question = "Tell me about the town."
    no_fill = PackConfig(fill=False)  # boosts of the bubble's spans, not of filled runs
    plain = pack(question, town, budget=400, counter=COUNTER, config=no_fill)
    focused = pack(
        question,
        town,
        budget=400,
        counter=COUNTER,
        config=no_fill,
        focus_terms=["Greyhaven"],
        answer_type="number",
    )
    assert boost_of(plain, "Greyhaven") == 0.0
    assert boost_of(focused, "Greyhaven") == pytest.approx(0.1)
    assert boost_of(focused, "12,000") >= 0.1
    # A strong enough boost makes the focus sentence answer-bearing: it is packed.
    strong = pack(
        question,
        town,
        budget=400,
        counter=COUNTER,
        focus_terms=["Greyhaven"],
        config=PackConfig(answerability_boost=0.6),
    )
    assert "Greyhaven" not in plain.context
    assert "Greyhaven" in strong.context


def test_relevance_given_per_chunk_or_by_id_and_validated():
    _, chunks = evidence()
    by_list = pack(QUESTION, chunks, budget=400, counter=COUNTER, relevance=[1.0] * len(chunks))
    by_map = pack(
        QUESTION, chunks, budget=400, counter=COUNTER, relevance={c.chunk_id: 1.0 for c in chunks}
    )
    assert by_list == by_map
    with pytest.raises(InputError, match="relevance has 2 scores"):
        pack(QUESTION, chunks, budget=400, counter=COUNTER, relevance=[1.0, 0.5])
    with pytest.raises(InputError, match="budget"):
        pack(QUESTION, chunks, budget=-1, counter=COUNTER)
    # A missing score falls back to lexical relevance for every chunk.
    partial = [None] + [1.0] * (len(chunks) - 1)
    lexical = pack(QUESTION, chunks, budget=400, counter=COUNTER)
    assert pack(QUESTION, chunks, budget=400, counter=COUNTER, relevance=partial) == lexical


def test_packing_is_deterministic():
    _, chunks = evidence()
    first = pack(QUESTION, chunks, budget=150, counter=COUNTER)
    second = pack(QUESTION, chunks, budget=150, counter=TokenCounter())
    assert first == second
    assert first.to_dict() == second.to_dict()


def test_embeddings_drive_similarity_and_the_semantic_gate():
    documents, chunks = evidence()
    embed = fake_embed()
    result = pack(QUESTION, chunks, budget=400, counter=COUNTER, embed=embed)
    assert_consistent(result, 400, documents)
    # An embedder that declines (None) is the lexical path.
    assert pack(QUESTION, chunks, budget=400, counter=COUNTER, embed=lambda t: None) == pack(
        QUESTION, chunks, budget=400, counter=COUNTER
    )
    _, copy = make_doc("copy", "Lamp mirror", LAMP)
    gated = pack(
        "Who designed the Lumen Lamp?",
        chunks[:1] + copy,
        budget=400,
        counter=COUNTER,
        config=PackConfig(strategy="bubble", delta=1.0, semantic_delta=0.9),
        embed=embed,
    )
    assert {d.span_id: d.decision for d in gated.trace}["copy#0"] == "too_redundant"
    with pytest.raises(InputError, match="one row per text"):
        pack(QUESTION, chunks, budget=400, counter=COUNTER, embed=lambda t: np.zeros((1, 4)))


WORDS = [
    "lamp",
    "studio",
    "town",
    "brass",
    "copper",
    "harbour",
    "ferry",
    "design",
    "oak",
    "chair",
    "green",
    "hinge",
    "river",
]


@st.composite
def evidence_sets(draw):
    chunks, documents = [], {}
    for d in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 7))
        sentences = [
            " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))).capitalize()
            + draw(st.sampled_from([". ", ".\n", "! ", ".  "]))
            for _ in range(n)
        ]
        title = draw(st.sampled_from(["Lamp", "Harbour", "", "Copper (metal)"]))
        section = draw(st.sampled_from([(), ("Intro",), ("History", "Early")]))
        doc, cs = make_doc(
            f"d{d}", title, sentences, per_chunk=draw(st.integers(1, 3)), section=section
        )
        documents[doc.doc_id] = doc
        chunks.extend(draw(st.permutations(cs))[: draw(st.integers(1, len(cs)))])
    return documents, chunks


@settings(max_examples=60, deadline=None)
@given(
    evidence_sets(),
    st.integers(0, 260),
    st.sampled_from(["auto", "segments", "window", "bubble"]),
    st.sampled_from([PackConfig(), PackConfig(rse_threshold=0.0, default_section_share=0.2)]),
)
def test_budget_is_never_exceeded(evidence_set, budget, strategy, base):
    documents, chunks = evidence_set
    config = base.model_copy(update={"strategy": strategy})
    neighbors = neighbor_fn([c for c in chunks])
    result = pack(
        "Which lamp is made of copper near the harbour?",
        chunks,
        budget=budget,
        counter=COUNTER,
        config=config,
        neighbors=neighbors,
    )
    assert_consistent(result, budget, documents)
    if result.spans:
        assert result.context.startswith("[1] ")


def test_when_no_unit_is_relevant_each_document_keeps_its_best_unit():
    documents, chunks = evidence()
    config = PackConfig(rse_threshold=5.0, fill=False)
    result = pack("quantum chromodynamics", chunks, budget=400, counter=COUNTER, config=config)
    assert_consistent(result, 400, documents)
    fallback = [d for d in result.trace if d.source == "fallback"]
    assert sorted(d.doc_id for d in fallback) == sorted(documents)
    # With nothing relevant, the lead sentence (prior) is each document's best unit.
    assert all(d.span_id.endswith("#0:0") for d in fallback)


def make_sectioned_doc(doc_id, title, sections):
    """A Markdown-like document: one chunk per (heading chain, sentences) section."""
    text, chunks, offset = "", [], 0
    for order, (section, sentences) in enumerate(sections):
        chunk_text = "".join(sentences)
        spans, at = [], 0
        for s in sentences:
            spans.append((at, at + len(s)))
            at += len(s)
        chunks.append(
            Chunk(
                f"{doc_id}#{order}",
                doc_id,
                title,
                tuple(section),
                order,
                offset,
                offset + len(chunk_text),
                chunk_text,
                COUNTER.count(chunk_text),
                tuple(spans),
            )
        )
        text += chunk_text
        offset += len(chunk_text)
    return Document(doc_id=doc_id, title=title, text=text), chunks


def test_markdown_headings_are_not_repeated_and_the_lead_skips_them():
    doc, chunks = make_sectioned_doc(
        "lamp",
        "Lumen Lamp",
        [
            (("Lumen Lamp",), ["# Lumen Lamp\n\n", LAMP[0], LAMP[2]]),
            (("Lumen Lamp", "Production"), ["## Production\n\n", LAMP[1], LAMP[3]]),
        ],
    )
    result = pack(
        "Which studio produced the Lumen Lamp for export?",
        chunks,
        budget=400,
        counter=COUNTER,
        config=PackConfig(),
    )
    assert_consistent(result, 400, {"lamp": doc})
    assert "#" not in result.context
    assert all(not s.text.lstrip().startswith("#") for s in result.spans)
    assert "[1] Lumen Lamp\n" + LAMP[0].strip() in result.context
    assert "Lumen Lamp > Production\n" in result.context
    assert "Lumen Lamp > Lumen Lamp" not in result.context
    lead = next(s for s in result.spans if LAMP[0].strip() in s.text)
    assert lead.scores.prior >= PackConfig().lead_prior
    assert {s.section for s in result.spans} == {"", "Production"}


def test_neighbour_text_alone_is_kept_only_for_the_lead():
    doc, chunks = make_sectioned_doc(
        "town",
        "Port Ellis",
        [
            (("Intro",), [TOWN[0]]),
            (("Trade",), ["Fishing and ferries were the main trade of Port Ellis. "]),
            (("Transport",), [TOWN[3]]),
        ],
    )
    neighbors = neighbor_fn(chunks)
    config = PackConfig(neighbor_chunks=2, rse_threshold=0.3)
    result = pack(
        "What was the main trade of Port Ellis, and where does its ferry go?",
        [chunks[2]],
        budget=400,
        counter=COUNTER,
        config=config,
        neighbors=neighbors,
    )
    assert_consistent(result, 400, {"town": doc})
    assert TOWN[3].strip() in result.context  # the evidence
    assert TOWN[0].strip() in result.context  # the lead, from a neighbour chunk
    assert "main trade" not in result.context  # relevant, but neighbour-only
    assert all(d.chunk_ids != ("town#1",) for d in result.trace)
