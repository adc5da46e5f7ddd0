"""Markdown, MDX and reStructuredText, and the front matter of Markdown pages.

* **Front matter** (``.md``, ``.markdown``, ``.mdx``): a YAML block between ``---``
  lines (closed by ``---`` or ``...``) or a TOML block between ``+++`` lines at the
  very start of the file. It is parsed (YAML with PyYAML's safe loader, TOML with
  :mod:`tomllib`), its ``title`` becomes the document title, the whole block is
  kept as ``metadata["front_matter"]`` (JSON-safe; dropped with a warning when it
  is huge or deeply nested) and it is **not** part of the indexed text. A block
  that does not parse, or is not a mapping, is kept as text with a warning.
* **Markdown**: HTML comments and tags are removed (the text between tags kept)
  and character references decoded, outside code; see :func:`markdown_without_html`.
* **MDX**: after the front matter, ESM blocks (``import``/``export`` at the start of
  a line, up to the next blank line), ``{/* comments */}`` and ``<!-- comments -->``
  are removed, JSX and HTML tags are removed while the text between them is kept,
  and headings or code fences indented inside a component are moved back to the
  margin so they still count. Code blocks and inline code are kept verbatim.
* **reStructuredText**: section titles (underlined, or over- and underlined, with
  a punctuation character) become Markdown headings, their level set by the order
  in which each adornment style first appears, as Docutils does.
"""

from __future__ import annotations

import html
import re
import tomllib
from typing import Any

from sealgraph.ingest.loaders._commonmark import code_lines, split_lines
from sealgraph.ingest.loaders.base import Loaded, Source, WarnFn, escape_markdown, json_safe

__all__ = [
    "MAX_FRONT_MATTER_CHARS",
    "load_markdown",
    "load_mdx",
    "load_rst",
    "markdown_without_html",
    "mdx_to_markdown",
    "rst_to_markdown",
    "split_front_matter",
]

MAX_FRONT_MATTER_CHARS = 65536
"""Longest front matter block parsed; a longer one is kept as text with a warning."""


def load_markdown(source: Source) -> Loaded:
    """Load a Markdown file: front matter removed and read, HTML comments, tags and entities."""
    front, body = split_front_matter(source.text(), str(source.file), source.warn)
    return _with_front_matter(markdown_without_html(body), front)


def load_mdx(source: Source) -> Loaded:
    """Load an MDX file: front matter read, then imports, exports and JSX removed."""
    front, body = split_front_matter(source.text(), str(source.file), source.warn)
    loaded = _with_front_matter(mdx_to_markdown(body), front)
    if not loaded.text.strip() and body.strip():
        return Loaded(
            "", loaded.title, loaded.metadata, "no text left outside imports and components"
        )
    return loaded


def load_rst(source: Source) -> Loaded:
    """Load a reStructuredText file: section titles become Markdown headings."""
    return Loaded(rst_to_markdown(source.text()))


def _with_front_matter(body: str, front: dict[str, Any] | None) -> Loaded:
    if front is None:
        return Loaded(body)
    title = front.get("title")
    title_text = " ".join(title.split()) if isinstance(title, str) else ""
    if isinstance(title, int | float) and not isinstance(title, bool):
        title_text = str(title)
    metadata = {"front_matter": front} if front else {}
    reason = "" if body.strip() else "it holds nothing but front matter"
    return Loaded(body.lstrip("\n"), title_text or None, metadata, reason)


# --- front matter ---------------------------------------------------------------------------

_FENCES = {"---": ("yaml", ("---", "...")), "+++": ("toml", ("+++",))}


def split_front_matter(text: str, where: str, warn: WarnFn) -> tuple[dict[str, Any] | None, str]:
    """Split a leading front matter block off a Markdown text.

    Args:
        text: The file's text (LF line ends).
        where: The file, for warnings.
        warn: Warning callback.

    Returns:
        ``(front matter, rest of the text)``: the parsed block as JSON-safe data
        (an empty dict when the block is empty or too large to keep, its title
        still read), or ``(None, text)`` when there is no block or it is kept as
        text.

    """
    first_end = text.find("\n")
    opener = text[:first_end].rstrip(" \t") if first_end != -1 else ""
    if opener not in _FENCES:
        return None, text
    kind, closers = _FENCES[opener]
    # The closing line, looked for only within the size limit (+ its own length).
    pos = first_end + 1
    close_start = close_end = -1
    while pos <= min(len(text), MAX_FRONT_MATTER_CHARS + first_end + 1):
        line_end = text.find("\n", pos)
        stop = len(text) if line_end == -1 else line_end
        if text[pos:stop].rstrip(" \t") in closers:
            close_start, close_end = pos, (len(text) if line_end == -1 else line_end + 1)
            break
        if line_end == -1:
            break
        pos = line_end + 1
    if close_start == -1:
        if len(text) > MAX_FRONT_MATTER_CHARS:
            warn(
                f"{where}: front matter not closed within {MAX_FRONT_MATTER_CHARS} characters; "
                "it is kept as text"
            )
        return None, text  # a lone "---" (a thematic break), not front matter
    block = text[first_end + 1 : close_start]
    try:
        data = _parse_block(block, kind)
    except ValueError as exc:
        warn(f"{where}: front matter is not valid {kind.upper()} ({exc}); it is kept as text")
        return None, text
    if data is None:
        data = {}
    if not isinstance(data, dict):
        warn(f"{where}: front matter is not a mapping of keys to values; it is kept as text")
        return None, text
    try:
        front = json_safe(data)
    except ValueError as exc:
        warn(f"{where}: front matter is too large to keep ({exc}); only its title is used")
        title = data.get("title")
        front = {"title": title} if isinstance(title, str) else {}
    return front, text[close_end:]


def _parse_block(block: str, kind: str) -> Any:
    """Parse a front matter block, raising ValueError with a one-line reason."""
    if kind == "toml":
        try:
            return tomllib.loads(block)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(str(exc)) from None
        except RecursionError:
            raise ValueError("nested too deeply") from None
    import yaml

    try:
        # The pure-Python safe loader: no object construction, and a nesting
        # bomb ends in RecursionError here rather than deep in C.
        return yaml.load(block, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or type(exc).__name__
        at = f" at line {mark.line + 2}" if mark is not None else ""
        raise ValueError(f"{problem}{at}") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None


# --- HTML inside Markdown ------------------------------------------------------------------

# HTML's element names: a tag in Markdown prose is one of these (``List<int>`` is not).
_HTML_ELEMENTS = [
    "a",
    "abbr",
    "address",
    "article",
    "aside",
    "audio",
    "b",
    "bdi",
    "bdo",
    "blockquote",
    "br",
    "button",
    "caption",
    "center",
    "cite",
    "code",
    "col",
    "colgroup",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "figcaption",
    "figure",
    "font",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "i",
    "iframe",
    "img",
    "input",
    "ins",
    "kbd",
    "label",
    "li",
    "link",
    "mark",
    "meta",
    "nav",
    "noscript",
    "object",
    "ol",
    "p",
    "picture",
    "pre",
    "q",
    "s",
    "samp",
    "section",
    "small",
    "source",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "video",
    "wbr",
]
# Inline code (kept verbatim), an HTML tag (removed), or a character reference (decoded).
_MARKDOWN_HTML_RE = re.compile(
    r"(?P<code>(?P<ticks>`++)[^`\n][^\n]*?(?P=ticks))"
    r"|(?P<tag></?(?i:" + "|".join(_HTML_ELEMENTS) + r")(?![\w-])"
    r"(?:\s(?:\"[^\"]*+\"|'[^']*+'|[^\s\"'<>/=]++|=|\s++|/(?!>))*+)?/?>)"
    r"|(?P<ref>&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"
)
# An abbreviation's or a definition's title is text a reader sees ("MDN" explained as
# "Mozilla Developer Network"): it is kept, in brackets after the text it explains.
_TITLED_ELEMENTS = frozenset({"abbr", "acronym", "dfn"})
_TAG_NAME_RE = re.compile(r"<(/?)([A-Za-z]+)")
_TITLE_RE = re.compile(r"\stitle\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.I)


def markdown_without_html(text: str) -> str:
    """Return Markdown with its HTML comments and tags removed, entities decoded.

    A page's ``<!-- … -->`` notes, ``<abbr>``/``<span>``/``<img>`` tags and
    ``&mdash;`` references are markup, not text: indexed, they are words no one
    searches for, and they show in the passages an answer quotes. The text between
    tags is kept, and an ``<abbr>``'s or ``<dfn>``'s title follows its text in
    brackets ("MDN (Mozilla Developer Network)": a reader sees it too); code blocks (as
    CommonMark reads them: :mod:`._commonmark`) and inline code are left exactly as written; a line
    that held only markup is dropped. A page without any is returned unchanged, so
    its offsets are the file's (an evaluation aligns the others with their file).
    """
    if "<" not in text and "&" not in text:
        return text
    out: list[str] = []
    prose: list[str] = []
    # Which lines are code is CommonMark's to say (fences, indented code, code in lists).
    for line, is_code in zip(split_lines(text), code_lines(text), strict=True):
        if is_code:
            out.append(_markdown_prose("".join(prose)))
            prose = []
            out.append(line)
        else:
            prose.append(line)
    out.append(_markdown_prose("".join(prose)))
    return "".join(out)


def _markdown_prose(text: str) -> str:
    if not text:
        return text
    text = _HTML_COMMENT_RE.sub(_REMOVED, text.replace(_REMOVED, ""))
    titles: list[str] = []  # the open <abbr>/<dfn> tags' titles, innermost last
    text = _MARKDOWN_HTML_RE.sub(lambda m: _markdown_html_replacement(m, titles), text)
    return _without_removed(text) if _REMOVED in text else text


def _markdown_html_replacement(match: re.Match[str], titles: list[str]) -> str:
    if match.group("code"):
        return match.group("code")
    if match.group("ref"):
        return html.unescape(match.group("ref")).replace(_REMOVED, "") or _REMOVED
    tag = match.group("tag")
    name = _TAG_NAME_RE.match(tag)
    if name is None or name.group(2).lower() not in _TITLED_ELEMENTS:
        return _REMOVED
    if name.group(1):  # the closing tag: the title follows the text it explains
        title = titles.pop() if titles else ""
        return f" ({title})" if title else _REMOVED
    found = _TITLE_RE.search(tag)
    titles.append(
        " ".join(html.unescape(found.group(1) or found.group(2) or "").split()) if found else ""
    )
    return _REMOVED


# --- MDX ------------------------------------------------------------------------------------

# A code fence line (any indentation inside a component); group 2 is the marker run.
_FENCE_LINE_RE = re.compile(r"^([ \t]*)(`{3,}|~{3,})")
_ESM_RE = re.compile(r"^(?:import|export)(?=[\s{*])")
_EXPRESSION_COMMENT_RE = re.compile(r"\{\s*/\*.*?\*/\s*\}", re.DOTALL)
_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
# Inline code on one line (kept verbatim), or a JSX/HTML tag (removed). A tag's
# attributes may hold quoted strings and {expressions} with one level of nested
# braces, and may run over several lines. Possessive quantifiers: no backtracking.
_INLINE_CODE_OR_TAG_RE = re.compile(
    r"(?P<code>(?P<ticks>`++)[^`\n][^\n]*?(?P=ticks))"
    r"|</?[A-Za-z][\w.:-]*+"
    r"(?:\s(?:\"[^\"]*+\"|'[^']*+'|\{(?:[^{}]|\{[^{}]*+\})*+\}|[^\s\"'{}<>/=]++|=|\s++|/(?!>))*+)?"
    r"/?>"
    r"|</?>"
)
_HEADING_INDENTED_RE = re.compile(r"^[ \t]+(?=#{1,6}[ \t])", re.MULTILINE)
_BLANK_RUN_RE = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_REMOVED = "\x00"  # marks where something was removed, until its line is looked at


def mdx_to_markdown(text: str) -> str:
    """Return the Markdown of an MDX text (without its front matter).

    ESM blocks, expression and HTML comments and JSX/HTML tags are removed, the
    text inside components kept; fenced code and inline code are left as they are
    (a fence indented inside a component is moved to the margin with its content).
    Lines left empty by the removals are dropped, and blank runs cut to one line.
    """
    out: list[str] = []
    for is_code, segment in _fenced_segments(text):
        out.append(segment if is_code else _mdx_prose(segment))
    result = _BLANK_RUN_RE.sub("\n\n", "".join(out))
    return result.lstrip("\n")


def _fenced_segments(text: str) -> list[tuple[bool, str]]:
    """Cut ``text`` into prose and fenced code, dedenting indented fences.

    Returns ``(is code, text)`` pieces that cover ``text`` in order.
    """
    segments: list[tuple[bool, str]] = []
    prose: list[str] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        opening = _FENCE_LINE_RE.match(lines[i])
        if opening is None:
            prose.append(lines[i])
            i += 1
            continue
        indent, marker = len(opening.group(1)), opening.group(2)
        code = [lines[i][indent:]]
        i += 1
        while i < len(lines):
            line = lines[i]
            i += 1
            closing = _FENCE_LINE_RE.match(line)
            strip = min(indent, len(line) - len(line.lstrip(" \t")))
            code.append(line[strip:])
            if (
                closing is not None
                and closing.group(2)[0] == marker[0]
                and len(closing.group(2)) >= len(marker)
                and not line[closing.end() :].strip()
            ):
                break
        if prose:
            segments.append((False, "".join(prose)))
            prose = []
        segments.append((True, "".join(code)))
    if prose:
        segments.append((False, "".join(prose)))
    return segments


def _mdx_prose(text: str) -> str:
    """Remove ESM, comments and tags from prose; drop the lines that held only those."""
    text = _drop_esm(text.replace(_REMOVED, ""))
    text = _EXPRESSION_COMMENT_RE.sub(_REMOVED, text)
    text = _HTML_COMMENT_RE.sub(_REMOVED, text)
    text = _INLINE_CODE_OR_TAG_RE.sub(lambda m: m.group("code") or _REMOVED, text)
    # Headings indented inside a component still count (MDX has no indented code).
    return _HEADING_INDENTED_RE.sub("", _without_removed(text))


def _without_removed(text: str) -> str:
    """Take the removal marks out; drop the lines that held nothing else."""
    kept = []
    for line in text.splitlines(keepends=True):
        if _REMOVED in line:
            line = line.replace(_REMOVED, "")
            if not line.strip():
                continue
        kept.append(line)
    return "".join(kept)


def _drop_esm(text: str) -> str:
    """Remove ESM blocks: ``import``/``export`` at a line start up to the next blank line."""
    out: list[str] = []
    in_esm = False
    after_blank = True
    for line in text.splitlines(keepends=True):
        blank = not line.strip()
        if in_esm:
            if blank:
                in_esm = False
                out.append(line)
            after_blank = blank
            continue
        if after_blank and _ESM_RE.match(line):
            in_esm = True
            continue
        out.append(line)
        after_blank = blank
    return "".join(out)


# --- reStructuredText -----------------------------------------------------------------------

_ADORNMENT_CHARS = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_ADORNMENT_RE = re.compile(r"^([" + re.escape(_ADORNMENT_CHARS) + r"])\1+[ \t]*$")


def rst_to_markdown(text: str) -> str:
    """Return ``text`` with its reStructuredText section titles as Markdown headings.

    A title is a line of text underlined (or over- and underlined) by a line of
    one repeated punctuation character at least as long as the title. Levels
    follow the order in which each adornment style (character, with or without an
    overline) first appears; levels past 6 stay at 6. Other lines are kept, escaped
    with :func:`~sealgraph.ingest.loaders.base.escape_markdown`.
    """
    lines = text.split("\n")
    styles: list[tuple[str, bool]] = []
    out: list[str] = []
    i = 0

    def heading(title: str, style: tuple[str, bool]) -> str:
        if style not in styles:
            styles.append(style)
        level = min(styles.index(style) + 1, 6)
        return "#" * level + " " + title

    after_break = True  # at the top, after a blank line or after a title
    while i < len(lines):
        line = lines[i]
        over = _ADORNMENT_RE.match(line)
        if (  # overline, title, underline
            over is not None
            and after_break
            and i + 2 < len(lines)
            and lines[i + 1].strip()
            and lines[i + 2].rstrip() == line.rstrip()
            and len(line.rstrip()) >= len(lines[i + 1].strip())
        ):
            out.append(heading(lines[i + 1].strip(), (over.group(1), True)))
            i += 3
            continue
        under = _ADORNMENT_RE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if (  # title, underline
            under is not None
            and after_break
            and line.strip()
            and not line[0].isspace()
            and over is None
            and len(lines[i + 1].rstrip()) >= min(len(line.rstrip()), 4)
        ):
            out.append(heading(line.strip(), (under.group(1), False)))
            i += 2
            continue
        out.append(escape_markdown(line))
        after_break = not line.strip()
        i += 1
    return "\n".join(out)
