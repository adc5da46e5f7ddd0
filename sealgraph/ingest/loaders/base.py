"""What every loader shares: its input and output, its errors, and text helpers.

A loader turns one file into the text of one document. Structure travels as
Markdown in that text: a page, a sheet or a heading of the source becomes an ATX
heading line (``# Page 3``, ``# Sheet: Revenue``, ``## Installation``), which
:func:`sealgraph.text.chunking.chunk_document` turns into the chunk's section path.
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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sealgraph.errors import IngestError

__all__ = [
    "LoadError",
    "Loaded",
    "LoaderLimits",
    "MissingExtraError",
    "Source",
    "WarnFn",
    "cell_text",
    "escape_markdown",
    "iter_row_lines",
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
class LoaderLimits:
    """How much of one file the loaders unpack before refusing it (a guard against bombs).

    A file past a limit is refused with a :class:`LoadError` that names the limit
    and says to raise it; a larger value reads such a file, at the cost noted under
    each field. Each default was set by loading files built to sit at the limit and
    measuring the peak resident memory of a fresh process: none took over 900 MiB,
    while real documents (a 2,000-page PDF, a workbook of a million filled cells)
    stay far below every limit.
    """

    max_unpacked_bytes: int = 256 * 2**20
    """Bytes a ``.docx`` or ``.xlsx`` may unpack to, all the parts read together.

    Counted as they are decompressed, whatever sizes the archive declares. A
    300 KB workbook that unpacks to 300 MiB of blanks is refused at 309 MiB of
    memory; one cell of 200 MiB of text, under the limit, is read at 452 MiB.
    """
    max_xml_elements: int = 4_000_000
    """XML elements in the parts of a ``.docx``, counted before python-docx parses them.

    python-docx holds each part as an lxml tree of about 230 bytes an element:
    3.8 million empty paragraphs (a 68 KB file) took 881 MiB and two minutes.
    A page of text is a few hundred elements, a page of tables a few thousand.
    A workbook's parts are read as a stream and are not counted.
    """
    max_cells: int = 2_000_000
    """Table cells with a value: a workbook's cells and shared strings, a Word file's
    table cells. 1.99 million filled cells (199,000 rows of 10) read in 189 MiB."""
    max_pdf_pages: int = 10_000
    """Pages of a PDF. A 2,000-page report read in 92 MiB (about 32 KB a page)."""
    max_pdf_array_elements: int = 1_000_000
    """Elements in one array of a PDF's objects; pypdf's own cap, 100,000, refuses
    real files (SEC filings whose tagged structure holds a larger array).

    An array of 1,000,000 references (a 9 KB file) took 163 MiB; 10,000,000 (an
    86 KB file) took 1.3 GiB and a minute.
    """
    max_text_chars: int = 100_000_000
    """Characters of text a loader makes of one file: a shared string or a merged
    cell repeated in every row, or one PDF page drawn as every page, make more than
    the file holds. 98.8 million characters took 332 MiB."""

    def exceeded(self, name: str, what: str) -> LoadError:
        """Return the error for a file past the limit ``name``: what it holds, and the cure.

        ``what`` completes "its ...": ``exceeded("max_cells", "sheets hold")`` gives
        ``its sheets hold more than 2,000,000 cells (LoaderLimits.max_cells; ...)``.
        """
        value = getattr(self, name)
        if not name.endswith("_bytes"):
            amount = f"{value:,} {_UNITS[name]}"
        elif value % 2**20 == 0:
            amount = f"{value // 2**20:,} MiB"
        else:
            amount = f"{value:,} bytes"
        return LoadError(
            f"its {what} more than {amount} (the limit {name}: raise it to read the file, "
            f"with --limit {name}=N or LoaderLimits({name}=N))"
        )


_UNITS = {
    "max_xml_elements": "elements",
    "max_cells": "cells",
    "max_pdf_pages": "pages",
    "max_pdf_array_elements": "elements",
    "max_text_chars": "characters",
}


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
    limits: LoaderLimits = LoaderLimits()
    """How much of the file may be unpacked (:class:`LoaderLimits`)."""

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


def render_rows(
    rows: Iterable[Sequence[Any] | Mapping[int, Any]], *, column_name: Callable[[int], str]
) -> list[str]:
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
        rows: Rows of cell values (strings, numbers, dates, None), each a sequence
            or a mapping of 0-based column index to value (a sparse row: a sheet
            row holding one cell in its last column costs one entry, not 16,384).
            Any iterable, consumed once: a generator keeps one row in memory.
        column_name: Name of the column at a 0-based index (``"C"``, ``"column 3"``).

    Returns:
        One line per row (without newline), escaped with :func:`escape_markdown`.

    """
    return list(iter_row_lines(rows, column_name=column_name))


def iter_row_lines(
    rows: Iterable[Sequence[Any] | Mapping[int, Any]], *, column_name: Callable[[int], str]
) -> Iterator[str]:
    """Yield the lines of :func:`render_rows` one at a time, as the rows come.

    For a reader that bounds what it makes while it makes it: a value repeated in
    every row (a spreadsheet's shared string, a merged cell) can make far more
    text than the file holds.
    """
    header: dict[int, str] | None = None
    pending: list[dict[int, str]] = []  # single-value rows that may be a caption
    n_lines = n_captions = 0
    for row in rows:
        cells = _filled_cells(row)
        filled = len(cells)
        if not filled:
            continue
        if header is None:
            if filled == 1 and len(pending) < _CAPTION_ROWS:
                pending.append(cells)
                continue
            if filled > 1:  # the header; single values above it were a caption
                for caption in pending:
                    yield escape_markdown(next(iter(caption.values())))
                header, pending, n_lines = cells, [], len(pending)
                n_captions = n_lines
                continue
            # Still one value per row: a one-column table whose header came first.
            header, *rest = pending
            for cells_above in rest:
                yield _row_line(header, cells_above, column_name)
                n_lines += 1
            pending = []
        yield _row_line(header, cells, column_name)
        n_lines += 1
    if header is None and pending:  # nothing but single values: one column
        header, *rest = pending
        for cells in rest:
            yield _row_line(header, cells, column_name)
            n_lines += 1
    if header is not None and n_lines == n_captions:  # a header and no row under it
        yield escape_markdown("; ".join(header.values()))


def _filled_cells(row: Sequence[Any] | Mapping[int, Any]) -> dict[int, str]:
    """Return the row's non-empty cells as text, by 0-based column, in column order."""
    items = sorted(row.items()) if isinstance(row, Mapping) else enumerate(row)
    cells = {}
    for i, value in items:
        text = cell_text(value)
        if text:
            cells[i] = text
    return cells


def _row_line(
    header: Mapping[int, str], cells: Mapping[int, str], column_name: Callable[[int], str]
) -> str:
    parts = [f"{header.get(i) or column_name(i)}: {cell}" for i, cell in cells.items()]
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
