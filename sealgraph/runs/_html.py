r"""Text from documents and runs on an HTML page: shown, never obeyed, never reordering the page.

Every piece of a run page or an evaluation page that comes from data (a title, a
chunk id, a question id, a file name, a passage, an answer) passes one of two
functions:

* :func:`html_text` for element content: HTML-escaped; the characters that
  reorder text (bidi embeddings, overrides, isolates and marks) shown as visible
  escapes (``\u202e``); and a value holding right-to-left letters isolated in a
  ``<bdi>``, so that it cannot pull the page's own text around it into its
  direction (``[0:67]`` after a Hebrew file name stays ``[0:67]``).
* :func:`html_attr` for an attribute value or the ``<title>``, where no markup
  may go: escaped (quotes too) with the same visible escapes.

A value of plain left-to-right text comes back escaped and nothing else, so
ordinary pages are unchanged.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

__all__ = ["html_attr", "html_text"]

# Bidi embeddings, overrides, isolates and the direction marks: shown, never applied.
_BIDI_CONTROLS_RE = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Bidi classes that can reorder the text around them (right-to-left letters, Arabic
# digits); a value holding one is isolated.
_RTL_CLASSES = frozenset({"R", "AL", "AN"})
_MAYBE_RTL_RE = re.compile(
    "[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff\U0001e800-\U0001efff]"
)


def _visible(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def html_attr(value: Any) -> str:
    """Return ``value`` escaped for an attribute or ``<title>``, bidi controls shown as escapes."""
    return _BIDI_CONTROLS_RE.sub(_visible, html.escape(str(value), quote=True))


def html_text(value: Any) -> str:
    """Return ``value`` escaped for element content, isolated in ``<bdi>`` when it holds RTL text."""
    text = str(value)
    escaped = html_attr(text)
    return f"<bdi>{escaped}</bdi>" if _holds_rtl(text) else escaped


def _holds_rtl(text: str) -> bool:
    # The blocks of right-to-left scripts first (a fast regex), then the exact class.
    if not _MAYBE_RTL_RE.search(text):
        return False
    return any(unicodedata.bidirectional(ch) in _RTL_CLASSES for ch in text)
