"""What every loader shares: its input and output, its errors, and text helpers.

A loader turns one file into the text of one document. Structure travels as
Markdown in that text: a page, a sheet or a heading of the source becomes an ATX
heading line (``# Page 3``, ``# Sheet: Revenue``, ``## Installation``), which
:func:`sealgraph.chunking.chunk_document` turns into the chunk's section path.
The heading line is part of the text, as it is in a Markdown file, so chunk
offsets keep pointing into the document text and the model sees where a chunk
comes from. Source text that would itself read as a heading or a code fence is
escaped (:func:`escape_markdown`) so that it cannot invent sections or hide the
real ones.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sealgraph.errors import IngestError

__all__ = [
    "LoadError",
    "Loaded",
    "MissingExtraError",
    "Source",
    "WarnFn",
    "cell_text",
    "escape_markdown",
    "json_safe",
    "normalise_newlines",
    "render_rows",
]

WarnFn = Callable[[str], None]
"""Warning callback: receives one line per recoverable problem."""


class LoadError(IngestError):
    """A file of a known format cannot be read (damaged, encrypted, not that format).

    Raised by a loader with the reason only; the caller names the file, and skips
    it with a warning when it was found in a folder.
    """


class MissingExtraError(IngestError):
    """The library that reads a format is not installed."""

    def __init__(self, extra: str, package: str) -> None:
        super().__init__(f"needs the {extra} extra: pip install 'sealgraph[{extra}]'")
        self.extra = extra
        """Name of the sealgraph extra that installs the library (``pdf``, ``office``)."""
        self.package = package
        """The missing distribution (``pypdf``)."""

    def for_file(self, file: Path) -> str:
        """Return the message for one file: ``reading x.pdf needs the pdf extra: ...``."""
        return f"reading {file.name} {self}"


@dataclass(frozen=True, slots=True)
class Source:
    """One file handed to a loader."""

    file: Path
    """The file, as it was reached (for messages)."""
    data: bytes
    """Its bytes."""
    warn: WarnFn
    """Where recoverable problems go; messages should name :attr:`file`."""
    decode: Callable[[bytes], str]
    """Decode bytes as UTF-8 (replacing bad bytes, with a warning naming the file)."""

    def text(self) -> str:
        """Return the file's text: UTF-8 without a byte-order mark, LF line ends."""
        return normalise_newlines(self.decode(self.data))


@dataclass(frozen=True, slots=True)
class Loaded:
    """What a loader makes of a file: the document text, its title, extra metadata."""

    text: str
    """The document text; its Markdown headings are the section paths."""
    title: str | None = None
    """The title the file gives itself, or None to let the caller choose one."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """JSON-safe fields kept with the document (besides ``format``)."""
    empty_reason: str = ""
    """Why :attr:`text` is blank, when the file itself is not (for the warning)."""


def normalise_newlines(text: str) -> str:
    """Turn CRLF and CR line ends into LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


# A line that Markdown (and so the chunker) reads as an ATX heading or a code fence.
_MARKDOWN_LINE_START_RE = re.compile(r"^( {0,3})(#{1,6}(?=[ \t]|$)|```|~~~)", re.MULTILINE)


def escape_markdown(text: str) -> str:
    r"""Escape the lines of ``text`` that Markdown would read as a heading or code fence.

    A backslash goes before the ``#`` or the fence (``\# of units``), as Markdown
    itself writes a literal one. Loaders apply this to the text they extract, so a
    PDF line or a spreadsheet header such as ``# of units`` cannot start a section,
    and a stray fence cannot swallow the headings that follow it.
    """
    return _MARKDOWN_LINE_START_RE.sub(r"\1\\\2", text)


_SPACE_RE = re.compile(r"\s+")


def cell_text(value: Any) -> str:
    """Render one table cell on a single line (numbers without float noise, ISO dates)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0, 0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return _SPACE_RE.sub(" ", str(value)).strip()


_CAPTION_ROWS = 5
"""Most single-cell rows above a table's header that are read as its caption."""


def render_rows(rows: Iterable[Sequence[Any]], *, column_name: Callable[[int], str]) -> list[str]:
    """Render table rows as self-contained lines: ``Header: value; Header: value``.

    The first non-empty row is the header (spreadsheets and CSV files almost
    always have one; a table without one has its first row read as names), except
    that up to five rows holding a single value above a wider row are a caption
    (a title typed in A1), kept as lines of their own. Each later row becomes one
    line that repeats the header name before each value, so a row is whole on its
    line and any chunk, or any single row packed into a context, still says what
    its values are. Empty cells are left out, and so is a row with no values; a
    value under an empty header cell is named by ``column_name``. A table that is
    only a header gives that header as one line.

    Args:
        rows: Rows of cell values (strings, numbers, dates, None).
        column_name: Name of the column at a 0-based index (``"C"``, ``"column 3"``).

    Returns:
        One line per row (without newline), escaped with :func:`escape_markdown`.

    """
    header: list[str] | None = None
    pending: list[list[str]] = []  # single-value rows that may be a caption
    lines: list[str] = []
    n_captions = 0
    for row in rows:
        cells = [cell_text(v) for v in row]
        filled = sum(1 for c in cells if c)
        if not filled:
            continue
        if header is None:
            if filled == 1 and len(pending) < _CAPTION_ROWS:
                pending.append(cells)
                continue
            if filled > 1:  # the header; single values above it were a caption
                lines.extend(escape_markdown(next(c for c in p if c)) for p in pending)
                header, pending, n_captions = cells, [], len(pending)
                continue
            # Still one value per row: a one-column table whose header came first.
            header, *rest = pending
            lines.extend(_row_line(header, r, column_name) for r in rest)
            pending = []
        lines.append(_row_line(header, cells, column_name))
    if header is None and pending:  # nothing but single values: one column
        header, *rest = pending
        lines.extend(_row_line(header, cells, column_name) for cells in rest)
    if header is not None and len(lines) == n_captions:  # a header and no row under it
        lines.append(escape_markdown("; ".join(c for c in header if c)))
    return lines


def _row_line(
    header: Sequence[str], cells: Sequence[str], column_name: Callable[[int], str]
) -> str:
    parts = []
    for i, cell in enumerate(cells):
        if cell:
            name = header[i] if i < len(header) and header[i] else column_name(i)
            parts.append(f"{name}: {cell}")
    return escape_markdown("; ".join(parts))


def json_safe(value: Any, *, max_nodes: int = 2000, max_depth: int = 20) -> Any:
    """Return ``value`` as plain JSON data, or raise ValueError when it is too big.

    Dates become ISO strings, non-finite floats and other objects strings, mapping
    keys strings; sets and tuples become lists. At most ``max_nodes`` values are
    visited, so YAML aliases that repeat a structure exponentially cannot blow up
    the copy, and nesting deeper than ``max_depth`` is refused.
    """
    budget = [max_nodes]

    def convert(item: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise ValueError(f"more than {max_nodes} values")
        if depth > max_depth:
            raise ValueError(f"nested more than {max_depth} levels deep")
        if item is None or isinstance(item, bool | int | str):
            return item
        if isinstance(item, float):
            return item if math.isfinite(item) else str(item)
        if isinstance(item, dt.date | dt.time):
            return item.isoformat()
        if isinstance(item, dict):
            return {str(k): convert(v, depth + 1) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [convert(v, depth + 1) for v in item]
        if isinstance(item, set | frozenset):
            return [convert(v, depth + 1) for v in sorted(item, key=repr)]
        if isinstance(item, bytes):
            return item.decode("utf-8", errors="replace")
        return str(item)

    return convert(value, 0)
