"""CSV and TSV files (standard library): one ``Header: value; ...`` line per row.

The delimiter of a ``.tsv`` file is a tab; for a ``.csv`` file it is sniffed from
its first 16 KiB among comma, semicolon, tab and bar (comma when unclear). Rows
are rendered as spreadsheet rows are (see
:func:`~sealgraph.ingest.loaders.base.render_rows`): the first row names the
columns, each later row is one line that repeats them, and the document is split
by line, so no chunk cuts a row and every chunk says what its values are. A CSV
file has no sections.
"""

from __future__ import annotations

import csv
import io

from sealgraph.ingest.loaders.base import Loaded, LoadError, Source, render_rows

__all__ = ["load_csv"]

_SNIFF_CHARS = 16384
_DELIMITERS = ",;\t|"


def load_csv(source: Source) -> Loaded:
    """Load a CSV or TSV file as header-labelled rows, one per line."""
    text = source.text()
    delimiter = "\t" if source.file.suffix.lower() == ".tsv" else _sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        lines = render_rows(reader, column_name=lambda i: f"column {i + 1}")
    except csv.Error as exc:
        raise LoadError(f"not readable CSV (line {reader.line_num}: {exc})") from None
    metadata = {"split": "lines"}
    if not lines:
        return Loaded("", None, metadata)
    return Loaded("\n".join(lines) + "\n", None, metadata)


def _sniff_delimiter(text: str) -> str:
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # whole lines only
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return ","
