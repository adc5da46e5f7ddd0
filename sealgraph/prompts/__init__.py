"""Prompt templates, one file per LLM step, and the fencing of the text they quote.

Every prompt puts document text inside tags (``<documents>``, ``<context>``, ...)
and tells the model to treat it as data: instructions that appear inside a
document are never followed. For the tags to hold, quoted text must not be able
to close them, so every value filled into a template goes through :func:`fence`
(or :func:`fence_attr` inside an attribute): ``&``, ``<`` and ``>`` become
``&amp;``, ``&lt;`` and ``&gt;``, which is deterministic, loses nothing (the
model is told how to read them, and :func:`unfence` undoes it in replies), and
leaves no way to write ``</documents>`` from inside a document.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Protocol

PROMPT_NAMES = ("needs", "extract", "assess", "micro_query", "generate")
"""The LLM steps that have a prompt file."""


@cache
def load_prompt(name: str) -> str:
    """Return the text of ``sealgraph/prompts/<name>.md``."""
    if name not in PROMPT_NAMES:
        raise KeyError(f"unknown prompt {name!r}; known: {', '.join(PROMPT_NAMES)}")
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")


def fence(text: str) -> str:
    """Escape ``&``, ``<`` and ``>`` so ``text`` cannot open or close a prompt tag."""
    return html.escape(text, quote=False)


def fence_attr(value: str) -> str:
    """Escape ``value`` for a double-quoted tag attribute (quotes included)."""
    return html.escape(value, quote=True)


def unfence(text: str) -> str:
    """Undo :func:`fence` in a model's reply (it may copy ``&amp;`` from the prompt)."""
    return html.unescape(text)


class Passage(Protocol):
    """What a passage block needs: a title and a text (a number is optional)."""

    title: str
    text: str


def passages_block(passages: Iterable[Passage]) -> str:
    """Render passages as ``<passage n="1" title="...">text</passage>`` lines, fenced.

    Passages are numbered from 1 unless they carry their own ``n`` (packed spans
    keep their citation numbers).
    """
    parts = []
    for i, p in enumerate(passages, 1):
        n = getattr(p, "n", i)
        parts.append(
            f'<passage n="{int(n)}" title="{fence_attr(p.title)}">\n{fence(p.text)}\n</passage>'
        )
    return "\n".join(parts)
