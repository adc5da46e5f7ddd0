"""A chain of four hops followed hop by hop: each hop's answer is the next hop's entity."""

from __future__ import annotations

from sealgraph.ledger.chain import describe_chain, follow_chain, next_hop
from sealgraph.ledger.extract import PassageFeatures, passage_features
from sealgraph.ledger.gaps import MET, coverage, gap_spec, need_items
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger
from sealgraph.ledger.needs import question_needs
from sealgraph.repair.microqueries import micro_queries
from sealgraph.types import Chunk

GAZ = Gazetteer([("outage", "Harbor Outage"), ("stream", "Kelp Stream"), ("team", "Data Team")])
QUESTION = (
    "In which town was the person who leads the team that owns the system whose lag "
    "caused the Harbor Outage born?"
)


def feat(
    chunk_id: str, doc_id: str, title: str, text: str, gazetteer: Gazetteer = GAZ
) -> PassageFeatures:
    chunk = Chunk(chunk_id, doc_id, title, (), 0, 0, len(text), text, 10, ((0, len(text)),))
    return passage_features(chunk, gazetteer)


ANCHOR = feat("o#0", "outage", "Harbor Outage", "The root cause was lag on the Kelp Stream.")
STREAM = feat("s#0", "stream", "Kelp Stream", "The Kelp Stream is owned by the Data Team.")
TEAM = feat("t#0", "team", "Data Team", "Ada Quill leads the Data Team since 2019.")
BORN = feat("n#0", "notes", "Staff notes", "Ada Quill was born in the town of Port Ellis.")
OTHER = feat("x#0", "other", "Staff notes", "Rex Hollis was born in the town of Salt Bay.")


def test_the_question_reads_four_hops_and_the_words_of_each():
    needs = question_needs(QUESTION, GAZ)
    assert needs.hops == 4
    assert [set(h) for h in needs.hop_relations] == [
        {"system", "lag", "caused"},
        {"team", "owns"},
        {"person", "leads"},
        {"town", "born"},
    ]
    kinds = [(it.kind, it.hop) for it in need_items(needs)]
    assert ("chain", 3) in kinds and ("chain", 4) in kinds


def test_each_hop_answer_becomes_the_next_hops_entity():
    needs = question_needs(QUESTION, GAZ)
    chain = follow_chain(needs, need_items(needs), [ANCHOR, STREAM, TEAM, BORN])
    assert [(h.hop, h.entity, h.answer, h.chunk_id) for h in chain] == [
        (1, "Harbor Outage", "kelp stream", "o#0"),
        (2, "kelp stream", "data team", "s#0"),
        (3, "data team", "ada quill", "t#0"),
        (4, "ada quill", "", "n#0"),
    ]
    assert next_hop(chain) is None
    assert "hop 3: data team -> ada quill [t#0]" in describe_chain(chain)


def test_the_first_hop_no_passage_supports_is_asked_with_its_entity_and_words():
    needs = question_needs(QUESTION, GAZ)
    items = need_items(needs)
    passages = [ANCHOR, STREAM, TEAM, OTHER]
    following = next_hop(follow_chain(needs, items, passages))
    assert following is not None
    assert (following.hop, following.entity) == (4, "ada quill")
    assert set(following.relation.split()) == {"town", "born"}
    # The gate asks for it: a micro-query for the name with that hop's words.
    gaps = gap_spec(needs, items, passages)
    queries = micro_queries(gaps, [], doc_titles={"stream": "Kelp Stream", "team": "Data Team"})
    assert any(q.text.startswith("ada quill") and "born" in q.text for q in queries)


def test_the_last_hop_is_covered_only_by_the_passage_of_the_answer_before():
    needs = question_needs(QUESTION, GAZ)
    items = need_items(needs)
    hop4 = next(i for i, it in enumerate(items) if it.kind == "chain" and it.hop == 4)
    assert coverage(items, [ANCHOR, STREAM, TEAM, BORN])[hop4] >= MET
    assert coverage(items, [ANCHOR, STREAM, TEAM, OTHER])[hop4] < MET


def test_the_ledger_keeps_the_chain_and_drops_the_hops_of_evicted_passages():
    needs = question_needs(QUESTION, GAZ)
    chain = follow_chain(needs, need_items(needs), [ANCHOR, STREAM, TEAM, BORN])
    ledger = EntityLedger().with_chain(chain)
    assert EntityLedger.from_dict(ledger.to_dict()).chain == chain
    assert [h.hop for h in ledger.without_chunks(["n#0"]).chain] == [1, 2, 3]


BILLING = "Rex Hollis leads the Billing Desk."
CONSUMERS = "Main consumers: the Billing Desk reads events from it."
GAZ_DESK = Gazetteer(
    [
        ("outage", "Harbor Outage"),
        ("stream", "Kelp Stream"),
        ("team", "Data Team"),
        ("billing", "Billing Desk"),
    ]
)


def test_a_hop_passage_that_does_not_state_the_next_link_leads_nowhere():
    needs = question_needs(QUESTION, GAZ)
    items = need_items(needs)
    bridge = next(i for i, it in enumerate(items) if it.kind == "bridge")
    hop3 = next(i for i, it in enumerate(items) if it.kind == "chain" and it.hop == 3)
    # Hop 3's link is what the system's passage states of its owner ("owned by").
    assert items[hop3].link == ("own",)
    consumers = feat("s#1", "stream", "Kelp Stream", CONSUMERS, GAZ_DESK)
    billing = feat("b#0", "billing", "Billing Desk", BILLING, GAZ_DESK)
    anchor = feat("o#0", "outage", "Harbor Outage", ANCHOR.text, GAZ_DESK)
    listed = coverage(items, [anchor, consumers, billing])
    # The system's consumers list is about the system, but says nothing of its owner:
    # half the bridge, and the consumer's page it links to is no hop of the chain.
    assert listed[bridge] < MET
    assert listed[hop3] == 0.0
    owned = coverage(items, [ANCHOR, STREAM, TEAM])
    assert owned[bridge] >= MET and owned[hop3] >= 0.5
