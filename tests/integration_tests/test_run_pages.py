"""``sealgraph trace --html``: the page of a stored run, checked in a real browser.

The browser tests render pages with headless Chromium (Debian's
``chromium-headless-shell``, which ``.ci/run`` installs when it can) and read the
DOM the browser built after loading them; they skip, saying why, where no
Chromium is installed.
"""

import json
import re

import pytest
from support.browser import chromium, needs_browser

from sealgraph.cli import main
from sealgraph.examples import corpus_dir

# A demo question whose SEAL run swaps twice at k=3 (lexical index, default config).
SWAP_QUESTION = (
    "Who leads the team that owns the system whose consumer lag caused the "
    "Ledgerline Outage of March 2025?"
)

HOSTILE = """# Quarry Notes

The Quarry Notes are kept by the Basalt Team.
<script>document.title='pwned';document.body.setAttribute('data-pwned','1')</script>
<img src=x onerror="document.title='pwned'"> The Basalt Team meets on Fridays.
"""


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))


def ask_and_page(index, db, thread, question, tmp_path, capsys, *extra):
    """Run ``question`` as ``thread`` and write its page; return (page path, ask output)."""
    code = main(
        ["ask", question, "--index", str(index), "--db", db, "--thread", thread, "--json", *extra]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    page = tmp_path / f"{thread}.html"
    assert main(["trace", thread, "--db", db, "--html", str(page)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {page}"
    return page, out


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory):
    """The packaged demo corpus, indexed lexically (pinned: no embedder)."""
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("demo")
    return build_index(corpus_dir(), root / "index", embedder="none", warn=lambda _: None)


@pytest.fixture
def swap_page(demo_index, tmp_path, capsys):
    """The page of the demo question that swaps, at pinned k=3 and 3 loops."""
    db = str(tmp_path / "runs.sqlite")
    page, out = ask_and_page(
        demo_index.path,
        db,
        "swaps",
        SWAP_QUESTION,
        tmp_path,
        capsys,
        "--k",
        "3",
        "--max-loops",
        "3",
    )
    return page, out, db


def test_trace_html_writes_the_run_and_a_step_of_it(swap_page, tmp_path, capsys):
    page, out, db = swap_page
    text = page.read_text(encoding="utf-8")
    assert text.count('class="swap swap"') == 2
    assert 'class="slot in"' in text
    assert "embedder: <b>none (lexical only)</b>" in text
    assert "k: <b>3</b>" in text
    # every citation shows where its span lies in its document: exactly its text
    for citation in out["citations"]:
        where = re.search(
            rf'id="cite-{citation["n"]}".*?>([\w.-]+\.md) \[(\d+):(\d+)\]<', text, re.S
        )
        doc, start, end = where.groups()
        source = (corpus_dir() / doc).read_text(encoding="utf-8")
        assert source[int(start) : int(end)] == citation["text"]
    # --at STEP: the run up to that checkpoint
    early = tmp_path / "early.html"
    assert main(["trace", "swaps", "--db", db, "--html", str(early), "--at", "3"]) == 0
    capsys.readouterr()
    partial = early.read_text(encoding="utf-8")
    assert "stopped before generate" in partial and "step 3, stopped before" in partial


@needs_browser
def test_the_page_of_a_swapping_run_renders_in_a_browser(swap_page, tmp_path):
    page, out, _ = swap_page
    dom = chromium("--dump-dom", page.as_uri())
    assert len(re.findall(r'<td class="slot in"', dom)) == 2  # the two swapped-in passages
    assert len(re.findall(r'<div class="swap swap"', dom)) == 2
    assert len(re.findall(r'<tr class="kept">', dom)) >= len(out["citations"])
    assert "admitted (answer-bearing)" in dom  # why packing kept a span
    assert len(re.findall(r'<li class="citation"', dom)) == len(out["citations"])
    shot, blank = tmp_path / "page.png", tmp_path / "blank.png"
    empty = tmp_path / "empty.html"
    empty.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    chromium(f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri())
    chromium(f"--screenshot={blank}", "--window-size=1200,1600", empty.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 3 * blank.stat().st_size  # a page drawn, not a blank one


@needs_browser
def test_a_document_holding_a_script_runs_nothing(tmp_path, capsys):
    from sealgraph.index import build_index

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "quarry-notes.md").write_text(HOSTILE, encoding="utf-8")
    (docs / "basalt-team.md").write_text(
        "# Basalt Team\n\nThe Basalt Team is led by Ines Carvalho.\n", encoding="utf-8"
    )
    index = build_index(docs, tmp_path / "index", embedder="none", warn=lambda _: None)
    page, _ = ask_and_page(
        index.path,
        str(tmp_path / "runs.sqlite"),
        "hostile",
        "Who keeps the Quarry Notes?",
        tmp_path,
        capsys,
    )
    source = page.read_text(encoding="utf-8")
    assert "&lt;script&gt;document.title=" in source  # the document's text is on the page
    dom = chromium("--dump-dom", page.as_uri())
    title = re.search(r"<title>(.*?)</title>", dom, re.S).group(1)
    assert "pwned" not in title
    assert "<script" not in dom and "<img" not in dom  # no element came from the text
    assert not re.search(r"<body[^>]*data-pwned", dom)  # and no script ran
    assert "&lt;script&gt;" in dom


def test_write_run_page_takes_a_graph_result_as_it_is(demo_index, tmp_path):
    # The README's Python use: the page of graph.invoke's result, no checkpointer needed.
    from sealgraph import build_graph
    from sealgraph.runs import write_run_page

    result = build_graph(demo_index, config={"k": 3}).invoke({"question": SWAP_QUESTION})
    text = write_run_page(tmp_path / "run.html", result).read_text(encoding="utf-8")
    assert text.count('class="swap swap"') == 2
    assert all(f'id="cite-{c["n"]}"' in text for c in result["citations"])


def test_trace_html_and_json_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["trace", "t", "--json", "--html", "page.html"])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
