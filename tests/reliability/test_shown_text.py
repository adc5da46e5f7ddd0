"""Untrusted inputs, round 3: text shown is text, on the terminal and on HTML pages.

A file name, a title, a chunk id or a question id comes from a stranger's corpus.
On the terminal every id, title and path is shown on one line
(:func:`sealgraph.terminal.one_line`); on a page the characters that reorder text
are shown as escapes and right-to-left text is isolated (``sealgraph.runs._html``).
The CLI runs in-process (an exception escaping ``main`` fails the test).
"""

from __future__ import annotations

import json
from html.parser import HTMLParser

from support.cli import eval_argv, run_main

CORPUS_QUESTION = {
    "id": "lamp",
    "question": "Who designed the Lumen Lamp?",
    "answer": "Ada Brightwater",
    "type": "factual",
    "gold_documents": [],
    "gold_spans": [],
}


# --- 6. a newline in a file name cannot forge a line of text output -------------------------


FORGED = "evil\nsealgraph: error: forged"


def _forged_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("sealgraph: error: forged")]


def test_ids_titles_and_paths_cannot_forge_a_line(capsys, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / f"{FORGED}.md").write_text(
        f"# Lamp {FORGED} title\n\nThe Lumen Lamp was designed by Ada Brightwater in 2011.\n"
    )
    (docs / "other.md").write_text("# Other\n\nThe Other Lamp was designed by Bob in 2012.\n")
    index_dir = tmp_path / f"idx{FORGED}"
    db = str(tmp_path / "runs.sqlite")
    outputs = [
        run_main(capsys, "index", str(docs), "--index", str(index_dir), "--embedder", "none"),
        run_main(
            capsys,
            "ask",
            "Who designed the Lumen Lamp?",
            "--index",
            str(index_dir),
            "--db",
            db,
            "--thread",
            "t1",
        ),
        run_main(capsys, "trace", "t1", "--db", db),
        run_main(capsys, "replay", "t1", "--from", "1", "--set", "k=1", "--db", db),
        run_main(capsys, "trace", "t1", "--db", db, "--html", str(tmp_path / f"p{FORGED}.html")),
    ]
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({**CORPUS_QUESTION, "gold_documents": [f"{FORGED}.md"]}) + "\n")
    outputs.append(
        run_main(
            capsys,
            *eval_argv(questions, "--index", str(index_dir), "--out", str(tmp_path / "r.json")),
        )
    )
    for code, out, err in outputs:
        assert code == 0, err
        assert _forged_lines(out) == [] and _forged_lines(err) == [], (out, err)
        assert "\x1b" not in out + err
    shown = "".join(out + err for _, out, err in outputs)
    assert "evil\\nsealgraph: error: forged" in shown  # shown, escaped


# --- 7. bidi controls and right-to-left names cannot reorder a page -------------------------

RLO = "\u202e"
HEBREW = "\u05d0\u05d1\u05d2"  # alef bet gimel


class _Page(HTMLParser):
    """Collects attribute values and the right-to-left text found outside any <bdi>."""

    def __init__(self) -> None:
        super().__init__()
        self.attributes: list[str] = []
        self.open_bdi = 0
        self.tag = ""
        self.loose_rtl: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.attributes += [value or "" for _, value in attrs]
        self.open_bdi += tag == "bdi"
        self.tag = tag

    def handle_endtag(self, tag):
        self.open_bdi -= tag == "bdi"

    def handle_data(self, data):
        if HEBREW[0] in data and not self.open_bdi and self.tag != "title":
            self.loose_rtl.append(data)


def _check_page(page: str) -> None:
    assert RLO not in page and "\u2066" not in page  # no override reaches the page ...
    assert "\\u202e" in page  # ... it is shown as an escape
    parser = _Page()
    parser.feed(page)
    assert parser.open_bdi == 0
    assert not [a for a in parser.attributes if "<" in a or RLO in a]
    assert HEBREW in page
    assert parser.loose_rtl == []  # every right-to-left name sits in its own isolate


def test_bidi_controls_and_rtl_names_are_neutralised_on_pages(capsys, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / f"lamp{RLO}dm.md").write_text(
        f"# Lamp {RLO}evil\n\nThe Lumen Lamp was designed by Ada Brightwater in 2011.\n"
    )
    (docs / f"{HEBREW}.md").write_text(
        f"# {HEBREW}\n\nThe Lumen Lamp was sold in {HEBREW} by Northwind in 2012.\n"
    )
    index_dir, db = tmp_path / "idx", str(tmp_path / "runs.sqlite")
    code, _, err = run_main(
        capsys, "index", str(docs), "--index", str(index_dir), "--embedder", "none"
    )
    assert code == 0, err
    argv = ["ask", f"Who designed the Lumen Lamp {RLO}?", "--index", str(index_dir), "--db", db]
    assert run_main(capsys, *argv, "--thread", "t1")[0] == 0
    page = tmp_path / "run.html"
    code, _, err = run_main(capsys, "trace", "t1", "--db", db, "--html", str(page))
    assert code == 0, err
    _check_page(page.read_text(encoding="utf-8"))
    questions = tmp_path / "q.jsonl"
    record = {**CORPUS_QUESTION, "id": f"q{RLO}1", "gold_documents": [f"{HEBREW}.md"]}
    questions.write_text(json.dumps(record) + "\n")
    eval_page = tmp_path / "eval.html"
    argv = eval_argv(
        questions,
        "--index",
        str(index_dir),
        "--out",
        str(tmp_path / "r.json"),
        methods="flat-bm25,seal",
    )
    code, _, err = run_main(capsys, *argv, "--html", str(eval_page))
    assert code == 0, err
    _check_page(eval_page.read_text(encoding="utf-8"))


def test_plain_left_to_right_text_is_only_escaped():
    from sealgraph.runs._html import html_attr, html_text

    assert html_text('a <b> & "c"') == "a &lt;b&gt; &amp; &quot;c&quot;"
    assert html_text(f"{HEBREW} [0:67]") == f"<bdi>{HEBREW} [0:67]</bdi>"
    assert html_attr(f'x{RLO}"y') == "x\\u202e&quot;y"
    assert html_text("\u2067x\u2069\u200f") == "\\u2067x\\u2069\\u200f"
