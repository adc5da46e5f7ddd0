"""Prompt templates, one file per LLM step.

Every prompt puts document text inside ``<documents>`` tags and tells the model to
treat it as data: instructions that appear inside a document are never followed.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

PROMPT_NAMES = ("extract", "assess", "micro_query", "generate")
"""The LLM steps that have a prompt file."""


@cache
def load_prompt(name: str) -> str:
    """Return the text of ``sealgraph/prompts/<name>.md``."""
    if name not in PROMPT_NAMES:
        raise KeyError(f"unknown prompt {name!r}; known: {', '.join(PROMPT_NAMES)}")
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")
