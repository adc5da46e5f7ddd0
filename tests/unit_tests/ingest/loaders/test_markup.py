"""Markdown front matter, MDX and reStructuredText loaders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sealgraph.ingest import load_documents
from sealgraph.ingest.loaders.markup import (
    markdown_without_html,
    mdx_to_markdown,
    rst_to_markdown,
)
from sealgraph.text.chunking import chunk_document
from sealgraph.text.tokens import token_counter


@pytest.fixture(scope="module")
def counter():
    return token_counter("o200k_base")


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def load_one(path: Path, warnings: list[str] | None = None):
    (doc,) = load_documents(path, warn=(warnings.append if warnings is not None else print))
    return doc


# --- front matter ------------------------------------------------------------------------------


def test_front_matter_title_becomes_the_title_and_is_not_indexed(tmp_path, counter):
    path = write(
        tmp_path / "install.md",
        "---\ntitle: Installing the agent\nsidebar_position: 2\ndate: 2024-05-01\n"
        "tags: [setup, cli]\n---\n\n# Install\n\nRun the installer.\n",
    )
    warnings: list[str] = []
    doc = load_one(path, warnings)
    assert doc.title == "Installing the agent"
    assert doc.text == "# Install\n\nRun the installer.\n"
    assert doc.metadata["front_matter"] == {
        "title": "Installing the agent",
        "sidebar_position": 2,
        "date": "2024-05-01",  # JSON-safe: a YAML date becomes its ISO string
        "tags": ["setup", "cli"],
    }
    json.dumps(doc.metadata)  # stored as JSON in the index
    chunks = chunk_document(doc, counter)
    assert all("sidebar_position" not in c.text for c in chunks)
    assert chunks[0].section == ("Install",)
    assert warnings == []


def test_toml_front_matter_and_crlf(tmp_path):
    path = tmp_path / "page.md"
    path.write_bytes(b'+++\r\ntitle = "Hugo page"\r\ndraft = false\r\n+++\r\nBody text.\r\n')
    doc = load_one(path)
    assert doc.title == "Hugo page"
    assert doc.text == "Body text.\n"
    assert doc.metadata["front_matter"] == {"title": "Hugo page", "draft": False}


def test_without_front_matter_title_the_first_h1_is_the_title(tmp_path):
    doc = load_one(write(tmp_path / "a.md", "---\nauthor: Kim\n---\n# Real title\n\nText.\n"))
    assert doc.title == "Real title"
    assert doc.text.startswith("# Real title")


@pytest.mark.parametrize(
    "block",
    [
        "---\ntitle: [unclosed\n---\n",  # invalid YAML
        "---\n- just\n- a list\n---\n",  # not a mapping
        "+++\ntitle = \n+++\n",  # invalid TOML
    ],
)
def test_malformed_front_matter_is_kept_as_text_with_a_warning(tmp_path, block):
    path = write(tmp_path / "bad.md", block + "Body.\n")
    warnings: list[str] = []
    doc = load_one(path, warnings)
    assert doc.text == block + "Body.\n"
    assert doc.title == "bad"
    assert len(warnings) == 1 and "bad.md" in warnings[0] and "kept as text" in warnings[0]


def test_a_leading_thematic_break_is_not_front_matter(tmp_path):
    text = "---\n\nA page that opens with a rule.\n"
    warnings: list[str] = []
    doc = load_one(write(tmp_path / "rule.md", text), warnings)
    assert doc.text == text and warnings == []


def test_deeply_nested_front_matter_is_a_warning_not_a_crash(tmp_path):
    block = "---\ntitle: Deep\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n"
    warnings: list[str] = []
    doc = load_one(write(tmp_path / "deep.md", block + "Body.\n"), warnings)
    assert doc.text.endswith("Body.\n")
    assert len(warnings) == 1 and "deep.md" in warnings[0]


def test_front_matter_alias_bomb_keeps_only_the_title(tmp_path):
    lines = ["---", "title: Bomb", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    write(tmp_path / "bomb.md", "\n".join([*lines, "---", "Body.", ""]))
    warnings: list[str] = []
    doc = load_one(tmp_path / "bomb.md", warnings)
    assert doc.title == "Bomb" and doc.text == "Body.\n"
    assert doc.metadata["front_matter"] == {"title": "Bomb"}
    assert len(warnings) == 1 and "too large" in warnings[0]


def test_a_file_of_only_front_matter_is_skipped_with_a_warning(tmp_path):
    write(tmp_path / "redirect.md", "---\nredirect: /elsewhere\n---\n")
    write(tmp_path / "ok.md", "# Ok\n")
    warnings: list[str] = []
    docs = load_documents(tmp_path, warn=warnings.append)
    assert [d.doc_id for d in docs] == ["ok.md"]
    assert len(warnings) == 1 and "redirect.md" in warnings[0] and "front matter" in warnings[0]


def test_landing_pages_without_a_title_are_named_after_their_folder(tmp_path):
    write(tmp_path / "guides" / "install" / "index.mdx", "Install steps.\n")
    write(tmp_path / "guides" / "README.md", "# Guides overview\n\nAll guides.\n")
    write(tmp_path / "api" / "_index.md", "---\ntitle: API reference\n---\nEndpoints.\n")
    write(tmp_path / "notes" / "todo.md", "Things.\n")
    titles = {d.doc_id: d.title for d in load_documents(tmp_path)}
    assert titles == {
        "api/_index.md": "API reference",  # front matter first
        "guides/README.md": "Guides overview",  # then the first H1
        "guides/install/index.mdx": "install",  # then the folder, for a landing page
        "notes/todo.md": "todo",  # else the file stem
    }


# --- MDX ---------------------------------------------------------------------------------------

MDX_PAGE = """---
title: Quickstart
description: Get going in five minutes.
---
import Tabs from '@theme/Tabs';
import {
  Note,
  Card,
} from '../components';
export const meta = {
  section: "start",
};

# Quickstart

{/* editors: keep this short */}
<Note type="warning">
  Use `<Card />` for links. <b>Always</b> pin the version.
</Note>

<Tabs>
  <Tab value="npm" label={`npm ${version}`}>
    ## Install with npm

    ```bash
    npm install agent
    # not a heading
    ```
  </Tab>
</Tabs>

<Card
  title="Next steps"
  href="/next"
/>
Read the guide next.
"""


def test_mdx_drops_front_matter_imports_exports_and_jsx_but_keeps_text(tmp_path, counter):
    doc = load_one(write(tmp_path / "docs" / "quickstart.mdx", MDX_PAGE))
    assert doc.title == "Quickstart" and doc.metadata["format"] == "mdx"
    assert doc.text == (
        "# Quickstart\n\n"
        "  Use `<Card />` for links. Always pin the version.\n\n"
        "## Install with npm\n\n"
        "```bash\nnpm install agent\n# not a heading\n```\n\n"
        "Read the guide next.\n"
    )
    for gone in ("import", "export", "description", "editors", "<Tab", "href"):
        assert gone not in doc.text
    sections = [c.section for c in chunk_document(doc, counter, max_tokens=12)]
    assert ("Quickstart", "Install with npm") in sections


def test_mdx_files_are_found_when_walking_a_folder(tmp_path):
    write(tmp_path / "site" / "a.mdx", "# A\n\nAlpha.\n")
    write(tmp_path / "site" / "b" / "index.mdx", "---\ntitle: Bee\n---\nBeta.\n")
    docs = load_documents(tmp_path / "site")
    assert [(d.doc_id, d.title) for d in docs] == [("a.mdx", "A"), ("b/index.mdx", "Bee")]


def test_mdx_page_of_only_components_is_skipped_with_a_warning(tmp_path):
    write(tmp_path / "landing.mdx", "import Hero from './hero';\n\n<Hero />\n")
    write(tmp_path / "ok.mdx", "Text.\n")
    warnings: list[str] = []
    docs = load_documents(tmp_path, warn=warnings.append)
    assert [d.doc_id for d in docs] == ["ok.mdx"]
    assert len(warnings) == 1 and "landing.mdx" in warnings[0]


def test_mdx_keeps_comparisons_and_autolinks():
    text = "If a < b then see <https://example.com>.\n"
    assert mdx_to_markdown(text) == text


# --- reStructuredText --------------------------------------------------------------------------

RST_PAGE = """==============
 User manual
==============

Welcome.

Installation
============

Install it::

    pip install agent
    # a shell comment, not a heading

Configuration
-------------
Set the key.

# not a heading either

Usage
=====

Run it.
"""


def test_rst_titles_become_sections(tmp_path, counter):
    doc = load_one(write(tmp_path / "manual.rst", RST_PAGE))
    assert doc.title == "User manual" and doc.metadata["format"] == "rst"
    assert doc.text.startswith("# User manual\n\nWelcome.\n\n## Installation\n")
    assert "### Configuration\nSet the key." in doc.text
    assert "\\# not a heading either" in doc.text
    sections = {c.section for c in chunk_document(doc, counter, max_tokens=10)}
    assert ("User manual", "Installation", "Configuration") in sections
    assert ("User manual", "Usage") in sections


def test_rst_levels_follow_the_order_styles_first_appear():
    text = "A\n~~~\n\nB\n***\n\nC\n~~~\n\nD\n***\n"
    assert rst_to_markdown(text) == "# A\n\n## B\n\n# C\n\n## D\n"


def test_loading_is_deterministic(tmp_path):
    write(tmp_path / "q.mdx", MDX_PAGE)
    write(tmp_path / "m.rst", RST_PAGE)
    assert load_documents(tmp_path) == load_documents(tmp_path)


PAGE_WITH_HTML = """# Path parameters { #path-parameters }

You can declare an <abbr title="Application Programming Interface">API</abbr> &mdash; fast.
<!-- maintainers: keep this page short -->
<div class="screenshot">
<img src="/img/tutorial/path-params/image01.png">
</div>

A `List<int>` in code, `<b>x</b>` too, and List<int> in prose stay.

```html
<b>kept</b> &amp; <!-- kept -->
```

Done &amp; <span id="end"></span>dusted.
"""


def test_markdown_loses_html_comments_tags_and_entities_outside_code():
    assert markdown_without_html(PAGE_WITH_HTML) == (
        "# Path parameters { #path-parameters }\n\n"
        "You can declare an API (Application Programming Interface) — fast.\n\n"
        "A `List<int>` in code, `<b>x</b>` too, and List<int> in prose stay.\n\n"
        "```html\n<b>kept</b> &amp; <!-- kept -->\n```\n\n"
        "Done & dusted.\n"
    )


def test_markdown_without_html_leaves_a_plain_page_as_it_is():
    page = "# Plain\n\nNo markup here: 3 < 4 and R&D.\n"
    assert markdown_without_html(page) == page


def test_the_markdown_loader_indexes_the_page_without_its_html(tmp_path):
    (tmp_path / "params.md").write_text("---\ntitle: Params\n---\n" + PAGE_WITH_HTML)
    doc = load_documents(tmp_path / "params.md")[0]
    assert "<abbr" not in doc.text and "&mdash;" not in doc.text and "maintainers" not in doc.text
    assert "declare an API (Application Programming Interface) — fast" in doc.text
    assert "<b>kept</b> &amp;" in doc.text


def test_code_is_what_commonmark_reads_as_code():
    page = (
        "A paragraph <b>bold</b>.\n\n"
        "    <i>four spaces after a blank line: indented code</i>\n\n"
        "- an item <b>bold</b>\n\n"
        "  ````html\n  <b>fenced in the item</b>\n  ```\n  <i>still code: that fence is short</i>\n"
        "  ````\n\n"
        "    <i>in the item, four spaces: a paragraph of it, not code</i>\n\n"
        "~~~\n<b>tilde fence</b>\n```\n<b>a backtick line does not close it</b>\n~~~\n"
        "<b>after</b>\n"
    )
    assert markdown_without_html(page) == (
        "A paragraph bold.\n\n"
        "    <i>four spaces after a blank line: indented code</i>\n\n"
        "- an item bold\n\n"
        "  ````html\n  <b>fenced in the item</b>\n  ```\n  <i>still code: that fence is short</i>\n"
        "  ````\n\n"
        "    in the item, four spaces: a paragraph of it, not code\n\n"
        "~~~\n<b>tilde fence</b>\n```\n<b>a backtick line does not close it</b>\n~~~\n"
        "after\n"
    )


def test_html_removal_keeps_the_line_ends_as_written():
    page = "a <b>x</b>\r\n```\r\n<b>code</b>\r\n```\r\nb &amp; c\rend"
    assert markdown_without_html(page) == "a x\r\n```\r\n<b>code</b>\r\n```\r\nb & c\rend"


def test_an_abbreviation_or_definition_keeps_its_title_after_its_text():
    page = (
        'The <dfn title="specification">spec</dfn> asks for it; see the '
        '<abbr title="Mozilla &amp; co">MDN</abbr> docs, <abbr>API</abbr> and '
        '<abbr title="outer">a <dfn title="inner">b</dfn> c</abbr>.\n'
    )
    assert markdown_without_html(page) == (
        "The spec (specification) asks for it; see the MDN (Mozilla & co) docs, API and "
        "a b (inner) c (outer).\n"
    )
