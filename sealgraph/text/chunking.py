"""Structure-preserving, zero-overlap chunking on sentence boundaries.

A document is first cut into Markdown sections (a heading line starts a section
and belongs to it), then each section into sentences, and sentences are packed
greedily into chunks of at most ``max_tokens`` tokens; a sentence longer than that
is cut into pieces that fit. Chunks tile the document exactly:
``"".join(c.text for c in chunks) == doc.text``, every whitespace character
included, so offsets always point back into the source.

Every step is linear in the length of the text, so a document of tens of
megabytes on a single line chunks in seconds: no regex can backtrack over a run
of its own matches, and every look-back is bounded by the previous candidate.

Sentence splitting is a deterministic regex splitter (no model, no locale). When
a document carries ``metadata["sentence_spans"]`` (multi-hop QA paragraphs come
pre-split), those spans are used instead so chunks cut exactly there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from sealgraph.text.lexicon import active
from sealgraph.text.tokens import TokenCounter
from sealgraph.types import Chunk, Document

__all__ = [
    "SPLITTER_VERSION",
    "Heading",
    "chunk_document",
    "markdown_headings",
    "split_sentences",
]

SPLITTER_VERSION = "regex-2"
"""Version of the sentence splitter and section rules; stored in index manifests."""

# Abbreviations after which a period ends no sentence ("Dr. Smith", "e.g. X", "No. 5")
# are the active lexicon's (title_abbreviations, numeric_abbreviations).

# Sentence-final punctuation, closing quotes/brackets, then the whitespace that
# belongs to the sentence it ends. A match only starts at the first mark of a run:
# retrying from every mark of a long run ("!!!!..." with no space after it) would
# rescan the rest of the run each time, quadratic in its length.
_LATIN_END_RE = re.compile(r"(?<![.!?…])(?:[.!?]|…)+[\"'”’»)\]]*(\s+)")
# CJK full stops end a sentence even without a following space.
_CJK_END_RE = re.compile(r"[。！？]+[」』”’）)]*\s*")
# A blank line: the next paragraph starts at the first non-space character after it.
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n\s*")
# Lines that always start a new sentence: list items, headings, table rows, quotes, fences.
_BLOCK_START_RE = re.compile(
    r"^[ \t]*(?=(?:[-*+•][ \t]|\d{1,3}[.)][ \t]|#{1,6}[ \t]|\||>|```|~~~))", re.MULTILINE
)
# The opening of an ATX heading line; the rest of the line is parsed without a
# regex (a lazy ".*?" before an optional closing "###" backtracks quadratically
# over long runs of spaces).
_HEADING_OPEN_RE = re.compile(r" {0,3}(#{1,6})[ \t]+")
# On reversed text: the word before a full stop, then the whitespace before that word.
_REVERSED_WORD_RE = re.compile(r"(\S*)(\s*)")
# On reversed text: a non-space character preceded by whitespace (a word start).
_REVERSED_WORD_START_RE = re.compile(r"\S\s")
_SPACES_RE = re.compile(r"\s*")
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
    cuts.update(_latin_sentence_ends(text))
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
    ``counter`` on the exact chunk text). A sentence longer than ``max_tokens`` is
    cut into pieces of at most ``max_tokens`` tokens, each as long as fits and
    ending after whitespace where the sentence has any (else at a character
    boundary), and the pieces are packed like sentences: a document with no
    sentence punctuation still gives chunks that fit a budget. Markdown headings
    start a new chunk and the heading line belongs to the chunk after it; a
    heading with no text of its own before a deeper heading (``# Handbook``
    directly followed by ``## Expenses``) is kept with that first subsection
    rather than becoming a chunk with no content. Documents whose
    ``metadata["format"]`` is ``"text"`` or that carry
    ``metadata["sentence_spans"]`` have no sections. Documents whose
    ``metadata["split"]`` is ``"lines"`` (table rows, one per line) are split into
    lines instead of sentences, so a chunk never cuts a row that fits in it.

    Args:
        doc: The document.
        counter: Token counter whose encoding the index uses.
        max_tokens: Most tokens in a chunk. Only a chunk of a single character
            that alone encodes to more tokens can exceed it (a character is at most
            4 bytes, so only when ``max_tokens`` is below 4).

    Returns:
        Chunks in document order; their texts concatenate to ``doc.text``.

    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    text = doc.text
    if not text:
        return []
    chunks: list[Chunk] = []
    for chain, sentences in _section_sentences(doc):
        pieces = _fitting_pieces(text, sentences, counter, max_tokens)
        for group in _pack(text, pieces, counter, max_tokens):
            chunks.append(_make_chunk(doc, chain, len(chunks), group, counter))
    return chunks


def _section_sentences(doc: Document) -> Iterator[tuple[tuple[str, ...], list[tuple[int, int]]]]:
    """Yield each section's heading chain and sentence spans (offsets into ``doc.text``).

    Section by section, so that only one section's spans are in memory at a time.
    """
    text = doc.text
    given_spans = doc.metadata.get("sentence_spans")
    if given_spans:
        yield (), _spans_from_ends(text, (int(end) for _, end in given_spans))
        return
    use_headings = doc.metadata.get("format") != "text"
    # Table rows (spreadsheets, CSV) are one line each and must never be cut apart.
    split = _split_lines if doc.metadata.get("split") == "lines" else split_sentences
    for start, end, chain in _sections(text, markdown_headings(text) if use_headings else []):
        yield chain, [(start + a, start + b) for a, b in split(text[start:end])]


def _split_lines(text: str) -> list[tuple[int, int]]:
    """Split ``text`` into one span per non-blank line (blank lines join the line before).

    Linear: each whitespace run after a line end is skipped once.
    """
    if not text:
        return []
    bounds = []
    pos = text.find("\n")
    while pos != -1:
        pos = _skip_space(text, pos + 1)
        if pos < len(text):
            bounds.append(pos)
        pos = text.find("\n", pos)
    return list(zip([0, *bounds], [*bounds, len(text)], strict=True))


def _latin_sentence_ends(text: str) -> Iterator[int]:
    """Yield the end of every Latin-punctuation match that ends a sentence."""
    # Each candidate looks back at most to the previous candidate's trailing
    # whitespace, so the look-backs of all candidates read the text about once.
    lower = 0
    for match in _LATIN_END_RE.finditer(text):
        if _ends_sentence(text, match, lower):
            yield match.end()
        lower = match.start(1)


def _ends_sentence(text: str, match: re.Match[str], lower: int) -> bool:
    """Tell whether a punctuation ``match`` ends a sentence.

    ``lower`` is where the look-back for the word before the full stop may
    start: 0, or the start of the previous match's whitespace (the word cannot
    reach across it).
    """
    after = match.end()
    if after >= len(text):
        return False  # the end of the text is a boundary anyway
    next_char = text[after]
    if next_char.islower():
        return False
    punct_end = match.start(1)
    if text[match.start() : punct_end].rstrip("\"'”’»)]") != ".":
        return True  # ! ? or an ellipsis followed by a capital
    # The word before the full stop and the whitespace before that word, read
    # backwards in C rather than one character at a time in Python.
    before = text[lower : match.start()][::-1]
    word = _REVERSED_WORD_RE.match(before)
    assert word is not None  # both groups may be empty: the pattern always matches
    token = word.group(1)[::-1].lstrip(_OPENERS)
    lowered = token.lower()
    lex = active()
    if lowered in lex.title_abbreviations:
        return False
    if lowered in lex.numeric_abbreviations and next_char.isdigit():
        return False
    if _INITIAL_RE.fullmatch(token):
        return False
    if _DOTTED_RE.fullmatch(token) and token.upper() == token:
        return False
    if not _LIST_MARKER_RE.fullmatch(token):
        return True
    # A list marker ("1.", "b.") only at the start of a line, after nothing but
    # whitespace: the whitespace before the word holds a newline, or reaches the
    # start of the text. (It cannot reach ``lower`` otherwise: the previous
    # match's punctuation stands right before ``lower``.)
    at_line_start = "\n" in word.group(2) or (lower == 0 and word.end() == len(before))
    return not at_line_start


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
            opening = _HEADING_OPEN_RE.match(bare)
            title = _heading_title(bare[opening.end() :]).strip() if opening else ""
            if opening and title:
                yield Heading(
                    start=offset + opening.start(1),
                    end=offset + len(line),
                    level=len(opening.group(1)),
                    text=title,
                )
        offset += len(line)


def _heading_title(rest: str) -> str:
    """Return a heading line's text after its opening ``#`` marks and spaces.

    Drops trailing spaces and tabs and an optional closing sequence of ``#``
    marks preceded by a space or tab (``## Title ##``). ``rest`` starts with a
    character other than a space or tab.
    """
    bare = rest.rstrip(" \t")
    body = bare.rstrip("#")
    if body != bare and body and body[-1] in " \t":
        return body.rstrip(" \t")
    return bare


def _skip_space(text: str, pos: int) -> int:
    match = _SPACES_RE.match(text, pos)
    assert match is not None  # "\s*" always matches
    return match.end()


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


def _fitting_pieces(
    text: str, sentences: Iterable[tuple[int, int]], counter: TokenCounter, max_tokens: int
) -> list[tuple[int, int, int]]:
    """Return ``(start, end, tokens)`` of the sentences, over-long ones cut into pieces.

    Every piece has at most ``max_tokens`` tokens (see :func:`_cut_sentence`);
    sentences that fit are returned whole, with their token count.
    """
    # A sentence of more characters than this has more than max_tokens tokens
    # (a token is at most max_token_bytes bytes, a character at least one byte):
    # it is cut without ever counting it whole.
    surely_too_long = max_tokens * counter.max_token_bytes
    pieces: list[tuple[int, int, int]] = []
    for start, end in sentences:
        if end - start <= surely_too_long:
            tokens = counter.count(text[start:end])
            if tokens <= max_tokens:
                pieces.append((start, end, tokens))
                continue
        pieces.extend(_cut_sentence(text, start, end, counter, max_tokens))
    return pieces


def _cut_sentence(
    text: str, start: int, end: int, counter: TokenCounter, max_tokens: int
) -> list[tuple[int, int, int]]:
    """Cut ``text[start:end]`` into pieces of at most ``max_tokens`` tokens.

    Each piece is the longest prefix of the rest that fits, shortened to end
    right after whitespace (before a word) when the prefix has any, else cut at
    a character boundary. Linear in the sentence: only a window somewhat longer
    than one piece is encoded at a time, never the growing sentence.

    Returns:
        ``(start, end, tokens)`` of the pieces; they tile ``text[start:end]``.

    """
    pieces: list[tuple[int, int, int]] = []
    pos = start
    window = 8 * max_tokens + 64  # characters encoded at once; adapts to the text
    while pos < end:
        # Grow the window until it holds more than max_tokens tokens or the rest.
        while True:
            stop = min(end, pos + window)
            head = text[pos:stop]
            fit = counter.prefix_chars(head, max_tokens)
            if fit < len(head) or stop == end:
                break
            window *= 2
        if fit == len(head):  # the rest of the sentence fits
            pieces.append((pos, end, counter.count(head)))
            break
        cut, tokens = _fitting_cut(head, fit, counter, max_tokens)
        pieces.append((pos, pos + cut, tokens))
        pos += cut
        window = 2 * cut + 64
    return pieces


def _fitting_cut(head: str, fit: int, counter: TokenCounter, max_tokens: int) -> tuple[int, int]:
    """Return ``(length, tokens)`` of the piece of ``head`` to keep.

    ``fit`` (less than ``len(head)``) is how many characters the first
    ``max_tokens`` tokens of ``head`` cover. BPE is not prefix-stable, so the
    chosen prefix is counted, and cut shorter while it still has too many tokens.
    """
    target = max_tokens
    while True:
        cut = _cut_point(head, fit)
        tokens = counter.count(head[:cut])
        if tokens <= max_tokens:
            return cut, tokens
        target -= tokens - max_tokens
        if target <= 0 or cut == 1:
            # A single character of more than max_tokens tokens: keep it whole.
            return 1, counter.count(head[:1])
        fit = counter.prefix_chars(head, target)


def _cut_point(head: str, fit: int) -> int:
    """Return where to cut ``head`` at or before character ``fit`` (at least 1).

    After the last whitespace that is followed by a word, provided the piece
    then holds a word; else within a whitespace run that reaches ``fit``; else at
    ``fit`` itself, inside a word.
    """
    lead = len(head) - len(head.lstrip())
    if fit > lead:
        # Read backwards, the last word start at or before fit is the first
        # non-space followed by whitespace; searching only head[lead:fit + 1]
        # leaves the piece at least its first word.
        found = _REVERSED_WORD_START_RE.search(head[lead : fit + 1][::-1])
        if found is not None:
            return fit - found.start()
        if head[fit - 1].isspace():
            return fit
    return max(fit, 1)


def _pack(
    text: str, sentences: Sequence[tuple[int, int, int]], counter: TokenCounter, max_tokens: int
) -> list[list[tuple[int, int]]]:
    """Greedily group consecutive sentences into chunks of at most ``max_tokens`` tokens.

    ``sentences`` are ``(start, end, tokens)``.
    """
    groups: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    estimate = 0
    for start, end, tokens in sentences:
        span = (start, end)
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


FIELD_WEIGHT = 2
"""How many times a new index's lexical part counts a chunk's title and headings.

Chosen on the tuning halves of the development sets (docs/benchmarks.md); an index
records the weight it was built with (indexes that predate it: 1)."""


def lexical_text(chunk: Chunk, field_weight: int = FIELD_WEIGHT) -> str:
    """Return the text the lexical (BM25) index reads: title and headings weighted as fields.

    A word of the title or of a heading counts ``field_weight`` times, a word of
    the body once: the usual equivalent of BM25F's field weights (BM25's term
    saturation keeps a repeated word from counting twice as much). The dense
    embedder reads :func:`indexed_text`, where each field appears once.
    """
    headings = [h for h in chunk.section if h != chunk.title]
    fields = [chunk.title, *headings] * max(1, field_weight)
    return "\n".join([*fields, chunk.text])


def indexed_text(chunk: Chunk) -> str:
    """Return the text both retrievers index: title, section headings, then chunk text.

    Headings equal to the title (a Markdown H1) are not repeated.
    """
    headings = [h for h in chunk.section if h != chunk.title]
    return "\n".join([chunk.title, *headings, chunk.text])
