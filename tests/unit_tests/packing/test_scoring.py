"""Scoring primitives: terms, similarity, answer types, cohesion, priors, rendering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sealgraph.packing.render import fit_to_budget, render_block, render_context
from sealgraph.packing.scoring import (
    cohesion,
    contains_answer_type,
    fast_words,
    focus_term_sets,
    idf_weights,
    infer_answer_type,
    length_penalty,
    match_section_key,
    matches_focus,
    question_similarity,
    rank_scores,
    section_prior,
    stem,
    terms,
    title_phrase,
)
from sealgraph.text.names import words
from sealgraph.text.tokens import token_counter


def test_stem_merges_inflections():
    assert stem("portrayed") == stem("portrays") == stem("portraying")
    assert stem("films") == stem("film")
    assert stem("species") != ""
    assert stem("1945") == "1945"


def test_terms_drop_stopwords_and_fold():
    assert terms("The Films of Beyoncé") == {stem("films"), stem("beyonce")}


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60))
def test_fast_words_equals_shared_words(text):
    assert fast_words(text) == words(text)


def test_fast_words_on_accented_and_ascii_text():
    assert fast_words("Café Zürich's BEST-seller") == words("Café Zürich's BEST-seller")
    assert fast_words("It's 3 o'clock") == ["it's", "3", "o'clock"]


def test_question_similarity_weights_rare_terms_and_ignores_absent_ones():
    units = [terms("Kiss and Tell is a 1945 film."), terms("The film starred Shirley Temple.")]
    weights = idf_weights(units)
    q = terms("Which film starred Shirley Temple and a zebra?")
    # "zebra" is in no unit: it cannot tell units apart and does not count.
    assert question_similarity(q, units[1], weights) == pytest.approx(1.0)
    assert 0 < question_similarity(q, units[0], weights) < 0.5
    assert question_similarity(frozenset(), units[0], weights) == 0.0


def test_rank_scores_are_one_minus_rank_over_n_with_stable_ties():
    assert rank_scores([0.2, 0.9, 0.2]) == pytest.approx([2 / 3, 1.0, 1 / 3])
    assert rank_scores([]) == []


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When was the Lumen Lamp designed?", "date"),
        ("In what year did the band form?", "date"),
        ("Which magazine was published first, Woman's Day or The Lady?", "date"),
        ("How many legs does a scorpion have?", "number"),
        ("Which genus contains more species, Crowea or Dracula?", "number"),
        ("What was the population of the city?", "number"),
        ("Who designed the Lumen Lamp?", None),
    ],
)
def test_infer_answer_type(question, expected):
    assert infer_answer_type(question) == expected


def test_contains_answer_type():
    assert contains_answer_type("It opened in March 1998.", "date")
    assert contains_answer_type("Founded in the 1920s.", "date")
    assert not contains_answer_type("It opened on a sunny day.", "date")
    assert contains_answer_type("They have eight legs.", "number")
    assert contains_answer_type("About 3,000 people.", "number")
    assert not contains_answer_type("They have legs.", "number")
    assert not contains_answer_type("In 1998.", "person")
    assert not contains_answer_type("In 1998.", None)


def test_focus_terms_match_on_at_least_half_their_terms():
    focus = focus_term_sets(["Shirley Temple Black", "Kiss and Tell", "", "Kiss and Tell"])
    assert len(focus) == 2
    assert matches_focus(focus, terms("Temple Black served as ambassador."))
    assert not matches_focus(focus, terms("Black served as ambassador."))
    assert matches_focus(focus, terms("The play Kiss and Tell."))
    assert not matches_focus([], terms("anything"))


def test_cohesion_is_one_for_back_references_else_overlap_coefficient():
    a = terms("Northwind Studio designs lamps in Port Ellis.")
    assert cohesion(a, terms("He moved away."), "He moved away.") == 1.0
    assert cohesion(a, terms("x"), "  The band split in 1990.") == 1.0
    b = terms("Port Ellis lies on the coast.")
    # {port, ellis} shared; the shorter set {port, ellis, lie, coast} has 4 terms.
    assert cohesion(a, b, "Port Ellis lies on the coast.") == pytest.approx(2 / 4)
    assert cohesion(a, frozenset(), "") == 0.0


def test_title_phrase_drops_disambiguator_and_needs_content():
    assert title_phrase("Parklife (album)") == " parklife "
    assert title_phrase("The") is None
    assert title_phrase("Kiss and Tell (1945 film)") in " the film kiss and tell starred "


def test_length_penalty():
    assert length_penalty(0, 120) == 1.0
    assert length_penalty(120, 120) == pytest.approx(0.5)
    assert length_penalty(360, 120) == pytest.approx(0.25)


def test_section_prior_uses_the_most_specific_case_insensitive_match():
    priors = {"results": 0.2, "results > tables": 0.5, "": 0.1}
    assert section_prior("Chapter 2 > Results", priors) == 0.2
    assert section_prior("Chapter 2 > RESULTS > Tables", priors) == 0.5
    assert section_prior("", priors) == 0.1
    assert section_prior("Intro", priors) == 0.0
    assert match_section_key("Intro", {}) is None


def test_render_block_and_context_format():
    block = render_block(3, "Lumen Lamp", "Design > History", "  Designed in 1998.\n")
    assert block == "[3] Lumen Lamp > Design > History\nDesigned in 1998."
    assert render_block(1, "T", "", "x") == "[1] T\nx"
    assert render_context(["[1] A\na", "[2] B\nb"]) == "[1] A\na\n\n[2] B\nb"
    assert render_context([]) == ""


def test_fit_to_budget_drops_the_lowest_value_span_first_not_the_last():
    counter = token_counter()
    texts = ["alpha beta gamma delta " * 5, "short one", "epsilon zeta eta theta " * 5]
    values = [0.9, 0.1, 0.8]

    def render(kept):
        return render_context([render_block(n, "T", "", texts[k]) for n, k in enumerate(kept, 1)])

    def lowest(kept):
        return min(kept, key=lambda k: values[k])

    full = counter.count(render([0, 1, 2]))
    without_middle = counter.count(render([0, 2]))
    context, tokens, kept, dropped = fit_to_budget(3, render, lowest, counter, full - 1)
    assert kept == [0, 2]
    assert dropped == [(1, full)]
    assert tokens == without_middle == counter.count(context)
    # A budget that fits nothing drops everything and renders the empty context.
    context, tokens, kept, dropped = fit_to_budget(3, render, lowest, counter, 0)
    assert (context, tokens, kept) == ("", 0, [])
    assert [d[0] for d in dropped] == [1, 2, 0]
