"""Aligning a file's raw text with the text its loader extracted (sealgraph.text.align)."""

from sealgraph.text.align import align_texts


def covered(raw: str, extracted: str, phrase: str) -> str:
    start = raw.index(phrase)
    first, last = align_texts(raw, extracted).to_extracted(start, start + len(phrase))
    return extracted[first:last]


HTML = (
    "<html><head><title>Ferries</title></head><body>\n"
    '<h1 id="ferries">Ferries &amp; boats</h1>\n'
    "<!-- the ferry schedule is reviewed every spring -->\n"
    '<p class="the ferry leaves">The ferry leaves every 40&nbsp;minutes.</p>\n'
    "<p>Tickets are sold on board &mdash; cash only.</p>\n"
    "</body></html>\n"
)
EXTRACTED = "# Ferries & boats\n\nThe ferry leaves every 40 minutes.\n\nTickets are sold on board — cash only.\n"


def test_a_span_of_the_page_covers_the_same_words_of_the_extracted_text():
    assert covered(HTML, EXTRACTED, "The ferry leaves every 40&nbsp;minutes.") == (
        "The ferry leaves every 40 minutes"
    )
    assert covered(HTML, EXTRACTED, "Tickets are sold on board &mdash; cash only.") == (
        "Tickets are sold on board — cash only"
    )


def test_words_inside_tags_comments_and_references_are_not_text():
    # "the ferry leaves" in the class attribute and "ferry" in the comment come first in
    # the raw file; the text's words must match the paragraph, not them.
    aligned = align_texts(HTML, EXTRACTED)
    at = EXTRACTED.index("The ferry")
    i = aligned.starts.index(at)
    assert HTML[aligned.raw_starts[i] : aligned.raw_ends[i]] == "The"
    assert aligned.raw_starts[i] > HTML.index("<p class")


def test_a_span_holding_only_markup_maps_to_an_empty_span():
    start = HTML.index("<!--")
    end = HTML.index("-->") + 3
    first, last = align_texts(HTML, EXTRACTED).to_extracted(start, end)
    assert first == last


def test_words_the_loader_wrote_itself_do_not_break_the_words_around_them():
    raw = "alpha beta gamma delta epsilon zeta eta theta"
    extracted = "alpha beta gamma Page 2 delta epsilon zeta eta theta"
    aligned = align_texts(raw, extracted)
    assert aligned.n_matched == 8  # every raw word, the inserted two left out
    assert covered(raw, extracted, "gamma delta") == "gamma Page 2 delta"


def test_a_common_word_does_not_jump_over_a_stretch():
    # Alone, "the" of the extracted text would match the first "the" of the raw file.
    raw = "<nav>the menu</nav> intro words here. the end of the story"
    extracted = "intro words here. the end of the story"
    assert covered(raw, extracted, "the end of the story") == "the end of the story"


def test_an_extracted_part_maps_into_the_longer_text_by_a_shift():
    raw = "one two three"
    aligned = align_texts(raw, "one two three").shifted(10, 30)
    assert aligned.to_extracted(4, 7) == (14, 17)
    assert aligned.to_extracted(13, 13) == (30, 30)
