"""Load a user's documents: Markdown, MDX, reST, text, HTML, PDF, DOCX, XLSX, CSV, JSONL.

Every file but JSON Lines becomes one document, through the loader of its format
(:mod:`sealgraph.ingest.loaders`): structure (headings, pages, sheets) is written
into the document text as Markdown headings, which chunking turns into section
paths. Markdown front matter is parsed, not indexed. Formats that need a library
(HTML, PDF, Word, Excel) name the extra that installs it when it is missing.

Paths may be files or directories (walked recursively in sorted order, hidden
entries skipped) so the same inputs always give the same documents in the same
order. A corpus is what lies under the paths given: a symlink inside a folder is
followed when it resolves inside one of the given paths (each real folder and file
is read once) and skipped with a warning naming it when it points anywhere else,
unless ``follow_links=True`` (``--follow-links``) opts in. Only regular files are
read: a FIFO, socket or device is refused before anything is read from it (an
error when named, a warning inside a folder). A folder or file that cannot be
read is skipped with a warning naming it. JSONL is
read per line in one of two forms: the multi-hop QA schema (``{"question",
"paragraphs": [{"title", "sentences"}], ...}``, every paragraph a document,
deduplicated across all inputs) or a generic ``{"id", "title", "text"}`` record.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sealgraph.errors import IngestError, InputError
from sealgraph.ingest._walk import SUPPORTED_SUFFIXES, iter_input_files
from sealgraph.ingest.loaders import (
    FORMATS,
    PLAIN_TEXT,
    Format,
    Loaded,
    LoaderLimits,
    LoadError,
    MissingExtraError,
    Source,
    WarnFn,
    format_for,
)
from sealgraph.paths import file_kind
from sealgraph.terminal import printable
from sealgraph.text.chunking import markdown_headings
from sealgraph.text.normalize import normalize_for_matching, normalize_text
from sealgraph.types import Document

__all__ = [
    "FORMATS",
    "INDEX_PAGE_STEMS",
    "MARKDOWN_SUFFIXES",
    "SUPPORTED_SUFFIXES",
    "Corpus",
    "LoaderLimits",
    "SourceFile",
    "UnreadableFileError",
    "WarnFn",
    "load_corpus",
    "load_documents",
    "load_qa_records",
    "parse_json_line",
    "qa_doc_id",
    "read_regular_file",
    "warn_stderr",
]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx"})
"""File suffixes read as Markdown (MDX with its imports and components removed)."""

INDEX_PAGE_STEMS = frozenset({"index", "_index", "readme"})
"""File stems (any case) of a folder's landing page: titled by the folder when untitled."""

MAX_JSON_DEPTH = 100
"""Deepest nesting of lists and objects accepted in a JSONL line."""

_BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One input file that was read."""

    path: str
    """Absolute POSIX path of the file."""
    sha256: str
    """SHA-256 of the file's bytes."""
    n_documents: int
    """Documents this file contributed (after deduplication)."""


@dataclass(frozen=True, slots=True)
class Corpus:
    """Documents loaded from paths, with the files they came from."""

    documents: list[Document] = field(default_factory=list)
    """Documents in input order."""
    sources: list[SourceFile] = field(default_factory=list)
    """Files read, in input order (binary files that were skipped are not listed)."""
    excluded: list[str] = field(default_factory=list)
    """Files and folders inside the folders given that the ignore patterns (defaults,
    ``.sealgraphignore``, ``exclude``) left out: absolute POSIX paths, symlinks resolved."""


def load_documents(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    warn: WarnFn | None = None,
    follow_links: bool = False,
    limits: LoaderLimits | None = None,
    exclude: Sequence[str] = (),
) -> list[Document]:
    """Load documents from files and directories.

    Args:
        paths: One path or several. Directories are walked recursively; inside them
            only files with a suffix in :data:`SUPPORTED_SUFFIXES` are read. A file
            named explicitly with any other suffix is read as plain text.
        warn: Called with one line per recoverable problem (a binary, unreadable or
            damaged file skipped, a file skipped because its format's extra is not
            installed, an unreadable folder skipped, a symlink loop broken, bytes
            that are not UTF-8, front matter kept as text, a symlink out of the
            given paths or a file that is not a regular file skipped). Defaults to
            printing on stderr.
        follow_links: Also follow symlinks inside the folders that point outside
            every given path (off by default: a shared folder's link to
            ``/etc/passwd`` must not become a document).
        limits: How much of one file the loaders unpack before refusing it
            (:class:`~sealgraph.ingest.loaders.LoaderLimits`; the documented
            defaults when None).
        exclude: More gitignore-style patterns of what folders leave out, after
            the defaults and each folder's ``.sealgraphignore``
            (:mod:`sealgraph.ingest.ignore`).

    Returns:
        The documents, in a deterministic order (inputs in the given order, files
        within a directory sorted by relative path).

    Raises:
        InputError: A path does not exist, a path named explicitly is not a
            regular file or folder (a FIFO, a device), a file named explicitly
            cannot be read, an ignore file or pattern cannot be read, or no
            document was found at all.
        IngestError: A JSONL line is malformed (or nested more than
            :data:`MAX_JSON_DEPTH` deep), two inputs claim the same id, or a file
            named explicitly is damaged or needs an extra that is not installed
            (``reading report.pdf needs the pdf extra: pip install 'sealgraph[pdf]'``).

    """
    return load_corpus(
        paths, warn=warn, follow_links=follow_links, limits=limits, exclude=exclude
    ).documents


def load_corpus(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    warn: WarnFn | None = None,
    follow_links: bool = False,
    limits: LoaderLimits | None = None,
    exclude: Sequence[str] = (),
) -> Corpus:
    """Like :func:`load_documents`, but also report the files read and their hashes."""
    warn = warn or warn_stderr
    loader = _Loader(warn, limits or LoaderLimits())
    excluded: list[str] = []
    files = iter_input_files(_as_path_list(paths), warn, follow_links, exclude, excluded)
    for root, file, explicit in files:
        loader.load_file(root, file, explicit=explicit)
    loader.warn_missing_extras()
    if not loader.documents:
        shown = ", ".join(str(p) for p in _as_path_list(paths)) or "(no paths given)"
        suffixes = sorted(SUPPORTED_SUFFIXES)
        raise InputError(
            f"no documents found in {shown} (sealgraph reads {', '.join(suffixes[:-1])} and "
            f"{suffixes[-1]} files)"
        )
    return Corpus(documents=loader.documents, sources=loader.sources, excluded=excluded)


def load_qa_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read and validate the records of a multi-hop QA JSONL file.

    Every non-blank line must be a JSON object with a string ``question`` and
    ``paragraphs``: a list of ``{"title": str, "sentences": [str, ...]}``. When
    present, ``answer`` must be a string and ``supporting_facts`` a list of
    ``[title, sentence_index]`` pairs.

    Args:
        path: The JSONL file.

    Returns:
        The raw records, in file order.

    Raises:
        InputError: The file does not exist.
        IngestError: A line is not valid JSON (or nested more than
            :data:`MAX_JSON_DEPTH` deep) or does not follow the schema; the message
            names the file and line number.

    """
    file = Path(path)
    if not file.exists():
        raise InputError(f"no such file: {file}")
    text = _decode(read_regular_file(file), file, warn=warn_stderr)
    records = []
    for line_no, record in _iter_json_lines(text, file):
        if not _is_qa_record(record):
            raise IngestError(
                f"{file}:{line_no}: not a multi-hop QA record (expected an object with "
                f'"question" and "paragraphs")'
            )
        _validate_qa_record(record, file, line_no, require_question=True)
        records.append(_normalised_qa_record(record))
    return records


def qa_doc_id(title: str, text: str) -> str:
    """Return the stable id of a QA paragraph: ``"p-"`` + 16 hex digits of SHA-1."""
    digest = hashlib.sha1(f"{title}\x00{text}".encode(), usedforsecurity=False)
    return "p-" + digest.hexdigest()[:16]


class _Loader:
    """Accumulates documents across inputs, enforcing id uniqueness and QA dedup."""

    def __init__(self, warn: WarnFn, limits: LoaderLimits) -> None:
        self.warn = warn
        self.limits = limits
        self.documents: list[Document] = []
        self.sources: list[SourceFile] = []
        self._ids: dict[str, str] = {}  # doc_id -> where it came from
        self._qa_seen: set[tuple[str, str]] = set()
        self._files_seen: set[Path] = set()
        self._missing_extras: dict[str, list[Path]] = {}  # extra -> files skipped for it

    def load_file(self, root: Path, file: Path, *, explicit: bool) -> None:
        resolved = file.resolve()
        if resolved in self._files_seen:  # the same file named twice (dir and file)
            return
        self._files_seen.add(resolved)
        suffix = file.suffix.lower()
        # JSONL, and a file named explicitly whose suffix is not known, are text.
        fmt = format_for(suffix) or PLAIN_TEXT
        try:
            data = read_regular_file(file)
        except UnreadableFileError as exc:
            if explicit:  # the user named this file: not reading it is an error
                raise
            self.warn(f"skipped unreadable file {file}: {exc.reason}")
            return
        if not fmt.binary and b"\x00" in data[:_BINARY_SNIFF_BYTES]:
            self.warn(f"skipped binary file {file}")
            return
        before = len(self.documents)
        rel = file.relative_to(root).as_posix()
        if suffix == ".jsonl":
            self._load_jsonl(_decode(data, file, warn=self.warn), file, rel)
        else:
            loaded = self._convert(fmt, file, data, explicit=explicit)
            if loaded is None:
                return
            self._add_loaded(fmt, loaded, file, rel)
        self.sources.append(
            SourceFile(
                path=resolved.as_posix(),
                sha256=hashlib.sha256(data).hexdigest(),
                n_documents=len(self.documents) - before,
            )
        )

    def _convert(self, fmt: Format, file: Path, data: bytes, *, explicit: bool) -> Loaded | None:
        """Run the format's loader; None when the file is skipped (with a warning)."""
        source = Source(
            file=file, data=data, warn=self.warn, decode=self._decoder(file), limits=self.limits
        )
        try:
            return fmt.load(source)
        except MissingExtraError as exc:
            if explicit:
                raise IngestError(exc.for_file(file)) from None
            skipped = self._missing_extras.setdefault(exc.extra, [])
            if not skipped:
                self.warn(
                    f"skipped {file}: reading {file.suffix.lower()} files {exc}; every file "
                    "that needs it is skipped"
                )
            skipped.append(file)
            return None
        except LoadError as exc:
            if explicit:
                raise IngestError(f"cannot read {file}: {exc}") from None
            self.warn(f"skipped {file}: {exc}")
            return None

    def _decoder(self, file: Path) -> Callable[[bytes], str]:
        return lambda data: _decode(data, file, warn=self.warn)

    def warn_missing_extras(self) -> None:
        """Warn once more per missing extra that made several files be skipped."""
        for extra, files in self._missing_extras.items():
            if len(files) > 1:
                kinds = ", ".join(sorted({f.suffix.lower() for f in files}))
                self.warn(
                    f"skipped {len(files)} {kinds} files in all: the {extra} extra is not "
                    f"installed (pip install 'sealgraph[{extra}]')"
                )

    def _add_loaded(self, fmt: Format, loaded: Loaded, file: Path, rel: str) -> None:
        # Offsets refer to this normalised text (NFC, no invisible characters, LF line
        # ends); normalize_text's map leads back to the loader's text.
        text = normalize_text(loaded.text)[0]
        if not text.strip():
            reason = loaded.empty_reason
            self.warn(f"skipped {file}: {reason}" if reason else f"skipped empty file {file}")
            return
        title = loaded.title
        if not title and fmt.title_from_h1:
            first_h1 = next((h for h in markdown_headings(text) if h.level == 1), None)
            if first_h1 is not None:
                title = first_h1.text
        if not title:
            title = _fallback_title(file)
        doc = Document(
            doc_id=rel,
            title=normalize_for_matching(title),
            text=text,
            source=str(file),
            metadata={"format": fmt.name, **loaded.metadata},
        )
        self._add(doc, str(file))

    def _add(self, doc: Document, where: str) -> None:
        if doc.doc_id in self._ids:
            raise IngestError(
                f"{where}: duplicate document id {doc.doc_id!r} (already used by "
                f"{self._ids[doc.doc_id]}); document ids must be unique"
            )
        self._ids[doc.doc_id] = where
        self.documents.append(doc)

    def _load_jsonl(self, text: str, file: Path, rel: str) -> None:
        for line_no, record in _iter_json_lines(text, file):
            where = f"{file}:{line_no}"
            if _is_qa_record(record):
                _validate_qa_record(record, file, line_no, require_question=False)
                record = _normalised_qa_record(record)
                for paragraph in record["paragraphs"]:
                    self._add_qa_paragraph(paragraph, where)
            elif isinstance(record, dict) and "text" in record:
                self._add(_generic_document(record, rel, line_no, where), where)
            else:
                raise IngestError(
                    f"{where}: unrecognised JSONL record: expected a multi-hop QA record "
                    f'("paragraphs": [{{"title", "sentences"}}]) or {{"id", "title", "text"}}'
                )

    def _add_qa_paragraph(self, paragraph: dict[str, Any], where: str) -> None:
        title = paragraph["title"]
        sentences = paragraph["sentences"]
        text = "".join(sentences)
        if (title, text) in self._qa_seen or not text.strip():
            return
        self._qa_seen.add((title, text))
        spans = []
        offset = 0
        for sentence in sentences:
            spans.append([offset, offset + len(sentence)])
            offset += len(sentence)
        doc = Document(
            doc_id=qa_doc_id(title, text),
            title=title,
            text=text,
            source=where,
            metadata={"format": "qa", "sentence_spans": spans},
        )
        self._add(doc, where)


def _fallback_title(file: Path) -> str:
    """Title of a file that gives none: its stem, or its folder's name for a landing page.

    ``docs/install/index.mdx`` is titled ``install``, not ``index``: a docs site
    has one ``index`` page per folder.
    """
    if file.stem.lower() in INDEX_PAGE_STEMS:
        folder = file.absolute().parent.name
        if folder:
            return folder
    return file.stem


def _generic_document(record: dict[str, Any], rel: str, line_no: int, where: str) -> Document:
    text = record["text"]
    if not isinstance(text, str):
        raise IngestError(f'{where}: "text" must be a string')
    doc_id = record.get("id")
    if doc_id is None:
        doc_id = f"{rel}:{line_no}"
    elif isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    elif not isinstance(doc_id, str) or not doc_id.strip():
        raise IngestError(f'{where}: "id" must be a non-empty string')
    title = record.get("title", doc_id)
    if not isinstance(title, str):
        raise IngestError(f'{where}: "title" must be a string')
    extra = {k: v for k, v in record.items() if k not in {"id", "title", "text"}}
    return Document(
        doc_id=doc_id,
        title=normalize_for_matching(title),
        text=normalize_for_matching(text),
        source=where,
        metadata={"format": "jsonl", **extra},
    )


def _normalised_qa_record(record: dict[str, Any]) -> dict[str, Any]:
    """Return a validated QA record with its texts normalised as documents are.

    The question, answer, titles and sentences, and the titles of the supporting
    facts, so that the gold titles still name the indexed paragraphs.
    """
    norm = normalize_for_matching
    out = dict(record)
    for key in ("question", "answer"):
        if isinstance(record.get(key), str):
            out[key] = norm(record[key])
    out["paragraphs"] = [
        {**p, "title": norm(p["title"]), "sentences": [norm(x) for x in p["sentences"]]}
        for p in record["paragraphs"]
    ]
    if isinstance(record.get("supporting_facts"), list):
        out["supporting_facts"] = [[norm(t), i] for t, i in record["supporting_facts"]]
    return out


def _is_qa_record(record: Any) -> bool:
    return isinstance(record, dict) and "paragraphs" in record


def _validate_qa_record(
    record: dict[str, Any], file: Path, line_no: int, *, require_question: bool
) -> None:
    where = f"{file}:{line_no}"
    paragraphs = record["paragraphs"]
    if not isinstance(paragraphs, list):
        raise IngestError(f'{where}: "paragraphs" must be a list')
    for i, paragraph in enumerate(paragraphs):
        if not (
            isinstance(paragraph, dict)
            and isinstance(paragraph.get("title"), str)
            and isinstance(paragraph.get("sentences"), list)
            and all(isinstance(s, str) for s in paragraph["sentences"])
        ):
            raise IngestError(
                f'{where}: paragraph {i} must be {{"title": str, "sentences": [str, ...]}}'
            )
    question = record.get("question")
    if (require_question or question is not None) and not isinstance(question, str):
        raise IngestError(f'{where}: "question" must be a string')
    if "answer" in record and not isinstance(record["answer"], str):
        raise IngestError(f'{where}: "answer" must be a string')
    facts = record.get("supporting_facts")
    if facts is not None and not (isinstance(facts, list) and all(map(_is_fact, facts))):
        raise IngestError(f'{where}: "supporting_facts" must be a list of [title, index] pairs')


def _is_fact(fact: Any) -> bool:
    """Whether ``fact`` is a supporting fact: ``[title, sentence index]``."""
    return (
        isinstance(fact, list)
        and len(fact) == 2
        and isinstance(fact[0], str)
        and isinstance(fact[1], int)
        and not isinstance(fact[1], bool)
    )


def parse_json_line(line: str, where: str) -> Any:
    """Parse one line of a user's JSONL file, or raise an error naming ``where``.

    Use this rather than :func:`json.loads` for any user JSONL: a line nested
    thousands of levels deep would otherwise raise :class:`RecursionError` here or
    later (serialising, printing), which the CLI would show as a traceback.

    Args:
        line: The line.
        where: ``file:line`` for the message.

    Raises:
        IngestError: Invalid JSON, or lists and objects nested more than
            :data:`MAX_JSON_DEPTH` deep.

    """
    too_deep = IngestError(
        f"{where}: JSON nested too deeply (sealgraph reads at most {MAX_JSON_DEPTH} levels "
        f"of lists and objects)"
    )
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{where}: invalid JSON ({exc.msg})") from None
    except RecursionError:  # the parser's own stack limit: far deeper than MAX_JSON_DEPTH
        raise too_deep from None
    # Refused here, deep values would blow the stack later (json.dumps of metadata,
    # repr); counting brackets first keeps the walk off ordinary lines.
    if line.count("[") + line.count("{") > MAX_JSON_DEPTH and _deeper_than(value, MAX_JSON_DEPTH):
        raise too_deep
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and objects nest more than ``limit`` levels deep (iteratively)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _iter_json_lines(text: str, file: Path) -> Iterator[tuple[int, Any]]:
    for line_no, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield line_no, parse_json_line(line, f"{file}:{line_no}")


def read_regular_file(file: str | os.PathLike[str]) -> bytes:
    """Return the bytes of a regular file, refusing anything else before reading.

    The file is opened without blocking and checked on the open descriptor, so a
    FIFO (which would block forever), a device such as ``/dev/zero`` (which never
    ends) or a socket named as input is an error, not a hang, and a file swapped
    for one between a check and the read is caught too.

    Raises:
        UnreadableFileError: The file cannot be opened or read, or is not a
            regular file; the message names it (``cannot read x: ...``).

    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(file, flags)
    except OSError as exc:
        raise UnreadableFileError(file, exc.strerror or str(exc)) from None
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind != "regular file":
            raise UnreadableFileError(file, f"it is {kind}, not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as exc:
        raise UnreadableFileError(file, exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


class UnreadableFileError(InputError):
    """A file cannot be read, or is not a regular file (a FIFO, a device, a socket)."""

    def __init__(self, file: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"cannot read {file}: {reason}")
        self.reason = reason
        """Why, without the file name."""


def _decode(data: bytes, file: Path, *, warn: WarnFn) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warn(f"{file} is not valid UTF-8; undecodable bytes were replaced with U+FFFD")
        return data.decode("utf-8-sig", errors="replace")


def _as_path_list(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
) -> list[Path]:
    if isinstance(paths, str | os.PathLike):
        return [Path(paths)]
    return [Path(p) for p in paths]


def warn_stderr(message: str) -> None:
    """Print a warning line on stderr (the default ``warn`` callback)."""
    print(f"sealgraph: warning: {printable(message, one_line=True)}", file=sys.stderr)
