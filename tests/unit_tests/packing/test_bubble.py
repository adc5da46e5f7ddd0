"""Context-bubble selection: budgets, section quotas and slack, gates, MMR order."""

from __future__ import annotations

import pytest

from sealgraph.packing.bubble import BubbleItem, marginal_values, section_quotas, select_spans
from sealgraph.packing.config import PackConfig


def zeros(n):
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]


def by_index(choices):
    return {c.index: c for c in choices}


def item(span_id, tokens, final, *, doc="d", section=""):
    return BubbleItem(span_id, doc, section, tokens, final)


def test_section_quota_defers_and_slack_pool_admits_when_room_is_left():
    items = [
        item("a1", 40, 0.9, doc="x", section="A"),
        item("a2", 40, 0.8, doc="y", section="A"),
        item("b1", 30, 0.5, doc="z", section="B"),
    ]
    config = PackConfig(section_budgets={"A": 0.5}, default_section_share=0.3)
    choices = select_spans(items, budget=120, config=config, overlap=zeros(3))
    got = by_index(choices)
    assert [c.index for c in choices] == [0, 2, 1]  # a2 deferred behind b1
    assert got[0].decision == "selected"
    assert got[2].decision == "selected"
    assert got[1].decision == "selected"
    assert "slack pool" in got[1].reason


def test_section_quota_without_slack_is_a_section_budget_decision():
    items = [
        item("a1", 40, 0.9, doc="x", section="A"),
        item("a2", 40, 0.8, doc="y", section="A"),
        item("b1", 30, 0.5, doc="z", section="B"),
    ]
    config = PackConfig(section_budgets={"A": 0.5}, default_section_share=0.3)
    got = by_index(select_spans(items, budget=100, config=config, overlap=zeros(3)))
    # A may spend 50 in the first pass: a1 (40) fits, a2 would make 80. B spends 30 of 30.
    # The slack pool then has 100 - 70 = 30 < 40 tokens left.
    assert got[0].decision == "selected"
    assert got[2].decision == "selected"
    assert got[1].decision == "section_budget"
    assert "quota 50" in got[1].reason


def test_unspent_section_share_flows_to_other_sections():
    # A reserves half the budget but only needs 10 tokens; B's quota is 30.
    items = [item("a", 10, 0.3, doc="da", section="A")]
    items += [item(f"b{i}", 30, 0.9 - i / 10, doc=f"d{i}", section="B") for i in range(3)]
    config = PackConfig(section_budgets={"A": 0.5, "B": 0.3})
    choices = select_spans(items, budget=100, config=config, overlap=zeros(4))
    got = by_index(choices)
    assert [got[i].decision for i in range(4)] == ["selected"] * 4
    assert "slack pool" not in got[1].reason
    assert "slack pool" in got[2].reason and "slack pool" in got[3].reason
    # The slack pass comes after the first pass: b1 and b2 are decided last.
    assert [c.index for c in choices][-2:] == [2, 3]


def test_section_keys_match_case_insensitively_and_most_specific_first():
    items = [
        item("s1", 10, 1.0, section="Chapter 2 > Results"),
        item("s2", 10, 1.0, section="Chapter 2 > Results > Tables"),
        item("s3", 10, 1.0, section="Intro"),
    ]
    config = PackConfig(
        section_budgets={"results": 0.4, "results > tables": 0.1}, default_section_share=0.2
    )
    key_of, quota = section_quotas(items, 100, config)
    assert quota[key_of["Chapter 2 > Results"]] == 40
    assert quota[key_of["Chapter 2 > Results > Tables"]] == 10
    assert quota[key_of["Intro"]] == 20


def test_redundancy_gate_drops_spans_overlapping_the_bubble():
    items = [item("x", 10, 0.9, doc="a"), item("y", 10, 0.8, doc="b"), item("z", 10, 0.7, doc="c")]
    overlap = [[1.0, 0.6, 0.1], [0.6, 1.0, 0.1], [0.1, 0.1, 1.0]]
    got = by_index(select_spans(items, budget=100, config=PackConfig(delta=0.5), overlap=overlap))
    assert got[0].decision == "selected"
    assert got[1].decision == "too_redundant"
    assert "0.60" in got[1].reason
    assert got[2].decision == "selected"
    # Below δ the same span is admitted.
    got = by_index(select_spans(items, budget=100, config=PackConfig(delta=0.7), overlap=overlap))
    assert got[1].decision == "selected"


def test_semantic_gate_applies_only_when_configured_and_embeddings_exist():
    items = [item("x", 10, 0.9, doc="a"), item("y", 10, 0.8, doc="b")]
    semantic = [[1.0, 0.95], [0.95, 1.0]]
    on = PackConfig(semantic_delta=0.9)
    got = by_index(select_spans(items, budget=100, config=on, overlap=zeros(2), semantic=semantic))
    assert got[1].decision == "too_redundant"
    assert "embedding similarity" in got[1].reason
    got = by_index(select_spans(items, budget=100, config=on, overlap=zeros(2), semantic=None))
    assert got[1].decision == "selected"
    off = PackConfig()
    got = by_index(select_spans(items, budget=100, config=off, overlap=zeros(2), semantic=semantic))
    assert got[1].decision == "selected"


def test_mmr_prefers_a_novel_span_over_a_slightly_better_redundant_one():
    # Scores 0.9, 0.85, 0.8; spans 0 and 1 overlap 0.7, the rest 0.1.
    items = [item("a", 10, 0.9, doc="p"), item("b", 10, 0.85, doc="q"), item("c", 10, 0.8, doc="r")]
    sim = [[1.0, 0.7, 0.1], [0.7, 1.0, 0.1], [0.1, 0.1, 1.0]]
    config = PackConfig(mmr_lambda=0.5, delta=1.0)
    choices = select_spans(items, budget=100, config=config, overlap=sim)
    assert [c.index for c in choices] == [0, 2, 1]
    assert choices[1].mmr == pytest.approx(0.5 * 0.8 - 0.5 * 0.1)
    assert choices[2].novelty == pytest.approx(0.3)
    # With λ = 1 the order is plain score order.
    choices = select_spans(
        items, budget=100, config=PackConfig(mmr_lambda=1.0, delta=1.0), overlap=sim
    )
    assert [c.index for c in choices] == [0, 1, 2]


def test_doc_cap_limits_spans_per_document():
    items = [item(f"s{i}", 10, 0.9 - i / 10, doc="same") for i in range(3)]
    got = by_index(
        select_spans(items, budget=100, config=PackConfig(per_doc_cap=2), overlap=zeros(3))
    )
    assert [got[i].decision for i in range(3)] == ["selected", "selected", "doc_cap"]


def test_low_relevance_below_min_relevance():
    items = [item("x", 10, 0.9, doc="a"), item("y", 10, 0.2, doc="b")]
    got = by_index(
        select_spans(items, budget=100, config=PackConfig(min_relevance=0.3), overlap=zeros(2))
    )
    assert got[0].decision == "selected"
    assert got[1].decision == "low_relevance"


def test_budget_exceeded_does_not_stop_smaller_spans_behind_it():
    items = [
        item("x", 60, 0.9, doc="a"),
        item("big", 50, 0.8, doc="b"),
        item("small", 30, 0.7, doc="c"),
    ]
    got = by_index(select_spans(items, budget=100, config=PackConfig(), overlap=zeros(3)))
    assert got[0].decision == "selected"
    assert got[1].decision == "budget_exceeded"
    assert "40 left" in got[1].reason
    assert got[2].decision == "selected"


def test_zero_budget_rejects_everything_as_budget_exceeded():
    items = [item("x", 5, 0.9, doc="a"), item("y", 3, 0.5, doc="b")]
    choices = select_spans(items, budget=0, config=PackConfig(), overlap=zeros(2))
    assert {c.decision for c in choices} == {"budget_exceeded"}


def test_marginal_values_penalise_redundancy():
    finals = [0.9, 0.8, 0.3]
    sim = [[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]]
    mv = marginal_values([0, 1, 2], finals, sim, mmr_lambda=0.5)
    assert mv == pytest.approx([0.45 - 0.45, 0.4 - 0.45, 0.15])
    # The redundant span 1 is worth less than the low-scoring but novel span 2.
    assert min(range(3), key=lambda i: mv[i]) == 1


def test_a_single_section_is_not_held_back_by_its_quota():
    # All spans untagged: the default share must not let weaker spans jump the queue.
    items = [item("x", 60, 0.9, doc="a"), item("y", 40, 0.8, doc="b")]
    choices = select_spans(items, budget=100, config=PackConfig(), overlap=zeros(2))
    assert [(c.index, c.decision) for c in choices] == [(0, "selected"), (1, "selected")]
    assert all("slack" not in c.reason for c in choices)
