"""Corpus counts read one key at a time, and whether stored counts are this sealgraph's.

Shared by the folder index (counts in its docstore) and Qdrant (counts by the engine).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from sealgraph.text.lexicon import Lexicon
from sealgraph.text.lines import line_hash
from sealgraph.text.statistics import STATISTICS_VERSION


def is_current(entry: object, lex: Lexicon) -> bool:
    """Tell whether a manifest's ``statistics`` entry counts what this sealgraph and ``lex`` do.

    The version says what the counts mean (:data:`STATISTICS_VERSION`, guarded by a
    test that fails when the counting code's output changes); the code digest is
    recorded for the record but not compared, so that an upgrade that only makes
    counting faster does not make every index count its corpus again.
    """
    return (
        isinstance(entry, dict)
        and entry.get("version") == STATISTICS_VERSION
        and entry.get("lexicon") == lex.fingerprint
    )


class CachedCounts:
    """Counts read one key at a time by :meth:`_count`, with a bounded cache in front.

    Behaves as a read-only mapping for :meth:`get` and ``in``; it is not iterated
    (the table may hold millions of keys).
    """

    def __init__(self, cache_size: int = 200_000) -> None:
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _count(self, key: str) -> int:
        raise NotImplementedError

    def get(self, key: str, default: int = 0) -> int:
        """Chunks counted for ``key``; ``default`` when none."""
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
        if hit is None:
            hit = self._count(key)
            with self._lock:
                self._cache[key] = hit
                if len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return hit if hit else default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) > 0

    def __getitem__(self, key: str) -> int:
        value = self.get(key)
        if not value:
            raise KeyError(key)
        return value


class RepeatedLines:
    """The lines many documents repeat, as a container of line keys (hashes inside)."""

    def __init__(self, hashes: frozenset[int]) -> None:
        self._hashes = hashes

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and line_hash(key) in self._hashes

    def __len__(self) -> int:
        return len(self._hashes)
