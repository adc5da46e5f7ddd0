"""What an index holds, for a person deciding whether it is the one they want.

:func:`index_info` opens an index (a folder or a Qdrant address) without loading its
embedding model and reads what its manifest and files say: documents, chunks, the
embedder and its dimensions, the lexical settings, the format, the size on disk, and
when it was built and last changed. Nothing is written.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["IndexInfo", "index_info"]


@dataclass(frozen=True)
class IndexInfo:
    """A summary of one index."""

    location: str
    """The folder or the Qdrant address, as given."""
    backend: str
    """``folder`` or ``qdrant``."""
    format: str
    """The index format and its version (``sealgraph-index v3``)."""
    written_by: str
    """The sealgraph version that wrote the index last."""
    documents: int
    """Documents in the index."""
    chunks: int
    """Chunks (the passages search returns)."""
    embedder: str | None
    """The embedder's name; None for a lexical-only index."""
    dimensions: int | None
    """Dimensions of its vectors; None without vectors."""
    lexicon: str
    """The lexicon the index was tokenised with."""
    lexical: dict[str, Any] = field(default_factory=dict)
    """BM25's settings: method, k1, b, title weight, tokenizer version, segments."""
    chunking: dict[str, Any] = field(default_factory=dict)
    """Chunk size in tokens, the tiktoken encoding that counts them, the splitter."""
    size_bytes: int | None = None
    """Bytes of the index's files on disk; None when a server holds it."""
    built: str | None = None
    """When the index was built (UTC, ISO 8601: its first lexical segment was written);
    None when unknown."""
    changed: str | None = None
    """When it was last changed (UTC: its manifest was written); None when unknown."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict."""
        return asdict(self)


def index_info(target: str | os.PathLike[str]) -> IndexInfo:
    """Describe the index at ``target`` (a folder or a Qdrant address).

    Raises:
        IndexCorruptError: No index there, or a damaged one.
        InputError: A bad address.

    """
    from sealgraph.index import load_index
    from sealgraph.index._registry import index_location, is_index_address

    index = load_index(target, embedder="none")
    manifest = index.manifest
    embedder = manifest.get("embedder") or {}
    lexical = manifest.get("lexical") or {}
    folder = None if is_index_address(target) else Path(target)
    return IndexInfo(
        location=index_location(index),
        backend="folder" if folder is not None else "qdrant",
        format=f"{manifest.get('format', '?')} v{manifest.get('format_version', '?')}",
        written_by=str(manifest.get("sealgraph_version", "unknown")),
        documents=int(index.n_docs),
        chunks=int(index.n_chunks),
        embedder=embedder.get("name") or None,
        dimensions=int(embedder["dim"]) if embedder.get("dim") else None,
        lexicon=str(manifest.get("lexicon", "english")),
        lexical={
            key: lexical[key]
            for key in ("method", "k1", "b", "field_weight", "tokenizer_version")
            if key in lexical
        }
        | {"segments": len(lexical.get("segments") or [])},
        chunking={
            "max_tokens": (manifest.get("chunker") or {}).get("max_tokens"),
            "encoding": (manifest.get("tokenizer") or {}).get("encoding"),
            "splitter": (manifest.get("chunker") or {}).get("splitter_version"),
        },
        size_bytes=_size(folder) if folder is not None else None,
        built=_built(folder) if folder is not None else None,
        changed=_mtime(folder / "manifest.json") if folder is not None else None,
    )


def _size(folder: Path) -> int:
    # Files only, links not followed: what the index itself takes on disk.
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def _built(folder: Path) -> str | None:
    # Appends write new segments and hard-link the old ones (their times stay), and a
    # full build writes them all: the oldest segment is as old as the last full build.
    segments = sorted((folder / "lexical").glob("seg-*"))
    files = sorted(p for p in segments[0].iterdir() if p.is_file()) if segments else []
    times = [t for t in (_mtime(p) for p in files) if t is not None]
    return min(times) if times else _mtime(folder / "docstore.sqlite")


def _mtime(path: Path) -> str | None:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")
