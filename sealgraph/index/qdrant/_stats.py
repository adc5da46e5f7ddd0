"""The offline reasoner's corpus counts, kept in the collection and counted by the engine.

Each chunk point carries the keys of the proper names its text writes (``names``)
and its distinct lexical tokens (``terms``); each document point the hashes of
its lines (``lines``, :func:`sealgraph.text.lines.document_line_hashes`). The
tables a folder index keeps in its docstore are then counts the engine makes
over the committed generation: a name's or a token's chunk frequency is one
``count`` with a payload filter, the repeated lines one ``facet``. Adds and
removals keep them current with nothing to update: they are the points' own
fields. The manifest's ``statistics`` entry says which counting code and lexicon
wrote the fields; when they are not this sealgraph's, :meth:`statistics` gives
None and a reader counts from the chunks, as for an index that keeps none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sealgraph.index._counts import CachedCounts, RepeatedLines, is_current
from sealgraph.index.qdrant._store import live_filter, match
from sealgraph.text.lexicon import Lexicon
from sealgraph.text.lines import repeated_floor
from sealgraph.text.statistics import STATISTICS_VERSION, statistics_fingerprint

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.index.qdrant._store import Collection

__all__ = ["PayloadCounts", "QdrantStatistics", "statistics_entry"]

_FACET_LIMIT = 1_000_000
"""Most distinct lines one facet request returns (those at the floor and above are kept)."""


def statistics_entry(lex: Lexicon) -> dict[str, Any]:
    """Return the manifest's ``statistics`` entry for fields written now with ``lex``."""
    return {
        "version": STATISTICS_VERSION,
        "code": statistics_fingerprint(),
        "lexicon": lex.fingerprint,
    }


def current(entry: object, lex: Lexicon) -> bool:
    """Whether the manifest's ``statistics`` entry was written by this counting code and ``lex``."""
    return is_current(entry, lex)


class PayloadCounts(CachedCounts):
    """Chunks of the generation whose payload ``field`` holds a key, counted by the engine."""

    def __init__(self, collection: Collection, generation: int, field: str) -> None:
        super().__init__()
        self._collection = collection
        self._generation = generation
        self._field = field

    def _count(self, key: str) -> int:
        flt = live_filter(self._generation, match("kind", "chunk"), match(self._field, key))
        return int(
            self._collection.client.count(self._collection.name, count_filter=flt, exact=True).count
        )


class QdrantStatistics:
    """The counts the offline reasoner reads (see :class:`sealgraph.index.folder._statistics.CorpusStatistics`)."""

    def __init__(self, collection: Collection, generation: int, n_chunks: int) -> None:
        self._collection = collection
        self._generation = generation
        self.n_chunks = n_chunks
        """Chunks counted."""
        self.names = PayloadCounts(collection, generation, "names")
        """Proper-name key -> chunks writing it."""
        self._repeated: RepeatedLines | None = None

    @property
    def n_documents(self) -> int:
        """Documents with at least one chunk."""
        from qdrant_client import models

        flt = live_filter(
            self._generation,
            match("kind", "document"),
            models.FieldCondition(key="n_chunks", range=models.Range(gt=0)),
        )
        return int(
            self._collection.client.count(self._collection.name, count_filter=flt, exact=True).count
        )

    def repeated_lines(self) -> RepeatedLines:
        """Return the lines at least :func:`~sealgraph.text.lines.repeated_floor` documents hold."""
        if self._repeated is None:
            floor = repeated_floor(self.n_documents)
            found = self._collection.client.facet(
                self._collection.name,
                key="lines",
                facet_filter=live_filter(self._generation, match("kind", "document")),
                limit=_FACET_LIMIT,
                exact=True,
            )
            self._repeated = RepeatedLines(
                frozenset(int(hit.value) for hit in found.hits if hit.count >= floor)
            )
        return self._repeated

    def gazetteer(self) -> None:
        """None: the reasoner builds its gazetteer from the index's bulk reads instead."""
        return None
