"""The fill stage: the budget is spent on the best remaining evidence sentences."""

from __future__ import annotations

from sealgraph.packing import DECISIONS, PackConfig, pack
from sealgraph.packing.fill import covered_runs, fill_units
from sealgraph.text.tokens import token_counter
from sealgraph.types import Chunk

COUNTER = token_counter()

CLAUSES = [
    "1. Confidential Information means all information disclosed by the Discloser. ",
    "It includes trade secrets, pricing, customer lists and source code. ",
    "2. The Recipient shall hold Confidential Information in strict confidence. ",
    "The Recipient shall not disclose it to any third party without prior written consent. ",
    "3. This Agreement is governed by the laws of the State of Delaware. ",
    "4. Each party bears its own costs of negotiating this Agreement. ",
    "5. Notices must be sent in writing to the addresses above. ",
]
QUESTION = "What must the Recipient do with Confidential Information?"


def nda_chunk() -> Chunk:
    text = "".join(CLAUSES)
    spans, at = [], 0
    for c in CLAUSES:
        spans.append((at, at + len(c)))
        at += len(c)
    return Chunk(
        chunk_id="nda#0",
        doc_id="nda",
        title="NDA",
        section=(),
        order=0,
        start=0,
        end=len(text),
        text=text,
        n_tokens=COUNTER.count(text),
        sentences=tuple(spans),
    )


def strict(**kw) -> PackConfig:
    # A threshold the clauses' scores do not reach: the bubble alone keeps little.
    return PackConfig(rse_threshold=0.9, **kw)


def test_the_budget_is_used_when_good_units_remain():
    chunk = nda_chunk()
    off = pack(QUESTION, [chunk], budget=400, counter=COUNTER, config=strict(fill=False))
    on = pack(QUESTION, [chunk], budget=400, counter=COUNTER, config=strict())
    assert on.tokens > off.tokens
    # Everything fits: every sentence is packed, in one block (no repeated headers).
    assert len(on.spans) == 1
    assert on.spans[0].text == chunk.text
    assert on.tokens == COUNTER.count(on.context) <= 400


def test_fill_never_exceeds_the_budget_and_takes_the_most_relevant_first():
    chunk = nda_chunk()
    full = COUNTER.count(pack(QUESTION, [chunk], budget=400, counter=COUNTER).context)
    for budget in range(0, full + 5, 3):
        result = pack(QUESTION, [chunk], budget=budget, counter=COUNTER, config=strict())
        assert COUNTER.count(result.context) == result.tokens <= budget
    mid = pack(QUESTION, [chunk], budget=full // 2, counter=COUNTER, config=strict())
    assert "strict confidence" in mid.context
    assert "Notices must be sent" not in mid.context


def test_the_trace_says_why_each_sentence_was_left_out():
    chunk = nda_chunk()
    full = COUNTER.count(pack(QUESTION, [chunk], budget=400, counter=COUNTER).context)
    result = pack(QUESTION, [chunk], budget=full // 2, counter=COUNTER, config=strict())
    assert all(d.decision in DECISIONS for d in result.trace)
    assert len({d.span_id for d in result.trace}) == len(result.trace)
    selected = sorted(d.span_id for d in result.trace if d.decision == "selected")
    assert selected == sorted(s.span_id for s in result.spans)
    dropped = [d for d in result.trace if d.decision != "selected"]
    assert dropped
    assert all(d.reason for d in dropped)
    assert any(d.decision == "budget_exceeded" and "left of the" in d.reason for d in dropped)
    # Every sentence is accounted for: packed, or in a decision saying why not.
    covered = set()
    for d in result.trace:
        rng = d.span_id.split(":")[1].split("-")
        covered.update(range(int(rng[0]), int(rng[-1]) + 1))
    assert covered == set(range(len(CLAUSES)))


def test_relative_floor_leaves_weak_sentences_out():
    chunk = nda_chunk()
    result = pack(
        QUESTION, [chunk], budget=400, counter=COUNTER, config=strict(fill_relative_floor=1.0)
    )
    low = [d for d in result.trace if d.decision == "low_relevance"]
    assert low and all("best sentence relevance" in d.reason for d in low)
    assert result.tokens < COUNTER.count(chunk.text)


def test_fill_units_is_greedy_by_value_and_gates_redundancy():
    value = [0.9, 0.1, 0.5, 0.5]
    content = [frozenset("ab"), frozenset("cd"), frozenset("ef"), frozenset("ef")]

    def cost(selected):
        return 10 * len(selected)

    choices, packed, used = fill_units(
        [1, 2, 3],
        [0],
        value=value,
        content=content,
        unit_tokens=[10, 10, 10, 10],
        adjacent=lambda i, sel: False,
        cost=cost,
        used=10,
        budget=25,
        delta=0.5,
        mmr_lambda=0.7,
        adjacency_bonus=0.0,
    )
    verdicts = {c.index: c.decision for c in choices}
    assert verdicts == {2: "selected", 3: "too_redundant", 1: "budget_exceeded"}
    assert packed == {0, 2} and used == 20 <= 25


def test_covered_runs_merge_neighbours_but_not_across_breaks():
    assert covered_runs(range(6), (3,), {0, 1, 2, 3, 5}) == [[0, 1, 2], [3], [5]]


def test_spans_larger_than_the_budget_leave_fill_to_cut_sentences_from_them():
    # One chunk, a question every clause shares a word with: the segment is the whole
    # chunk, larger than the budget. The context must not come out empty: fill packs
    # the best single sentences that fit.
    chunk = nda_chunk()
    budget = chunk.n_tokens // 2
    config = PackConfig(rse_threshold=-5.0)
    result = pack(
        "Confidential Information Recipient Agreement",
        [chunk],
        budget=budget,
        counter=COUNTER,
        config=config,
    )
    assert result.context and 0 < result.tokens <= budget
    assert "Confidential Information" in result.context
    # Without fill there is nothing smaller to cite: the span is refused whole.
    off = pack(
        "Confidential Information Recipient Agreement",
        [chunk],
        budget=budget,
        counter=COUNTER,
        config=PackConfig(rse_threshold=-5.0, fill=False),
    )
    assert off.context == "" and {d.decision for d in off.trace} == {"budget_exceeded"}
