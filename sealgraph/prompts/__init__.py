"""Prompt templates, one file per LLM step, and the fencing of the text they quote.

Each :class:`~sealgraph.model.Step` has one file, named by its value
(``needs.md``, ``extract.md``, ``assess.md``, ``plan.md``, ``generate.md``), read
from the package with :mod:`importlib.resources` (:func:`load_prompt`). Each file
holds two messages, each under its heading line: ``# System`` (the task, the
reply's fields, a one-line JSON example of the reply with placeholder values, and
the data rule) and ``# User`` (the question and the quoted blocks, last). Small
models follow a short system message and a user message that is all data better
than one long prompt. :func:`prompt_messages` fills and splits a file;
:func:`prompt_example` returns its JSON example.

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
import json
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any, Protocol

from sealgraph.model import Step

PROMPT_NAMES: tuple[Step, ...] = tuple(Step)
"""The built-in LLM steps' prompt files: every :class:`~sealgraph.model.Step`.

A step added later names its own file in its record (``StepSpec.prompt``); any
``<name>.md`` of this package loads."""

_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _step(name: str) -> str:
    """Return the prompt file's name ``name`` names; KeyError when the package has no such file."""
    text = str(name)
    if _NAME.fullmatch(text) and resources.files(__package__).joinpath(f"{text}.md").is_file():
        return text
    known = ", ".join(PROMPT_NAMES)
    raise KeyError(f"unknown prompt {text!r}; known: {known}") from None


@cache
def load_prompt(step: Step | str) -> str:
    """Return the text of step ``step``'s prompt file, ``sealgraph/prompts/<step>.md``."""
    name = _step(step)
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")


SYSTEM_HEADING = "# System"
USER_HEADING = "# User"
_EXAMPLE = re.compile(r"^JSON example[^:\n]*: (\{.*\})[ \t]*$", re.MULTILINE)


def _sections(step: Step | str) -> tuple[str, str]:
    name = _step(step)
    text = load_prompt(name)
    lines = text.splitlines()
    try:
        s, u = lines.index(SYSTEM_HEADING), lines.index(USER_HEADING)
    except ValueError:
        raise ValueError(
            f"prompt {name!r} needs a {SYSTEM_HEADING!r} and a {USER_HEADING!r} line"
        ) from None
    if not s < u:
        raise ValueError(f"prompt {name!r}: {SYSTEM_HEADING!r} must come before {USER_HEADING!r}")
    return "\n".join(lines[s + 1 : u]).strip(), "\n".join(lines[u + 1 :]).strip()


def prompt_messages(step: Step | str, **values: str) -> tuple[str, str]:
    """Return the (system, user) messages of step ``step``'s prompt filled with ``values``.

    The values are put in as given: fence them first (:func:`fence`,
    :func:`passages_block`).
    """
    system, user = _sections(step)
    return system.format(**values), user.format(**values)


@cache
def _example_text(step: Step | str) -> str:
    name = _step(step)
    system = _sections(name)[0].format()
    found = _EXAMPLE.search(system)
    if found is None:
        raise ValueError(f"prompt {name!r} has no 'JSON example: {{...}}' line")
    return found.group(1)


def prompt_example(step: Step | str) -> dict[str, Any]:
    """Return the one-line JSON example of step ``step``'s reply (a fresh copy)."""
    return json.loads(_example_text(step))


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
