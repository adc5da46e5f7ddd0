"""Gazetteer: title aliases, declared aliases and longest-match mention finding."""

from __future__ import annotations

import pytest

from sealgraph.ledger.gazetteer import (
    Gazetteer,
    acronym,
    declared_aliases,
    strip_org_suffix,
    title_aliases,
)
from sealgraph.text.names import normalize_name

TITLES = [
    ("ppt", "Payments Platform Team"),
    ("set", "Search Experience Team"),
    ("ledgerline", "Ledgerline Billing Service"),
    ("lindqvist", "Mara Lindqvist"),
    ("harbourlight-album", "Harbourlight (album)"),
    ("harbourlight-song", "Harbourlight (song)"),
    ("concord", "Concord, California"),
    ("apple-inc", "Apple Inc."),
    ("apple-computer", "Apple Computer"),
    ("music", "Music"),
    ("gaga", "Lady Marlow"),
]


@pytest.fixture
def gazetteer() -> Gazetteer:
    return Gazetteer(TITLES)


def mentions(gaz: Gazetteer, text: str) -> list[tuple[str, str, tuple[str, ...], str]]:
    return [(m.surface, m.key, m.targets, m.kind) for m in gaz.find_mentions(text)]


# --- title aliases ---------------------------------------------------------------


def test_title_alias_drops_parenthetical_disambiguator():
    assert title_aliases("Harbourlight (album)") == [("harbourlight", "title")]


def test_title_alias_comma_head_is_an_alias():
    aliases = dict(title_aliases("Concord, California"))
    assert aliases["concord california"] == "title"
    assert aliases["concord"] == "alias"


def test_comma_title_gives_no_surname_partial():
    # "California" is the state, not a short name of the city.
    keys = [k for k, _ in title_aliases("Concord, California")]
    assert "california" not in keys


@pytest.mark.parametrize("title", ["Apple Computer", "Apple Inc.", "Apple Computer, Inc."])
def test_org_suffix_variants_share_a_key_family(title):
    key = normalize_name(title)
    assert strip_org_suffix(key) == "apple"
    assert ("apple", "alias") in title_aliases(title)


def test_org_suffix_is_not_a_surname_partial():
    keys = [k for k, _ in title_aliases("Apple Computer")]
    assert "computer" not in keys


def test_strip_org_suffix_keeps_a_one_word_name():
    assert strip_org_suffix("group") == "group"
    assert strip_org_suffix("apple computer inc") == "apple"


def test_acronym_needs_three_content_words():
    assert acronym("payments platform team") == "ppt"
    assert acronym("mara lindqvist") == ""
    # Stopwords do not contribute initials.
    assert acronym("bank of the north east") == "bne"
    assert ("ppt", "acronym") in title_aliases("Payments Platform Team")


def test_surname_partial_for_two_word_person_name():
    assert title_aliases("Mara Lindqvist") == [
        ("mara lindqvist", "title"),
        ("lindqvist", "partial"),
    ]


def test_short_last_word_is_not_a_partial():
    # Last words of three letters or fewer ("Bob Lee") are too ambiguous.
    assert title_aliases("Bob Lee") == [("bob lee", "title")]


def test_stopword_title_has_no_aliases():
    assert title_aliases("The") == []


# --- the gazetteer -----------------------------------------------------------------


def test_lookup_by_title_alias_and_org_suffix(gazetteer):
    assert gazetteer.lookup("Payments Platform Team") == (("ppt",), "title")
    assert gazetteer.lookup("the payments platform team's") == (("ppt",), "title")
    assert gazetteer.lookup("Concord") == (("concord",), "alias")
    # An unseen legal form falls back to the suffix-stripped key (shared by both Apples).
    assert gazetteer.lookup("Apple Corporation") == (("apple-computer", "apple-inc"), "alias")
    assert gazetteer.lookup("Nowhere Land") == ((), None)


def test_ambiguous_name_keeps_every_target(gazetteer):
    assert gazetteer.lookup("Harbourlight") == (
        ("harbourlight-album", "harbourlight-song"),
        "title",
    )
    found = gazetteer.find_mentions("Harbourlight reached number two.")
    assert [m.targets for m in found] == [("harbourlight-album", "harbourlight-song")]
    # "Apple" is an alias of two documents: it stays ambiguous.
    assert gazetteer.lookup("Apple")[0] == ("apple-computer", "apple-inc")


def test_longest_match_with_possessive_case_and_article(gazetteer):
    text = "We asked the Payments Platform Team's lead about it."
    assert mentions(gazetteer, text) == [
        ("Payments Platform Team's", "payments platform team", ("ppt",), "title")
    ]
    upper = mentions(gazetteer, "THE PAYMENTS PLATFORM TEAM ships Ledgerline Billing Service")
    assert [m[1] for m in upper] == ["payments platform team", "ledgerline billing service"]


def test_longest_match_prefers_full_title_over_partial(gazetteer):
    found = gazetteer.find_mentions("Mara Lindqvist met Lindqvist fans.")
    assert [(m.key, m.kind) for m in found] == [
        ("mara lindqvist", "title"),
        ("lindqvist", "partial"),
    ]
    assert found[0].start == 0 and found[0].end == len("Mara Lindqvist")


def test_single_lowercase_words_do_not_link_through_partials_or_acronyms(gazetteer):
    assert mentions(gazetteer, "a lindqvist of wine") == []
    assert mentions(gazetteer, "the ppt slides") == []
    assert mentions(gazetteer, "a lady sang") == []
    # Capitalised, the same words are names.
    assert [m[1] for m in mentions(gazetteer, "we asked PPT")] == ["ppt"]
    assert [m[1] for m in mentions(gazetteer, "and Lindqvist agreed")] == ["lindqvist"]


def test_single_word_inside_a_longer_capitalised_name_is_not_a_mention(gazetteer):
    # "Lindqvist" in "Gia Lindqvist" names someone else; "Music" in "Music Hall" too.
    assert mentions(gazetteer, "the film by Gia Lindqvist") == []
    assert mentions(gazetteer, "at the Music Hall tonight") == []
    # A capitalised sentence start is no part of a name.
    assert [m[1] for m in mentions(gazetteer, "Yesterday Lindqvist agreed.")] == ["lindqvist"]


def test_capitalised_runs_stop_at_sentence_boundaries(gazetteer):
    text = "We asked PPT. Lindqvist agreed. Then Lady Marlow sang."
    assert [m[1] for m in mentions(gazetteer, text)] == ["ppt", "lindqvist", "lady marlow"]


def test_single_lowercase_word_links_only_as_a_title(gazetteer):
    # "Music" is a title of its own: the lower-case word still names it.
    assert [m[1] for m in mentions(gazetteer, "they play music")] == ["music"]
    # "concord" is only an alias: lower case it is a common noun.
    assert mentions(gazetteer, "in perfect concord") == []


def test_mention_offsets_point_at_the_surface(gazetteer):
    text = "Yesterday Lady Marlow sang."
    (m,) = gazetteer.find_mentions(text)
    assert text[m.start : m.end] == m.surface == "Lady Marlow"
    assert m.capitalized


def test_min_kind_filters_partials(gazetteer):
    assert gazetteer.find_mentions("Lindqvist agreed.", min_kind="acronym") == []
    assert len(gazetteer.find_mentions("Lindqvist agreed.")) == 1


def test_headings_rank_below_titles_and_acronyms():
    gaz = Gazetteer(
        [("ppt", "Payments Platform Team"), ("glossary", "Engineering Glossary")],
        headings=[("glossary", "PPT"), ("glossary", "Payments Platform Team"), ("ppt", "Mission")],
    )
    # The glossary's "PPT" heading does not steal the team's acronym.
    assert gaz.lookup("PPT") == (("ppt",), "acronym")
    assert gaz.lookup("Payments Platform Team") == (("ppt",), "title")
    # A heading no document owns otherwise still links.
    assert gaz.lookup("Mission") == (("ppt",), "heading")


def test_declared_alias_outranks_acronym_of_another_document():
    gaz = Gazetteer(
        [("ppt", "Payments Platform Team"), ("pp", "Project Planning Tool")],
        aliases=[("ppt", "PPT")],
    )
    assert gaz.lookup("PPT") == (("ppt",), "alias")


def test_gazetteer_is_deterministic_in_input_order():
    a = Gazetteer(TITLES)
    b = Gazetteer(list(reversed(TITLES)))
    text = "Apple Inc. and Harbourlight and the Search Experience Team and Lindqvist"
    assert a.find_mentions(text) == b.find_mentions(text)
    assert [a.title_key(d) for d, _ in TITLES] == [b.title_key(d) for d, _ in TITLES]


# --- declared aliases ----------------------------------------------------------------


def test_declared_acronym_after_the_title():
    lead = "The Payments Platform Team (PPT) builds the money-handling backbone."
    assert declared_aliases("Payments Platform Team", lead) == ["PPT"]


def test_bracketed_word_not_after_the_title_is_ignored():
    lead = "The Payments Platform Team works with Finance (FIN) every month."
    assert declared_aliases("Payments Platform Team", lead) == []


def test_declared_alias_phrases():
    lead = (
        "The Beacon Search Gateway, usually just called Beacon, routes queries. "
        'It was also known as "Lighthouse" during the beta.'
    )
    assert declared_aliases("Beacon Search Gateway", lead) == ["Beacon", "Lighthouse"]


def test_declared_alias_equal_to_title_is_dropped():
    assert declared_aliases("Beacon", "It is called Beacon.") == []


def test_declared_aliases_feed_the_gazetteer():
    lead = "The Beacon Search Gateway, usually just called Beacon, routes queries."
    aliases = [("beacon", a) for a in declared_aliases("Beacon Search Gateway", lead)]
    gaz = Gazetteer([("beacon", "Beacon Search Gateway")], aliases=aliases)
    assert [m.key for m in gaz.find_mentions("Beacon timed out.")] == ["beacon"]
