"""Hop links beyond titles: role-confirmed mentions and shared proper names."""

from __future__ import annotations

from sealgraph.ledger.extract import PassageFeatures, passage_features, proper_names
from sealgraph.ledger.gaps import (
    MET,
    Gap,
    NeedItem,
    bridge_names,
    cover,
    gap_spec,
    need_items,
    role_terms,
)
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import question_needs
from sealgraph.repair.microqueries import micro_queries
from sealgraph.text.names import stem
from sealgraph.types import Chunk

GAZETTEER = Gazetteer(
    [
        ("aurel", "Aurelie (film)"),
        ("varga", "Hale Varga"),
        ("morrow", "Ines Morrow"),
        ("gideon", "That Man Gideon"),
    ]
)


def feat(
    chunk_id: str, doc_id: str, title: str, text: str, gazetteer: Gazetteer = GAZETTEER
) -> PassageFeatures:
    """Features of a one-sentence passage, mentions read with ``gazetteer``."""
    chunk = Chunk(chunk_id, doc_id, title, (), 0, 0, len(text), text, 10, ((0, len(text)),))
    return passage_features(chunk, gazetteer)


AUREL = feat(
    "aurel#0",
    "aurel",
    "Aurelie (film)",
    "Aurelie is a 1964 film directed by Hale Varga and starring Ines Morrow.",
)
VARGA = feat("varga#0", "varga", "Hale Varga", "Hale Varga (10 June 1924 - 1978).")
MORROW = feat("morrow#0", "morrow", "Ines Morrow", "Ines Morrow was born in 1939 in Nice.")


def test_role_terms_reads_role_nouns_not_attributes():
    assert role_terms("Which film has the director who was born earlier, A or B?") == ("direct",)
    assert role_terms("What is the place of birth of Iva's husband?") == ("husband",)
    assert role_terms("Where was the place of burial of the composer of film X?") == ("compos",)
    assert role_terms("When was Tokyo founded?") == ()


def test_role_linked_docs_needs_the_role_word_next_to_the_name():
    assert AUREL.role_linked_docs(frozenset({"direct"})) == frozenset({"varga"})
    assert AUREL.role_linked_docs(frozenset({stem("starring")})) == frozenset({"morrow"})
    assert AUREL.role_linked_docs(frozenset()) == frozenset()


def test_role_word_in_previous_sentence_does_not_confirm():
    text = "The film was directed. Ines Morrow starred in it."
    f = feat("x#0", "x", "X", text)
    assert f.role_linked_docs(frozenset({"direct"})) == frozenset()


def bridge_item(roles: tuple[str, ...]) -> NeedItem:
    return NeedItem("bridge", "aurelie", "Aurelie", ("aurel",), "date", roles=roles)


def test_role_confirmed_link_meets_the_bridge_without_relation_words():
    items = [
        NeedItem("entity", "aurelie", "Aurelie", ("aurel",)),
        NeedItem("terms", "direct born earli", "director born earlier"),
        bridge_item(("direct",)),
    ]
    # Varga's page states no "born", yet the anchor names him as the director.
    assert cover(items[2], VARGA, [AUREL, VARGA], items) >= MET
    # The co-star is a side link once the anchor names someone in the asked role.
    assert cover(items[2], MORROW, [AUREL, MORROW], items) < MET


def test_without_roles_the_relation_words_decide():
    items = [
        NeedItem("entity", "aurelie", "Aurelie", ("aurel",)),
        NeedItem("terms", "direct born earli", "director born earlier"),
        bridge_item(()),
    ]
    assert cover(items[2], VARGA, [AUREL, VARGA], items) < MET
    assert cover(items[2], MORROW, [AUREL, MORROW], items) >= MET


def test_proper_names_splits_lists_and_keeps_connectors():
    found = [
        k for _, k in proper_names("starring Rex Hollis and Nell Sorensen in Bank of England.")
    ]
    assert "rex hollis" in found and "nell sorensen" in found
    assert "bank of england" in found
    assert [k for _, k in proper_names("He met Salt and Iron fans.")] == ["salt and iron"]
    # A comma or bracket ends a name; one capitalised word is no name.
    assert proper_names("Paris, France. London") == []


NO_PAGE = Gazetteer([("p", "Tess Rowan"), ("o", "On Broadway")])


def named(chunk_id: str, doc_id: str, title: str, text: str) -> PassageFeatures:
    return feat(chunk_id, doc_id, title, text, NO_PAGE)


REED = named(
    "p#0",
    "p",
    "Tess Rowan",
    "She appeared as the mother of main character Lena Quist (Nell Sorensen) on Salt and Iron.",
)
BROADWAY = named(
    "o#0", "o", "On Broadway", "On Broadway is a 2006 film starring Rex Hollis and Nell Sorensen."
)
UNRELATED = named("u#0", "u", "Unrelated", "A 2006 film starring Rex Hollis.")

QUESTION = "Who is the spouse of the actress that plays lena quist on salt and iron?"


def test_shared_rare_name_is_the_hop_when_the_question_names_no_page():
    needs = question_needs(QUESTION, NO_PAGE)
    items = need_items(needs)
    bridge = next(i for i in items if i.kind == "bridge")
    assert cover(bridge, BROADWAY, [REED, BROADWAY], items) == 1.0
    # Sharing a name with a passage that does not match the question is weaker.
    assert cover(bridge, BROADWAY, [UNRELATED, BROADWAY], items) < MET
    assert not gap_spec(needs, items, [REED, BROADWAY])


def test_bridge_names_become_atomic_micro_queries():
    needs = question_needs(QUESTION, NO_PAGE)
    items = need_items(needs)
    hops = bridge_names(needs, items, [REED])
    assert hops[0][0] == "nell sorensen"
    # The relation words the name's sentence already states are not asked again.
    assert "spouse" in hops[0][1] and "quist" not in hops[0][1]
    gaps = gap_spec(needs, items, [REED])
    # The chain's hop 2 comes first: the answer hop 1's passage states, asked with
    # the words the question's form gives that hop ("the spouse of").
    assert gaps and gaps[0].hops[0] == ("nell sorensen", "spouse")
    assert hops[0] in gaps[0].hops
    texts = [q.text for q in micro_queries(gaps, [], doc_titles={})]
    assert texts[0].startswith("nell sorensen spouse")


def test_gap_round_trips_its_hops():
    gap = Gap(
        "missing_relation", "X", "spouse", None, "why", ("d",), 2, (("nell sorensen", "spouse"),)
    )
    back = Gap.from_dict(gap.to_dict())
    assert back.hops == gap.hops and back.targets == gap.targets


def test_a_lower_case_attribute_noun_is_not_a_question_entity():
    gazetteer = Gazetteer(
        [
            ("y", "Year"),
            ("fb", "The Second Sound of the Bell Against the Wandering Tribes of Old"),
        ]
    )
    needs = question_needs(
        "What year did the author of The Second Sound of the Bell Against the Wandering "
        "Tribes of Old die?",
        gazetteer,
    )
    # A twelve-word title is matched whole; the asked "year" is no entity.
    assert [e.targets for e in needs.entities] == [("fb",)]


def test_content_links_serve_anchors_without_title_links():
    gazetteer = Gazetteer([("w", "The Work"), ("b", "Bible")])

    def f(chunk_id, doc_id, title, text):
        return feat(chunk_id, doc_id, title, text, gazetteer)

    question = "What year did the author of The Work die?"
    needs = question_needs(question, gazetteer)
    items = need_items(needs)
    bridge = next(i for i in items if i.kind == "bridge")
    hop = f("h#0", "h", "Church history", "Ada Quill (1505-1572) was a reformer who died in 1572.")
    plain = f(
        "w#0",
        "w",
        "The Work",
        "The Work states the year of its author; critics such as Ada Quill cite it.",
    )
    linked = f(
        "w#0",
        "w",
        "The Work",
        "The Work states the year of its author; critics such as Ada Quill cite it. It cites the Bible.",
    )
    # The anchor names someone only by a name without a page: the content link counts.
    assert cover(bridge, hop, [plain, hop], items) >= MET
    # An anchor that links to other pages by title keeps to its title links...
    assert cover(bridge, hop, [linked, hop], items) < MET
    # ...unless it names the person in the asked role.
    in_role = f(
        "w#0", "w", "The Work", "The Work is a tract by the reformer Ada Quill. It cites the Bible."
    )
    assert cover(bridge, hop, [in_role, hop], items) == 1.0


def test_role_named_keys_reads_the_words_before_a_name():
    text = "A 1943 painting by the British painter Vera Lind, shown with Ruby Lowell."
    f = feat("r#0", "r", "Ruby", text, Gazetteer([]))
    assert f.role_named_keys(frozenset({stem("painter")})) == frozenset({"vera lind"})
    assert f.role_named_keys(frozenset({"by"})) == frozenset({"vera lind"})
    assert f.role_named_keys(frozenset({"direct"})) == frozenset()


def test_plain_by_stands_for_a_makers_role_only_when_the_role_word_is_absent():
    gazetteer = Gazetteer([("w", "The Work"), ("c", "Cal Drew")])

    def f(chunk_id, doc_id, title, text):
        return feat(chunk_id, doc_id, title, text, gazetteer)

    hop = f("h#0", "h", "Guild", "Ada Quill (1505-1572) led the guild.")
    by_only = f("w#0", "w", "The Work", "The Work is a tract by Ada Quill.")
    directed = f("w#0", "w", "The Work", "The Work is a film directed by Cal Drew, by Ada Quill.")

    def hop_cover(question, anchor):
        items = need_items(question_needs(question, gazetteer))
        bridge = next(i for i in items if i.kind == "bridge")
        return cover(bridge, hop, [anchor, hop], items)

    # A maker's role: "by" will do. Any other role: it will not.
    assert hop_cover("What year did the author of The Work die?", by_only) == 1.0
    assert hop_cover("What year did the sister of The Work die?", by_only) < 1.0
    # When the anchor names the director by the role word, a plain "by" is not the director.
    assert hop_cover("What year did the director of The Work die?", directed) < 1.0


def test_a_name_given_in_the_asked_role_is_the_first_hop_to_ask_about():
    gazetteer = Gazetteer([("w", "The Work")])
    text = "The Work is a tract by Zed Young, kept at Alder House Library."
    anchor = feat("w#0", "w", "The Work", text, gazetteer)
    needs = question_needs("Who was married to the creator of The Work?", gazetteer)
    hops = bridge_names(needs, need_items(needs), [anchor])
    # Both names share the sentence; alphabetical order alone would put Alder first.
    assert [h[0] for h in hops] == ["zed young", "alder house library"]


def test_corpus_knowledge_keeps_rare_names_without_a_page(tiny_index):
    from sealgraph.ledger.knowledge import CorpusKnowledge

    kn = CorpusKnowledge(tiny_index)
    studio = tiny_index.lookup_title("Northwind Studio")[0]
    names = {k for _, k in kn.features([studio])[0].names}
    # "Tomas Greyhill" has no page: a content link; "Port Ellis" has one: a title link.
    assert "tomas greyhill" in names
    assert "port ellis" not in names
    assert kn.distinctive_name("tomas greyhill")


def test_a_role_is_read_across_an_auxiliary_not_across_an_of():
    gazetteer = Gazetteer([("kite", "Project Kite"), ("ops", "Ops Team")])
    text = "Ada Quill has led the Ops Team since 2019. Rex Hollis is the tech lead of Project Kite."
    f = feat("ops#1", "ops", "Ops Team", text, gazetteer)
    lead = frozenset({stem("lead")})
    # "has led": the perfect of the role's own verb gives Ada Quill the role...
    assert "ada quill" in f.role_named_keys(lead)
    # ...and "the lead of Project Kite" makes Kite what is led, not who leads.
    assert f.role_linked_docs(lead) == frozenset()


def test_a_compared_holders_value_is_not_met_by_a_linked_page_that_names_no_holder():
    gazetteer = Gazetteer([("ops", "Ops Team"), ("web", "Web Team"), ("chart", "Org Chart")])

    def f(chunk_id, doc_id, title, text):
        return feat(chunk_id, doc_id, title, text, gazetteer)

    question = "Who joined Zephyr earlier, the lead of the Ops Team or the lead of the Web Team?"
    items = need_items(question_needs(question, gazetteer))
    web = next(i for i in items if i.kind == "bridge" and i.targets == ("web",))
    anchor = f("web#0", "web", "Web Team", "The Web Team sits in Product, see the Org Chart.")
    # The chart states a date and the question's words, but gives nobody the role.
    chart = f("chart#1", "chart", "Org Chart", "Team leads joined Product in January 2023.")
    assert cover(web, chart, [anchor, chart], items) < MET
    # The team's own passage that names its lead and the lead's date is the hop.
    own = f("web#1", "web", "Web Team", "Ivo Brandt leads the Web Team. He joined in May 2020.")
    assert cover(web, own, [anchor, own], items) >= MET
