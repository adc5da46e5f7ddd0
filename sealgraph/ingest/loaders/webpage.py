"""HTML: the page's main content as Markdown-like text (extra ``html``: BeautifulSoup).

The main content is the page's ``<main>`` (or ``role="main"``), else its only
``<article>``, else ``<body>``. Inside it, what is not content is dropped: scripts
and styles, navigation, headers outside an article, footers, asides, forms,
hidden elements, ARIA landmarks other than the main one (``navigation``,
``banner``, ``contentinfo``, ``complementary``, ``search``) and a few
class/id names docs generators give to sidebars, tables of contents, breadcrumbs
and heading anchors. Text a reader never sees is not indexed: elements with the
``hidden`` attribute, ``aria-hidden="true"`` or an inline ``display: none``, and
text under an inline ``visibility: hidden`` or a zero font size (``font-size: 0``
in any unit, ``font: 0/0 a``), unless an element inside shows it again
(``visibility: visible``, a font size of its own). Only ``style`` attributes are
read, not stylesheets. ``<h1>``-``<h6>`` become ``#``-``######`` headings (the
section path); paragraphs, list items (``- ``) and other blocks are separated by
blank lines; ``<pre>`` becomes a fenced code block; a table becomes one
``Header: value; ...`` line per row, as spreadsheet rows do. The title is the
first ``<h1>`` of the main content, else ``<title>``, else the caller's choice.

The parser is Python's own ``html.parser`` (through BeautifulSoup), whatever else
is installed, so the same file always gives the same text. Bytes that are not
UTF-8 are decoded as the page declares (``<meta charset>``), else guessed.
"""

from __future__ import annotations

import re
from typing import Any

from sealgraph.ingest.loaders.base import (
    Loaded,
    LoadError,
    MissingExtraError,
    Source,
    escape_markdown,
    render_rows,
)

__all__ = ["load_html"]

_DROP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed"}
    | {"nav", "aside", "footer", "form", "button", "select", "textarea", "input", "dialog"}
    | {"head", "title", "meta", "link", "img", "picture", "video", "audio", "map"}
)
_DROP_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"}
    | {"toolbar", "dialog", "alertdialog"}
)
# Whole class or id tokens that docs generators use for page chrome.
_DROP_NAMES = frozenset(
    {"sidebar", "toc", "table-of-contents", "breadcrumb", "breadcrumbs", "navbar"}
    | {"skip-link", "skip-to-content", "cookie-banner", "cookie-consent", "edit-this-page"}
    | {"pagination", "headerlink", "hash-link", "anchorjs-link", "header-anchor"}
)
_BLOCK_TAGS = frozenset(
    {"p", "div", "section", "article", "main", "header", "blockquote", "ul", "ol", "dl"}
    | {"dt", "dd", "figure", "figcaption", "address", "details", "summary", "body", "html"}
    | {"center", "fieldset", "hr"}
)
_HEADING_TAGS = {f"h{n}": n for n in range(1, 7)}
_SPACE_RE = re.compile(r"\s+")
_ANCHOR_MARKS_RE = re.compile(r"(?:\s*[¶§\U0001f517\u200b]|\s+#)+$")
_FENCE_LINE_RE = re.compile(r"^( {0,3})(```|~~~)", re.MULTILINE)
_CSS_COMMENT_RE = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
_IMPORTANT_RE = re.compile(r"!\s*important\s*$")
# A CSS length of zero in any unit: 0, -0, 0.0, .0, 0px, 0em, 0pt, 0%.
_ZERO_LENGTH_RE = re.compile(r"[+-]?(?:0+(?:\.0*)?|\.0+)(?:[a-z]{1,4}|%)?")
# A font size relative to the inherited one.
_RELATIVE_SIZE_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:em|ex|ch|cap|ic|lh|%)|smaller|larger")
# A word of the ``font`` shorthand that is its size (a length, a percentage or a keyword).
_FONT_SIZE_RE = re.compile(
    r"(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[a-z]{1,4}|%)|0)(?:/|$)"
    r"|(?:xx?-)?(?:small|large)(?:/|$)|medium(?:/|$)|smaller(?:/|$)|larger(?:/|$)"
)


def load_html(source: Source) -> Loaded:
    """Load an HTML page's main content, its headings as sections."""
    try:
        import bs4
    except ImportError:
        raise MissingExtraError("html", "beautifulsoup4") from None
    markup: str | bytes
    try:
        markup = source.data.decode("utf-8-sig")
    except UnicodeDecodeError:
        markup = source.data  # BeautifulSoup reads <meta charset>, else guesses
    try:
        soup = bs4.BeautifulSoup(markup, "html.parser")
    except Exception as exc:  # html.parser is lenient; this is a safety net
        raise LoadError(f"not readable HTML ({type(exc).__name__}: {exc})") from None
    root = _main_content(soup)
    for element in root.find_all(_is_chrome):
        if not element.decomposed:
            element.decompose()
    _drop_unseen_text(root, bs4)
    blocks = _Renderer(bs4).render(root)
    first_h1 = root.find("h1")
    title = _heading_text(first_h1.get_text(" ")) if first_h1 is not None else ""
    if not title and soup.title is not None:
        title = _SPACE_RE.sub(" ", soup.title.get_text(" ")).strip()
    text = "\n\n".join(blocks)
    if not text.strip():
        return Loaded("", title or None, {}, "no text in its main content")
    return Loaded(text + "\n", title or None)


def _main_content(soup: Any) -> Any:
    main = soup.find("main") or soup.find(attrs={"role": "main"})
    if main is not None:
        return main
    articles = soup.find_all("article")
    if len(articles) == 1:
        return articles[0]
    return soup.body or soup


def _is_chrome(tag: Any) -> bool:
    """Whether an element is page chrome rather than content."""
    name = tag.name
    if name in _DROP_TAGS:
        return True
    attrs = tag.attrs
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).strip().lower() == "true":
        return True
    if "style" in attrs and _declarations(str(attrs["style"])).get("display") == "none":
        return True
    if str(attrs.get("role", "")).lower() in _DROP_ROLES:
        return True
    if name == "header" and tag.find_parent(["article", "main", "section"]) is None:
        return True
    classes = attrs.get("class") or ()
    if isinstance(classes, str):
        classes = classes.split()
    if any(c.lower() in _DROP_NAMES for c in classes):
        return True
    return str(attrs.get("id", "")).lower() in _DROP_NAMES


def _declarations(style: str) -> dict[str, str]:
    """Return the properties an inline ``style`` attribute sets, lower case.

    Read as a browser reads a declaration block: names in any case, spaces and
    comments anywhere, a later declaration of a property overriding an earlier
    one unless only the earlier is ``!important`` (which is dropped).
    """
    declared: dict[str, tuple[str, bool]] = {}
    for declaration in _CSS_COMMENT_RE.sub(" ", style).split(";"):
        name, colon, value = declaration.partition(":")
        if not colon:
            continue
        name = name.strip().lower()
        value = value.strip().lower()
        important = _IMPORTANT_RE.search(value) is not None
        if name in declared and declared[name][1] and not important:
            continue
        declared[name] = (_IMPORTANT_RE.sub("", value).strip(), important)
    return {name: value for name, (value, _) in declared.items()}


def _font_size(declared: dict[str, str]) -> str | None:
    """Return the font size an element sets: ``"zero"``, ``"relative"``, ``"set"`` or None.

    A relative size (``em``, ``%``, ``smaller``, ...) keeps what it inherits: a
    fraction of zero is still zero.
    """
    size = declared.get("font-size")
    if size is None and "font" in declared:  # the shorthand: [style] size[/height] family
        size = next(
            (w.split("/")[0] for w in declared["font"].split() if _FONT_SIZE_RE.match(w)), None
        )
    if size is None:
        return None
    if _ZERO_LENGTH_RE.fullmatch(size):
        return "zero"
    if _RELATIVE_SIZE_RE.fullmatch(size):
        return "relative"
    return "set"


def _drop_unseen_text(root: Any, bs4: Any) -> None:
    """Remove the text under ``visibility: hidden`` or a zero font size.

    Both are inherited and can be undone inside (``visibility: visible``, an
    absolute font size), so the state is carried down the tree (without
    recursion) and only text nodes that end up unseen are removed.
    """
    unseen = []
    stack: list[tuple[Any, bool, bool]] = [(root, False, False)]  # node, invisible, zero font
    while stack:
        node, invisible, zero = stack.pop()
        style = node.attrs.get("style")
        if style:
            declared = _declarations(str(style))
            visibility = declared.get("visibility")
            if visibility in {"hidden", "collapse"}:
                invisible = True
            elif visibility == "visible":
                invisible = False
            size = _font_size(declared)
            if size == "zero":
                zero = True
            elif size == "set":
                zero = False
        for child in node.contents:
            if isinstance(child, bs4.Tag):
                stack.append((child, invisible, zero))
            elif (invisible or zero) and isinstance(child, bs4.NavigableString):
                unseen.append(child)
    for text in unseen:
        text.extract()


def _heading_text(text: str) -> str:
    text = _SPACE_RE.sub(" ", text).strip()
    return _ANCHOR_MARKS_RE.sub("", text).removeprefix("# ").strip()


class _Renderer:
    """Walks an element tree without recursion (pages can nest thousands deep)."""

    def __init__(self, bs4: Any) -> None:
        self.bs4 = bs4
        self.blocks: list[str] = []
        self.inline: list[str] = []
        self.prefix = ""

    def render(self, root: Any) -> list[str]:
        skip = (
            self.bs4.Comment,
            self.bs4.Declaration,
            self.bs4.Doctype,
            self.bs4.ProcessingInstruction,
        )
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self.flush()
                self.prefix = ""
                continue
            if isinstance(node, self.bs4.NavigableString):
                if not isinstance(node, skip):
                    self.inline.append(_SPACE_RE.sub(" ", str(node)))
                continue
            name = node.name
            if name in _HEADING_TAGS:
                self.flush()
                text = _heading_text(node.get_text(" "))
                if text:
                    self.blocks.append("#" * _HEADING_TAGS[name] + " " + text)
                continue
            if name == "pre":
                self.flush()
                code = node.get_text().strip("\n")
                if code.strip():
                    # A fence inside the code would close the block early.
                    code = _FENCE_LINE_RE.sub(r"\1\\\2", code)
                    self.blocks.append(f"```\n{code}\n```")
                continue
            if name == "table":
                self.flush()
                self.table(node)
                continue
            if name == "br":
                self.inline.append("\n")
                continue
            block = name in _BLOCK_TAGS or name == "li"
            if block:
                self.flush()
                stack.append((node, True))
                if name == "li":
                    self.prefix = "- "
            stack.extend((child, False) for child in reversed(node.contents))
        self.flush()
        return self.blocks

    def flush(self) -> None:
        if not self.inline:
            return
        lines = [" ".join(line.split()) for line in "".join(self.inline).split("\n")]
        text = "\n".join(line for line in lines if line)
        self.inline = []
        if text:
            self.blocks.append(escape_markdown(self.prefix + text))
            self.prefix = ""

    def table(self, table: Any) -> None:
        rows = [
            [_SPACE_RE.sub(" ", cell.get_text(" ")).strip() for cell in row.find_all(["td", "th"])]
            for row in table.find_all("tr")
        ]
        lines = render_rows(rows, column_name=lambda i: f"column {i + 1}")
        if lines:
            self.blocks.append("\n".join(lines))
