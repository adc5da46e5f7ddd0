"""Structure-preserving, zero-overlap chunking on sentence boundaries.

A document is first cut into Markdown sections (a heading line starts a section
and belongs to it), then each section into sentences, and sentences are packed
greedily into chunks of at most ``max_tokens`` tokens. Chunks tile the document
exactly: ``"".join(c.text for c in chunks) == doc.text``, every whitespace
character included, so offsets always point back into the source.

Sentence splitting is a deterministic regex splitter (no model, no locale). When
a document carries ``metadata["sentence_spans"]`` (multi-hop QA paragraphs come
pre-split), those spans are used instead so chunks cut exactly there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sealgraph.tokens import TokenCounter
from sealgraph.types import Chunk, Document

__all__ = [
    "SPLITTER_VERSION",
    "Heading",
    "chunk_document",
    "markdown_headings",
    "split_sentences",
]

SPLITTER_VERSION = "regex-1"
"""Version of the sentence splitter and section rules; stored in index manifests."""

# Abbreviations after which a period never ends a sentence ("Dr. Smith", "e.g. X").
_TITLE_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "messrs", "mme", "mlle", "dr", "prof", "st", "jr", "sr", "rev", "hon"}
    | {"sen", "rep", "gov", "pres", "gen", "col", "capt", "cmdr", "lt", "sgt", "maj", "adm"}
    | {"fr", "mt", "ft", "vs", "cf", "al", "approx", "e.g", "i.e", "viz"}
)
# Abbreviations that do not end a sentence when a number follows ("No. 5", "Jan. 3").
_NUMERIC_ABBREVIATIONS = frozenset(
    {"no", "nos", "vol", "vols", "fig", "figs", "p", "pp", "ch", "chap", "sec", "art", "op"}
    | {"ca", "c", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov"}
    | {"dec"}
)

# Sentence-final punctuation, closing quotes/brackets, then the whitespace that
# belongs to the sentence it ends.
_LATIN_END_RE = re.compile(r"(?:[.!?]|…)+[\"'”’»)\]]*(\s+)")
# CJK full stops end a sentence even without a following space.
_CJK_END_RE = re.compile(r"[。！？]+[」』”’）)]*\s*")
# A blank line: the next paragraph starts at the first non-space character after it.
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n\s*")
# Lines that always start a new sentence: list items, headings, table rows, quotes, fences.
_BLOCK_START_RE = re.compile(
    r"^[ \t]*(?=(?:[-*+•][ \t]|\d{1,3}[.)][ \t]|#{1,6}[ \t]|\||>|```|~~~))", re.MULTILINE
)
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")
_INITIAL_RE = re.compile(r"[A-Z]")
_DOTTED_RE = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
_LIST_MARKER_RE = re.compile(r"\d{1,3}|[A-Za-z]|[ivxlcIVXLC]{1,5}")
_OPENERS = "\"'“‘«([{"


@dataclass(frozen=True, slots=True)
class Heading:
    """One ATX Markdown heading line (``## Title``)."""

    start: int
    """Offset of the heading's first ``#``."""
    end: int
    """Offset one past the heading line, including its newline."""
    level: int
    """Heading level, 1 to 6."""
    text: str
    """Heading text without the ``#`` marks."""


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Split ``text`` into sentence spans that tile it exactly.

    Whitespace after a sentence belongs to that sentence, so every sentence but
    possibly the first starts on a non-space character. Blank lines, list items,
    headings, table rows, quotes and code fences always start a new sentence.
    A period does not end a sentence after a title abbreviation (``Mr.``,
    ``Dr.``, ``St.``, ``e.g.``), an initial (``J. R. R. Tolkien``), an
    upper-case dotted abbreviation (``U.S.``), a list marker at the start of a
    line (``1.``), before a number after ``No.``/``Fig.``/month names, or
    when the next word starts in lower case. Decimals (``3.14``) never split
    because no space follows the point.

    Args:
        text: Any text.

    Returns:
        ``(start, end)`` offsets; empty for empty text, else their concatenation
        is ``text``.

    """
    if not text:
        return []
    cuts = {m.end() for m in _BLANK_LINE_RE.finditer(text)}
    cuts.update(m.end() for m in _BLOCK_START_RE.finditer(text))
    cuts.update(m.end() for m in _CJK_END_RE.finditer(text))
    cuts.update(m.end() for m in _LATIN_END_RE.finditer(text) if _ends_sentence(text, m))
    # A heading line is a sentence of its own: what follows it starts a new one.
    for heading in _iter_heading_lines(text):
        cuts.add(_skip_space(text, heading.end))
    bounds = sorted(c for c in cuts if 0 < c < len(text))
    starts = [0, *bounds]
    ends = [*bounds, len(text)]
    return list(zip(starts, ends, strict=True))


def markdown_headings(text: str) -> list[Heading]:
    """Return the ATX headings of a Markdown text, skipping fenced code blocks."""
    return list(_iter_heading_lines(text))


def chunk_document(doc: Document, counter: TokenCounter, max_tokens: int = 256) -> list[Chunk]:
    """Cut a document into zero-overlap chunks on sentence boundaries.

    Sentences are packed greedily up to ``max_tokens`` tokens (counted with
    ``counter`` on the exact chunk text). A sentence longer than ``max_tokens`` becomes
    a chunk of its own: text is never cut inside a sentence. Markdown headings
    start a new chunk and the heading line belongs to the chunk after it; a
    heading with no text of its own before a deeper heading (``# Handbook``
    directly followed by ``## Expenses``) is kept with that first subsection
    rather than becoming a chunk with no content. Documents whose
    ``metadata["format"]`` is ``"text"`` or that carry
    ``metadata["sentence_spans"]`` have no sections.

    Args:
        doc: The document.
        counter: Token counter whose encoding the index uses.
        max_tokens: Most tokens in a chunk made of more than one sentence.

    Returns:
        Chunks in document order; their texts concatenate to ``doc.text``.

    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    text = doc.text
    if not text:
        return []
    given_spans = doc.metadata.get("sentence_spans")
    if given_spans:
        sections = [(0, len(text), ())]
        sentences = [_spans_from_ends(text, (int(end) for _, end in given_spans))]
    else:
        use_headings = doc.metadata.get("format") != "text"
        sections = _sections(text, markdown_headings(text) if use_headings else [])
        sentences = [
            [(start + a, start + b) for a, b in split_sentences(text[start:end])]
            for start, end, _ in sections
        ]
    chunks: list[Chunk] = []
    for (_, _, chain), section_sentences in zip(sections, sentences, strict=True):
        for group in _pack(text, section_sentences, counter, max_tokens):
            chunks.append(_make_chunk(doc, chain, len(chunks), group, counter))
    return chunks


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    after = match.end()
    if after >= len(text):
        return False  # the end of the text is a boundary anyway
    next_char = text[after]
    if next_char.islower():
        return False
    punct_end = match.start(1)
    if text[match.start() : punct_end].rstrip("\"'”’»)]") != ".":
        return True  # ! ? or an ellipsis followed by a capital
    token_start = match.start()
    while token_start > 0 and not text[token_start - 1].isspace():
        token_start -= 1
    token = text[token_start : match.start()].lstrip(_OPENERS)
    lowered = token.lower()
    if lowered in _TITLE_ABBREVIATIONS:
        return False
    if lowered in _NUMERIC_ABBREVIATIONS and next_char.isdigit():
        return False
    if _INITIAL_RE.fullmatch(token):
        return False
    if _DOTTED_RE.fullmatch(token) and token.upper() == token:
        return False
    line_start = text.rfind("\n", 0, match.start()) + 1
    at_line_start = not text[line_start:token_start].strip()
    return not (at_line_start and _LIST_MARKER_RE.fullmatch(token))


def _iter_heading_lines(text: str) -> Iterable[Heading]:
    in_fence = False
    fence = ""
    offset = 0
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        fence_match = _FENCE_RE.match(bare)
        if fence_match:
            if not in_fence:
                in_fence, fence = True, fence_match.group(1)
            elif fence_match.group(1) == fence:
                in_fence = False
        elif not in_fence:
            heading = _HEADING_RE.match(bare)
            if heading and heading.group(2).strip():
                yield Heading(
                    start=offset + heading.start(1),
                    end=offset + len(line),
                    level=len(heading.group(1)),
                    text=heading.group(2).strip(),
                )
        offset += len(line)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _sections(text: str, headings: Sequence[Heading]) -> list[tuple[int, int, tuple[str, ...]]]:
    """Cut ``text`` at headings into ``(start, end, heading chain)`` sections."""
    sections: list[tuple[int, int, tuple[str, ...]]] = []
    stack: list[Heading] = []
    start = 0
    for i, heading in enumerate(headings):
        # A heading with nothing but whitespace under it before a deeper heading
        # stays with that subsection instead of becoming an empty chunk.
        previous = headings[i - 1] if i else None
        under_empty_parent = (
            previous is not None
            and previous.start >= start
            and heading.level > previous.level
            and not text[previous.end : heading.start].strip()
        )
        # Leading blank lines before the first heading are not a section either.
        if text[start : heading.start].strip() and not under_empty_parent:
            sections.append((start, heading.start, tuple(h.text for h in stack)))
            start = heading.start
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
    sections.append((start, len(text), tuple(h.text for h in stack)))
    return sections


def _spans_from_ends(text: str, ends: Iterable[int]) -> list[tuple[int, int]]:
    """Tile ``text`` with spans cut at the given sentence ends (clipped, deduplicated)."""
    bounds = sorted({e for e in ends if 0 < e < len(text)})
    return list(zip([0, *bounds], [*bounds, len(text)], strict=True))


def _pack(
    text: str, sentences: Sequence[tuple[int, int]], counter: TokenCounter, max_tokens: int
) -> list[list[tuple[int, int]]]:
    """Greedily group consecutive sentences into chunks of at most ``max_tokens`` tokens."""
    groups: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    estimate = 0
    for span in sentences:
        tokens = counter.count(text[span[0] : span[1]])
        if not current:
            current, estimate = [span], tokens
            continue
        # The sum of sentence counts is almost always >= the count of their
        # concatenation (BPE merges across the seam), so only near the limit is
        # the exact count of the joined text needed.
        if estimate + tokens <= max_tokens:
            current.append(span)
            estimate += tokens
            continue
        joined = counter.count(text[current[0][0] : span[1]])
        if joined <= max_tokens:
            current.append(span)
            estimate = joined
        else:
            groups.append(current)
            current, estimate = [span], tokens
    if current:
        groups.append(current)
    # Rare case where the estimate undercounted: re-pack that group exactly.
    exact: list[list[tuple[int, int]]] = []
    for group in groups:
        if len(group) > 1 and counter.count(text[group[0][0] : group[-1][1]]) > max_tokens:
            exact.extend(_pack_exact(text, group, counter, max_tokens))
        else:
            exact.append(group)
    return exact


def _pack_exact(
    text: str, sentences: Sequence[tuple[int, int]], counter: TokenCounter, max_tokens: int
) -> list[list[tuple[int, int]]]:
    groups: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    for span in sentences:
        if current and counter.count(text[current[0][0] : span[1]]) > max_tokens:
            groups.append(current)
            current = []
        current.append(span)
    if current:
        groups.append(current)
    return groups


def _make_chunk(
    doc: Document,
    section: tuple[str, ...],
    order: int,
    group: Sequence[tuple[int, int]],
    counter: TokenCounter,
) -> Chunk:
    start, end = group[0][0], group[-1][1]
    chunk_text = doc.text[start:end]
    return Chunk(
        chunk_id=f"{doc.doc_id}#{order}",
        doc_id=doc.doc_id,
        title=doc.title,
        section=section,
        order=order,
        start=start,
        end=end,
        text=chunk_text,
        n_tokens=counter.count(chunk_text),
        sentences=tuple((a - start, b - start) for a, b in group),
    )
