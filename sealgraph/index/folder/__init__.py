"""The folder index: an index kept in a directory (the default backend).

A folder holds::

    manifest.json      format version, embedder, tokenizer, chunker settings,
                       counts, SHA-256 of every other file
    docstore.sqlite    documents and chunks (chunk row = position in the indexes),
                       the source files, corpus counts and the reasoner's gazetteer
    lexical/           BM25 segments (memory-mapped .npy without pickle, sorted terms)
    vectors.npy        unit vectors as float32, one row per chunk row (only with an
                       embedder), memory-mapped and searched by FAISS
    dense.ivf          a FAISS inverted file over them (large indexes only)
    derived/           caches users of the index compute from it (written after the
                       build, not in the manifest; see :mod:`sealgraph.index.derived`)

Writes are atomic (a temporary sibling swapped into place) and builds of one
directory take turns through a lock file beside it, ``.NAME.lock``. The modules:
``_build`` writes a whole index, ``_append`` adds documents row by row, ``_remove``
and ``_refresh`` rewrite, ``_lifecycle`` and ``_staging`` guard the folder,
``_index`` opens it for search (:class:`Index`), ``_chunks`` and ``_store`` read and
write the docstore, ``_lexical`` and ``_segments`` are BM25, ``_dense`` and ``_ann``
the vectors (FAISS exact search and inverted file), ``_reuse`` the vectors a build
does not embed again.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sealgraph.index.folder._index import Index, open_folder_index, verify_folder_index

__all__ = ["BACKEND", "FolderBackend", "Index"]


class FolderBackend:
    """The :class:`~sealgraph.index.IndexBackend` of indexes kept in a directory."""

    name = "folder"

    def locate(self, address: str | os.PathLike[str]) -> Path:
        """Return the directory ``address`` names."""
        return Path(address)

    def build(self, inputs: Any, location: Path, **settings: Any) -> Index:
        """Build into, or add to, the index in ``location`` (:func:`sealgraph.index.build_index`)."""
        from sealgraph.index.folder._build import build_index_dir

        warn = settings["warn"]
        return build_index_dir(
            inputs,
            location,
            **settings,
            finish=lambda path, used: self.load(
                path, embedder=used if used is not None else "none", warn=warn
            ),
        )

    def load(
        self, location: Path, *, embedder: Any = None, warn: Any = None, lexicon: Any = None
    ) -> Index:
        """Open the index in ``location`` (:func:`sealgraph.index.load_index`)."""
        from sealgraph.ingest import warn_stderr

        return open_folder_index(
            location, embedder=embedder, warn=warn or warn_stderr, lexicon=lexicon
        )

    def remove(
        self,
        location: Path,
        targets: Sequence[str | os.PathLike[str]],
        *,
        embedder: Any,
        lock_timeout: float,
        warn: Any,
    ) -> Index:
        """Remove documents (:func:`sealgraph.index.remove_documents`)."""
        from sealgraph.index.folder._remove import remove_documents_dir

        return remove_documents_dir(
            location,
            targets,
            lock_timeout=lock_timeout,
            warn=warn,
            finish=lambda path: self.load(path, embedder=embedder, warn=warn),
        )

    def refresh(self, location: Path, *, embedder: Any, lock_timeout: float, warn: Any) -> Index:
        """Rebuild the lexical part (:func:`sealgraph.index.refresh_lexical`)."""
        from sealgraph.index.folder._refresh import refresh_lexical_dir

        return refresh_lexical_dir(
            location,
            lock_timeout=lock_timeout,
            warn=warn,
            finish=lambda path: self.load(path, embedder=embedder, warn=warn),
        )

    def verify(self, location: Path) -> int:
        """Check every file against its checksum (:func:`sealgraph.index.verify_index`)."""
        return verify_folder_index(location)

    def manifest(self, location: Path) -> dict[str, Any]:
        """Return the index's manifest, without opening it (:func:`sealgraph.index.read_index_manifest`)."""
        from sealgraph.index.folder._manifest import read_manifest

        return read_manifest(location)


BACKEND = FolderBackend()
"""The folder backend: what an index path without ``SCHEME://`` names."""
