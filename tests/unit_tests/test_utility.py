"""Entity-first utility S(c) = λ1·GapCov + λ2·Corr + λ3·Nov − λ4·Red on hand-made passages."""

from __future__ import annotations

import pytest

from sealgraph.config import UtilityWeights
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import NeedItem
from sealgraph.ledger.gazetteer import Mention
from sealgraph.ledger.utility import jaccard, score_set, utility


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


# "What year was the director of Lost in Translation born?"
ITEMS = [
    NeedItem("entity", "lost in translation", "Lost in Translation", ("lit",)),
    NeedItem("bridge", "lost in translation", "Lost in Translation", ("lit",), "date"),
]
LIT = pf(
    "lit#0",
    "lit",
    "lost in translation",
    [("sofia coppola", "coppola")],
    ["date"],
    ["film", "directed", "coppola", "2003"],
)
LIT_2 = pf("lit#1", "lit", "lost in translation", [], [], ["film", "tokyo", "shot"])
COPPOLA = pf(
    "coppola#0", "coppola", "sofia coppola", [], ["date"], ["born", "1971", "filmmaker", "coppola"]
)
MURRAY = pf(
    "murray#0", "murray", "bill murray", [("tokyo", "tokyo")], [], ["actor", "comedian", "tokyo"]
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
    # With LIT in the set, Coppola closes the bridge: gain 1 of 2 items.
    assert utility(COPPOLA, [LIT], ITEMS, NO_REL, UtilityWeights()).gap_coverage == pytest.approx(
        0.5
    )
    # A second passage of the same document adds nothing.
    assert utility(LIT_2, [LIT], ITEMS, NO_REL, UtilityWeights()).gap_coverage == 0.0


def test_gapcov_counts_the_gain_a_passage_enables_in_another():
    # Coppola alone covers nothing; LIT joining makes Coppola the bridge: both items gained.
    assert utility(LIT, [COPPOLA], ITEMS, NO_REL, UtilityWeights()).gap_coverage == 1.0


def test_gapcov_of_an_incumbent_is_the_coverage_lost_without_it():
    scores = score_set([LIT, COPPOLA, LIT_2], ITEMS, NO_REL, UtilityWeights())
    # Without LIT: LIT_2 still covers the entity, but Coppola is no longer linked.
    assert scores["lit#0"].gap_coverage == pytest.approx(0.5)
    # Without Coppola the bridge reopens.
    assert scores["coppola#0"].gap_coverage == pytest.approx(0.5)
    # LIT_2 is redundant: nothing is lost without it.
    assert scores["lit#1"].gap_coverage == 0.0


def test_gapcov_zero_without_need_items():
    assert utility(LIT, [], [], NO_REL, UtilityWeights()).gap_coverage == 0.0


# --- Corr ------------------------------------------------------------------------------


def test_corr_combines_relevance_and_links_to_question_entity_passages():
    rel = {"coppola#0": 0.5}
    # 0.6 × 0.5 relevance + 0.4 × 1.0 (linked from LIT, which is about a question entity).
    assert utility(COPPOLA, [LIT], ITEMS, rel, UtilityWeights()).corroboration == pytest.approx(0.7)
    # Unlinked: relevance only.
    assert utility(COPPOLA, [MURRAY], ITEMS, rel, UtilityWeights()).corroboration == pytest.approx(
        0.3
    )
    # A link to a passage not about a question entity counts half.
    tokyo = pf("tokyo#0", "tokyo", "tokyo")
    assert utility(tokyo, [MURRAY], ITEMS, {}, UtilityWeights()).corroboration == pytest.approx(
        0.4 * 0.5
    )


def test_corr_link_counts_in_either_direction():
    # LIT mentions Coppola: scoring LIT against {Coppola} links too.
    corr = utility(LIT, [COPPOLA], ITEMS, {}, UtilityWeights()).corroboration
    assert corr == pytest.approx(0.4 * 0.5)  # Coppola's passage is not about a question entity


# --- Nov -------------------------------------------------------------------------------


def test_nov_is_zero_for_a_same_document_passage():
    assert utility(LIT_2, [LIT], ITEMS, {}, UtilityWeights()).novelty == 0.0


def test_nov_is_the_share_of_unknown_entities():
    # MURRAY knows {bill murray, tokyo}; LIT brings {lost in translation, sofia coppola}.
    assert utility(LIT, [MURRAY], ITEMS, {}, UtilityWeights()).novelty == 1.0
    # Coppola's only entity is already mentioned by LIT.
    assert utility(COPPOLA, [LIT], ITEMS, {}, UtilityWeights()).novelty == 0.0
    tokyo_lit = pf("x#0", "x", "x", [("tokyo", "tokyo"), ("sofia coppola", "coppola")])
    # {x, tokyo, sofia coppola} against MURRAY's {bill murray, tokyo}: 2 of 3 are new.
    assert utility(tokyo_lit, [MURRAY], ITEMS, {}, UtilityWeights()).novelty == pytest.approx(2 / 3)


# --- Red -------------------------------------------------------------------------------


def test_red_is_the_highest_word_overlap():
    a = pf("a#0", "a", "a", words=["alpha", "beta", "gamma", "delta"])
    b = pf("b#0", "b", "b", words=["alpha", "beta"])
    c = pf("c#0", "c", "c", words=["zeta"])
    assert jaccard(a.words, b.words) == 0.5
    assert utility(a, [b, c], [], {}, UtilityWeights()).redundancy == 0.5
    assert utility(a, [c], [], {}, UtilityWeights()).redundancy == 0.0
    assert utility(a, [], [], {}, UtilityWeights()).redundancy == 0.0


def test_red_is_at_least_one_half_for_the_same_document():
    assert utility(LIT_2, [LIT], ITEMS, {}, UtilityWeights()).redundancy == 0.5
    same_words = pf("lit#2", "lit", "lost in translation", words=LIT.words)
    assert utility(same_words, [LIT], ITEMS, {}, UtilityWeights()).redundancy == 1.0


# --- the weighted total -----------------------------------------------------------------


def test_total_is_the_weighted_sum():
    w = UtilityWeights(gap_coverage=2.0, corroboration=0.5, novelty=0.25, redundancy=4.0)
    s = utility(COPPOLA, [LIT, MURRAY], ITEMS, {"coppola#0": 0.5}, w)
    expected = 2.0 * s.gap_coverage + 0.5 * s.corroboration + 0.25 * s.novelty - 4.0 * s.redundancy
    assert s.total == pytest.approx(expected)
    assert s.redundancy > 0 and s.gap_coverage > 0 and s.corroboration > 0


@pytest.mark.parametrize("component", ["gap", "corr", "nov", "red"])
def test_each_weight_selects_its_own_term(component):
    s = utility(COPPOLA, [LIT, MURRAY], ITEMS, {"coppola#0": 0.5}, ONLY[component])
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
    passage, others, rel = LIT, [COPPOLA, MURRAY], {"lit#0": 0.8}
    full = utility(passage, others, ITEMS, rel, base)
    cut = utility(passage, others, ITEMS, rel, base.model_copy(update={zeroed: 0.0}))
    term = getattr(base, zeroed) * getattr(full, zeroed)
    sign = -1 if zeroed == "redundancy" else 1
    assert term != 0
    assert cut.total == pytest.approx(full.total - sign * term)


def test_score_set_scores_each_member_against_the_rest():
    w = UtilityWeights()
    scores = score_set([LIT, COPPOLA], ITEMS, {"lit#0": 1.0}, w)
    assert list(scores) == ["lit#0", "coppola#0"]
    assert scores["lit#0"] == utility(LIT, [COPPOLA], ITEMS, {"lit#0": 1.0}, w)
    assert scores["coppola#0"] == utility(COPPOLA, [LIT], ITEMS, {"lit#0": 1.0}, w)


def test_to_dict_rounds_components():
    s = utility(COPPOLA, [LIT], ITEMS, {"coppola#0": 1 / 3}, UtilityWeights())
    d = s.to_dict()
    assert d["chunk_id"] == "coppola#0"
    assert d["corroboration"] == round(s.corroboration, 4)
    assert set(d) == {"chunk_id", "gap_coverage", "corroboration", "novelty", "redundancy", "total"}
