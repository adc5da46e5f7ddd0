"""Need items, gap typing with reasons, the sufficiency gate and bridge-target ranking."""

from __future__ import annotations

from sealgraph.ledger.extract import PassageFeatures, passage_features
from sealgraph.ledger.gaps import (
    MET,
    Gap,
    bridge_targets,
    compared_value_type,
    coverage,
    gap_spec,
    need_items,
)
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import QuestionNeeds, question_needs
from sealgraph.text.lexicon import stem
from sealgraph.types import Chunk

GAZETTEER = Gazetteer(
    [
        ("lit", "Lost in Fogland (film)"),
        ("castellan", "Mira Castellan"),
        ("farrow", "Owen Farrow"),
        ("tokyo", "Tokyo"),
        ("toronto", "Toronto Office"),
        ("lisbon", "Lisbon Office"),
        ("lantern", "Lantern Night (film)"),
    ]
)


def feat(chunk_id: str, doc_id: str, title: str, *sentences: str) -> PassageFeatures:
    text = " ".join(sentences)
    spans, pos = [], 0
    for s in sentences:
        spans.append((pos, pos + len(s) + 1))
        pos += len(s) + 1
    spans[-1] = (spans[-1][0], len(text))
    chunk = Chunk(chunk_id, doc_id, title, (), 0, 0, len(text), text, 10, tuple(spans))
    return passage_features(chunk, GAZETTEER)


def needs(question: str) -> QuestionNeeds:
    return question_needs(question, GAZETTEER)


def hard(items):
    """The need items the gate checks (relation ``terms`` only steer the utility)."""
    return [i for i in items if i.kind != "terms"]


LIT = feat(
    "lit#0",
    "lit",
    "Lost in Fogland (film)",
    "Lost in Fogland is a 2003 film written and directed by Mira Castellan.",
    "It stars Owen Farrow as a fading actor in Tokyo.",
)
CASTELLAN = feat(
    "castellan#0", "castellan", "Mira Castellan", "Mira Castellan was born in May 1971."
)
CASTELLAN_NO_DATE = feat(
    "castellan#1", "castellan", "Mira Castellan", "Mira Castellan is a filmmaker."
)
FARROW = feat("farrow#0", "farrow", "Owen Farrow", "Owen Farrow is an American actor.")
TORONTO = feat("toronto#0", "toronto", "Toronto Office", "The Toronto Office opened in 2014.")
TORONTO_NO_DATE = feat("toronto#1", "toronto", "Toronto Office", "The Toronto Office is big.")
LISBON = feat("lisbon#0", "lisbon", "Lisbon Office", "The Lisbon Office opened in 2021.")
UNRELATED = feat("farrow#1", "farrow", "Owen Farrow", "He plays golf.")

BRIDGE_Q = "What year was the director of Lost in Fogland born?"
COMPARE_Q = "Which opened first, the Toronto Office or the Lisbon Office?"


# --- need items ---------------------------------------------------------------------


def test_bridge_question_needs_its_entity_and_a_typed_bridge():
    items = hard(need_items(needs(BRIDGE_Q)))
    assert [(i.kind, i.key, i.targets, i.qualifier_type) for i in items] == [
        ("entity", "lost in fogland", ("lit",), None),
        # The bridge carries no targets: the second hop may hang off any named entity.
        ("bridge", "lost in fogland", (), "date"),
    ]


def test_comparison_needs_each_entity_and_the_compared_value():
    items = hard(need_items(needs(COMPARE_Q)))
    assert [(i.kind, i.key, i.qualifier_type) for i in items] == [
        ("entity", "toronto office", None),
        ("entity", "lisbon office", None),
        ("qualifier", "toronto office", "date"),
        ("qualifier", "lisbon office", "date"),
    ]


def test_yes_no_comparison_by_date_needs_dates():
    items = need_items(needs("Is the Toronto Office older than the Lisbon Office?"))
    assert [(i.key, i.qualifier_type) for i in items if i.kind == "qualifier"] == [
        ("toronto office", "date"),
        ("lisbon office", "date"),
    ]


def test_quantity_comparatives_add_no_qualifier_needs():
    # "larger" may be compared in words ("the largest office"): no unmeetable number need.
    items = need_items(needs("Is the Toronto Office larger than the Lisbon Office?"))
    assert [i for i in items if i.kind == "qualifier"] == []


def test_number_question_comparison_needs_numbers():
    items = need_items(
        needs("How many more people work at the Toronto Office than the Lisbon Office?")
    )
    assert [(i.key, i.qualifier_type) for i in items if i.kind == "qualifier"] == [
        ("toronto office", "number"),
        ("lisbon office", "number"),
    ]


def test_comparison_with_a_role_of_a_named_entity_needs_the_hop_to_it():
    # "the same age as the director of X": the compared value belongs to X's director.
    items = need_items(
        needs("Who at the Toronto Office is the same age as the director of Lantern Night?")
    )
    bridges = [(i.key, i.roles) for i in items if i.kind == "bridge"]
    assert ("lantern night", ("direct",)) in bridges
    # Without the role phrase the two entities are compared directly.
    plain = need_items(needs("Is the Toronto Office the same age as Lantern Night?"))
    assert not [i for i in plain if i.kind == "bridge"]


def test_comparison_without_a_compared_value_has_no_qualifier_needs():
    items = hard(need_items(needs("Are the Toronto Office and the Lisbon Office in Canada?")))
    assert {i.kind for i in items} == {"entity", "mention"}


def test_unknown_name_becomes_a_mention_need_and_no_bridge_for_one_hop():
    items = hard(need_items(needs("Where does Corvane Labs keep its servers?")))
    # One hop: the mention and the relation it must state, no invented second hop.
    assert [(i.kind, i.name, i.key) for i in items] == [
        ("mention", "Corvane Labs", "corvane labs"),
        ("relation", "Corvane Labs", "keep serv"),
    ]


def test_unknown_name_in_a_nested_question_gets_an_unanchored_bridge():
    items = hard(need_items(needs("Where does the founder of Corvane Labs keep his servers?")))
    assert [(i.kind, i.name, i.qualifier_type) for i in items] == [
        ("mention", "Corvane Labs", None),
        ("bridge", "", "place"),
    ]


def test_compared_value_type():
    assert compared_value_type("Who was born first, A or B?") == "date"
    assert compared_value_type("Which film was released more recently, A or B?") == "date"
    assert compared_value_type("Who lived longer, A or B?") == "date"
    assert compared_value_type("Were A and B launched in the same year?") == "date"
    # A comparative before a plural noun compares counts, before an adjective it does not.
    assert compared_value_type("Which has more members, A or B?") == "number"
    assert compared_value_type("Which team has fewer engineers, A or B?") == "number"
    assert compared_value_type("Which is more famous, A or B?") is None
    assert compared_value_type("Which is more popular, A or B?") is None
    assert compared_value_type("Are A and B both American?") is None


# --- gap typing and the gate ---------------------------------------------------------


def test_empty_evidence_gives_missing_entity_and_missing_relation():
    n = needs(BRIDGE_Q)
    gaps = gap_spec(n, need_items(n), [])
    assert [(g.kind, g.entity, g.qualifier) for g in gaps] == [
        ("missing_entity", "Lost in Fogland", None),
        ("missing_relation", "Lost in Fogland", "date"),
    ]
    assert gaps[0].targets == ("lit",)
    assert "no evidence passage is about 'Lost in Fogland'" in gaps[0].reason
    assert gaps[1].relation == "year director born"
    assert "holding a date" in gaps[1].reason


def test_first_hop_only_leaves_the_bridge_gap_pointing_at_the_linked_document():
    n = needs(BRIDGE_Q)
    gaps = gap_spec(n, need_items(n), [LIT])
    assert [g.kind for g in gaps] == ["missing_relation"]
    # Mira Castellan shares a sentence with "directed"; she ranks first.
    assert gaps[0].targets[0] == "castellan"
    assert set(gaps[0].targets) == {"castellan", "farrow", "tokyo"}


def test_bridge_without_the_expected_type_is_not_met():
    n = needs(BRIDGE_Q)
    items = need_items(n)
    cov = dict(zip([i.kind for i in items], coverage(items, [LIT, CASTELLAN_NO_DATE]), strict=True))
    assert cov["entity"] == 1.0
    assert 0 < cov["bridge"] < MET
    assert [g.kind for g in gap_spec(n, items, [LIT, CASTELLAN_NO_DATE])] == ["missing_relation"]


def test_gate_is_sufficient_exactly_when_needs_are_covered():
    n = needs(BRIDGE_Q)
    items = need_items(n)
    gated = [i for i, it in enumerate(items) if it.kind != "terms"]
    for passages in ([LIT, CASTELLAN], [CASTELLAN, LIT], [LIT, FARROW, CASTELLAN]):
        cov = coverage(items, passages)
        assert all(cov[i] >= MET for i in gated)
        assert gap_spec(n, items, passages) == []
    for passages in ([], [LIT], [CASTELLAN], [FARROW, CASTELLAN], [LIT, UNRELATED]):
        cov = coverage(items, passages)
        assert any(cov[i] < MET for i in gated)
        assert gap_spec(n, items, passages) != []


def test_relation_terms_steer_but_never_open_a_gap():
    n = needs(BRIDGE_Q)
    items = need_items(n)
    (terms,) = [i for i, it in enumerate(items) if it.kind == "terms"]
    # No passage says "year": the relation terms are not all covered, yet no gap opens.
    assert coverage(items, [LIT, CASTELLAN])[terms] < MET
    assert gap_spec(n, items, [LIT, CASTELLAN]) == []


def test_second_hop_without_its_anchor_is_not_a_bridge():
    n = needs(BRIDGE_Q)
    gaps = gap_spec(n, need_items(n), [CASTELLAN])
    assert [g.kind for g in gaps] == ["missing_entity", "missing_relation"]


def test_comparison_gaps_are_missing_qualifiers_with_reasons():
    n = needs(COMPARE_Q)
    items = need_items(n)
    gaps = gap_spec(n, items, [TORONTO_NO_DATE, LISBON])
    assert len(gaps) == 1
    (gap,) = gaps
    assert (gap.kind, gap.entity, gap.qualifier, gap.targets) == (
        "missing_qualifier",
        "Toronto Office",
        "date",
        ("toronto",),
    )
    assert gap.reason == "no date is stated for 'Toronto Office'"
    assert gap_spec(n, items, [TORONTO, LISBON]) == []


def test_missing_compared_entity_is_a_missing_entity():
    n = needs(COMPARE_Q)
    gaps = gap_spec(n, need_items(n), [TORONTO])
    assert [(g.kind, g.entity) for g in gaps] == [
        ("missing_entity", "Lisbon Office"),
        ("missing_qualifier", "Lisbon Office"),
    ]


def test_mention_need_met_by_a_passage_naming_it():
    n = needs("Is Corvane Labs older than the Toronto Office?")
    items = need_items(n)
    mention = next(i for i, it in enumerate(items) if it.kind == "mention")
    named = feat("toronto#2", "toronto", "Toronto Office", "Corvane Labs rents the third floor.")
    gaps = gap_spec(n, items, [TORONTO])
    assert gaps[0].kind == "missing_entity" and gaps[0].entity == "Corvane Labs"
    assert "is not mentioned in the evidence" in gaps[0].reason
    assert coverage(items, [named])[mention] == 1.0
    assert gap_spec(n, items, [named, TORONTO]) == []


def test_a_name_without_a_document_is_a_relation_word_of_a_scoped_question():
    # One hop about the Toronto Office: "Corvane Labs" must be stated by its passage.
    n = needs("Is Corvane Labs in the Toronto Office?")
    items = hard(need_items(n))
    assert [(i.kind, i.key) for i in items] == [
        ("entity", "toronto office"),
        ("relation", f"{stem('corvane')} {stem('labs')}"),  # the lexicon's stems
    ]
    named = feat("toronto#2", "toronto", "Toronto Office", "Corvane Labs rents the third floor.")
    assert [g.kind for g in gap_spec(n, need_items(n), [TORONTO])] == ["missing_relation"]
    assert gap_spec(n, need_items(n), [named]) == []


def test_gap_round_trip():
    gap = Gap("missing_qualifier", "Toronto Office", "opened", "date", "why", ("toronto",))
    assert Gap.from_dict(gap.to_dict()) == gap


# --- bridge targets ------------------------------------------------------------------


def test_bridge_targets_rank_by_relation_words_in_the_mention_sentence():
    n = needs("Who directed Lost in Fogland?")
    items = need_items(n)
    assert bridge_targets(n, items, [LIT]) == ("castellan", "farrow", "tokyo")
    assert bridge_targets(n, items, [LIT], limit=1) == ("castellan",)


def test_bridge_targets_skip_documents_in_the_set_and_question_entities():
    n = needs("Who directed Lost in Fogland?")
    items = need_items(n)
    assert bridge_targets(n, items, [LIT, CASTELLAN]) == ("farrow", "tokyo")


def test_bridge_targets_prefer_links_from_anchor_passages():
    n = needs("Who directed Lost in Fogland?")
    items = need_items(n)
    # Owen Farrow's passage is not about a question entity: its link to Lantern Night
    # ranks below the anchor's links even though it shares "directed" with the question.
    farrow = feat(
        "farrow#2",
        "farrow",
        "Owen Farrow",
        "Owen Farrow starred in Lantern Night, directed by Ramis.",
    )
    assert bridge_targets(n, items, [LIT, farrow]) == ("castellan", "tokyo", "lantern")


# --- chains: the answer two links away from the named document -------------------------

CHAIN_GAZ = Gazetteer(
    [("outage", "Harbor Outage"), ("stream", "Kelp Stream"), ("team", "Data Team")]
)
CHAIN_Q = "Who leads the team that owns the system whose lag caused the Harbor Outage?"


def chain_feat(chunk_id: str, doc_id: str, title: str, *sentences: str) -> PassageFeatures:
    text = " ".join(sentences)
    chunk = Chunk(chunk_id, doc_id, title, (), 0, 0, len(text), text, 10, ((0, len(text)),))
    return passage_features(chunk, CHAIN_GAZ)


def test_a_three_hop_question_needs_a_chain_two_links_long():
    n = question_needs(CHAIN_Q, CHAIN_GAZ)
    assert n.hops >= 3
    items = need_items(n)
    chain = [it for it in items if it.kind == "chain"]
    assert len(chain) == 1
    anchor = chain_feat(
        "o#0", "outage", "Harbor Outage", "The root cause was lag on the Kelp Stream."
    )
    first = chain_feat("s#0", "stream", "Kelp Stream", "The Kelp Stream is owned by the Data Team.")
    leads = chain_feat("t#0", "team", "Data Team", "Ada Quill leads the Data Team.")
    other = chain_feat("t#1", "team", "Data Team", "The Data Team runs the brokers.")
    # Linked from the first hop and stating what the rest leaves unsaid ("leads").
    assert coverage(items, [anchor, first, leads])[items.index(chain[0])] == 1.0
    # Linked, but silent on the asked relation: half a hop.
    assert coverage(items, [anchor, first, other])[items.index(chain[0])] == 0.5
    # No first hop in the evidence: nothing continues the chain.
    assert coverage(items, [anchor, leads])[items.index(chain[0])] == 0.0
    # The hop after the first is asked for once the first hop is in: its passage
    # states the entity the chain goes on from ("... owned by the Data Team").
    (gap,) = [g for g in gap_spec(n, items, [anchor, first]) if g.need == items.index(chain[0])]
    assert gap.entity == "data team"
    assert gap.hops[0][0] == "data team"
    assert "leads" in gap.relation
    # Its passage in, the chain is whole.
    assert all(g.need != items.index(chain[0]) for g in gap_spec(n, items, [anchor, first, leads]))


def test_a_two_hop_question_has_no_chain():
    n = question_needs("Who owns the system whose lag caused the Harbor Outage?", CHAIN_GAZ)
    assert n.hops == 2
    assert [it.kind for it in need_items(n)] == ["entity", "terms", "bridge"]
