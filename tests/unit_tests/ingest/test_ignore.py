"""Folders leave out build output, theme templates, .sealgraphignore and --exclude patterns."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import assert_clear_error, run_cli

from sealgraph.errors import InputError
from sealgraph.ingest import load_documents
from sealgraph.ingest.ignore import DEFAULT_EXCLUDES, IgnoreRules


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "ignored"),
    [
        ("drafts/", "drafts", True, True),
        ("drafts/", "guide/drafts", True, True),
        ("drafts/", "drafts", False, False),  # a trailing slash: folders only
        ("*.tmp.md", "a/b/notes.tmp.md", False, True),
        ("/top.md", "top.md", False, True),
        ("/top.md", "sub/top.md", False, False),  # anchored at the folder given
        ("docs/*.md", "docs/a.md", False, True),
        ("docs/*.md", "docs/x/a.md", False, False),  # * does not cross /
        ("docs/**/a.md", "docs/x/y/a.md", False, True),
        ("**/old", "x/old", True, True),
        ("v?.md", "v1.md", False, True),
        ("v[0-9].md", "v7.md", False, True),
        ("v[!0-9].md", "v7.md", False, False),
        ("# comment", "# comment", False, False),
    ],
)
def test_gitignore_style_patterns(pattern, path, is_dir, ignored):
    assert IgnoreRules([pattern]).ignored(path, is_dir=is_dir) is ignored


def test_last_matching_pattern_wins_and_negation_takes_back():
    rules = IgnoreRules(["*.md", "!keep.md"])
    assert rules.ignored("a.md", is_dir=False)
    assert not rules.ignored("keep.md", is_dir=False)
    assert IgnoreRules(["!keep.md", "*.md"]).ignored("keep.md", is_dir=False)


def test_an_unreadable_pattern_is_a_clear_error():
    with pytest.raises(InputError, match="cannot be read"):
        IgnoreRules(["bad[.md"])


def _site(root: Path) -> Path:
    files = {
        "index.md": "# Home\n\nWelcome to the project.\n",
        "guide/setup.md": "# Setup\n\nInstall it with pip.\n",
        "guide/drafts/wip.md": "# WIP\n\nNot ready.\n",
        "overrides/main.html": "<html><body>{% block content %}{% endblock %}</body></html>",
        "node_modules/pkg/README.md": "# A package\n\nSomeone else's text.\n",
        "notes.tmp.md": "# Scratch\n\nScratch notes.\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _ids(root: Path, **kwargs) -> list[str]:
    return [d.doc_id for d in load_documents(root, warn=lambda _: None, **kwargs)]


def test_defaults_leave_out_build_output_and_theme_templates(tmp_path):
    root = _site(tmp_path / "site")
    assert "overrides/" in DEFAULT_EXCLUDES and "node_modules/" in DEFAULT_EXCLUDES
    assert _ids(root) == ["guide/drafts/wip.md", "guide/setup.md", "index.md", "notes.tmp.md"]


def test_sealgraphignore_and_exclude_patterns_apply_in_order(tmp_path):
    root = _site(tmp_path / "site")
    (root / ".sealgraphignore").write_text("# drafts are not docs\ndrafts/\n*.tmp.md\n")
    assert _ids(root) == ["guide/setup.md", "index.md"]
    assert _ids(root, exclude=["!*.tmp.md", "!overrides/", "*.html"]) == [
        "guide/setup.md",
        "index.md",
        "notes.tmp.md",
    ]


def test_a_file_named_explicitly_is_read_whatever_the_patterns(tmp_path):
    root = _site(tmp_path / "site")
    (root / ".sealgraphignore").write_text("*.tmp.md\n")
    assert [d.doc_id for d in load_documents([root / "notes.tmp.md"])] == ["notes.tmp.md"]


def test_an_ignore_file_that_is_a_link_is_refused(tmp_path):
    root = _site(tmp_path / "site")
    (tmp_path / "elsewhere").write_text("*.md\n")
    (root / ".sealgraphignore").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError, match="regular file"):
        load_documents(root)


def test_cli_exclude_and_a_bad_pattern(tmp_path):
    root = _site(tmp_path / "site")
    built = run_cli(
        "index", str(root), "--index", str(tmp_path / "i"), "--embedder", "none",
        "--exclude", "guide/",
    )  # fmt: skip
    assert built.code == 0, built.err
    from sealgraph.index import load_index

    ids = sorted(doc_id for doc_id, _ in load_index(tmp_path / "i").titles())
    assert ids == ["index.md", "notes.tmp.md"]
    bad = run_cli(
        "index", str(root), "--index", str(tmp_path / "j"), "--embedder", "none",
        "--exclude", "x[.md",
    )  # fmt: skip
    assert_clear_error(bad, "cannot be read")
    assert not (tmp_path / "j").exists()


def test_a_subfolders_ignore_file_applies_below_it(tmp_path):
    root = _site(tmp_path / "site")
    (root / "guide" / "old.md").write_text("# Old\n\nOld setup notes.\n", encoding="utf-8")
    (root / "old.md").write_text("# Old home\n\nOld home page.\n", encoding="utf-8")
    (root / "guide" / ".sealgraphignore").write_text("old.md\n/drafts/\n", encoding="utf-8")
    assert _ids(root) == ["guide/setup.md", "index.md", "notes.tmp.md", "old.md"]
    (root / "guide" / ".sealgraphignore").write_text("*.md\n!setup.md\n", encoding="utf-8")
    assert _ids(root) == ["guide/setup.md", "index.md", "notes.tmp.md", "old.md"]


def test_a_strangers_pattern_cannot_make_matching_slow():
    # A backtracking translation took seconds on this for a 60-character name.
    import time

    rules = IgnoreRules(["*a*a*a*a*a*a*a*a*a*a*b", "**/**/**/**/**/**/x"])
    started = time.perf_counter()
    assert not rules.ignored("a" * 250, is_dir=False)
    assert not rules.ignored("/".join(["d"] * 200), is_dir=False)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("pattern", "path", "ignored"),
    [(r"\#notes.md", "#notes.md", True), (r"a\*.md", "a*.md", True), (r"a\*.md", "ab.md", False)],
)
def test_a_backslash_makes_the_next_character_literal(pattern, path, ignored):
    assert IgnoreRules([pattern]).ignored(path, is_dir=False) is ignored


def test_too_many_patterns_or_a_huge_ignore_file_is_a_clear_error(tmp_path):
    root = _site(tmp_path / "site")
    (root / ".sealgraphignore").write_text("".join(f"p{i}.md\n" for i in range(2001)))
    with pytest.raises(InputError, match="at most 2000"):
        load_documents(root)
    (root / ".sealgraphignore").write_bytes(b"#" * (256 * 1024 + 1))
    with pytest.raises(InputError, match="larger than 256 KiB"):
        load_documents(root)


# --- the same verdicts as git's own gitignore matching -------------------------------------

_PARTS = ["a", "b", "ab", "*", "?", "**", "[ab]", "a*", "*b", "x"]
_NAMES = ["a", "b", "ab", "ba", "x", "bb"]


def _random_pattern(rng) -> str:
    text = "/".join(rng.choice(_PARTS) for _ in range(rng.randint(1, 3)))
    text = ("/" if rng.random() < 0.25 else "") + text + ("/" if rng.random() < 0.25 else "")
    return ("!" if rng.random() < 0.15 else "") + text


def _random_tree(root: Path, rng) -> list[str]:
    """Make a few random files (and their folders) under ``root``; return every entry."""
    entries: set[str] = set()
    for _ in range(6):
        parts = [rng.choice(_NAMES) for _ in range(rng.randint(1, 3))]
        path = root.joinpath(*parts)
        if path.exists() or any(root.joinpath(*parts[:i]).is_file() for i in range(1, len(parts))):
            continue  # something already stands where a folder or this file would go
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        entries.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return sorted(entries)


def test_patterns_leave_out_what_git_leaves_out(tmp_path):
    # Random patterns (anchored, folder-only, negated, *, ?, [..], **) over random trees,
    # judged by `git check-ignore`: a path is left out when it or a folder above it is.
    import random
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    rng = random.Random(31)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for _ in range(120):
        for entry in tmp_path.iterdir():
            if entry.name != ".git":
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        patterns = [_random_pattern(rng) for _ in range(rng.randint(1, 3))]
        (tmp_path / ".gitignore").write_text("\n".join(patterns) + "\n")
        entries = _random_tree(tmp_path, rng)
        git = subprocess.run(
            ["git", "-C", str(tmp_path), "check-ignore", "--no-index", *entries],
            capture_output=True,
            text=True,
            check=False,
        )
        by_git = set(git.stdout.split())
        rules = IgnoreRules(patterns)
        for entry in entries:
            parts = entry.split("/")
            ours = any(
                rules.ignored("/".join(parts[:i]), is_dir=True) for i in range(1, len(parts))
            ) or rules.ignored(entry, is_dir=(tmp_path / entry).is_dir())
            assert ours == (entry in by_git), (patterns, entry)
