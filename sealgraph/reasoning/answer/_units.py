"""The units an answer can quote: sentences, list items, table rows and code blocks.

A packed span is read block by block, as a person reads a page:

* a fenced code block is one unit (``code``), kept with its lines;
* a list item is one unit (``item``) with every sentence it holds ("``minimum_size`` -
  Do not GZip responses smaller than this. Defaults to ``500``." is one answer);
* a table, in Markdown's pipe form or as the loaders' ``Header: value; …`` lines, is
  one unit per row (``row``), written ``Header: value; Header: value``;
* a paragraph is split into its sentences (``sentence``);
* a heading is no unit: it names what the units under it are about (their
  ``heading``);
* lines that are directives of a documentation tool and no prose (``/// tip``,
  ``::: module.Name``, ``{* file.py hl[2] *}``, ``{% include x %}``) are dropped.

Pure functions over text: no lexicon is read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from sealgraph.text.chunking import split_sentences

__all__ = ["ROW_LINE", "RawUnit", "read_units"]

ROW_LINE = re.compile(r"[^:;()\[\]\n]{1,60}: [^;\n]*(?:; [^:;()\[\]\n]{1,60}: [^;\n]*)+")
"""A table row as the loaders write it: ``Header: value; Header: value`` (two cells or more)."""

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+")
# Directive lines of documentation tools, which hold no prose of their own:
# admonition fences ("/// tip", "!!! note", ":::warning"), API-reference stubs
# ("::: package.module"), include and template markers ("{* f.py *}", "{% x %}").
_DIRECTIVE = re.compile(
    r"^[ \t]*(?:/{3}|!{3}|\?{3}|:{3,}|\{\*.*\*\}[ \t]*$|\{%.*%\}[ \t]*$|\{\{.*\}\}[ \t]*$)"
)
_PIPE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$")
_PIPE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$")
_ITEM_WORDS = 90
"""A list item longer than this many words is read sentence by sentence."""


@dataclass(frozen=True, slots=True)
class RawUnit:
    """One unit of a span's text, before it is read for terms and names."""

    kind: str
    """``sentence``, ``item``, ``row`` or ``code``."""
    text: str
    """The unit's text as written (a code block keeps its lines and fence)."""
    heading: str
    """The heading the unit is under in its span ("" when the span shows none)."""


def read_units(text: str) -> list[RawUnit]:
    """Return the units of a span's text, in order (see the module docstring)."""
    out: list[RawUnit] = []
    heading = ""
    for kind, block in _blocks(text):
        if kind == "heading":
            heading = block
        elif kind == "code":
            out.append(RawUnit("code", block, heading))
        elif kind == "table":
            out.extend(RawUnit("row", row, heading) for row in _pipe_rows(block))
        elif kind == "item" and len(block.split()) <= _ITEM_WORDS:
            out.append(RawUnit("item", block, heading))
        else:
            out.extend(RawUnit(k, s, heading) for k, s in _prose_units(block))
    return out


def _prose_units(block: str) -> Iterator[tuple[str, str]]:
    """Sentences of a paragraph, or its rows when every line is a loader's row line."""
    lines = [ln.strip() for ln in block.split("\n") if ln.strip()]
    if len(lines) > 1 and all(ROW_LINE.fullmatch(ln) for ln in lines):
        for ln in lines:
            yield "row", ln
        return
    for a, b in split_sentences(block):
        raw = block[a:b].strip()
        if raw:
            yield ("row" if ROW_LINE.fullmatch(raw) else "sentence"), raw


def _blocks(text: str) -> Iterator[tuple[str, str]]:
    """Split text into ``(kind, text)`` blocks: heading, code, table, item, paragraph."""
    lines = text.split("\n")
    current: list[str] = []
    kind = "paragraph"
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            yield from _flush(kind, current)
            current, kind = [], "paragraph"
            end = _fence_end(lines, i, fence.group(1))
            yield "code", "\n".join(lines[i:end]).strip("\n")
            i = end
            continue
        heading = _HEADING.match(line)
        if not line.strip() or heading or _DIRECTIVE.match(line):
            yield from _flush(kind, current)
            current, kind = [], "paragraph"
            if heading:
                yield "heading", heading.group(1).strip()
        elif _PIPE_ROW.match(line):
            if kind != "table":
                yield from _flush(kind, current)
                current, kind = [], "table"
            current.append(line)
        elif _LIST_ITEM.match(line):
            yield from _flush(kind, current)
            current, kind = [line], "item"
        else:
            if kind == "table":
                yield from _flush(kind, current)
                current, kind = [], "paragraph"
            current.append(line)
        i += 1
    yield from _flush(kind, current)


def _fence_end(lines: list[str], start: int, marker: str) -> int:
    """Index after the line that closes the fence opened at ``start`` (the end if none does)."""
    for j in range(start + 1, len(lines)):
        closing = lines[j].strip()
        if len(closing) >= len(marker) and set(closing) == {marker[0]}:
            return j + 1
    return len(lines)


def _flush(kind: str, lines: list[str]) -> Iterator[tuple[str, str]]:
    text = "\n".join(lines).strip()
    if text:
        yield kind, text


def _pipe_rows(block: str) -> list[str]:
    """Rows of a Markdown pipe table as ``Header: value; …`` (a table without a rule: as is)."""
    rows = [ln.strip() for ln in block.split("\n") if ln.strip()]
    if len(rows) < 2 or not _PIPE_RULE.match(rows[1]):
        return [" ".join(rows)]
    header = _cells(rows[0])
    out = []
    for row in rows[2:]:
        cells = _cells(row)
        pairs = [f"{h}: {v}" for h, v in zip(header, cells, strict=False) if v]
        if pairs:
            out.append("; ".join(pairs))
    return out


def _cells(row: str) -> list[str]:
    """Return the cells of a pipe-table row (escaped pipes kept in their cell)."""
    inner = row.strip()
    inner = inner.removeprefix("|").removesuffix("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]
