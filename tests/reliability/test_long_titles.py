"""Untrusted inputs, round 3: a title as long as a document does not push its own evidence out.

A Markdown page whose ``# title`` is 2,400 words long: its chunk's header alone was
over the budget, so packing dropped it and the answer came from another document.
Titles and heading chains are bounded in what packing renders and the answer cites
(:func:`sealgraph.packing.render.header_part`).
"""

from __future__ import annotations

import json
import random

from support.cli import run_main

from sealgraph.packing.render import MAX_SECTION, MAX_TITLE, header_part, render_block

WORDS = ["lantern", "harbor", "copper", "meadow", "signal", "granite", "willow", "cobalt"]


def test_a_2400_word_title_does_not_push_its_evidence_out(capsys, tmp_path):
    rng = random.Random(7)
    title = "Lumen Lamp " + " ".join(rng.choice(WORDS) for _ in range(2400))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lamp.md").write_text(
        f"# {title}\n\nThe Lumen Lamp was designed by Ada Brightwater in 2011.\n"
    )
    (docs / "other.md").write_text(
        "# Studio Lamps\n\nThe Studio Lamp was designed by Bob Marsh in 2012. "
        "The Lumen Lamp is sold in shops.\n"
    )
    index_dir = str(tmp_path / "idx")
    code, _, err = run_main(capsys, "index", str(docs), "--index", index_dir, "--embedder", "none")
    assert code == 0, err
    code, out, err = run_main(
        capsys, "ask", "Who designed the Lumen Lamp?", "--index", index_dir,
        "--db", str(tmp_path / "runs.sqlite"), "--json",
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["declined"] is False
    assert "Ada Brightwater" in result["answer"]
    cited = [c for c in result["citations"] if c["chunk_id"].startswith("lamp.md")]
    assert cited and all(len(c["title"].split()) <= MAX_TITLE[0] for c in cited)
    assert result["context_tokens"] <= 800


def test_headers_are_bounded_and_ordinary_ones_unchanged():
    assert header_part("Request Files", MAX_TITLE) == "Request Files"
    long_title = " ".join(["word"] * 500)
    cut = header_part(long_title, MAX_TITLE)
    assert cut.endswith("…") and len(cut.split()) == MAX_TITLE[0]
    no_spaces = "字" * 5000  # a title without spaces is bounded by characters
    assert len(header_part(no_spaces, MAX_TITLE)) == MAX_TITLE[1]
    block = render_block(1, long_title, long_title, "The text.")
    header = block.split("\n")[0]
    assert len(header.split()) <= MAX_TITLE[0] + MAX_SECTION[0] + 2
    assert block.endswith("The text.")
