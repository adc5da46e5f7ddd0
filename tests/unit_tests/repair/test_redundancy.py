"""Evidence judged at the chunk level: redundancy is content, several chunks of a document are fine."""

from __future__ import annotations

import pytest

from sealgraph.config import UtilityWeights
from sealgraph.ledger.extract import passage_features
from sealgraph.ledger.gaps import coverage, gap_spec, need_items
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import question_needs
from sealgraph.repair.utility import score_set, utility
from sealgraph.types import Chunk

GAZETTEER = Gazetteer([("alpha", "Alpha Notes"), ("beta", "Beta Mail")])


def chunk(chunk_id: str, doc_id: str, title: str, text: str):
    c = Chunk(chunk_id, doc_id, title, (), 0, 0, len(text), text, 10, ((0, len(text)),))
    return passage_features(c, GAZETTEER)


SHARING = chunk(
    "alpha#3", "alpha", "Alpha Notes", "We share your messages with advertisers and partners."
)
STORAGE = chunk(
    "alpha#5", "alpha", "Alpha Notes", "Your notes are stored encrypted on servers in Valmora."
)
SHARING_COPY = chunk(
    "beta#2", "beta", "Beta Mail", "We share your messages with advertisers and partners."
)
SHARING_AGAIN = chunk(
    "alpha#9", "alpha", "Alpha Notes", "We share your messages with advertisers and partners."
)
QUESTION = 'Consider "Alpha Notes"\'s privacy policy; who do you share my messages with?'


def test_chunks_of_one_document_are_not_redundant_for_sharing_a_title():
    s = utility(STORAGE, [SHARING], [], {}, UtilityWeights())
    assert s.redundancy < 0.2


def test_near_identical_chunks_are_redundant_whatever_their_document():
    assert utility(SHARING_COPY, [SHARING], [], {}, UtilityWeights()).redundancy == 1.0
    assert utility(SHARING_AGAIN, [SHARING], [], {}, UtilityWeights()).redundancy == 1.0


def test_a_second_chunk_of_a_document_may_bring_new_entities():
    linked = chunk("alpha#7", "alpha", "Alpha Notes", "Messages are copied to Beta Mail nightly.")
    assert utility(linked, [SHARING], [], {}, UtilityWeights()).novelty > 0.0


def test_several_chunks_of_the_named_document_meet_a_single_hop_question():
    n = question_needs(QUESTION, GAZETTEER)
    items = need_items(n)
    assert gap_spec(n, items, [SHARING, STORAGE]) == []
    # The incumbents are scored by what they state, not demoted for their title.
    scores = score_set([SHARING, STORAGE], items, {}, UtilityWeights())
    assert scores["alpha#3"].redundancy == scores["alpha#5"].redundancy


def test_one_chunk_must_state_the_relation_within_a_document():
    n = question_needs("Who do Alpha Notes share messages with and store them for?", GAZETTEER)
    items = need_items(n)
    relation = next(i for i, it in enumerate(items) if it.kind == "relation")
    half_a = chunk("alpha#1", "alpha", "Alpha Notes", "Alpha Notes share messages.")
    half_b = chunk("alpha#2", "alpha", "Alpha Notes", "Alpha Notes store data.")
    both = chunk("alpha#4", "alpha", "Alpha Notes", "Alpha Notes share messages and store data.")
    # Two chunks that each hold part of the relation do not state it together...
    assert coverage(items, [half_a, half_b])[relation] < coverage(items, [both])[relation]
    assert coverage(items, [both])[relation] == pytest.approx(1.0)
