"""Questions about a folder of documents, with gold documents and character spans.

The questions file has one JSON object per line::

    {"id": "q1", "question": "...", "answer": "..." | null, "type": "...",
     "gold_documents": ["<file name inside the corpus folder>", ...],
     "gold_spans": [{"document": "<file name>", "start": 11461, "end": 11963}, ...]}

``gold_documents`` name documents by their path relative to the corpus folder,
which is the doc id :func:`sealgraph.ingest.load_documents` gives them. Span
offsets are Python ``str`` indices into the file's text read as UTF-8; the
ingester normalises text (:mod:`sealgraph.text.normalize`: NFC, no byte-order mark
or other invisible characters, LF line ends), so :class:`SourceText` maps every
offset onto that normalised text, the one chunk offsets refer to.

Formats the loaders extract text from are scored too: an HTML page, an MDX page
with components, reStructuredText or CSV is read again by its loader and its raw
text aligned word by word with the indexed text (:mod:`sealgraph.text.align`), so
a span marked in the raw file covers the indexed words it holds. A PDF has no text
to count in: a span on one names its page (``"page": 3``) and counts characters
of that page's text as the loader reads it
(:func:`sealgraph.ingest.loaders.pdf.pdf_page_texts`). Word and Excel files are
zipped XML: spans on them are refused.

A question is *unanswerable* (the corpus does not hold its answer; declining is
right) when ``"answerable": false``; or, without that field, when its ``type``
contains "unanswerable" or "unsolvable" (any case), or its ``answer`` is null and
it names no gold document. See :func:`is_unanswerable`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sealgraph.errors import IngestError, InputError
from sealgraph.ingest import MARKDOWN_SUFFIXES, load_documents, parse_json_line
from sealgraph.ingest.loaders import format_for
from sealgraph.ingest.loaders.markup import split_front_matter
from sealgraph.ingest.loaders.pdf import pdf_page_texts
from sealgraph.text.align import TextAlignment, align_texts
from sealgraph.text.normalize import OffsetMap, normalize_text
from sealgraph.types import Document

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.index.protocol import SearchIndex

__all__ = [
    "CorpusQuestion",
    "CorpusSources",
    "GoldSpan",
    "QuestionsFormat",
    "SourceText",
    "check_index_matches",
    "detect_format",
    "is_unanswerable",
    "load_corpus_questions",
    "normalise_source",
]

QuestionsFormat = Literal["multihop", "corpus", "unknown"]
"""What a questions file holds: multi-hop QA JSONL, corpus questions, or neither."""

_UNANSWERABLE_TYPE_WORDS = ("unanswerable", "unsolvable")


@dataclass(frozen=True, slots=True)
class GoldSpan:
    """A gold evidence passage, in the document's normalised (indexed) text."""

    document: str
    """Doc id: the file's path relative to the corpus folder."""
    start: int
    """Offset of the first character."""
    end: int
    """Offset one past the last character."""


@dataclass(frozen=True, slots=True)
class CorpusQuestion:
    """One question about a corpus, with its gold labels."""

    qid: str
    """Question id (``id`` field)."""
    question: str
    """The question text."""
    answer: str | None
    """Reference answer; None when the source gives only evidence."""
    type: str
    """Question type as given (empty when absent)."""
    gold_documents: tuple[str, ...]
    """Doc ids the answer needs: ``gold_documents`` plus any other document a gold span
    names, in order of first mention."""
    gold_spans: tuple[GoldSpan, ...]
    """Gold evidence passages, offsets mapped onto the normalised text."""
    answerable: bool
    """False when the corpus does not hold the answer (see :func:`is_unanswerable`)."""
    line: int = 0
    """Line of the questions file the question is on (1-based)."""


@dataclass(frozen=True, slots=True)
class SourceText:
    """A file's text as the ingester indexes it, and how raw offsets map onto it."""

    text: str
    """The normalised text (:func:`sealgraph.text.normalize.normalize_text`: NFC, no
    byte-order mark or other invisible characters, LF line ends only)."""
    offsets: OffsetMap
    """Offsets between the raw text (the file read as UTF-8) and :attr:`text`."""
    skipped: int = 0
    """Characters of the normalised file before :attr:`text` that are not indexed:
    a Markdown or MDX page's front matter, parsed and never indexed."""
    alignment: TextAlignment | None = None
    """For a format whose loader extracts text (HTML, MDX components, ...): the
    words of the normalised file (front matter skipped) matched with :attr:`text`'s;
    None when :attr:`text` is the file's own text."""
    pages: Mapping[int, SourceText] | None = None
    """For a PDF: each page's text, aligned with :attr:`text` (gold spans name a
    page); None for other formats."""
    no_spans: str = ""
    """Why gold spans cannot be given in this file's offsets (a Word or Excel file
    is zipped XML); empty when they can."""

    @property
    def raw_length(self) -> int:
        """Length of the raw text, the range raw offsets live in."""
        return self.offsets.raw_length

    def to_normalised(self, offset: int, *, end: bool = False) -> int:
        """Map a raw offset (0..``raw_length``) onto ``text``.

        An offset keeps its place among the characters that stay: the offset of
        the LF of a CRLF and of its CR both map to the LF; the end of a span that
        ends inside a composed character covers it. An offset inside the skipped
        front matter maps to 0 (a span there covers nothing indexed).
        """
        return max(0, self.offsets.to_normalised(offset, end=end) - self.skipped)

    def to_indexed(self, start: int, end: int) -> tuple[int, int]:
        """Map the raw span ``[start, end)`` onto :attr:`text` (see :meth:`to_normalised`).

        With an alignment the span covers the indexed words matched inside it (an
        empty span where it holds only markup).
        """
        first, last = self.to_normalised(start), self.to_normalised(end, end=True)
        if self.alignment is None:
            return first, last
        return self.alignment.to_extracted(first, last)


def normalise_source(raw: str, suffix: str = "", extracted: str | None = None) -> SourceText:
    """Normalise a file's raw text exactly as :mod:`sealgraph.ingest` does.

    Args:
        raw: The file's bytes decoded as UTF-8 (a byte-order mark kept as U+FEFF).
        suffix: The file's suffix: a Markdown or MDX page's front matter is split
            off as the loader splits it, so offsets land in the indexed text.
        extracted: The text the file's loader indexes, when it is not the file's
            own (an HTML page's text): raw offsets are then aligned with it.

    """
    text, offsets = normalize_text(raw)
    skipped = 0
    if suffix.lower() in MARKDOWN_SUFFIXES:
        front, body = split_front_matter(text, "", lambda _: None)
        if front is not None and text.endswith(body):
            skipped, text = len(text) - len(body), body
    if extracted is None or extracted == text:
        return SourceText(text=text, offsets=offsets, skipped=skipped)
    return SourceText(
        text=extracted, offsets=offsets, skipped=skipped, alignment=align_texts(text, extracted)
    )


def _read_source(path: Path, doc_id: str, where: str) -> SourceText:
    """Read a document's file, and its indexed text through its loader where that differs."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"cannot read {path}, the file of document {doc_id!r} in {where}: "
            f"{exc.strerror or exc}; give --corpus DIR"
        ) from None
    suffix = path.suffix.lower()
    if suffix in _VERBATIM_SUFFIXES or format_for(suffix) is None:
        return normalise_source(data.decode("utf-8", errors="replace"), suffix)
    documents = load_documents(path, warn=lambda _: None)
    if len(documents) != 1:
        raise InputError(
            f"{path}, the file of document {doc_id!r} in {where}, now holds "
            f"{len(documents)} documents; rebuild the index"
        )
    extracted = documents[0].text
    if suffix == ".pdf":
        return _pdf_source(data, extracted)
    fmt = format_for(suffix)
    if fmt is not None and fmt.binary:
        return SourceText(
            text=extracted,
            offsets=normalize_text(extracted)[1],
            no_spans=f"a {suffix} file is zipped XML, with no text that offsets could count in",
        )
    return normalise_source(data.decode("utf-8", errors="replace"), suffix, extracted)


def _pdf_source(data: bytes, extracted: str) -> SourceText:
    """Return a PDF's indexed text with each page's text aligned to its ``Page N`` section."""
    pages: dict[int, SourceText] = {}
    for number, page_text in pdf_page_texts(data).items():
        heading = f"# Page {number}\n\n"
        at = extracted.find(heading)
        if at < 0:
            continue
        begin = at + len(heading)
        following = extracted.find("\n# Page ", begin)
        section = extracted[begin : following if following >= 0 else len(extracted)]
        page = normalise_source(page_text, "", section)
        alignment = page.alignment or align_texts(page.text, section)
        pages[number] = SourceText(
            text=extracted,
            offsets=page.offsets,
            alignment=alignment.shifted(begin, len(extracted)),
        )
    return SourceText(text=extracted, offsets=normalize_text(extracted)[1], pages=pages)


_VERBATIM_SUFFIXES = frozenset({".txt"})
"""Formats whose indexed text is the file's own (normalised); others are read by their loader."""


class CorpusSources:
    """The files behind a corpus's documents, read on demand (each at most once).

    Args:
        paths: Doc id -> the file it was read from.
        where: How error messages name the corpus (``corpus folder docs/``).

    """

    def __init__(self, paths: Mapping[str, Path | None], where: str) -> None:
        self.paths = dict(paths)
        self.where = where
        self._texts: dict[str, SourceText] = {}

    @classmethod
    def from_documents(cls, documents: Iterable[Document], where: str) -> CorpusSources:
        """Return the sources of documents loaded from a folder (``Document.source``).

        Records of JSONL files are documents too, but not files: they have no source
        a gold span could point into.
        """
        return cls(
            {
                doc.doc_id: Path(doc.source) if doc.metadata.get("format") != "jsonl" else None
                for doc in documents
            },
            where,
        )

    @classmethod
    def from_index(cls, index: SearchIndex) -> CorpusSources:
        """Return the sources of an index built from files, as its manifest records them.

        A document's file is the recorded source whose path ends with the doc id;
        a document with no such source (or with several) has none, and questions
        about it are refused with a message asking for ``--corpus``.
        """
        read = getattr(index, "source_files", None)  # an index may record its files
        listed = read() if callable(read) else (index.manifest.get("sources") or ())
        recorded = [Path(str(s.get("path", ""))) for s in listed]
        paths: dict[str, Path | None] = {}
        for doc_id, _ in index.titles():
            tail = Path(doc_id).parts
            found = [p for p in recorded if p.parts[-len(tail) :] == tail]
            paths[doc_id] = found[0] if len(found) == 1 else None
        return cls(paths, f"the index in {index.path}")

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.paths

    def text(self, doc_id: str) -> SourceText:
        """Return the normalised text of a document's file.

        Raises:
            InputError: The document has no file (a JSONL record, or an index that
                does not record it) or the file cannot be read.

        """
        if doc_id not in self._texts:
            path = self.paths[doc_id]
            if path is None:
                raise InputError(
                    f"document {doc_id!r} of {self.where} has no file that gold offsets "
                    "could refer to (a JSONL record, or an index that does not record its "
                    "file); give --corpus DIR"
                )
            self._texts[doc_id] = _read_source(path, doc_id, self.where)
        return self._texts[doc_id]


def is_unanswerable(
    answer: str | None,
    gold_documents: Sequence[str],
    qtype: str = "",
    answerable: bool | None = None,
) -> bool:
    """Whether a question's corpus does not hold its answer (declining is right).

    An explicit ``answerable`` flag decides. Otherwise a question is unanswerable
    when its type says so (contains "unanswerable" or "unsolvable", any case), or
    when it has neither a reference answer nor a gold document.
    """
    if answerable is not None:
        return not answerable
    lowered = qtype.lower()
    if any(word in lowered for word in _UNANSWERABLE_TYPE_WORDS):
        return True
    return answer is None and not gold_documents


def detect_format(path: str | Path) -> QuestionsFormat:
    """Tell the format of a questions file from its first non-blank line.

    ``paragraphs`` makes it multi-hop QA JSONL; ``gold_documents`` or
    ``gold_spans`` (without ``paragraphs``) corpus questions. Anything else
    (blank file, bad JSON, another object) is ``unknown``: the loader of the mode
    chosen by the flags reports the problem.

    Raises:
        InputError: The file does not exist or cannot be read.

    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no such file: {path}")
    for line_no, line in _lines(path):
        try:
            record = parse_json_line(line, f"{path}:{line_no}")
        except IngestError:  # bad or too deeply nested JSON: the loader reports it
            return "unknown"
        if not isinstance(record, dict):
            return "unknown"
        if "paragraphs" in record:
            return "multihop"
        if "gold_documents" in record or "gold_spans" in record:
            return "corpus"
        return "unknown"
    return "unknown"


def load_corpus_questions(path: str | Path, sources: CorpusSources) -> list[CorpusQuestion]:
    """Load and check every question of a corpus questions file.

    Every gold document must be a document of ``sources`` and every gold span
    must lie within its file's text; offsets are mapped onto the normalised text.

    Args:
        path: The questions JSONL file.
        sources: The corpus's documents and their files.

    Raises:
        InputError: The file is missing, not UTF-8 or holds no question.
        IngestError: A line is not valid JSON (or nested too deeply), not a question
            in this format, names an unknown document or has a span out of range;
            the message names the file and line.

    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no such file: {path}")
    questions: list[CorpusQuestion] = []
    first_line: dict[str, int] = {}
    for line_no, line in _lines(path):
        where = f"{path}:{line_no}"
        question = _question(parse_json_line(line, where), where, line_no, sources)
        if question.qid in first_line:
            raise IngestError(
                f"{where}: duplicate question id {question.qid!r} "
                f"(first on line {first_line[question.qid]})"
            )
        first_line[question.qid] = line_no
        questions.append(question)
    if not questions:
        raise InputError(f"questions file {path} holds no question")
    return questions


def check_index_matches(
    questions: Sequence[CorpusQuestion],
    index: SearchIndex,
    sources: CorpusSources,
    path: str | Path,
) -> None:
    """Check that ``index`` holds every gold document with the text of its file.

    Each chunk of a gold document must be exactly its file's normalised text at
    the chunk's offsets: an index built before the file changed would otherwise
    score spans against the wrong characters.

    Args:
        questions: The questions whose gold documents are checked.
        index: The loaded index.
        sources: The files of the corpus's documents.
        path: The questions file (named in error messages).

    Raises:
        InputError: A gold document is missing from the index or differs from its file.

    """
    indexed = {doc_id for doc_id, _ in index.titles()}
    checked: set[str] = set()
    for question in questions:
        for doc_id in question.gold_documents:
            if doc_id in checked:
                continue
            checked.add(doc_id)
            if doc_id not in indexed:
                raise InputError(
                    f"{path}:{question.line}: gold document {doc_id!r} is not in the index "
                    f"{index.path}; give an index built from this corpus"
                )
            text = sources.text(doc_id).text
            if any(text[c.start : c.end] != c.text for c in index.doc_chunks(doc_id)):
                raise InputError(
                    f"document {doc_id!r} in the index {index.path} differs from its file "
                    f"{sources.paths[doc_id]}; rebuild the index"
                )


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"questions file {path} is not valid UTF-8 ({exc.reason})") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    for line_no, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield line_no, line


def _question(record: Any, where: str, line_no: int, sources: CorpusSources) -> CorpusQuestion:
    if not isinstance(record, dict):
        raise IngestError(f"{where}: expected a JSON object")
    if "paragraphs" in record:
        raise IngestError(
            f"{where}: a multi-hop QA record (it has paragraphs) in a corpus questions file; "
            "evaluate multi-hop QA JSONL without --corpus"
        )
    qid, text, answer, qtype, answerable = _scalar_fields(record, where)
    documents = record.get("gold_documents") or []
    if not isinstance(documents, list) or not all(isinstance(d, str) for d in documents):
        raise IngestError(f'{where}: "gold_documents" must be a list of file names')
    spans = _spans(record.get("gold_spans") or [], where, sources)
    for doc_id in documents:
        _check_known(doc_id, where, sources)
    gold_documents = tuple(dict.fromkeys([*documents, *(s.document for s in spans)]))
    return CorpusQuestion(
        qid=qid,
        question=text,
        answer=answer,
        type=qtype,
        gold_documents=gold_documents,
        gold_spans=spans,
        answerable=not is_unanswerable(answer, gold_documents, qtype, answerable),
        line=line_no,
    )


def _scalar_fields(
    record: dict[str, Any], where: str
) -> tuple[str, str, str | None, str, bool | None]:
    """Check and return a question record's ``id``, ``question``, ``answer``, ``type``, ``answerable``."""
    qid = record.get("id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid.strip():
        raise IngestError(f'{where}: "id" must be a non-empty string')
    text = record.get("question")
    if not isinstance(text, str) or not text.strip():
        raise IngestError(f'{where}: "question" must be a non-empty string')
    answer = record.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise IngestError(f'{where}: "answer" must be a string or null')
    qtype = record.get("type") or ""
    if not isinstance(qtype, str):
        raise IngestError(f'{where}: "type" must be a string')
    answerable = record.get("answerable")
    if answerable is not None and not isinstance(answerable, bool):
        raise IngestError(f'{where}: "answerable" must be true or false')
    return qid, text, answer, qtype, answerable


def _spans(spans: Any, where: str, sources: CorpusSources) -> tuple[GoldSpan, ...]:
    if not isinstance(spans, list):
        raise IngestError(f'{where}: "gold_spans" must be a list')
    out = []
    for i, span in enumerate(spans):
        if not (
            isinstance(span, dict)
            and isinstance(span.get("document"), str)
            and all(
                isinstance(span.get(key), int) and not isinstance(span.get(key), bool)
                for key in ("start", "end")
            )
        ):
            raise IngestError(
                f'{where}: gold span {i} must be {{"document": str, "start": int, "end": int}} '
                '(and "page": int on a PDF)'
            )
        doc_id, start, end = span["document"], span["start"], span["end"]
        _check_known(doc_id, where, sources)
        try:
            source = _span_source(sources.text(doc_id), span.get("page"), doc_id)
        except InputError as exc:
            raise IngestError(f"{where}: gold span {i}: {exc}") from None
        if not 0 <= start <= end <= source.raw_length:
            raise IngestError(
                f"{where}: gold span {i} [{start}, {end}) of {doc_id!r} is out of range: "
                f"the {'page' if 'page' in span else 'file'} has {source.raw_length} characters"
            )
        out.append(GoldSpan(doc_id, *source.to_indexed(start, end)))
    return tuple(out)


def _span_source(source: SourceText, page: Any, doc_id: str) -> SourceText:
    """Return what a span's offsets count in: the file, or the PDF page it names."""
    if source.no_spans:
        raise InputError(f"offsets into {doc_id!r} cannot be scored: {source.no_spans}")
    if source.pages is None:
        if page is not None:
            raise InputError(f'"page" is for spans on a PDF, and {doc_id!r} is not one')
        return source
    if not isinstance(page, int) or isinstance(page, bool):
        raise InputError(
            f'a span on the PDF {doc_id!r} names its page ("page": 1 for the first) and '
            "counts characters of that page's text"
        )
    if page not in source.pages:
        raise InputError(f"page {page} of {doc_id!r} has no text (or the file has no such page)")
    return source.pages[page]


def _check_known(doc_id: str, where: str, sources: CorpusSources) -> None:
    if doc_id not in sources:
        raise IngestError(
            f"{where}: gold document {doc_id!r} is not a document of {sources.where} "
            "(names are paths relative to the corpus folder, files of the formats "
            "`sealgraph index --help` lists)"
        )
