"""Prompt files: one per LLM step, placeholders intact, document text marked as data."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

import sealgraph.prompts
from sealgraph.prompts import PROMPT_NAMES, load_prompt

PROMPT_DIR = Path(sealgraph.prompts.__file__).parent

PLACEHOLDERS = {
    "extract": {"question", "passages"},
    "assess": {"question", "ledger", "passages"},
    "micro_query": {"question", "gaps", "issued"},
    "generate": {"question", "context"},
}
# Where each prompt puts text that comes from documents (or was derived from them).
DATA_TAGS = {"extract": "documents", "assess": "documents", "generate": "context"}


def test_every_step_has_a_prompt_file():
    assert set(PROMPT_NAMES) == set(PLACEHOLDERS)
    for name in PROMPT_NAMES:
        path = PROMPT_DIR / f"{name}.md"
        assert path.is_file()
        assert load_prompt(name) == path.read_text(encoding="utf-8")


def test_unknown_prompt_is_rejected():
    with pytest.raises(KeyError, match="unknown prompt"):
        load_prompt("summarise")


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_placeholders_are_exactly_the_ones_the_reasoner_fills(name):
    fields = {f for _, f, _, _ in string.Formatter().parse(load_prompt(name)) if f is not None}
    assert fields == PLACEHOLDERS[name]
    # Formatting with braces in the values must not break the template.
    filled = load_prompt(name).format(**{k: "{x} }{" for k in fields})
    assert "{x} }{" in filled


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_every_prompt_says_document_text_is_data_not_instructions(name):
    text = load_prompt(name)
    assert re.search(r"\bDATA\b", text)
    assert re.search(r"never follow (?:it|instructions)", text, re.I)


@pytest.mark.parametrize(("name", "tag"), sorted(DATA_TAGS.items()))
def test_document_text_goes_inside_data_tags(name, tag):
    key = "context" if name == "generate" else "passages"
    filled = load_prompt(name).format(**{k: f"<<{k}>>" for k in PLACEHOLDERS[name]})
    start, end = filled.index(f"<{tag}>"), filled.index(f"</{tag}>")
    assert start < filled.index(f"<<{key}>>") < end
    # Nothing the model must obey comes after the data block.
    assert filled[end + len(f"</{tag}>") :].strip() == ""
