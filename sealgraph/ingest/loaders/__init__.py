"""The file formats sealgraph reads, and the loader of each.

A loader turns one file into one document's text, with its structure written as
Markdown headings (see :mod:`sealgraph.ingest.loaders.base`). Formats that need
a library name the sealgraph extra that installs it; that library is imported
only when a file of the format is read.

=============  ==========================================  ===========  =========
format         suffixes                                    extra        library
=============  ==========================================  ===========  =========
markdown       ``.md`` ``.markdown``                       (none)       PyYAML
mdx            ``.mdx``                                    (none)       PyYAML
rst            ``.rst``                                    (none)
text           ``.txt``                                    (none)
csv            ``.csv`` ``.tsv``                           (none)
html           ``.html`` ``.htm`` ``.xhtml``               ``html``     beautifulsoup4
pdf            ``.pdf``                                    ``pdf``      pypdf
docx           ``.docx``                                   ``office``   python-docx
xlsx           ``.xlsx`` ``.xlsm``                         ``office``   openpyxl
=============  ==========================================  ===========  =========
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sealgraph.ingest.loaders.base import (
    Loaded,
    LoaderLimits,
    LoadError,
    MissingExtraError,
    Source,
    WarnFn,
)
from sealgraph.ingest.loaders.markup import load_markdown, load_mdx, load_rst
from sealgraph.ingest.loaders.office import load_docx, load_xlsx
from sealgraph.ingest.loaders.pdf import load_pdf
from sealgraph.ingest.loaders.tables import load_csv
from sealgraph.ingest.loaders.webpage import load_html

__all__ = [
    "FORMATS",
    "PLAIN_TEXT",
    "Format",
    "LoadError",
    "Loaded",
    "LoaderLimits",
    "MissingExtraError",
    "Source",
    "WarnFn",
    "format_for",
]


def load_text(source: Source) -> Loaded:
    """Load a plain text file as it is."""
    return Loaded(source.text())


@dataclass(frozen=True, slots=True)
class Format:
    """A file format: its name, suffixes and loader."""

    name: str
    """Recorded as the document's ``metadata["format"]``."""
    suffixes: tuple[str, ...]
    """Lower-case file suffixes, with the dot."""
    load: Callable[[Source], Loaded]
    """The loader."""
    binary: bool = False
    """Read as bytes: no check for binary content, no UTF-8 decoding first."""
    extra: str | None = None
    """The sealgraph extra that installs the library the loader needs."""
    title_from_h1: bool = False
    """Without a title of its own, the document takes its first level-1 heading."""


PLAIN_TEXT = Format("text", (".txt",), load_text)
"""Plain text; also the format of a file named explicitly whose suffix is not known."""

FORMATS: tuple[Format, ...] = (
    Format("markdown", (".md", ".markdown"), load_markdown, title_from_h1=True),
    Format("mdx", (".mdx",), load_mdx, title_from_h1=True),
    Format("rst", (".rst",), load_rst, title_from_h1=True),
    PLAIN_TEXT,
    Format("csv", (".csv", ".tsv"), load_csv),
    Format("html", (".html", ".htm", ".xhtml"), load_html, extra="html"),
    Format("pdf", (".pdf",), load_pdf, binary=True, extra="pdf"),
    Format("docx", (".docx",), load_docx, binary=True, extra="office"),
    Format("xlsx", (".xlsx", ".xlsm"), load_xlsx, binary=True, extra="office"),
)
"""Every format read, in the order the README lists them."""

_BY_SUFFIX = {suffix: fmt for fmt in FORMATS for suffix in fmt.suffixes}


def format_for(suffix: str) -> Format | None:
    """Return the format of a file suffix (any case), or None when it is not one of ours."""
    return _BY_SUFFIX.get(suffix.lower())
