from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sealgraph.text.chunking import chunk_document, markdown_headings, split_sentences
from sealgraph.text.tokens import token_counter
from sealgraph.types import Document


@pytest.fixture(scope="module")
def counter():
    return token_counter("o200k_base")


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def test_split_tiles_and_keeps_trailing_whitespace_with_the_sentence():
    text = "  One here.  Two there!\tThree?  "
    assert sentences(text) == ["  One here.  ", "Two there!\t", "Three?  "]


def test_split_does_not_cut_after_abbreviations_initials_or_decimals():
    text = (
        "Mr. Smith met Dr. Jones at St. Paul's in the U.S. Army camp. "
        "J. R. R. Tolkien wrote it, e.g. in 1937, i.e. early. Pi is 3.14 or so. Next one."
    )
    assert sentences(text) == [
        "Mr. Smith met Dr. Jones at St. Paul's in the U.S. Army camp. ",
        "J. R. R. Tolkien wrote it, e.g. in 1937, i.e. early. ",
        "Pi is 3.14 or so. ",
        "Next one.",
    ]


def test_split_numeric_abbreviations_only_before_numbers():
    assert sentences("See No. 5 and Fig. 2 here. No. It is not.") == [
        "See No. 5 and Fig. 2 here. ",
        "No. ",
        "It is not.",
    ]


def test_split_ellipses_quotes_and_brackets():
    text = 'Wait... what? He said "Stop." Then (they left.) Done… Really.'
    assert sentences(text) == [
        "Wait... what? ",
        'He said "Stop." ',
        "Then (they left.) ",
        "Done… ",
        "Really.",
    ]


def test_split_lowercase_continuation_is_not_a_boundary():
    assert sentences("Yahoo! is a company. Ok.") == ["Yahoo! is a company. ", "Ok."]


def test_split_blank_lines_and_list_items_are_boundaries():
    text = "Intro line without stop\n\nSecond para\n- item one\n- item two\n1. first\n2. second"
    assert sentences(text) == [
        "Intro line without stop\n\n",
        "Second para\n",
        "- item one\n",
        "- item two\n",
        "1. first\n",
        "2. second",
    ]


def test_split_cjk_full_stops():
    assert sentences("東京です。次の文です。") == ["東京です。", "次の文です。"]


def test_split_empty_text():
    assert split_sentences("") == []


def test_markdown_headings_skip_code_fences():
    text = "# Title\n```\n# not a heading\n```\n## Real ##\n#hashtag\n"
    headings = markdown_headings(text)
    assert [(h.level, h.text) for h in headings] == [(1, "Title"), (2, "Real")]
    assert text[headings[1].start : headings[1].end] == "## Real ##\n"


HANDBOOK = """# Handbook

Intro text for everyone.

## Expenses

Keep receipts. Claims are monthly.

### Travel

Trains first. Flights need approval.

## Leave

Take your days.
"""


def test_headings_start_chunks_and_carry_the_section_chain(counter):
    doc = Document("hb.md", "Handbook", HANDBOOK)
    chunks = chunk_document(doc, counter, max_tokens=256)
    assert [c.section for c in chunks] == [
        ("Handbook",),
        ("Handbook", "Expenses"),
        ("Handbook", "Expenses", "Travel"),
        ("Handbook", "Leave"),
    ]
    assert chunks[1].text.startswith("## Expenses\n")
    assert chunks[2].text == "### Travel\n\nTrains first. Flights need approval.\n\n"
    assert "".join(c.text for c in chunks) == HANDBOOK
    assert [c.chunk_id for c in chunks] == ["hb.md#0", "hb.md#1", "hb.md#2", "hb.md#3"]


def test_heading_without_own_text_stays_with_its_first_subsection(counter):
    text = "# Handbook\n\n## Expenses\n\nKeep receipts.\n\n## Leave\n\nRest.\n"
    chunks = chunk_document(Document("d", "Handbook", text), counter)
    assert [c.text for c in chunks] == [
        "# Handbook\n\n## Expenses\n\nKeep receipts.\n\n",
        "## Leave\n\nRest.\n",
    ]
    assert chunks[0].section == ("Handbook", "Expenses")


def test_preamble_text_has_an_empty_section_but_blank_lines_do_not(counter):
    chunks = chunk_document(Document("d", "t", "Intro.\n# A\nText.\n"), counter)
    assert [(c.text, c.section) for c in chunks] == [("Intro.\n", ()), ("# A\nText.\n", ("A",))]
    (chunk,) = chunk_document(Document("d", "t", "\n\n# A\nText.\n"), counter)
    assert chunk.section == ("A",)


def test_plain_text_has_no_sections(counter):
    doc = Document("n.txt", "n", "# not a heading\nJust text.", metadata={"format": "text"})
    (chunk,) = chunk_document(doc, counter)
    assert chunk.section == ()


def test_greedy_packing_respects_max_tokens(counter):
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    chunks = chunk_document(Document("d", "t", text), counter, max_tokens=20)
    assert len(chunks) > 1
    assert all(c.n_tokens <= 20 for c in chunks)
    assert all(c.n_tokens == counter.count(c.text) for c in chunks)
    # Greedy: adding the next chunk's first sentence would exceed the limit.
    for current, following in itertools.pairwise(chunks):
        first = following.text[: following.sentences[0][1]]
        assert counter.count(current.text + first) > 20


def test_long_sentence_is_cut_after_spaces_into_pieces_that_fit(counter):
    long = "Long " + "word " * 100 + "end. "
    text = "Short one. " + long + "Short two."
    chunks = chunk_document(Document("d", "t", text), counter, max_tokens=20)
    assert [c.text for c in chunks] == [
        "Short one. ",
        "Long " + "word " * 18,
        *["word " * 19] * 4,
        "word " * 6 + "end. Short two.",  # the last piece packs with what follows
    ]
    assert [c.n_tokens for c in chunks] == [4, 20, 20, 20, 20, 20, 11]
    assert chunks[-1].sentence_texts() == ["word " * 6 + "end. ", "Short two."]


def test_word_longer_than_max_tokens_is_cut_between_characters(counter):
    text = "x" * 300 + " " + "y" * 50
    chunks = chunk_document(Document("d", "t", text), counter, max_tokens=20)
    assert "".join(c.text for c in chunks) == text
    assert [c.n_tokens for c in chunks] == [20, 19, 13]
    assert chunks[1].text.endswith("x ")  # the space still ends a piece where it can
    assert chunks[2].text == "y" * 50


def test_cut_pieces_keep_a_word_and_prefer_the_last_space(counter):
    text = "   " + "x" * 400
    chunks = chunk_document(Document("d", "t", text, metadata={"format": "text"}), counter, 8)
    assert chunks[0].text.startswith("   x")  # no piece of whitespace alone
    assert "".join(c.text for c in chunks) == text
    assert all(c.n_tokens <= 8 for c in chunks)
    # A long run of spaces is itself cut when it alone is too long.
    text = "a" + " " * 5000 + "b"
    chunks = chunk_document(Document("d", "t", text, metadata={"format": "text"}), counter, 8)
    assert "".join(c.text for c in chunks) == text
    assert len(chunks) > 1 and all(c.n_tokens <= 8 for c in chunks)
    assert chunks[-1].text.endswith(" b")


def test_given_sentence_spans_longer_than_max_tokens_are_cut_too(counter):
    long = "Alpha " + "beta " * 60
    text = long + "Gamma."
    doc = Document(
        "p", "T", text, metadata={"sentence_spans": [[0, len(long)], [len(long), len(text)]]}
    )
    chunks = chunk_document(doc, counter, max_tokens=16)
    assert "".join(c.text for c in chunks) == text
    assert len(chunks) > 3 and all(c.n_tokens <= 16 for c in chunks)
    assert all(c.text.endswith(" ") for c in chunks[:-1])


def test_a_character_of_more_tokens_than_max_tokens_is_a_chunk_of_its_own(counter):
    wide = next(ch for ch in "🫠𓀀𝔸䨻" if counter.count(ch) > 1)
    text = "a" + wide + "b"
    chunks = chunk_document(Document("d", "t", text), counter, max_tokens=1)
    assert "".join(c.text for c in chunks) == text
    assert wide in [c.text for c in chunks]
    assert all(c.n_tokens <= 1 or len(c.text) == 1 for c in chunks)


def test_given_sentence_spans_are_used(counter):
    sents = ["Alpha beta. Gamma", " delta.", " Epsilon."]
    text = "".join(sents)
    spans = [[0, 17], [17, 24], [24, 33]]
    doc = Document("p", "T", text, metadata={"sentence_spans": spans})
    (chunk,) = chunk_document(doc, counter)
    assert chunk.sentence_texts() == sents  # not re-split at "beta. Gamma"


def test_chunk_offsets_and_sentence_spans(counter):
    chunks = chunk_document(Document("hb", "Handbook", HANDBOOK), counter, max_tokens=12)
    for order, chunk in enumerate(chunks):
        assert chunk.order == order
        assert HANDBOOK[chunk.start : chunk.end] == chunk.text
        assert "".join(chunk.sentence_texts()) == chunk.text
        assert chunk.sentences[0][0] == 0 and chunk.sentences[-1][1] == len(chunk.text)


def test_empty_document_has_no_chunks(counter):
    assert chunk_document(Document("e", "e", ""), counter) == []


_ALPHABET = st.sampled_from(
    [
        *list("abcXYZ019 .!?…\"')(\n\t-*#|>"),
        "Mr. ",
        "e.g. ",
        "U.S. ",
        "3.14",
        "\n\n",
        "## H\n",
        "```\n",
        "。",
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=st.lists(_ALPHABET, max_size=80), max_tokens=st.integers(1, 40))
def test_chunks_reconstruct_any_text_exactly(counter, parts, max_tokens):
    text = "".join(parts)
    for fmt in ("markdown", "text"):
        doc = Document("d", "t", text, metadata={"format": fmt})
        chunks = chunk_document(doc, counter, max_tokens=max_tokens)
        assert "".join(c.text for c in chunks) == text
        position = 0
        for order, chunk in enumerate(chunks):
            assert chunk.order == order and chunk.start == position
            assert text[chunk.start : chunk.end] == chunk.text
            assert chunk.text  # no empty chunks
            assert "".join(chunk.sentence_texts()) == chunk.text
            assert chunk.n_tokens == counter.count(chunk.text)
            if len(chunk.sentences) > 1:
                assert chunk.n_tokens <= max_tokens
            position = chunk.end


@given(text=st.text(max_size=300))
def test_split_sentences_tiles_any_text(text):
    spans = split_sentences(text)
    assert "".join(text[a:b] for a, b in spans) == text
    assert all(a < b for a, b in spans)


def test_lexical_text_weights_title_and_headings_as_fields():
    from sealgraph.text.chunking import indexed_text, lexical_text
    from sealgraph.types import Chunk

    chunk = Chunk(
        chunk_id="d#0", doc_id="d", title="Lifespan", section=("Lifespan", "Startup"),
        order=0, start=0, end=9, text="Body text", n_tokens=2, sentences=((0, 9),),
    )  # fmt: skip
    assert indexed_text(chunk) == "Lifespan\nStartup\nBody text"  # what the embedder reads
    assert lexical_text(chunk, 2) == "Lifespan\nStartup\nLifespan\nStartup\nBody text"
    assert lexical_text(chunk, 1) == indexed_text(chunk)
