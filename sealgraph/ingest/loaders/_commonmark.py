"""Markdown's block structure read with a CommonMark parser (markdown-it-py).

Which lines are code (fenced, or indented) is CommonMark's to say: a fence closes only
on a fence line at least as long as its opening and of the same character, a fence
inside a list item or a quote is code too, four spaces of indentation make code
except where they continue a paragraph or a list item. The parser's line maps give
line numbers of the text as given, so callers keep every character where it was
(raw-file offsets stay valid). Only block structure is read: inline parsing is off.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["code_lines", "split_lines"]

_NEWLINE = re.compile(r"\r\n|\r|\n")
"""Line ends as CommonMark counts them (a lone CR too; not Unicode line separators)."""
_CODE_TOKENS = frozenset({"fence", "code_block"})


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable(["inline", "text_join"], ignoreInvalid=True)


def split_lines(text: str) -> list[str]:
    """Return the lines of ``text`` with their ends, split where CommonMark ends a line."""
    out: list[str] = []
    start = 0
    for m in _NEWLINE.finditer(text):
        out.append(text[start : m.end()])
        start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


def code_lines(text: str) -> list[bool]:
    """Tell, for each line of :func:`split_lines`, whether CommonMark reads it as code."""
    lines = split_lines(text)
    flags = [False] * len(lines)
    for token in _parser().parse(text):
        if token.type in _CODE_TOKENS and token.map:
            start, end = token.map
            for i in range(max(0, start), min(end, len(flags))):
                flags[i] = True
    return flags
