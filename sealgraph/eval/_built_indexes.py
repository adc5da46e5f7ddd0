"""The indexes ``sealgraph index`` built from a folder, so that ``eval --corpus`` reuses them.

``sealgraph index DIR --index IDX`` writes one line to a small list in the user cache
folder: this folder's index is at IDX. ``eval --corpus DIR`` without ``--index`` looks
there before it builds an index of its own, and reuses one only when it still holds
exactly the folder's files (their SHA-256, as the index recorded them) built with the
settings the evaluation would build with. The list is a hint, never trusted: a stale or
damaged entry is skipped, and an index is only read, never written.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sealgraph.errors import SealgraphError
from sealgraph.paths import cache_dir
from sealgraph.types import Document

__all__ = ["BUILT_INDEXES_FILE", "find_built_index", "remember_built_index"]

BUILT_INDEXES_FILE = "built-indexes.json"
"""The list, in the cache folder: ``{"folder real path": ["index path", ...]}``."""

_MAX_PER_FOLDER = 8


def _list_path() -> Path:
    return cache_dir() / BUILT_INDEXES_FILE


def _read() -> dict[str, list[str]]:
    try:
        data = json.loads(_list_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(k): [str(p) for p in v if isinstance(p, str)]
        for k, v in data.items()
        if isinstance(v, list)
    }


def remember_built_index(folder: str | os.PathLike[str], index_dir: str | os.PathLike[str]) -> None:
    """Note that ``index_dir`` holds an index built from ``folder`` (best effort, atomic)."""
    key = str(Path(folder).resolve())
    value = str(Path(index_dir).resolve())
    data = _read()
    paths = [p for p in data.get(key, []) if p != value] + [value]
    data[key] = paths[-_MAX_PER_FOLDER:]
    target = _list_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".built-indexes.", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        os.replace(tmp, target)
    except OSError:
        return  # a hint for later runs: a build never fails for want of it


def find_built_index(
    folder: str | os.PathLike[str], documents: Sequence[Document], settings: dict[str, Any]
) -> Any | None:
    """Return a loaded index that ``sealgraph index`` built of exactly ``documents``, or None.

    ``settings``: the embedder name, chunk size, encoding and lexicon the evaluation
    would build with; an index built otherwise is not this evaluation's.
    """
    from sealgraph.index import load_index

    wanted = _files_of(documents)
    for path in reversed(_read().get(str(Path(folder).resolve()), [])):
        if not (Path(path) / "manifest.json").is_file():
            continue
        try:
            index = load_index(path)
            if _matches(index, wanted, len(documents), settings):
                return index
        except (SealgraphError, OSError, ValueError, KeyError, TypeError):
            continue
    return None


def _source_file(source: str) -> Path:
    # A document's source is its file, or its file and a line (``notes.jsonl:12``).
    path = Path(source)
    head, sep, tail = source.rpartition(":")
    if not path.is_file() and sep and tail.isdigit():
        return Path(head)
    return path


def _files_of(documents: Sequence[Document]) -> set[tuple[str, str]]:
    files = {_source_file(d.source) for d in documents if d.source}
    return {(str(f), hashlib.sha256(f.read_bytes()).hexdigest()) for f in files if f.is_file()}


def _matches(
    index: Any, files: set[tuple[str, str]], n_docs: int, settings: dict[str, Any]
) -> bool:
    manifest = index.manifest
    embedder = (manifest.get("embedder") or {}).get("name") or "none"
    recorded = {
        "embedder": embedder,
        "max_chunk_tokens": (manifest.get("chunker") or {}).get("max_tokens"),
        "encoding": (manifest.get("tokenizer") or {}).get("encoding"),
        "lexicon": manifest.get("lexicon", "english"),
    }
    if recorded != settings or index.n_docs != n_docs:
        return False
    return {(str(s["path"]), str(s["sha256"])) for s in index.source_files()} == files
