"""Word (``.docx``, python-docx) and Excel (``.xlsx``, openpyxl) files: extra ``office``.

* **DOCX**: the body's paragraphs and tables in order. Paragraphs styled
  ``Title`` or ``Heading 1``-``9`` (or a style based on one) become ``#``
  headings (levels past 6 stay at 6); ``List ...`` paragraphs become ``- `` items;
  a table becomes one ``Header: value; ...`` line per row. Page headers and
  footers, footnotes, comments and text boxes are not read. The title is the
  file's own title property, else its first ``Title`` paragraph, else the
  caller's choice.
* **XLSX**: every worksheet with values becomes a section ``# Sheet: NAME``
  holding one line per row, ``Header: value; Header: value``, with the names of the
  sheet's first row (see :func:`~sealgraph.ingest.loaders.base.render_rows`); the
  document is split by line, so a chunk holds whole rows and each row carries its
  header. Formulas are read as the values Excel last saved with the file (a
  workbook written by a program and never opened in a spreadsheet app may have
  none). The title is the workbook's title property, else the caller's choice.

Both formats are zip archives of XML: one that would unpack to more than
:data:`MAX_UNPACKED_XML_BYTES` of XML is refused rather than read.
"""

from __future__ import annotations

import contextlib
import io
import warnings
import zipfile
from collections.abc import Iterator
from typing import Any

from sealgraph.ingest.loaders.base import (
    Loaded,
    LoadError,
    MissingExtraError,
    Source,
    escape_markdown,
    render_rows,
)

__all__ = ["MAX_UNPACKED_XML_BYTES", "load_docx", "load_xlsx"]

MAX_UNPACKED_XML_BYTES = 512 * 1024 * 1024
"""Most bytes of XML a .docx or .xlsx may unpack to (a guard against zip bombs)."""


def load_docx(source: Source) -> Loaded:
    """Load a Word document: headings as sections, tables as header-labelled rows."""
    try:
        import docx
    except ImportError:
        raise MissingExtraError("office", "python-docx") from None
    _check_archive(source.data, "Word (.docx)")
    try:
        with _quiet():
            document = docx.Document(io.BytesIO(source.data))
            blocks = list(_docx_blocks(document, docx))
            title = (document.core_properties.title or "").strip()
    except Exception as exc:  # python-docx and lxml on a damaged file
        raise LoadError(f"not a readable Word file ({type(exc).__name__}: {exc})") from None
    parts: list[str] = []
    for kind, level, value in blocks:
        if kind == "heading":
            heading = " ".join(value.split())
            parts.append("#" * min(max(level, 1), 6) + " " + heading)  # a Title is level 1
            if level == 0 and not title:
                title = heading
        elif kind == "table":
            lines = render_rows(value, column_name=lambda i: f"column {i + 1}")
            if lines:
                parts.append("\n".join(lines))
        else:
            parts.append(escape_markdown(value))
    text = "\n\n".join(parts)
    if not text.strip():
        return Loaded("", title or None, {}, "no text in its body")
    return Loaded(text + "\n", title or None)


def _docx_blocks(document: Any, docx: Any) -> Iterator[tuple[str, int, Any]]:
    """Yield ``(kind, level, value)``: headings (level 0: a Title paragraph), paragraphs, tables."""
    table_type = docx.table.Table
    for item in document.iter_inner_content():
        if isinstance(item, table_type):
            yield "table", 0, _docx_table_rows(item)
            continue
        text = item.text.strip()
        if not text:
            continue
        style = _style_names(item)
        level = _heading_level(style)
        if level is not None:
            yield "heading", level, text
        elif any(name.startswith("list") for name in style):
            yield "paragraph", 0, "- " + text
        else:
            yield "paragraph", 0, text


def _style_names(paragraph: Any) -> list[str]:
    """Return the paragraph's style name and those it is based on, lower case (at most 10)."""
    names = []
    style = paragraph.style
    while style is not None and len(names) < 10:
        names.append((style.name or "").lower())
        style = style.base_style
    return names


def _heading_level(style_names: list[str]) -> int | None:
    for name in style_names:
        if name == "title":
            return 0
        if name.startswith("heading "):
            suffix = name.removeprefix("heading ")
            if suffix.isdigit() and 1 <= int(suffix) <= 9:
                return int(suffix)
    return None


def _docx_table_rows(table: Any) -> list[list[str]]:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            if cell._tc is previous:  # a merged cell is listed once per grid column
                continue
            previous = cell._tc
            cells.append(cell.text)
        rows.append(cells)
    return rows


def load_xlsx(source: Source) -> Loaded:
    """Load a workbook: a ``# Sheet: NAME`` section per sheet, one line per row."""
    try:
        import openpyxl
        from openpyxl.utils import get_column_letter
    except ImportError:
        raise MissingExtraError("office", "openpyxl") from None
    _check_archive(source.data, "Excel (.xlsx)")
    try:
        with _quiet():
            workbook = openpyxl.load_workbook(
                io.BytesIO(source.data), read_only=True, data_only=True
            )
            try:
                sheets = []
                for sheet in workbook.worksheets:
                    # Read every row and column there is, not the extent the file
                    # declares (some writers declare "A1" whatever they wrote).
                    sheet.reset_dimensions()
                    sheets.append((sheet.title, list(sheet.iter_rows(values_only=True))))
                title = (workbook.properties.title or "").strip()
            finally:
                workbook.close()
    except Exception as exc:  # openpyxl on a damaged file
        raise LoadError(f"not a readable Excel file ({type(exc).__name__}: {exc})") from None
    parts: list[str] = []
    names: list[str] = []
    for name, rows in sheets:
        lines = render_rows(rows, column_name=lambda i: get_column_letter(i + 1))
        if lines:
            names.append(name)
            parts.append(f"# Sheet: {' '.join(name.split())}\n\n" + "\n".join(lines) + "\n")
    metadata: dict[str, Any] = {"split": "lines", "sheets": names}
    if not parts:
        return Loaded("", title or None, metadata, "no values in any sheet")
    return Loaded("\n".join(parts), title or None, metadata)


def _check_archive(data: bytes, kind: str) -> None:
    """Refuse a file that is not a zip archive, or whose XML would unpack too large."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            xml_bytes = sum(
                info.file_size
                for info in archive.infolist()
                if info.filename.endswith((".xml", ".rels"))
            )
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise LoadError(f"not a {kind} file (not a zip archive: {exc})") from None
    if xml_bytes > MAX_UNPACKED_XML_BYTES:
        raise LoadError(
            f"its XML would unpack to {xml_bytes // 2**20} MiB, more than the "
            f"{MAX_UNPACKED_XML_BYTES // 2**20} MiB sealgraph reads"
        )


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the libraries' warnings about features they skip (data validation, ...)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
