"""Untrusted inputs, round 3: a stranger's folder, walked to any depth, whatever its names.

A folder nested 1,200 levels deep ended in ``RecursionError`` (``os.walk`` recurses
on Python 3.11); a file name that is not UTF-8 aborted the whole build with
``UnicodeEncodeError``. Folders are now walked with an explicit stack
(``sealgraph.ingest._walk``), and such names are skipped with a warning naming them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import run_main
from support.documents import deep_folder, remove_deep_folder

from sealgraph.ingest import load_documents
from sealgraph.ingest._walk import walk_tree

DEPTH = 1200


@pytest.fixture
def deep_docs(tmp_path) -> Iterator[Path]:
    docs = deep_folder(tmp_path / "docs", DEPTH)
    try:
        yield docs
    finally:
        remove_deep_folder(docs)


def test_a_folder_nested_1200_levels_deep_is_read_to_the_bottom(deep_docs):
    warnings: list[str] = []
    documents = load_documents(deep_docs, warn=warnings.append)
    ids = [d.doc_id for d in documents]
    assert ids == ["d/" * DEPTH + "bottom.md", "top.md"]
    assert "led by Ada Brightwater" in documents[0].text
    assert warnings == []


def test_the_walk_lists_what_os_walk_lists(tmp_path):
    for folder in ("a/b/c", "a/x", "e"):
        (tmp_path / folder).mkdir(parents=True)
    for name in ("a/1.md", "a/b/2.md", "a/b/c/3.md", "e/4.md", "5.md"):
        (tmp_path / name).write_text("x")
    (tmp_path / "a" / "link").symlink_to(tmp_path / "e")  # listed, not entered

    def listing(walk):
        return sorted((d, sorted(dirs), sorted(files)) for d, dirs, files in walk)

    assert listing(walk_tree(tmp_path, print)) == listing(os.walk(tmp_path))


BAD_FILE = b"bad\xff\xfe.md"
BAD_FOLDER = b"folder\xff"


@pytest.fixture
def badly_named(tmp_path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nThe Lumen Lamp was designed by Ada Brightwater.\n")
    with open(os.fsencode(docs) + b"/" + BAD_FILE, "wb") as handle:
        handle.write(b"# Bad\n\nA page whose name is not UTF-8.\n")
    os.mkdir(os.fsencode(docs) + b"/" + BAD_FOLDER)
    with open(os.fsencode(docs) + b"/" + BAD_FOLDER + b"/inside.md", "wb") as handle:
        handle.write(b"# Inside\n\nA page in a folder whose name is not UTF-8.\n")
    return docs


def test_names_that_are_not_utf8_are_skipped_with_a_warning(capsys, tmp_path, badly_named):
    index_dir = tmp_path / "idx"
    code, out, err = run_main(
        capsys, "index", str(badly_named), "--index", str(index_dir), "--embedder", "none"
    )
    assert code == 0, err
    assert "indexed 1 documents" in out
    assert "skipped file" in err and "bad\\xff\\xfe.md" in err
    assert "skipped folder" in err and "folder\\xff" in err
    code, out, err = run_main(
        capsys, "ask", "Who designed the Lumen Lamp?", "--index", str(index_dir),
        "--db", str(tmp_path / "runs.sqlite"),
    )  # fmt: skip
    assert code == 0 and "Ada Brightwater" in out, err


def test_a_path_given_that_is_not_utf8_is_a_clear_error(capsys, tmp_path, badly_named):
    named = os.fsdecode(os.fsencode(badly_named) + b"/" + BAD_FILE)
    code, _, err = run_main(capsys, "index", named, "--index", str(tmp_path / "idx"))
    assert code != 0
    assert err.startswith("sealgraph: error:") and "bad\\xff\\xfe.md" in err
    assert "not valid UTF-8" in err
    assert not (tmp_path / "idx").exists()


# --- 17. --exclude with --prune removes what is now left out, and says so -------------------


def _site(root: Path) -> Path:
    for name, text in {
        "guide.md": "# Guide\n\nThe Lumen Lamp was designed by Ada Brightwater.\n",
        "keep/a.md": "# Alpha\n\nAlpha notes about the Orbit project.\n",
        "keep/b.md": "# Beta\n\nBeta notes about the Orbit project.\n",
        "drafts/c.md": "# Gamma\n\nGamma draft about the Orbit project.\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _doc_ids(index_dir: str) -> list[str]:
    from sealgraph.index import load_index

    index = load_index(index_dir)
    return sorted(doc_id for doc_id, _ in index.titles())


def test_exclude_with_prune_removes_what_is_now_left_out(capsys, tmp_path):
    site = _site(tmp_path / "site")
    index_dir = str(tmp_path / "idx")
    build = ["index", str(site), "--index", index_dir, "--embedder", "none"]
    code, out, err = run_main(capsys, *build)
    assert code == 0 and "indexed 4 documents" in out, err
    # Without --prune the excluded documents are kept, and the warning says why.
    code, out, err = run_main(capsys, *build, "--exclude", "keep/")
    assert code == 0, err
    assert "2 kept" in out and "left out by the ignore patterns" in err
    assert _doc_ids(index_dir) == ["drafts/c.md", "guide.md", "keep/a.md", "keep/b.md"]
    # With --prune they are removed, and the counts say so.
    code, out, err = run_main(capsys, *build, "--exclude", "keep/", "--prune")
    assert code == 0, err
    assert "indexed 2 documents" in out and "2 removed" in out, out
    assert _doc_ids(index_dir) == ["drafts/c.md", "guide.md"]
    # A pattern added to .sealgraphignore prunes the same way.
    (site / ".sealgraphignore").write_text("drafts/\n")
    code, out, err = run_main(capsys, *build, "--prune")
    assert code == 0 and "1 removed" in out, (out, err)
    assert _doc_ids(index_dir) == ["guide.md", "keep/a.md", "keep/b.md"]


def test_exclude_with_prune_removes_from_a_qdrant_collection(tmp_path):
    pytest.importorskip("qdrant_client")
    from sealgraph.index import build_index

    site = _site(tmp_path / "site")
    address = f"qdrant+memory://prune-{tmp_path.name}"
    build_index(site, address, embedder="none", warn=lambda _: None)
    warnings: list[str] = []
    kept = build_index(site, address, embedder="none", exclude=["keep/"], warn=warnings.append)
    assert kept.manifest["counts"]["documents_kept"] == 2
    assert any("left out by the ignore patterns" in w for w in warnings)
    pruned = build_index(
        site, address, embedder="none", exclude=["keep/"], prune=True, warn=lambda _: None
    )
    assert pruned.manifest["counts"]["documents_removed"] == 2
    assert _doc_ids(address) == ["drafts/c.md", "guide.md"]
