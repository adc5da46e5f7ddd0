"""Sets larger than k: one repair branch per group of members, merged, each branch's k fixed."""

from __future__ import annotations

import pytest
from support.filings import QUARTERS, filings_index

from sealgraph.config import SealConfig
from sealgraph.ledger.corpus_needs import needs_in_corpus
from sealgraph.ledger.gaps import gap_spec
from sealgraph.ledger.knowledge import CorpusKnowledge
from sealgraph.ledger.needs import question_needs
from sealgraph.model import Gap, SetNeed, Slot
from sealgraph.repair.fanout import (
    BranchResult,
    branch_needs,
    fanout_groups,
    merge_branches,
    repair_branch,
)
from sealgraph.repair.microqueries import micro_queries

QUESTION = "How have the net sales of Northwind, Brightside and Quilltower changed over time?"


@pytest.fixture(scope="module")
def filings(tmp_path_factory):
    index = filings_index(tmp_path_factory.mktemp("fanout"))
    kn = CorpusKnowledge(index)
    return index, kn, needs_in_corpus(question_needs(QUESTION, kn.gazetteer), kn)


def test_three_companies_over_four_quarters_are_twelve_members_in_three_groups(filings):
    _, _, needs = filings
    assert [len(s.members) for s in needs.sets] == [4, 4, 4]
    groups = fanout_groups(needs, 5)
    assert [g.key for g in groups] == ["northwind", "brightside", "quilltower"]
    assert fanout_groups(needs, 12) == ()  # they fit: no fan-out
    # A set larger than k is cut into runs of k members, in period order.
    runs = fanout_groups(needs, 3)
    assert [len(g.members) for g in runs] == [3, 1, 3, 1, 3, 1]
    assert runs[1].labels == (QUARTERS[3][0],)


def test_a_branch_asks_the_question_of_its_group_alone(filings):
    _, _, needs = filings
    group = fanout_groups(needs, 5)[1]
    own = branch_needs(needs, group)
    assert [e.key for e in own.entities] == ["brightside"]
    assert own.entities[0].targets == group.members
    assert own.sets == (group,)


def test_each_branch_keeps_its_own_k_and_covers_its_members(filings):
    index, kn, needs = filings
    config = SealConfig(k=5, max_loops=2)
    for group in fanout_groups(needs, 5):
        result = repair_branch(
            index,
            kn,
            branch_needs(needs, group),
            config,
            assess=gap_spec,
            plan=lambda n, gaps, issued, limit: micro_queries(
                gaps, issued, doc_titles=dict(index.titles()), limit=limit
            ),
        )
        assert len(result.slots) <= config.k
        docs = {index.get_chunk(s.chunk_id).doc_id for s in result.slots}
        assert set(group.members) <= docs
        assert not [g for g in result.gaps if g.kind == "missing_entity"]
        assert result.loops <= config.max_loops
        assert BranchResult.from_dict(result.to_dict()).slots == result.slots


def test_the_merged_set_holds_every_branch_and_names_what_a_branch_lacks():
    group = SetNeed("X", "x", ("a", "b"), ("2023 Q1", "2023 Q2"), "over time")
    full = BranchResult(group, (Slot("a#1", 0), Slot("b#1", 0), Slot("z#1", 0)), (), 0, "done")
    missing = Gap("missing_entity", "Y (2023 Q2)", "net sales", None, "no passage", ("d",))
    short = BranchResult(group, (Slot("c#1", 0), Slot("z#1", 0)), (missing,), 3, "budget")
    slots, gaps = merge_branches([full, short], k=3)
    assert [s.chunk_id for s in slots] == ["a#1", "b#1", "z#1", "c#1"]
    assert gaps == (missing,)
