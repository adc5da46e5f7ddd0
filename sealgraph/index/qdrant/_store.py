"""How a sealgraph index is laid out in a Qdrant collection, and how it is reached.

One collection holds one index:

* a **chunk point** per chunk: the dense vector (``dense``, cosine) and the lexical
  sparse vector (``lexical``, with Qdrant's IDF modifier), and as payload the chunk
  (id, document, title, headings, order, offsets, text, sentences), its content hash,
  its lexical length and its place in the corpus (``seq``);
* a **document point** per document (no vector): id, title, source, metadata,
  file, position;
* the **manifest point** (no vector, a fixed id): the format marker, the committed
  generation and the manifest (settings, counts, BM25 state, source files).

The collection's metadata carries the format marker too: a collection without it,
or without the manifest point, was not made by sealgraph and is refused untouched.

Every chunk and document point records the generation that wrote it (``born``)
and the one that removed it (``died``; :data:`ALIVE` while it is current). Readers
read generation G, the manifest point's, through :func:`live_filter`:
``born <= G < died``. A write adds its points with ``born = G + 1``, marks what it
replaces with ``died = G + 1``, and commits by rewriting the manifest point (one
point: atomic). The points that died are deleted by the write after, so a
reader opened at G still reads all of G until then. A reader therefore never
sees a half-written state, and an add or a removal touches only the documents it
changes.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sealgraph.errors import IndexCorruptError, InputError
from sealgraph.index.qdrant._address import API_KEY_ENV, QdrantAddress

if TYPE_CHECKING:  # pragma: no cover
    from qdrant_client import QdrantClient

__all__ = [
    "ALIVE",
    "DENSE",
    "FORMAT",
    "FORMAT_VERSION",
    "LEXICAL",
    "MANIFEST_ID",
    "TIMEOUT_S",
    "Collection",
    "connect",
    "live_filter",
    "point_id",
    "term_id",
]

FORMAT = "sealgraph-qdrant-index"
"""The marker of a collection sealgraph made (collection metadata and manifest point)."""
FORMAT_VERSION = 1
DENSE = "dense"
"""Name of the dense vector."""
LEXICAL = "lexical"
"""Name of the sparse lexical vector (BM25's term-frequency part; IDF by Qdrant)."""
ALIVE = 2**62
"""``died`` of a point no generation has removed."""
TIMEOUT_S = 60
"""Seconds each request to a server may take."""
PAGE = 256
"""Points per upsert and per scroll page."""
_NAMESPACE = uuid.UUID("6f0c5d52-7d0e-4c59-9b8f-4d1f3e2a9c11")
MANIFEST_ID = str(uuid.uuid5(_NAMESPACE, "sealgraph:manifest"))
"""Id of the manifest point."""
_INDEXED = {
    "kind": "keyword",
    "doc_id": "keyword",
    "chunk_id": "keyword",
    "title_key": "keyword",
    "heading_key": "keyword",
    "names": "keyword",
    "terms": "keyword",
    "lines": "integer",
    "n_chunks": "integer",
    "born": "integer",
    "died": "integer",
    "seq": "integer",
    "position": "integer",
}
"""Payload fields filtered, counted or ordered on (a server needs an index to order by one)."""

_memory_client: Any = None
_memory_lock = threading.Lock()


def qdrant_client_module() -> Any:
    """Import ``qdrant_client`` (the ``qdrant`` extra), or raise a clear InputError."""
    try:
        import qdrant_client
    except ImportError:
        raise InputError(
            "a Qdrant index needs qdrant-client: pip install 'sealgraph[qdrant]'"
        ) from None
    return qdrant_client


def connect(address: QdrantAddress) -> QdrantClient:
    """Return a client for ``address``: the process's in-memory one, or a server's.

    The API key comes from ``$SEALGRAPH_QDRANT_API_KEY`` (never the address); every
    request to a server is bounded by :data:`TIMEOUT_S`.
    """
    module = qdrant_client_module()
    if address.in_memory:
        global _memory_client
        with _memory_lock:  # one local store per process: build and load see the same
            if _memory_client is None:
                _memory_client = module.QdrantClient(location=":memory:")
            return _memory_client
    key = os.environ.get(API_KEY_ENV, "").strip() or None
    return module.QdrantClient(
        url=address.server_url, api_key=key, timeout=TIMEOUT_S, check_compatibility=False
    )


def point_id(kind: str, key: str, generation: int) -> str:
    """Id of a chunk or document point of one generation (a UUID Qdrant accepts)."""
    return str(uuid.uuid5(_NAMESPACE, f"{kind}:{generation}:{key}"))


def term_id(term: str) -> int:
    """Return the sparse dimension of a lexical token: 32 bits of its BLAKE2b digest.

    Qdrant's sparse indices are 32-bit, so the vocabulary is hashed rather than
    numbered: no shared vocabulary table, and every writer and reader agree. Two
    stems that collide share a dimension (about one pair in a 90,000-stem
    vocabulary); the rarer one then gets a slightly lower IDF.
    """
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "little")


def live_filter(generation: int, *conditions: Any) -> Any:
    """Filter of the points generation ``generation`` holds, and ``conditions``."""
    from qdrant_client import models

    return models.Filter(
        must=[
            models.FieldCondition(key="born", range=models.Range(lte=generation)),
            models.FieldCondition(key="died", range=models.Range(gt=generation)),
            *conditions,
        ]
    )


def match(key: str, value: Any) -> Any:
    """Condition: payload ``key`` equals ``value``."""
    from qdrant_client import models

    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def match_any(key: str, values: Sequence[Any]) -> Any:
    """Condition: payload ``key`` is one of ``values``."""
    from qdrant_client import models

    return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))


# What qdrant-client raises reading an answer that is not Qdrant's: a body that is not
# JSON, JSON that fails its models (pydantic's errors are ValueErrors), a missing field
# (its own assertions: "Collection exists returned None").
_NOT_QDRANT = (ValueError, TypeError, KeyError, AttributeError, AssertionError)


class Collection:
    """A sealgraph collection on a client: its manifest point, scrolls and writes."""

    def __init__(self, client: QdrantClient, address: QdrantAddress) -> None:
        self.client = client
        self.address = address
        self.name = address.collection

    def exists(self) -> bool:
        """Whether a collection (or alias) of that name exists."""
        return bool(self.client.collection_exists(self.name))

    def head(self) -> dict[str, Any] | None:
        """Return the manifest point's payload; None when there is no collection.

        Raises:
            InputError: The collection exists but sealgraph did not make it (no
                marker in its metadata, or no manifest point); nothing is changed.

        """
        from qdrant_client.http.exceptions import ApiException

        try:
            if not self.exists():
                return None
            info = self.client.get_collection(self.name)
            found = self.client.retrieve(self.name, [MANIFEST_ID], with_payload=True)
        except ApiException as exc:  # unreachable, refused key, timeout: said in one line
            raise InputError(
                f"cannot read the Qdrant collection {self.address}: {type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else 'no answer'}"
            ) from None
        except _NOT_QDRANT:  # a body that is not JSON, or not the JSON Qdrant answers with
            raise InputError(
                f"the service at {self.address} is not a Qdrant server: it answered a "
                "collection request with something else; check the address and port"
            ) from None
        metadata = getattr(info.config, "metadata", None) or {}
        payload = found[0].payload if found else None
        if metadata.get("format") != FORMAT or not payload or payload.get("format") != FORMAT:
            raise InputError(
                f"the Qdrant collection {self.address} was not made by sealgraph; it is "
                f"refused and left untouched: give a new collection name"
            )
        if payload.get("format_version") != FORMAT_VERSION:
            raise IndexCorruptError(
                f"the index at {self.address} has format version "
                f"{payload.get('format_version')!r}, this sealgraph reads {FORMAT_VERSION}; "
                f"rebuild it into a new collection"
            )
        return dict(payload)

    def create(self, dim: int | None) -> dict[str, Any]:
        """Create the collection (dense vectors of ``dim`` if any) with an empty head."""
        from qdrant_client import models

        vectors = (
            {DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)} if dim else {}
        )
        self.client.create_collection(
            self.name,
            vectors_config=vectors,
            sparse_vectors_config={
                LEXICAL: models.SparseVectorParams(modifier=models.Modifier.IDF)
            },
            metadata={"format": FORMAT, "format_version": FORMAT_VERSION},
            timeout=TIMEOUT_S,
        )
        if not self.address.in_memory:  # local mode filters without indexes
            for field, schema in _INDEXED.items():
                self.client.create_payload_index(
                    self.name, field, field_schema=schema, timeout=TIMEOUT_S
                )
        head = {
            "kind": "manifest",
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "generation": 0,
            "manifest": None,
            "writing": None,
        }
        self.put_head(head)
        return head

    def put_head(self, payload: dict[str, Any]) -> None:
        """Write the manifest point (the commit of a generation: one point, atomic)."""
        from qdrant_client import models

        self.client.upsert(
            self.name, [models.PointStruct(id=MANIFEST_ID, vector={}, payload=payload)], wait=True
        )

    def scroll(
        self,
        flt: Any,
        *,
        payload: bool | Sequence[str] = True,
        vectors: bool | Sequence[str] = False,
        order_by: str | None = None,
    ) -> Iterator[Any]:
        """Yield every point matching ``flt``, a page at a time.

        With ``order_by`` (an integer field unique among the points matched, such
        as ``seq`` or ``position``) they come in its order: Qdrant pages an ordered
        scroll by value, not by offset.
        """
        with_payload = list(payload) if isinstance(payload, list | tuple) else payload
        with_vectors = list(vectors) if isinstance(vectors, list | tuple) else vectors
        if order_by is None:
            offset = None
            while True:
                points, offset = self.client.scroll(
                    self.name,
                    scroll_filter=flt,
                    limit=PAGE,
                    offset=offset,
                    with_payload=with_payload,
                    with_vectors=with_vectors,
                )
                yield from points
                if offset is None:
                    return
        from qdrant_client import models

        start: int | None = None
        while True:
            points, _ = self.client.scroll(
                self.name,
                scroll_filter=flt,
                limit=PAGE,
                order_by=models.OrderBy(key=order_by, start_from=start),
                with_payload=with_payload,
                with_vectors=with_vectors,
            )
            yield from points
            if len(points) < PAGE:
                return
            start = int(points[-1].order_value) + 1

    def upsert(self, points: Iterable[Any]) -> None:
        """Write points, :data:`PAGE` at a time."""
        page: list[Any] = []
        for point in points:
            page.append(point)
            if len(page) >= PAGE:
                self.client.upsert(self.name, page, wait=True)
                page = []
        if page:
            self.client.upsert(self.name, page, wait=True)

    def set_died(self, flt: Any, generation: int) -> None:
        """Mark the points matching ``flt`` as removed by ``generation``."""
        from qdrant_client import models

        self.client.set_payload(
            self.name,
            payload={"died": generation},
            points=models.FilterSelector(filter=flt),
            wait=True,
        )

    def delete(self, flt: Any) -> None:
        """Delete the points matching ``flt``."""
        from qdrant_client import models

        self.client.delete(self.name, points_selector=models.FilterSelector(filter=flt), wait=True)
