"""Entity-first utility S(c) = λ1·GapCov + λ2·Corr + λ3·Nov − λ4·Red on hand-made passages."""

from __future__ import annotations

import pytest

from sealgraph.config import UtilityWeights
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import NeedItem
from sealgraph.ledger.gazetteer import Mention
from sealgraph.repair.utility import UtilityScore, jaccard, score_set, utility


def pf(chunk_id, doc_id, topic, links=(), qualifier_types=(), words=()):
    """A passage about ``topic`` (document ``doc_id``) mentioning ``links`` (key, doc)."""
    mentions = tuple(
        (0, Mention(key, key.title(), 0, len(key), (doc,), "title", True)) for key, doc in links
    )
    quals = tuple((0, t, "v") for t in qualifier_types)
    return PassageFeatures(
        chunk_id=chunk_id,
        doc_id=doc_id,
        topic=topic,
        title=topic.title(),
        mentions=mentions,
        qualifiers=quals,
        words=frozenset(words),
        sentence_words=(frozenset(words),),
    )


# "What year was the director of Lost in Fogland born?"
ITEMS = [
    NeedItem("entity", "lost in fogland", "Lost in Fogland", ("lit",)),
    NeedItem("bridge", "lost in fogland", "Lost in Fogland", ("lit",), "date"),
]
LIT = pf(
    "lit#0",
    "lit",
    "lost in fogland",
    [("mira castellan", "castellan")],
    ["date"],
    ["film", "directed", "castellan", "2003"],
)
LIT_2 = pf("lit#1", "lit", "lost in fogland", [], [], ["film", "tokyo", "shot"])
CASTELLAN = pf(
    "castellan#0",
    "castellan",
    "mira castellan",
    [],
    ["date"],
    ["born", "1971", "filmmaker", "castellan"],
)
FARROW = pf(
    "farrow#0", "farrow", "owen farrow", [("tokyo", "tokyo")], [], ["actor", "comedian", "tokyo"]
)
NO_REL: dict[str, float] = {}
ONLY = {
    "gap": UtilityWeights(gap_coverage=1, corroboration=0, novelty=0, redundancy=0),
    "corr": UtilityWeights(gap_coverage=0, corroboration=1, novelty=0, redundancy=0),
    "nov": UtilityWeights(gap_coverage=0, corroboration=0, novelty=1, redundancy=0),
    "red": UtilityWeights(gap_coverage=0, corroboration=0, novelty=0, redundancy=1),
}


# --- GapCov ----------------------------------------------------------------------------


def test_gapcov_of_a_candidate_is_its_marginal_gain():
    # Empty set: LIT meets the entity need, but the bridge needs a second hop.
    assert utility(LIT, [], ITEMS, NO_REL, UtilityWeights()).gap_coverage == pytest.approx(0.5)
    # With LIT in the set, Castellan closes the bridge: gain 1 of 2 items.
    assert utility(CASTELLAN, [LIT], ITEMS, NO_REL, UtilityWeights()).gap_coverage == pytest.approx(
        0.5
    )
    # A second passage of the same document adds nothing.
    assert utility(LIT_2, [LIT], ITEMS, NO_REL, UtilityWeights()).gap_coverage == 0.0


def test_gapcov_counts_the_gain_a_passage_enables_in_another():
    # Castellan alone covers nothing; LIT joining makes Castellan the bridge: both items gained.
    assert utility(LIT, [CASTELLAN], ITEMS, NO_REL, UtilityWeights()).gap_coverage == 1.0


def test_gapcov_of_an_incumbent_is_the_coverage_lost_without_it():
    scores = score_set([LIT, CASTELLAN, LIT_2], ITEMS, NO_REL, UtilityWeights())
    # Without LIT: LIT_2 still covers the entity, but Castellan is no longer linked.
    assert scores["lit#0"].gap_coverage == pytest.approx(0.5)
    # Without Castellan the bridge reopens.
    assert scores["castellan#0"].gap_coverage == pytest.approx(0.5)
    # LIT_2 is redundant: nothing is lost without it.
    assert scores["lit#1"].gap_coverage == 0.0


def test_gapcov_zero_without_need_items():
    assert utility(LIT, [], [], NO_REL, UtilityWeights()).gap_coverage == 0.0


# --- Corr ------------------------------------------------------------------------------


def test_corr_combines_relevance_and_links_to_question_entity_passages():
    rel = {"castellan#0": 0.5}
    # 0.6 × 0.5 relevance + 0.4 × 1.0 (linked from LIT, which is about a question entity).
    assert utility(CASTELLAN, [LIT], ITEMS, rel, UtilityWeights()).corroboration == pytest.approx(
        0.7
    )
    # Unlinked: relevance only.
    assert utility(
        CASTELLAN, [FARROW], ITEMS, rel, UtilityWeights()
    ).corroboration == pytest.approx(0.3)
    # A link to a passage not about a question entity counts half.
    tokyo = pf("tokyo#0", "tokyo", "tokyo")
    assert utility(tokyo, [FARROW], ITEMS, {}, UtilityWeights()).corroboration == pytest.approx(
        0.4 * 0.5
    )


def test_corr_link_counts_in_either_direction():
    # LIT mentions Castellan: scoring LIT against {Castellan} links too.
    corr = utility(LIT, [CASTELLAN], ITEMS, {}, UtilityWeights()).corroboration
    assert corr == pytest.approx(0.4 * 0.5)  # Castellan's passage is not about a question entity


# --- Nov -------------------------------------------------------------------------------


def test_nov_is_zero_for_a_passage_bringing_no_new_entity():
    assert utility(LIT_2, [LIT], ITEMS, {}, UtilityWeights()).novelty == 0.0


def test_nov_is_the_share_of_unknown_entities():
    # FARROW knows {owen farrow, tokyo}; LIT brings {lost in fogland, mira castellan}.
    assert utility(LIT, [FARROW], ITEMS, {}, UtilityWeights()).novelty == 1.0
    # Castellan's only entity is already mentioned by LIT.
    assert utility(CASTELLAN, [LIT], ITEMS, {}, UtilityWeights()).novelty == 0.0
    tokyo_lit = pf("x#0", "x", "x", [("tokyo", "tokyo"), ("mira castellan", "castellan")])
    # {x, tokyo, mira castellan} against FARROW's {owen farrow, tokyo}: 2 of 3 are new.
    assert utility(tokyo_lit, [FARROW], ITEMS, {}, UtilityWeights()).novelty == pytest.approx(2 / 3)


# --- Red -------------------------------------------------------------------------------


def test_red_is_the_highest_word_overlap():
    a = pf("a#0", "a", "a", words=["alpha", "beta", "gamma", "delta"])
    b = pf("b#0", "b", "b", words=["alpha", "beta"])
    c = pf("c#0", "c", "c", words=["zeta"])
    assert jaccard(a.words, b.words) == 0.5
    assert utility(a, [b, c], [], {}, UtilityWeights()).redundancy == 0.5
    assert utility(a, [c], [], {}, UtilityWeights()).redundancy == 0.0
    assert utility(a, [], [], {}, UtilityWeights()).redundancy == 0.0


def test_red_reads_content_not_a_shared_document():
    # Another chunk of the same document is only as redundant as its words are
    # ("film" shared of six words)...
    assert utility(LIT_2, [LIT], ITEMS, {}, UtilityWeights()).redundancy == pytest.approx(1 / 6)
    # ...a chunk with the same words is, whatever its document.
    same_words = pf("lit#2", "lit", "lost in fogland", words=LIT.words)
    assert utility(same_words, [LIT], ITEMS, {}, UtilityWeights()).redundancy == 1.0
    elsewhere = pf("x#0", "x", "x", words=LIT.words)
    assert utility(elsewhere, [LIT], ITEMS, {}, UtilityWeights()).redundancy == 1.0


# --- the weighted total -----------------------------------------------------------------


def test_total_is_the_weighted_sum():
    w = UtilityWeights(gap_coverage=2.0, corroboration=0.5, novelty=0.25, redundancy=4.0)
    s = utility(CASTELLAN, [LIT, FARROW], ITEMS, {"castellan#0": 0.5}, w)
    expected = 2.0 * s.gap_coverage + 0.5 * s.corroboration + 0.25 * s.novelty - 4.0 * s.redundancy
    assert s.total == pytest.approx(expected)
    assert s.redundancy > 0 and s.gap_coverage > 0 and s.corroboration > 0


@pytest.mark.parametrize("component", ["gap", "corr", "nov", "red"])
def test_each_weight_selects_its_own_term(component):
    s = utility(CASTELLAN, [LIT, FARROW], ITEMS, {"castellan#0": 0.5}, ONLY[component])
    value = {
        "gap": s.gap_coverage,
        "corr": s.corroboration,
        "nov": s.novelty,
        "red": -s.redundancy,
    }[component]
    assert s.total == pytest.approx(value)


@pytest.mark.parametrize("zeroed", ["gap_coverage", "corroboration", "novelty", "redundancy"])
def test_zeroing_a_weight_removes_its_term(zeroed):
    base = UtilityWeights(gap_coverage=1.0, corroboration=0.7, novelty=0.4, redundancy=0.6)
    passage, others, rel = LIT, [CASTELLAN, FARROW], {"lit#0": 0.8}
    full = utility(passage, others, ITEMS, rel, base)
    cut = utility(passage, others, ITEMS, rel, base.model_copy(update={zeroed: 0.0}))
    term = getattr(base, zeroed) * getattr(full, zeroed)
    sign = -1 if zeroed == "redundancy" else 1
    assert term != 0
    assert cut.total == pytest.approx(full.total - sign * term)


def test_score_set_scores_each_member_against_the_rest():
    w = UtilityWeights()
    scores = score_set([LIT, CASTELLAN], ITEMS, {"lit#0": 1.0}, w)
    assert list(scores) == ["lit#0", "castellan#0"]
    assert scores["lit#0"] == utility(LIT, [CASTELLAN], ITEMS, {"lit#0": 1.0}, w)
    assert scores["castellan#0"] == utility(CASTELLAN, [LIT], ITEMS, {"lit#0": 1.0}, w)


def test_to_dict_rounds_components():
    s = utility(CASTELLAN, [LIT], ITEMS, {"castellan#0": 1 / 3}, UtilityWeights())
    d = s.to_dict()
    assert d["chunk_id"] == "castellan#0"
    assert d["corroboration"] == round(s.corroboration, 4)
    assert set(d) == {
        "chunk_id",
        "gap_coverage",
        "corroboration",
        "novelty",
        "redundancy",
        "total",
        "need_gain",
        "relation",
    }
    # Scores built without need coverage (hand-made ones) keep the six components.
    bare = UtilityScore("x", 0.1, 0.2, 0.3, 0.4, 0.5).to_dict()
    assert set(bare) == {
        "chunk_id",
        "gap_coverage",
        "corroboration",
        "novelty",
        "redundancy",
        "total",
    }
