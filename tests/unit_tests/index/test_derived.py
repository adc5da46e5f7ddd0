"""Derived caches in an index directory: keyed to one build, strict JSON, written atomically."""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest

from sealgraph.index import load_index
from sealgraph.index.derived import DERIVED_DIR, index_identity, read_derived, write_derived
from sealgraph.index.folder._lifecycle import OWN_FILES, OWN_FOLDERS
from sealgraph.index.folder._manifest import foreign_entries


@pytest.fixture
def index(tiny_index, tmp_path):
    copy = tmp_path / "index"
    shutil.copytree(tiny_index.path, copy, ignore=shutil.ignore_patterns(DERIVED_DIR))
    return load_index(copy)


def test_written_data_reads_back_for_the_same_build_only(index):
    assert read_derived(index, "stats.json") is None
    assert write_derived(index, "stats.json", {"n": [1, 2], "name": "é"})
    assert read_derived(index, "stats.json") == {"n": [1, 2], "name": "é"}
    assert read_derived(load_index(index.path), "stats.json") == {"n": [1, 2], "name": "é"}
    assert [p.name for p in (index.path / DERIVED_DIR).iterdir()] == ["stats.json"]  # no temp
    other = SimpleNamespace(path=index.path, manifest={**index.manifest, "counts": {}})
    assert read_derived(other, "stats.json") is None  # not the build on disk
    assert not write_derived(other, "stats.json", {})


def test_identity_follows_the_manifest(index):
    manifest = index.manifest
    assert index_identity(manifest) == index_identity(json.loads(json.dumps(manifest)))
    assert index_identity({**manifest, "lexicon": "other"}) != index_identity(manifest)
    assert index_identity({}) is None
    assert index_identity({"files": {"a": "b"}, "x": float("nan")}) is None


def test_an_index_without_a_directory_has_no_cache(tmp_path):
    for fake in (
        SimpleNamespace(path=tmp_path, manifest={}),
        SimpleNamespace(path=tmp_path, manifest={"files": {"a": "0"}}),  # no manifest on disk
        object(),
    ):
        assert not write_derived(fake, "x.json", 1)
        assert read_derived(fake, "x.json") is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["../x.json", "a/b.json", ".hidden.json", "x.pkl", ""])
def test_names_are_plain_json_file_names(index, name):
    with pytest.raises(ValueError, match="derived cache"):
        write_derived(index, name, 1)


def test_nan_is_neither_written_nor_read(index):
    with pytest.raises(ValueError):
        write_derived(index, "x.json", float("nan"))
    write_derived(index, "x.json", 1.5)
    path = index.path / DERIVED_DIR / "x.json"
    path.write_text(path.read_text(encoding="utf-8").replace("1.5", "NaN"), encoding="utf-8")
    assert read_derived(index, "x.json") is None


def test_a_symlinked_derived_folder_is_not_followed(index, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (index.path / DERIVED_DIR).symlink_to(elsewhere, target_is_directory=True)
    assert not write_derived(index, "x.json", 1)
    assert list(elsewhere.iterdir()) == []


def test_derived_files_are_sealgraph_s_but_not_subfolders_or_links(index, tmp_path):
    write_derived(index, "x.json", 1)
    manifest = index.manifest
    assert foreign_entries(index.path, manifest, OWN_FILES, OWN_FOLDERS) == []
    assert foreign_entries(index.path, manifest, OWN_FILES) == ["derived/"]
    (index.path / DERIVED_DIR / "sub").mkdir()
    (tmp_path / "theirs.json").write_text("1", encoding="utf-8")
    (index.path / DERIVED_DIR / "link.json").symlink_to(tmp_path / "theirs.json")
    assert foreign_entries(index.path, manifest, OWN_FILES, OWN_FOLDERS) == [
        "derived/link.json",
        "derived/sub/",
    ]
