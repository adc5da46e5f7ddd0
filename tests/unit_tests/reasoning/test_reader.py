"""The offline reader: the unit that answers what the question asks, by type and structure.

A small reference manual of a fictional command-line tool ("tidyup") and a how-to
guide are the context; each test asks what a user of such docs asks and compares
the answer with the expected one.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
from support.fakes import HashEmbedder

from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import question_needs
from sealgraph.packing.scoring import terms
from sealgraph.reasoning.answer import DECLINED, AnswerAids, SpanText, compose_answer
from sealgraph.reasoning.answer._units import read_units

OPTIONS = SpanText(
    1,
    "reference/options.md",
    "Options",
    "# Options\n\n"
    "## `--jobs`\n\n"
    "Number of files tidied in parallel.\n\n"
    "Default: 2\n\n"
    "## `--retries`\n\n"
    "How often a failed upload is tried again.\n\n"
    "Default: 5\n\n"
    "## Display options\n\n"
    "| Option | Type | Default |\n"
    "| --- | --- | --- |\n"
    "| `--color` | Boolean | `true` |\n"
    "| `--depth` | Integer | `3` |\n",
)
GUIDE = SpanText(
    2,
    "guide/caching.md",
    "Caching",
    "Tidyup keeps a cache of the files it has read, so a second run is fast. "
    "Entries expire after 30 minutes.\n\n"
    "To clear the cache before a run, pass the flag like this:\n\n"
    "```bash\ntidyup --no-cache src/\n```\n\n"
    "- `cache_dir` - Where the cache lives. Defaults to `~/.tidyup`.\n"
    "- `cache_size` - The most bytes the cache may hold. Defaults to `500000`.\n\n"
    "Tidyup does not upload the cache. "
    "Uploads follow the [upload limits](../upload.md#limits), which cap *each* file at 10 MB.",
)
HISTORY = SpanText(
    3,
    "history.md",
    "History",
    "Tidyup 1.4.0 added the `--jobs` option. Version 2.0.0 removed the `--legacy` flag. "
    "The `@tidy_hook` decorator turns a function into a hook that runs after each file.",
)
SPANS = [OPTIONS, GUIDE, HISTORY]

# The corpus: these spans' units, so a word many of them write weighs little.
_UNITS = [u.text for s in SPANS for u in read_units(s.text)]
_DF = Counter(t for text in _UNITS for t in terms(text))


def _idf(term: str) -> float:
    return math.log(1.0 + len(_UNITS) / (1.0 + _DF[term]))


AIDS = AnswerAids(idf=_idf, frequency=lambda t: _DF[t])


def answer(question: str, spans=SPANS, aids=AIDS):
    return compose_answer(question_needs(question, Gazetteer([])), spans, (), aids)


# --- units --------------------------------------------------------------------------------


def test_units_keep_list_items_code_blocks_and_table_rows_whole_and_drop_directives():
    text = (
        "## Setup\n\nFirst sentence. Second sentence.\n\n"
        "- `a` - The first. Defaults to `1`.\n- `b` - The second.\n\n"
        "/// tip\nA tip.\n///\n\n{* ../src/example.py hl[2] *}\n\n"
        "```python\nprint(1)\n\nprint(2)\n```\n\n"
        "| Name | Default |\n| --- | --- |\n| `x` | 3 |\n"
    )
    units = [(u.kind, u.text, u.heading) for u in read_units(text)]
    assert units == [
        ("sentence", "First sentence.", "Setup"),
        ("sentence", "Second sentence.", "Setup"),
        ("item", "- `a` - The first. Defaults to `1`.", "Setup"),
        ("item", "- `b` - The second.", "Setup"),
        ("sentence", "A tip.", "Setup"),
        ("code", "```python\nprint(1)\n\nprint(2)\n```", "Setup"),
        ("row", "Name: `x`; Default: 3", "Setup"),
    ]


# --- answer types and structure -----------------------------------------------------------


def test_a_default_is_read_from_the_entry_the_heading_names_not_its_neighbour():
    got = answer("What is the default value of the --retries option?")
    assert got.short == "5"
    assert got.cited == (1,)


def test_a_stated_default_in_a_definition_item():
    got = answer("By default, how many bytes may the cache hold?")
    assert got.short == "500000"
    assert "cache_size" in got.answer


def test_an_option_table_row_answers_by_its_cell():
    got = answer("What is the default of the --depth option?")
    assert got.short == "3"


@pytest.mark.parametrize(
    ("question", "short"),
    [
        ("In which version was the --legacy flag removed?", "2.0.0"),
        ("How long do cache entries last?", "30 minutes"),
        ("Which decorator turns a function into a hook?", "@tidy_hook"),
    ],
)
def test_the_short_answer_has_the_asked_type(question, short):
    got = answer(question)
    assert got.short == short
    assert short in got.answer


def test_how_do_i_is_answered_with_the_code_block_the_sentence_announces():
    got = answer("How do I clear the cache before a run?")
    assert "tidyup --no-cache src/" in got.answer
    assert got.short == ""  # a procedure has no short answer


def test_yes_no_is_decided_by_the_sentence_that_states_it():
    got = answer("Does Tidyup upload the cache?")
    assert got.short == "no"
    assert got.answer.startswith("No — Tidyup does not upload the cache.")


def test_each_part_of_a_question_is_answered_with_its_own_citation():
    got = answer(
        "Which decorator turns a function into a hook, and how long do cache entries last?"
    )
    assert got.cited == (2, 3)
    assert "@tidy_hook" in got.answer and "30 minutes" in got.answer


def test_link_syntax_and_emphasis_never_reach_the_answer():
    got = answer("What size do the upload limits cap each file at?")
    assert got.short == "10 MB"
    assert "](" not in got.answer and "*each*" not in got.answer
    assert "Uploads follow the upload limits, which cap each file at 10 MB." in got.answer


def test_the_answer_step_says_which_unit_won_and_why():
    got = answer("What is the default value of the --retries option?")
    assert got.step is not None
    step = got.step.to_dict()
    best = step["parts"][0]["candidates"][0]
    assert best["n"] == 1 and best["value"] == "5"
    assert step["route"] and step["why"]
    assert set(best["features"]) >= {"lexical", "type", "structure"}


def test_the_embedder_is_read_when_the_index_lends_one():
    embedder = HashEmbedder()
    aids = AnswerAids(idf=_idf, embed=embedder.embed_documents, embedder=embedder.name)
    got = answer("What is the default value of the --retries option?", aids=aids)
    assert got.short == "5"
    assert "dense" in got.step.to_dict()["parts"][0]["candidates"][0]["features"]
    assert embedder.documents_embedded > 0


# --- declines -----------------------------------------------------------------------------


def test_a_part_no_unit_states_together_declines_under_a_calibrated_embedder():
    embedder = HashEmbedder(name="sentence-transformers/all-MiniLM-L6-v2")
    aids = AnswerAids(idf=_idf, embed=embedder.embed_documents, embedder=embedder.name)
    got = answer("What is the retry interval for websocket heartbeats?", aids=aids)
    assert got.insufficient and got.answer == DECLINED
    assert "no passage states together" in got.missing
    assert got.step is not None and got.step.route == "declined"


def test_an_uncalibrated_embedder_never_declines_by_similarity():
    embedder = HashEmbedder(name="test:uncalibrated")
    aids = AnswerAids(idf=_idf, embed=embedder.embed_documents, embedder=embedder.name)
    got = answer("What is the retry interval for websocket heartbeats?", aids=aids)
    assert not got.insufficient


def test_a_second_part_no_unit_writes_a_word_of_declines_the_question():
    got = answer("How long do cache entries last, and how do I tune the garbage collector?")
    assert got.insufficient
    assert "garbage" in got.missing


def test_an_undecided_yes_no_part_declines_a_question_of_several_parts():
    got = answer("Does Tidyup ship a plugin marketplace, and how do I publish to it?")
    assert got.insufficient
    assert "no passage says whether" in got.missing


def test_a_misspelt_word_is_read_as_the_word_the_context_writes_and_named():
    got = answer("Which decorater turns a function into a hook?")
    assert got.short == "@tidy_hook"
    assert "never write 'decorater'" in got.missing and "'decorator'" in got.missing


def test_a_span_without_its_heading_line_is_read_under_its_section():
    # Chunks often start after their heading: the section the index records names
    # the option "Default: 2" belongs to.
    jobs = SpanText(
        1, "ref.md", "Options", "Number of files tidied in parallel.\n\nDefault: 2", "`--jobs`"
    )
    retries = SpanText(
        2,
        "ref.md",
        "Options",
        "How often a failed upload is tried again.\n\nDefault: 5",
        "`--retries`",
    )
    got = answer("What is the default of the --retries option?", [jobs, retries])
    assert got.short == "5" and got.cited == (2,)
    got = answer("What is the default of the --jobs option?", [jobs, retries])
    assert got.short == "2" and got.cited == (1,)


# --- a month the question dates what it asks by ----------------------------------------------

EVENTS = SpanText(
    4,
    "events.md",
    "Northwind Events",
    "In March 2021, Northwind appointed Ada Moss as its Chief Financial Officer. "
    "In November 2021, Northwind opened a second warehouse in Leeds.",
)


def test_an_answer_dated_another_month_than_asked_declines():
    got = answer("Who did Northwind appoint as Chief Financial Officer in August 2021?", [EVENTS])
    assert got.answer == DECLINED
    assert "other months than the one asked (2021-08)" in got.missing


def test_the_asked_month_written_in_the_cited_sentence_answers():
    got = answer("Who did Northwind appoint as Chief Financial Officer in March 2021?", [EVENTS])
    assert got.answer != DECLINED
    assert "Ada Moss" in got.answer


def test_a_sentence_that_writes_no_month_is_left_to_the_reader():
    undated = SpanText(5, "cfo.md", "Northwind CFO", "Northwind appointed Ada Moss as its CFO.")
    got = answer("Who did Northwind appoint as CFO in August 2021?", [undated])
    assert got.answer != DECLINED and "Ada Moss" in got.answer
