"""The demo index: the packaged example corpus, indexed once into the user cache.

:func:`ensure_demo_index` reuses the cached index while the example files and the
embedder are unchanged (it compares the SHA-256 of every corpus file with the
sources recorded in the index manifest), and rebuilds it otherwise; a rebuild
reuses the vectors of unchanged chunks. Used by ``sealgraph demo`` and by
:mod:`sealgraph.server` when ``SEALGRAPH_INDEX`` is not set.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from sealgraph.errors import EmbedderMismatchError, IndexCorruptError, InputError
from sealgraph.paths import demo_index_dir

__all__ = ["answer_matches", "corpus_digests", "ensure_demo_index", "index_is_current"]


def answer_matches(values: dict[str, Any], expected: str) -> bool:
    """Whether a run's answer gives ``expected``, the way a reader checks it.

    The short answer, when the run gave one, must hold the expected answer (as whole
    words, HotpotQA's normalisation): an answer that leads with a wrong name and quotes
    the right one further on does not match. Without a short answer the whole answer
    must hold it. A declined answer never matches.
    """
    from sealgraph.eval.metrics import answer_contained

    if values.get("declined"):
        return False
    short = str(values.get("short_answer") or "").strip()
    answer = short or str(values.get("answer") or "")
    return answer_contained(answer, expected)


def corpus_digests(directory: Path) -> dict[str, str]:
    """Return the SHA-256 of every Markdown file of ``directory``, by file name."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.glob("*.md"))
    }


def _wanted_embedder(embedder: str) -> str | bool | None:
    """Manifest embedder name the spec asks for; True when it cannot be known without loading it."""
    spec = embedder.strip().lower()
    if spec in ("none", "off"):
        return None
    if spec in ("auto", "local"):
        from sealgraph.index.embedders import LOCAL_MODEL_NAME, local_embedder_available

        if spec == "local" or local_embedder_available():
            return LOCAL_MODEL_NAME
        return None
    return True


def _source_names(sources: list[dict[str, Any]]) -> set[str]:
    return {Path(str(s.get("path", ""))).name for s in sources}


def index_is_current(
    manifest: dict[str, Any],
    corpus: dict[str, str],
    embedder: str,
    sources: list[dict[str, Any]] | None = None,
) -> bool:
    """Return True when an index holds exactly ``corpus`` built with ``embedder``.

    ``sources`` are the files the index records (``Index.source_files()``); without
    them, the list in ``manifest`` (indexes of earlier versions).
    """
    listed = sources if sources is not None else (manifest.get("sources") or [])
    found = {Path(str(s.get("path", ""))).name: s.get("sha256") for s in listed}
    if found != corpus:
        return False
    wanted = _wanted_embedder(embedder)
    if wanted is True:
        return False
    return (manifest.get("embedder") or {}).get("name") == wanted


def ensure_demo_index(
    index_dir: str | os.PathLike[str] | None = None,
    *,
    embedder: str = "auto",
) -> Path:
    """Return the directory of an up-to-date index of the example corpus, building it if needed.

    Args:
        index_dir: Where the demo index lives; defaults to ``<user cache>/demo-index``.
        embedder: Embedder spec (``auto``, ``none``, ``local``, ...).

    Returns:
        The index directory.

    Raises:
        InputError: ``index_dir`` holds something else (another corpus's index,
            or files that are not an index); it is never overwritten.

    """
    from sealgraph.examples import corpus_dir
    from sealgraph.index import build_index, load_index

    path = Path(index_dir) if index_dir is not None else demo_index_dir()
    source = corpus_dir()
    corpus = corpus_digests(source)
    if (path / "manifest.json").is_file():
        try:
            index = load_index(path, embedder="none")
        except (IndexCorruptError, EmbedderMismatchError):
            index = None  # our own cache entry: rebuild it below
        if index is not None:
            sources = index.source_files()
            if index_is_current(index.manifest, corpus, embedder, sources):
                return path
            if not _source_names(sources) & set(corpus):
                raise InputError(
                    f"{path} holds an index of other documents; give an empty or new "
                    "directory for the demo index (or omit --index to use the user cache)"
                )
    elif path.is_dir() and any(path.iterdir()):
        raise InputError(f"{path} is not empty and holds no index; give an empty or new directory")
    build_index(source, path, embedder=embedder, force=True)
    return path
