"""Word (``.docx``, python-docx) and Excel (``.xlsx``, openpyxl) files: extra ``office``.

* **DOCX**: the body's paragraphs and tables in order. Paragraphs styled
  ``Title`` or ``Heading 1``-``9`` (or a style based on one) become ``#``
  headings (levels past 6 stay at 6); ``List ...`` paragraphs become ``- `` items;
  a table becomes one ``Header: value; ...`` line per row (a cell merged across
  rows repeats its text in each). Page headers and footers, footnotes, comments
  and text boxes are not read. The title is the file's own title property, else
  its first ``Title`` paragraph, else the caller's choice.
* **XLSX**: every worksheet with values becomes a section ``# Sheet: NAME``
  holding one line per row, ``Header: value; Header: value``, with the names of the
  sheet's first row (see :func:`~sealgraph.ingest.loaders.base.render_rows`); the
  document is split by line, so a chunk holds whole rows and each row carries its
  header. Formulas are read as the values Excel last saved with the file (a
  workbook written by a program and never opened in a spreadsheet app may have
  none). The title is the workbook's title property, else the caller's choice.

Both formats are zip archives of XML, and a small file can unpack to gigabytes.
They are read under the source's :class:`~sealgraph.ingest.loaders.base.LoaderLimits`:
every part is unpacked through a counter of the bytes it really yields (the sizes
an archive declares can lie), a Word file's XML elements are counted before
python-docx builds its trees, and a workbook's sheets are read as a stream, one
row at a time, keeping only the cells a row really holds (a row written as one
cell in column XFD costs one cell, not 16,384). Before the sheets are parsed, the
values they hold and the shared strings are counted in the raw XML at the speed
of a byte search (:func:`_count_values`), so a workbook past ``max_cells`` is
refused at once rather than after minutes of parsing. A file past a limit is
refused with an error that names the limit.
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import re
import warnings
import xml.etree.ElementTree as ET
import zipfile
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any

from sealgraph.ingest.loaders.base import (
    Loaded,
    LoaderLimits,
    LoadError,
    MissingExtraError,
    Source,
    escape_markdown,
    iter_row_lines,
)

__all__ = ["load_docx", "load_xlsx"]

_CHUNK = 64 * 1024
# What zipfile and zlib raise on a damaged, encrypted or oddly compressed member.
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, ValueError)
_ZIP_ERRORS += (NotImplementedError, KeyError)


# --- the archive, read under the limits -------------------------------------------------------


class _Archive:
    """A zip archive whose members are unpacked through one counter of real bytes."""

    def __init__(self, data: bytes, kind: str, limits: LoaderLimits) -> None:
        self.kind = kind
        self.limits = limits
        self.unpacked = 0
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
            self.names = {info.filename for info in self.zip.infolist()}
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            article = "an" if kind[0] in "AEIOU" else "a"
            raise LoadError(f"not {article} {kind} file (not a zip archive: {exc})") from None

    def __enter__(self) -> _Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.zip.close()

    def open(self, name: str) -> _CountingReader:
        """Open a member for reading; its bytes count against ``max_unpacked_bytes``."""
        try:
            member = self.zip.open(name)
        except _ZIP_ERRORS as exc:
            raise self.damaged(exc) from None
        return _CountingReader(member, self)

    def count(self, n: int) -> None:
        self.unpacked += n
        if self.unpacked > self.limits.max_unpacked_bytes:
            raise self.limits.exceeded("max_unpacked_bytes", "parts unpack to")

    def damaged(self, exc: BaseException) -> LoadError:
        return LoadError(f"not a readable {self.kind} file ({type(exc).__name__}: {exc})")


class _CountingReader(io.RawIOBase):
    """A member of an :class:`_Archive`, counting the bytes it yields as they come."""

    def __init__(self, member: IO[bytes], archive: _Archive) -> None:
        self.member = member
        self.archive = archive

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:  # whole member: still unpacked a chunk at a time
            return b"".join(iter(lambda: self.read(_CHUNK), b""))
        try:
            data = self.member.read(size)
        except _ZIP_ERRORS as exc:
            raise self.archive.damaged(exc) from None
        self.archive.count(len(data))
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.member.close()
        super().close()


def _scan_parts(archive: _Archive) -> None:
    """Unpack every member once, counting its bytes and the elements of its XML.

    Run before python-docx, which unpacks the parts of a package on its own and
    parses the XML ones into lxml trees (about 230 bytes of memory an element):
    zipfile never yields more than a member's declared size, so what this pass
    counted bounds what the library gets. The elements are counted by lxml itself
    (the parser python-docx uses, with the same encodings) feeding a target that
    builds no tree; a member lxml cannot parse is not XML to python-docx either.
    """
    from lxml import etree

    counter = _ElementCounter(archive.limits)
    for info in archive.zip.infolist():
        if info.is_dir():
            continue
        parser = etree.XMLParser(target=counter, resolve_entities=False, no_network=True)
        with archive.open(info.filename) as member:
            while chunk := member.read(_CHUNK):
                if parser is None:
                    continue  # not XML: its bytes still count
                try:
                    parser.feed(chunk)
                except etree.LxmlError:
                    parser = None
        if parser is not None:
            with contextlib.suppress(etree.LxmlError):
                parser.close()


class _ElementCounter:
    """An lxml parser target that counts start tags against ``max_xml_elements``."""

    def __init__(self, limits: LoaderLimits) -> None:
        self.limits = limits
        self.elements = 0

    def start(self, _tag: object, _attrib: object, _nsmap: object = None) -> None:
        self.elements += 1
        if self.elements > self.limits.max_xml_elements:
            raise self.limits.exceeded("max_xml_elements", "XML holds")

    def close(self) -> None:
        return None


# --- Word -------------------------------------------------------------------------------------


class _Budget:
    """What is left of one limit (cells, characters) while a file is read."""

    def __init__(self, limits: LoaderLimits, name: str, what: str) -> None:
        self.limits = limits
        self.name = name
        self.what = what
        self.left: int = getattr(limits, name)

    def spend(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise self.limits.exceeded(self.name, self.what)

    def text(self, text: str) -> str:
        """Spend one character per character of ``text`` (and its separator); return it."""
        self.spend(len(text) + 1)
        return text


def load_docx(source: Source) -> Loaded:
    """Load a Word document: headings as sections, tables as header-labelled rows."""
    try:
        import docx
        from docx.text.paragraph import Paragraph
    except ImportError:
        raise MissingExtraError("office", "python-docx") from None
    limits = source.limits
    with _Archive(source.data, "Word (.docx)", limits) as archive:
        _scan_parts(archive)
    chars = _Budget(limits, "max_text_chars", "text runs to")
    cells = _Budget(limits, "max_cells", "tables hold")
    try:
        with _quiet():
            document = docx.Document(io.BytesIO(source.data))
            title = (document.core_properties.title or "").strip()
            parts: list[str] = []
            for kind, level, value in _docx_blocks(document, docx, Paragraph, cells):
                if kind == "heading":
                    heading = " ".join(value.split())
                    parts.append(chars.text("#" * min(max(level, 1), 6) + " " + heading))
                    if level == 0 and not title:  # a Title is level 1
                        title = heading
                elif kind == "table":
                    rows = iter_row_lines(value, column_name=lambda i: f"column {i + 1}")
                    lines = [chars.text(line) for line in rows]
                    if lines:
                        parts.append("\n".join(lines))
                else:
                    parts.append(chars.text(escape_markdown(value)))
    except LoadError:
        raise
    except Exception as exc:  # python-docx and lxml on a damaged file
        raise LoadError(f"not a readable Word file ({type(exc).__name__}: {exc})") from None
    text = "\n\n".join(parts)
    if not text.strip():
        return Loaded("", title or None, {}, "no text in its body")
    return Loaded(text + "\n", title or None)


def _docx_blocks(
    document: Any, docx: Any, paragraph_type: Any, cells: _Budget
) -> Iterator[tuple[str, int, Any]]:
    """Yield ``(kind, level, value)``: headings (level 0: a Title paragraph), paragraphs, tables."""
    table_type = docx.table.Table
    styles: dict[str | None, list[str]] = {}  # style id -> names (a lookup scans all styles)
    for item in document.iter_inner_content():
        if isinstance(item, table_type):
            yield "table", 0, _docx_table_rows(item, paragraph_type, cells)
            continue
        text = item.text.strip()
        if not text:
            continue
        style_id = item._p.style
        style = styles.get(style_id)
        if style is None:
            style = styles[style_id] = _style_names(item)
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


def _docx_table_rows(table: Any, paragraph_type: Any, budget: _Budget) -> list[list[str]]:
    """Return a table's rows as cell texts: a merged cell once, a cell merged down in each row.

    Read from the XML rather than python-docx's ``row.cells``, which lists a cell
    once per grid column it spans (``gridSpan="1000000000"`` would make a billion)
    and finds a vertically merged cell's text by walking up row by row.
    """
    rows = []
    above: dict[int, str] = {}  # grid column -> text of the cell there in the row above
    for tr in table._tbl.tr_lst:
        cells: list[str] = []
        here: dict[int, str] = {}
        column = tr.grid_before
        for tc in tr.tc_lst:
            budget.spend()
            if tc.vMerge == "continue":  # the lower part of a cell merged down
                text = above.get(column, "")
            else:
                text = "\n".join(paragraph_type(p, None).text for p in tc.p_lst)
            cells.append(text)
            here[column] = text
            column += max(tc.grid_span, 1)
        rows.append(cells)
        above = here
    return rows


# --- Excel ------------------------------------------------------------------------------------

_REL_TYPE_END = re.compile(r"/([A-Za-z-]+)$")
_CELL_REF = re.compile(r"([A-Za-z]{1,3})(\d*)$")
_MAX_XML_DEPTH = 256
"""Deepest element nesting read from a workbook part (libxml2's own default; Excel uses ~6)."""


def load_xlsx(source: Source) -> Loaded:
    """Load a workbook: a ``# Sheet: NAME`` section per sheet, one line per row."""
    try:
        import openpyxl  # noqa: F401  (first: a missing package fails here, not its submodules)
        from openpyxl.styles.numbers import BUILTIN_FORMATS, is_date_format, is_timedelta_format
        from openpyxl.utils import column_index_from_string, get_column_letter
        from openpyxl.utils.datetime import MAC_EPOCH, WINDOWS_EPOCH, from_excel, from_ISO8601
    except ImportError:
        raise MissingExtraError("office", "openpyxl") from None
    limits = source.limits
    chars = _Budget(limits, "max_text_chars", "text runs to")
    with _Archive(source.data, "Excel (.xlsx)", limits) as archive:
        try:
            book = _Workbook(archive)
            cells = _Budget(limits, "max_cells", "sheets and shared strings hold")
            _count_values(archive, book, cells)
            strings = book.shared_strings(cells)
            dates, durations = book.date_styles(
                BUILTIN_FORMATS, is_date_format, is_timedelta_format
            )
            title = book.title()

            def value(number: float, style: int) -> Any:
                if style in dates:
                    with contextlib.suppress(OverflowError, ValueError):
                        epoch = MAC_EPOCH if book.date1904 else WINDOWS_EPOCH
                        return from_excel(number, epoch, timedelta=style in durations)
                return number

            reader = _SheetReader(strings, value, from_ISO8601, column_index_from_string, cells)
            parts: list[str] = []
            names: list[str] = []
            for name, path in book.sheets:
                with archive.open(path) as stream:
                    rows = iter_row_lines(
                        reader.rows(stream), column_name=lambda i: get_column_letter(i + 1)
                    )
                    lines = [chars.text(line) for line in rows]
                if lines:
                    names.append(name)
                    heading = chars.text(f"# Sheet: {' '.join(name.split())}")
                    parts.append(heading + "\n\n" + "\n".join(lines) + "\n")
        except LoadError:
            raise
        except Exception as exc:  # a damaged workbook: XML, numbers, references
            raise LoadError(f"not a readable Excel file ({type(exc).__name__}: {exc})") from None
    metadata: dict[str, Any] = {"split": "lines", "sheets": names}
    if not parts:
        return Loaded("", title or None, metadata, "no values in any sheet")
    return Loaded("\n".join(parts), title or None, metadata)


# The start tag of a cell's value (<v>), inline string (<is>) or shared string (<si>),
# with or without a namespace prefix; never an end tag.
_VALUE_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(?:v|is|si)[\s/>]")
_VALUE_TAG_MAX = 64  # longest match kept across two blocks (a prefix name is short)


def _count_values(archive: _Archive, book: _Workbook, cells: _Budget) -> None:
    """Refuse at once a workbook whose sheets and shared strings hold more than ``max_cells``.

    Counts the start tags of values and strings in each part's unpacked bytes, a
    block at a time (a regex search, without parsing): an upper bound of the
    cells the parse counts one by one, so this never refuses what the parse would
    accept, except cells that are written with an empty value. The bytes are
    counted against ``max_unpacked_bytes`` as the parse's are.
    """
    budget = _Budget(cells.limits, cells.name, cells.what)
    unpacked = archive.unpacked
    parts = [path for _, path in book.sheets]
    if book.strings_path and book.strings_path in archive.names:
        parts.append(book.strings_path)
    for part in parts:
        tail = b""
        with archive.open(part) as stream:
            while chunk := stream.read(_CHUNK):
                block = tail + chunk
                seen = len(_VALUE_TAG.findall(block)) - len(_VALUE_TAG.findall(tail))
                budget.spend(seen)
                tail = block[-_VALUE_TAG_MAX:]
    archive.unpacked = unpacked  # the parse counts the same bytes again, as they come


def _local(tag: str) -> str:
    """Return an element or attribute name without its namespace (transitional or strict)."""
    return tag.rpartition("}")[2]


def _events(stream: IO[bytes]) -> Iterator[tuple[str, str, Any]]:
    """Yield ``(event, local name, element)`` for each start and end tag of a part.

    An element's attributes are there at both its events, its text at its end;
    once its end has been handled it is dropped from its parent, so the tree never
    holds more than the open elements (at most ``_MAX_XML_DEPTH``), however long
    the part.
    """
    stack: list[Any] = []
    names: dict[str, str] = {}  # tag -> local name (a part repeats a few tags)
    for event, element in ET.iterparse(stream, events=("start", "end")):
        tag = element.tag
        name = names.get(tag) or names.setdefault(tag, _local(tag))
        if event == "start":
            stack.append(element)
            if len(stack) > _MAX_XML_DEPTH:
                raise LoadError(f"its XML is nested more than {_MAX_XML_DEPTH} levels deep")
            yield event, name, element
        else:
            stack.pop()
            yield event, name, element
            if stack:
                del stack[-1][:]  # drop the finished child, keep the parent's attributes


class _Workbook:
    """The parts of a workbook around its sheets: names, shared strings, styles, title."""

    def __init__(self, archive: _Archive) -> None:
        self.archive = archive
        package = self._rels("_rels/.rels")
        self.path = _first(package, "officeDocument")
        self.core = _first(package, "core-properties")
        if self.path not in archive.names:
            raise LoadError("not an Excel (.xlsx) file (it has no workbook part)")
        rels = self._rels(_rels_path(self.path))
        self.strings_path = _first(rels, "sharedStrings")
        self.styles_path = _first(rels, "styles")
        self.date1904 = False
        self.sheets: list[tuple[str, str]] = []
        with archive.open(self.path) as stream:
            for event, name, element in _events(stream):
                if event != "end":
                    continue
                if name == "workbookPr":
                    self.date1904 = element.get("date1904", "").lower() in {"1", "true"}
                elif name == "sheet":
                    rel_id = next((v for k, v in element.attrib.items() if _local(k) == "id"), "")
                    kind, path = rels.get(rel_id, ("", ""))
                    if kind == "worksheet" and path in archive.names:
                        self.sheets.append((element.get("name", ""), path))

    def _rels(self, path: str) -> dict[str, tuple[str, str]]:
        """Read a relationships part: id -> (type, target path inside the archive)."""
        out: dict[str, tuple[str, str]] = {}
        if path not in self.archive.names:
            return out
        base = posixpath.dirname(posixpath.dirname(path))  # "xl/_rels/x.rels" -> "xl"
        with self.archive.open(path) as stream:
            for event, name, element in _events(stream):
                if event != "end" or name != "Relationship":
                    continue
                match = _REL_TYPE_END.search(element.get("Type", ""))
                if element.get("TargetMode") == "External" or not match:
                    continue
                target = element.get("Target", "")
                if target.startswith("/"):
                    target = target.lstrip("/")
                else:
                    target = posixpath.normpath(posixpath.join(base, target))
                out[element.get("Id", "")] = (match.group(1), target)
        return out

    def shared_strings(self, cells: _Budget) -> list[str]:
        """Read the shared string table; each string counts as a cell (it is there for cells)."""
        strings: list[str] = []
        if not self.strings_path or self.strings_path not in self.archive.names:
            return strings
        collect = _StringCollector()
        with self.archive.open(self.strings_path) as stream:
            for event, name, element in _events(stream):
                collect.see(event, name, element)
                if event == "end" and name == "si":
                    cells.spend()
                    strings.append(collect.take())
        return strings

    def date_styles(
        self,
        builtin: dict[int, str],
        is_date: Callable[[str], bool],
        is_timedelta: Callable[[str], bool],
    ) -> tuple[set[int], set[int]]:
        """Return the cell style indices that show a number as a date, and as a duration."""
        dates: set[int] = set()
        durations: set[int] = set()
        if not self.styles_path or self.styles_path not in self.archive.names:
            return dates, durations
        custom: dict[int, str] = {}
        index = 0
        in_cell_xfs = False
        with self.archive.open(self.styles_path) as stream:
            for event, name, element in _events(stream):
                if name == "cellXfs":
                    in_cell_xfs = event == "start"
                elif event == "end" and name == "numFmt":
                    with contextlib.suppress(ValueError):
                        custom[int(element.get("numFmtId", ""))] = element.get("formatCode", "")
                elif event == "end" and name == "xf" and in_cell_xfs:
                    fmt_id = _int(element.get("numFmtId"))
                    fmt = custom.get(fmt_id, builtin.get(fmt_id, ""))
                    if fmt and is_date(fmt):
                        dates.add(index)
                        if is_timedelta(fmt):
                            durations.add(index)
                    index += 1
        return dates, durations

    def title(self) -> str:
        if self.core not in self.archive.names:
            return ""
        with self.archive.open(self.core) as stream:
            for event, name, element in _events(stream):
                if event == "end" and name == "title":
                    return (element.text or "").strip()
        return ""


def _first(rels: dict[str, tuple[str, str]], kind: str) -> str:
    return next((target for k, target in rels.values() if k == kind), "")


def _rels_path(part: str) -> str:
    folder, name = posixpath.split(part)
    return posixpath.join(folder, "_rels", name + ".rels")


def _int(text: str | None, default: int = 0) -> int:
    try:
        return int(text or default)
    except ValueError:
        return default


class _StringCollector:
    """Gathers the text of a shared or inline string from its events.

    The text is its ``t`` runs, without the phonetic readings (``rPh``) shown above
    East Asian text.
    """

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.phonetic = 0

    def see(self, event: str, name: str, element: Any) -> None:
        if name == "rPh":
            self.phonetic += 1 if event == "start" else -1
        elif name == "t" and event == "end" and not self.phonetic:
            self.pieces.append(element.text or "")

    def take(self) -> str:
        text = "".join(self.pieces)
        self.pieces = []
        return text


class _SheetReader:
    """Reads a worksheet part as a stream of sparse rows ``{0-based column: value}``."""

    def __init__(
        self,
        strings: list[str],
        number: Callable[[float, int], Any],
        from_iso: Callable[[str], Any],
        column_index: Callable[[str], int],
        cells: _Budget,
    ) -> None:
        self.strings = strings
        self.number = number
        self.from_iso = from_iso
        self.column_index = column_index
        self.cells = cells

    def rows(self, stream: IO[bytes]) -> Iterator[dict[int, Any]]:
        """Yield the sheet's rows in file order, each holding only the cells it has.

        Memory holds one row's values, whatever the sheet's size or declared extent.
        """
        values: dict[int, Any] = {}
        column = 0
        raw: str | None = None  # the cell's <v>
        inline = _StringCollector()  # the cell's <is>
        for event, name, element in _events(stream):
            if name == "row":
                if event == "end" and values:
                    yield values
                values, column = {}, 0
            elif name == "c":
                if event == "start":
                    raw = None
                    inline.take()
                    continue
                column = self._column(element.get("r"), column)
                value = self._value(element.get("t", "n"), element.get("s"), raw, inline.take())
                if value is not None and value != "":
                    self.cells.spend()
                    values[column - 1] = value
            elif name == "v" and event == "end":
                raw = element.text
            else:
                inline.see(event, name, element)

    def _column(self, ref: str | None, previous: int) -> int:
        """Return a cell's 1-based column: from its reference (``"XFD7"``), else the next one."""
        if ref:
            match = _CELL_REF.match(ref)
            if match:
                return self.column_index(match.group(1).upper())
        return previous + 1

    def _value(self, kind: str, style: str | None, raw: str | None, inline: str) -> Any:
        if kind == "inlineStr":
            return inline
        if raw is None or raw == "":
            return None
        if kind == "s":
            index = _int(raw, -1)
            return self.strings[index] if 0 <= index < len(self.strings) else None
        if kind == "b":
            return raw.strip() in {"1", "true"}
        if kind == "d":
            try:
                return self.from_iso(raw)
            except ValueError:
                return raw
        if kind in {"str", "e"}:  # a formula's text result, an error such as #DIV/0!
            return raw
        try:
            number = float(raw) if any(c in raw for c in ".eEnN") else int(raw)
        except ValueError:  # not a number after all: keep what the file says
            return raw
        return self.number(number, _int(style))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the libraries' warnings about features they skip (data validation, ...)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
