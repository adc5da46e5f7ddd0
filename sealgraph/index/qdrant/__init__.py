"""The Qdrant backend: an index held by a Qdrant collection (``docs/scale-out.md``).

Addresses ``qdrant://HOST[:PORT]/COLLECTION``, ``qdrants://...`` (TLS) and
``qdrant+memory://COLLECTION`` (the client's local mode, in memory) name its indexes.
Importing this package needs no ``qdrant-client`` (the ``qdrant`` extra): the work is
imported when an address is used, and a missing client is a one-line error naming the
extra then. The modules: ``_address`` reads addresses, ``_store`` lays out the
collection (chunk, document and manifest points, generations), ``_points`` makes
points and BM25's sparse vectors, ``_chunks`` reads chunks by payload filters,
``_index`` is :class:`QdrantIndex`, ``_write`` builds, adds, removes and refreshes one
generation at a time, ``_stats`` counts the reasoner's tables in the engine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sealgraph.index.qdrant._address import QdrantAddress, parse_qdrant_address

if TYPE_CHECKING:
    from sealgraph.index.qdrant._index import QdrantIndex

__all__ = ["BACKEND", "QdrantAddress", "QdrantBackend", "QdrantIndex"]


class QdrantBackend:
    """The :class:`~sealgraph.index.IndexBackend` of indexes held by Qdrant collections."""

    name = "qdrant"

    def locate(self, address: str | QdrantAddress) -> QdrantAddress:
        """Return the collection ``address`` names (InputError for a bad address)."""
        return parse_qdrant_address(address)

    def build(self, inputs: Any, location: QdrantAddress, **settings: Any) -> QdrantIndex:
        """Build into, or add to, the collection (:func:`sealgraph.index.build_index`)."""
        from sealgraph.index.qdrant._write import build_qdrant

        return build_qdrant(inputs, location, **settings)

    def load(
        self,
        location: QdrantAddress,
        *,
        embedder: Any = None,
        warn: Any = None,
        lexicon: Any = None,
    ) -> QdrantIndex:
        """Open the index in the collection (:func:`sealgraph.index.load_index`)."""
        from sealgraph.index.qdrant._index import open_qdrant_index

        return open_qdrant_index(location, embedder=embedder, warn=warn, lexicon=lexicon)

    def remove(
        self,
        location: QdrantAddress,
        targets: Sequence[str | os.PathLike[str]],
        *,
        embedder: Any,
        lock_timeout: float,
        warn: Any,
    ) -> QdrantIndex:
        """Remove documents (:func:`sealgraph.index.remove_documents`)."""
        from sealgraph.index.qdrant._write import remove_qdrant

        return remove_qdrant(
            location,
            [os.fspath(t) for t in targets],
            embedder=embedder,
            lock_timeout=lock_timeout,
            warn=warn,
        )

    def refresh(
        self, location: QdrantAddress, *, embedder: Any, lock_timeout: float, warn: Any
    ) -> QdrantIndex:
        """Rewrite the lexical sparse vectors (:func:`sealgraph.index.refresh_lexical`)."""
        from sealgraph.index.qdrant._write import refresh_qdrant

        return refresh_qdrant(location, embedder=embedder, lock_timeout=lock_timeout, warn=warn)

    def verify(self, location: QdrantAddress) -> int:
        """Check the committed generation against its manifest (:func:`sealgraph.index.verify_index`)."""
        from sealgraph.index.qdrant._index import verify_qdrant_index

        return verify_qdrant_index(location)

    def manifest(self, location: QdrantAddress) -> dict[str, Any]:
        """Return the committed manifest (:func:`sealgraph.index.read_index_manifest`)."""
        from sealgraph.index.qdrant._index import committed_manifest

        return committed_manifest(location)


BACKEND = QdrantBackend()
"""The Qdrant backend, registered for ``qdrant``, ``qdrants`` and ``qdrant+memory``."""


def __getattr__(name: str) -> Any:
    # QdrantIndex needs the qdrant extra's client at use only; its module is imported here.
    if name == "QdrantIndex":
        from sealgraph.index.qdrant._index import QdrantIndex

        return QdrantIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
