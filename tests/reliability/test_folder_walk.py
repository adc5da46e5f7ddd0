"""Untrusted inputs, round 3: a stranger's folder, walked to any depth, whatever its names.

A folder nested 1,200 levels deep ended in ``RecursionError`` (``os.walk`` recurses
on Python 3.11); a file name that is not UTF-8 aborted the whole build with
``UnicodeEncodeError``. Folders are now walked with an explicit stack
(``sealgraph.ingest._walk``), and such names are skipped with a warning naming them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import run_main

from sealgraph.ingest import load_documents
from sealgraph.ingest._walk import walk_tree

DEPTH = 1200


def _deep_folder(root: Path, depth: int) -> Path:
    root.mkdir()
    (root / "top.md").write_text("# Top\n\nThe top page names the Orbit project.\n")
    # Made with relative steps: the kernel's path walk per call stays short.
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        leaf = os.open("bottom.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, b"# Bottom\n\nThe Orbit project is led by Ada Brightwater.\n")
        os.close(leaf)
    finally:
        os.close(fd)
    return root


def test_a_folder_nested_1200_levels_deep_is_read_to_the_bottom(tmp_path):
    docs = _deep_folder(tmp_path / "docs", DEPTH)
    warnings: list[str] = []
    documents = load_documents(docs, warn=warnings.append)
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
