"""PDF: the text layer of each page, under a ``# Page N`` heading (extra ``pdf``: pypdf).

Each page with text becomes a section ``Page N`` (N counts the file's pages from
1, whatever the printed page labels say), so chunks never span pages and a
citation names its page. The title is the PDF's own ``/Title`` when it has a real
one (not empty, not a file name, ``Microsoft Word - `` prefix dropped), else the
caller's choice. Scanned pages have no text layer: a PDF with no text at all is
skipped with a warning (OCR it first). A page whose text cannot be extracted is
skipped with a warning; a file pypdf cannot open, or encrypted with a password,
cannot be read.

pypdf's own safety limits stay on (each stream decompresses to at most 75 MB,
and so on), except its cap of 100,000 elements in one array, which real files
pass (SEC filings with large tagged-structure arrays): that cap is
:attr:`~sealgraph.ingest.loaders.base.LoaderLimits.max_pdf_array_elements`. A file
with more pages than ``max_pdf_pages``, or more text than ``max_text_chars``, is
refused with an error that names the limit.

Why pypdf rather than pypdfium2 (PDFium), which extracts the same words about ten
times faster: PDFium has no decompression limit. A 1 MB file holding a stream of
1 GB took 2 GB of memory (pypdf refuses it at 75 MB), and a 40 KB file drawing
10 MB of text on one page took 1.6 GB (pypdf: 107 MB, if slowly).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any

from sealgraph.ingest.loaders.base import (
    Loaded,
    LoaderLimits,
    LoadError,
    MissingExtraError,
    Source,
    escape_markdown,
)

__all__ = ["load_pdf", "pdf_page_texts"]

_TRAILING_SPACE_RE = re.compile(r"[ \t]+\n")
_BLANK_RUN_RE = re.compile(r"\n{3,}")
_FILE_NAME_TITLE_RE = re.compile(r"\.(?:pdf|docx?|odt|rtf|tex|txt|pptx?|xlsx?|indd|qxd)$", re.I)
_ARRAY_LIMIT_MESSAGE = "maximum array element count"


def load_pdf(source: Source) -> Loaded:
    """Load a PDF's text, one ``# Page N`` section per page that has text."""
    pypdf = _pypdf()
    limits = source.limits
    parts: list[str] = []
    with _quiet_pypdf(), _pypdf_configuration(pypdf, limits):
        reader = _open(pypdf, source.data, limits)
        warn = source.warn
        for number, text in _page_texts(reader, limits, lambda m: warn(f"{source.file}: {m}")):
            parts.append(f"# Page {number}\n\n{escape_markdown(text)}\n")
        title = _title(reader)
    metadata: dict[str, Any] = {"pages": len(reader.pages)}
    if not parts:
        return Loaded("", title, metadata, "no text could be extracted (a scanned PDF needs OCR)")
    return Loaded("\n".join(parts), title, metadata)


def pdf_page_texts(data: bytes, limits: LoaderLimits | None = None) -> dict[int, str]:
    """Return the text of each page with text, by page number from 1, as :func:`load_pdf` reads it.

    The text of a page before it is written under its ``# Page N`` heading (and
    before Markdown characters are escaped): what an evaluation's gold spans on a
    PDF count their offsets in (``{"document", "page", "start", "end"}``).

    Raises:
        MissingExtraError: pypdf is not installed.
        LoadError: The file cannot be read, or passes a limit.

    """
    pypdf = _pypdf()
    limits = limits or LoaderLimits()
    with _quiet_pypdf(), _pypdf_configuration(pypdf, limits):
        reader = _open(pypdf, data, limits)
        return dict(_page_texts(reader, limits, lambda _: None))


def _pypdf() -> Any:
    try:
        import pypdf
    except ImportError:
        raise MissingExtraError("pdf", "pypdf") from None
    return pypdf


def _page_texts(
    reader: Any, limits: LoaderLimits, warn: Callable[[str], None]
) -> Iterator[tuple[int, str]]:
    """``(page number, cleaned text)`` of every page with text, within the limits."""
    n_pages = len(reader.pages)
    if n_pages > limits.max_pdf_pages:
        raise limits.exceeded("max_pdf_pages", "document has")
    chars_left = limits.max_text_chars
    for number in range(1, n_pages + 1):
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except Exception as exc:  # pypdf on a damaged page: lose the page, not the file
            if _ARRAY_LIMIT_MESSAGE in str(exc):
                warn(
                    f"skipped page {number}: "
                    + str(limits.exceeded("max_pdf_array_elements", "page holds an array of"))
                )
            else:
                warn(f"skipped page {number}, its text cannot be read ({exc})")
            continue
        text = _clean(text)
        if text:
            chars_left -= len(text)
            if chars_left < 0:
                raise limits.exceeded("max_text_chars", "text runs to")
            yield number, text


@contextlib.contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """Silence pypdf's log (it reports every repaired glitch) while a file is read."""
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _pypdf_configuration(
    pypdf: Any, limits: LoaderLimits
) -> contextlib.AbstractContextManager[Any]:
    """Apply our array limit to pypdf while a file is read (pypdf 7 and later have one)."""
    configuration = getattr(pypdf, "Configuration", None)
    apply = getattr(pypdf, "apply_configuration", None)
    if configuration is None or apply is None:
        return contextlib.nullcontext()
    fields = {field.name for field in dataclasses.fields(configuration)}
    if "array_maximum_element_count" not in fields:
        return contextlib.nullcontext()
    return apply(array_maximum_element_count=limits.max_pdf_array_elements)


def _open(pypdf: Any, data: bytes, limits: LoaderLimits) -> Any:
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadError("it is encrypted with a password")
        _ = len(reader.pages)  # parse the page tree now, inside this try
    except LoadError:
        raise
    except Exception as exc:  # pypdf raises many types on damaged files
        if _ARRAY_LIMIT_MESSAGE in str(exc):
            raise limits.exceeded("max_pdf_array_elements", "structure holds an array of") from None
        raise LoadError(f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    return reader


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _TRAILING_SPACE_RE.sub("\n", text)
    return _BLANK_RUN_RE.sub("\n\n", text).strip()


def _title(reader: Any) -> str | None:
    try:
        raw = reader.metadata.title if reader.metadata is not None else None
    except Exception:  # a damaged info dictionary: no title
        return None
    if not isinstance(raw, str):
        return None
    title = " ".join(raw.split())
    title = title.removeprefix("Microsoft Word - ")
    if not title or title.lower() in {"untitled", "title"} or _FILE_NAME_TITLE_RE.search(title):
        return None
    return title
