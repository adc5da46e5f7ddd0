"""Huge documents: a one-line text of megabytes indexes in linear time and stays answerable.

A text with no line breaks and no sentence boundaries used to be fatal twice over:
the sentence splitter rescanned the line for every full stop (quadratic), and the
whole text became one chunk that no packing budget could hold. These tests pin
the repaired behaviour without timing anything that could flake: the splitter's
reads of the text and the chunker's tokenizer work are counted, and the only
clocks measure inputs that used to take hours and now take milliseconds.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sealgraph import build_graph
from sealgraph.index import build_index
from sealgraph.index._bm25 import lexical_tokens
from sealgraph.index.folder._lexical import write_lexical
from sealgraph.index.folder._segments import Segment
from sealgraph.ledger.knowledge import term_document_frequencies
from sealgraph.text.chunking import chunk_document, markdown_headings, split_sentences
from sealgraph.text.lexicon.english import ENGLISH
from sealgraph.text.names import stemmed_terms
from sealgraph.text.tokens import TokenCounter, token_counter
from sealgraph.types import Chunk, Document

_FILLER = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "river",
    "stone",
    "castle",
    "market",
    "quiet",
    "north",
    "seven",
    "lantern",
]


def filler_words(n_words: int, seed: int = 0) -> str:
    """Lower-case words separated by spaces: no sentence boundary anywhere."""
    return " ".join(random.Random(seed).choices(_FILLER, k=n_words))


def one_line_sentences(n_chars: int) -> str:
    """One line of short sentences: many full stops, each followed by a capital."""
    sentence = "Stone river market no. 12. Then J. Smith met Dr. Who. "
    return (sentence * (n_chars // len(sentence) + 1))[:n_chars]


class CountingStr(str):
    """A str that adds up the characters its slices and searches cover."""

    read = 0

    def __getitem__(self, key):
        out = str.__getitem__(self, key)
        CountingStr.read += len(out)
        return out

    def rfind(self, sub, start=None, end=None):
        found = str.rfind(self, sub, start, end)
        stop = len(self) if end is None else end
        CountingStr.read += stop - max(found, start or 0)
        return found

    def find(self, sub, start=None, end=None):
        found = str.find(self, sub, start, end)
        stop = len(self) if end is None else end
        CountingStr.read += (stop if found < 0 else found) - (start or 0)
        return found


class CountingCounter(TokenCounter):
    """A token counter that adds up the characters it encodes."""

    def __init__(self) -> None:
        super().__init__("o200k_base")
        self.encoded = 0

    def _count_uncached(self, text: str) -> int:
        self.encoded += len(text)
        return super()._count_uncached(text)

    def prefix_chars(self, text: str, max_tokens: int) -> int:
        self.encoded += len(text)
        return super().prefix_chars(text, max_tokens)


@pytest.fixture(scope="module")
def counter():
    return token_counter("o200k_base")


# --- (a) linear time -------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        one_line_sentences,
        lambda n: "Ab. " * (n // 4),  # a sentence every four characters
        lambda n: "in 12. Then " * (n // 12),  # list-marker-like tokens mid-line
        lambda n: ("x" * 5000 + ". Y ") * (n // 5004),  # long tokens before each stop
    ],
    ids=["sentences", "short-sentences", "numbers", "long-tokens"],
)
def test_sentence_splitting_reads_a_one_line_text_a_bounded_number_of_times(make):
    # The splitter used to slice (or rfind) back to the start of the line for
    # every full stop: the characters it read grew with the square of the line.
    small, large = CountingStr(make(100_000)), CountingStr(make(400_000))
    CountingStr.read = 0
    spans_small = split_sentences(small)
    read_small = CountingStr.read
    CountingStr.read = 0
    spans_large = split_sentences(large)
    read_large = CountingStr.read
    assert "".join(large[a:b] for a, b in spans_large) == large
    assert len(spans_large) >= len(spans_small) > 0
    assert read_small <= 3 * len(small)
    assert read_large <= 3 * len(large)


def test_chunking_encodes_each_character_a_bounded_number_of_times():
    # Cutting an over-long sentence must not count its growing prefixes.
    text = filler_words(200_000)  # ~1.2 MB, one sentence
    for max_tokens in (16, 256):
        counting = CountingCounter()
        chunks = chunk_document(Document("d", "d", text), counting, max_tokens)
        assert "".join(c.text for c in chunks) == text
        assert counting.encoded <= 8 * len(text), (max_tokens, counting.encoded / len(text))


@pytest.mark.parametrize(
    "text",
    [
        "." * 1_000_000 + " x",
        "!" * 1_000_000 + "a",
        "…" * 1_000_000,
        "." + ")" * 1_000_000,
        "# Title" + " " * 1_000_000 + "end\n",
        "# Title" + " #" * 500_000 + "\n",
        "\n" + " \t" * 500_000 + "1. A",
        "x" * 1_000_000 + ". Next.",
    ],
    ids=[
        "dots",
        "bangs",
        "ellipses",
        "closers",
        "heading-spaces",
        "heading-hashes",
        "indent",
        "long-token",
    ],
)
def test_runs_that_made_the_regexes_backtrack_split_in_linear_time(text):
    # Quadratic before (a run of 50,000 full stops took 41 s, 1,000,000 would take
    # hours); linear now (milliseconds): a bound of seconds cannot flake.
    start = time.process_time()
    spans = split_sentences(text)
    markdown_headings(text)
    assert time.process_time() - start < 10
    assert "".join(text[a:b] for a, b in spans) == text


# --- (b) exact tiling and the max_tokens bound --------------------------------------------

_LONG_PARTS = st.sampled_from(
    [
        "word ",
        "Word. ",
        "x" * 97,
        "y" * 400,
        " " * 50,
        "\t\n",
        "é",
        "東京",
        "🫠",
        "no. 5 ",
        "\n\n",
        "## H\n",
        "a.b.c",
    ]
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=st.lists(_LONG_PARTS, max_size=60), max_tokens=st.integers(1, 48))
def test_over_long_sentences_are_cut_into_pieces_that_tile_the_text_and_fit(
    counter, parts, max_tokens
):
    text = "".join(parts)
    for fmt in ("markdown", "text"):
        chunks = chunk_document(
            Document("d", "t", text, metadata={"format": fmt}), counter, max_tokens
        )
        assert "".join(c.text for c in chunks) == text
        position = 0
        for chunk in chunks:
            assert chunk.start == position and chunk.text
            assert "".join(chunk.sentence_texts()) == chunk.text
            assert chunk.n_tokens == counter.count(chunk.text)
            # Only one character that alone is more than max_tokens tokens may exceed.
            assert chunk.n_tokens <= max_tokens or len(chunk.text) == 1
            position = chunk.end


def test_a_megabyte_sentence_becomes_full_chunks_cut_at_spaces(counter):
    text = filler_words(200_000)
    chunks = chunk_document(Document("d", "d", text), counter, 256)
    assert "".join(c.text for c in chunks) == text
    assert all(c.n_tokens <= 256 for c in chunks)
    assert all(c.text.endswith(" ") for c in chunks[:-1])  # never inside a word
    assert sum(c.n_tokens for c in chunks[:-1]) / (len(chunks) - 1) > 240  # nearly full


# --- (c) a huge one-line document stays answerable ----------------------------------------


def test_a_huge_one_line_document_answers_from_its_first_sentence(tmp_path):
    # ~1.5 MB on one line with no sentence boundary after the first full stop: it
    # used to be a single chunk of ~300,000 tokens that packed "0 of 1 span" and
    # answered "insufficient".
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vault.txt").write_text("The vault code is 7431. " + filler_words(250_000))
    index = build_index(docs, tmp_path / "idx", embedder="none", warn=print)
    assert index.n_chunks > 500  # pieces of at most 256 tokens, not one chunk
    out = build_graph(index=index).invoke({"question": "What is the vault code?"})
    assert "7431" in out["answer"]
    assert "The vault code is 7431." in out["context"]
    assert any(e["chunk_id"] == "vault.txt#0" for e in out["evidence"])
    assert all(e["n_tokens"] <= 256 for e in out["evidence"])


# --- the index-time shortcuts compute what their definitions say -----------------------


def test_corpus_tables_and_bm25_vocabulary_match_their_per_text_definitions():
    texts = [
        "The Beatles' albums were recorded at Abbey Road Studios in London.",
        "Harbourlight's stories: horses, directed by a director; running runners ran.",
        "Renée and the TIDEWATER recorded there too, and the studio's albums sold.",
    ]
    chunks = [
        Chunk(f"d#{i}", "d", "Title", (), i, 0, len(t), t, 1, ((0, len(t)),))
        for i, t in enumerate(texts)
    ]
    expected: dict[str, int] = {}
    for chunk in chunks:
        for term in stemmed_terms(chunk.title + " " + chunk.text):
            expected[term] = expected.get(term, 0) + 1
    assert term_document_frequencies(chunks) == expected

    # The build's tokenizer (each distinct word stemmed once) gives the per-text tokens.
    with tempfile.TemporaryDirectory() as tmp:
        infos = write_lexical(Path(tmp), texts, ENGLISH)
        segment = Segment(Path(tmp) / "lexical" / infos[0].name, infos[0])
        assert list(segment.lengths) == [len(lexical_tokens(t)) for t in texts]
        for text in texts:
            for token in set(lexical_tokens(text)):
                assert segment.term_id(token) >= 0
        assert infos[0].n_terms == len({t for text in texts for t in lexical_tokens(text)})
