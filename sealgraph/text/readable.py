"""Text a person reads: document markup taken out, code kept as code.

Indexed passages keep their source's characters (their offsets point into the
file), so a sentence lifted from a Markdown or HTML page can carry comments,
tags, entities, emphasis markers, link targets and heading anchors. An answer
shows such a sentence to a person: :func:`readable` removes the markup and keeps
what it marks up (a link's text, a tag's content, an entity's character). Inline
code (`` `x` ``) and fenced code are left exactly as written: inside them ``<b>``
or ``&amp;`` is code, not markup.
"""

from __future__ import annotations

import html
import re

__all__ = ["readable"]

# Code first: its text is never rewritten.
_CODE = re.compile(r"(```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]+`)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]+)\](?:\([^)\n]*\)|\[[^\]\n]*\])")
# Python-Markdown's attribute lists on headings and blocks: "{ #anchor }", "{: .class }".
_ATTRIBUTES = re.compile(r"\{:?\s*[#.][^{}\n]*\}")
# Links and images whose text holds inline code ("[`GzipMiddleware`](../x.md#gzip)"), read
# left to right so that a link written inside inline code stays code.
_FENCE = re.compile(r"(```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z))", re.DOTALL)
_INLINE = re.compile(r"(`[^`\n]+`)|!?\[((?:[^\[\]\n`]|`[^`\n]+`)+)\](?:\([^)\n]*\)|\[[^\]\n]*\])")
_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_SPACES = re.compile(r"[ \t]+")


def readable(text: str) -> str:
    """Return ``text`` without Markdown/HTML markup, code untouched, prose spaces collapsed.

    Removes HTML comments and tags (keeping the text between tags), decodes
    entities, unwraps links and images to their text, drops heading attribute
    lists and emphasis markers. The words and their order do not change.

    Args:
        text: A sentence or passage as indexed.

    Returns:
        The text as a person should read it.

    """
    if not text:
        return text
    text = _COMMENT.sub(" ", text)
    text = _unwrap_links(text)
    parts = _CODE.split(text)
    # split() with one group: odd positions are the code spans, kept as they are.
    out = [part if i % 2 else _prose(part) for i, part in enumerate(parts)]
    return "".join(out).strip()


def _unwrap_links(text: str) -> str:
    """Replace each link and image outside code by its text (inline code in it kept)."""
    parts = _FENCE.split(text)
    return "".join(
        part if i % 2 else _INLINE.sub(lambda m: m.group(1) or m.group(2), part)
        for i, part in enumerate(parts)
    )


def _prose(text: str) -> str:
    text = _TAG.sub("", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _ATTRIBUTES.sub("", text)
    text = _STRONG.sub(r"\2", text)
    text = _EMPHASIS.sub(r"\1", text)
    text = _UNDERSCORE.sub(r"\1", text)
    return _SPACES.sub(" ", html.unescape(text))
