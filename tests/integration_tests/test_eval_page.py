"""``sealgraph eval --html``: the methods' table and, per question, the run behind each number."""

import json
import re

import pytest
from support.browser import chromium, needs_browser

from sealgraph.cli import main
from sealgraph.examples import corpus_dir
from sealgraph.runs.page import PAGE_CSP

# Demo questions about the packaged corpus; q13's SEAL run swaps twice at k=3.
DEMO = {
    "q01": ("Who leads the team that owns the Ledgerline Billing Service?", "Dana Whitcombe"),
    "q13": (
        "Who leads the team that owns the system whose consumer lag caused the "
        "Ledgerline Outage of March 2025?",
        "Priya Raghunathan",
    ),
}


@pytest.fixture
def evaluated(tmp_path, monkeypatch):
    """``eval --html`` of flat-bm25 and seal on two demo questions (lexical index, k=3)."""
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    questions = tmp_path / "questions.jsonl"
    lines = [
        {
            "id": qid,
            "question": text,
            "answer": answer,
            "type": "bridge",
            "gold_documents": [],
            "gold_spans": [],
        }
        for qid, (text, answer) in DEMO.items()
    ]
    questions.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    page = tmp_path / "eval.html"
    code = main(
        [
            "eval",
            "--questions",
            str(questions),
            "--corpus",
            str(corpus_dir()),
            "--embedder",
            "none",
            "--k",
            "3",
            "--methods",
            "flat-bm25,seal",
            "--out",
            str(tmp_path / "report.json"),
            "--html",
            str(page),
            "--no-progress",
        ]
    )
    assert code == 0
    return page


def runs_of(text):
    """The run blocks of an eval page, by (question id part of the anchor, method)."""
    return dict(
        re.findall(r'<details class="method-run" id="([^"]+)" data-method="([^"]+)">', text)
    )


def test_eval_html_links_every_number_to_its_run(evaluated, capsys):
    capsys.readouterr()
    text = evaluated.read_text(encoding="utf-8")
    assert f'content="{PAGE_CSP}"' in text and "<script" not in text
    assert text.count('<tr class="method">') == 2
    runs = runs_of(text)
    assert sorted(runs.values()) == ["flat-bm25", "flat-bm25", "seal", "seal"]
    # every cell of the questions' table links to a run on the page
    table = text[text.index('<table class="questions">') :]
    table = table[: table.index("</table>")]
    links = re.findall(r'<td(?: class="low")?><a href="#([^"]+)">', table)
    assert sorted(links) == sorted(runs)
    # seal shows its whole repair, a flat method its evidence only
    blocks = re.split(r'(?=<details class="method-run")', text)[1:]
    seal_q13 = next(
        b for b in blocks if b.startswith('<details class="method-run" id="run-q13-seal')
    )
    assert seal_q13.count('class="swap swap"') == 2 and "Evidence slots" in seal_q13
    flat = [b for b in blocks if 'data-method="flat-bm25"' in b]
    assert all("Evidence slots" not in b and "Final evidence" in b for b in flat)
    assert all("characters [" in b for b in flat)  # a flat passage's place in its document


def test_eval_html_refuses_a_path_it_cannot_write_before_any_work(tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text("", encoding="utf-8")
    code = main(
        [
            "eval",
            "--questions",
            str(questions),
            "--out",
            str(tmp_path / "r.json"),
            "--html",
            str(tmp_path / "missing" / "eval.html"),
        ]
    )
    assert code != 0
    assert "missing" in capsys.readouterr().err


@needs_browser
def test_the_eval_page_renders_in_a_browser(evaluated):
    dom = chromium("--dump-dom", evaluated.as_uri())
    assert len(re.findall(r'<details class="method-run"', dom)) == 4
    assert len(re.findall(r'<tr class="method">', dom)) == 2
    assert len(re.findall(r'<div class="swap swap"', dom)) == 2
