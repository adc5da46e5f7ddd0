"""Text shown to a person: markup out, code kept as code."""

from __future__ import annotations

import pytest

from sealgraph.text.readable import readable


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("Use the **exec** form so [lifespan events](../events.md) run.",
         "Use the exec form so lifespan events run."),
        ('A standard called <abbr title="Server Gateway">ASGI</abbr>.', "A standard called ASGI."),
        ("<!-- markdownlint-disable-next-line MD033 --> Events { #lifespan-events }", "Events"),
        ('<span id="x"></span>Tom &amp; Jerry &mdash; &lt;3', "Tom & Jerry — <3"),
        ("An ![logo](img.png) and a [reference][1] and *stress*", "An logo and a reference and stress"),
        ("Heading {: .wide }", "Heading"),
        ("unterminated <!-- note", "unterminated"),
    ],
)  # fmt: skip
def test_markup_is_removed_and_words_kept(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize(
    "code",
    [
        "`<form></form>`",
        "`__init__`",
        "`a &amp; b`",
        '```python\nx  =  "<b>"  # **not bold**\n```',
    ],
)
def test_code_is_kept_as_written(code):
    assert readable(f"Write {code} here") == f"Write {code} here"


def test_plain_text_and_arithmetic_are_unchanged():
    for text in ["2*3*4 = 24", "snake_case_name and a_b", "x < y and y > z", ""]:
        assert readable(text) == text
