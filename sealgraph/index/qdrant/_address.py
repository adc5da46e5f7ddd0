"""Qdrant addresses: a collection named by URL (:func:`parse_qdrant_address`).

The index registry (:mod:`sealgraph.index._registry`) gives these schemes' addresses
to the Qdrant backend:

* ``qdrant://HOST[:PORT]/COLLECTION``: a Qdrant server over plain HTTP (port 6333
  by default);
* ``qdrants://HOST[:PORT]/COLLECTION``: the same over TLS (HTTPS);
* ``qdrant+memory://COLLECTION``: the client's in-process local mode, in memory
  (tests and trials: nothing persists, and only this process sees it);

The API key is never part of the address: it is read from
``$SEALGRAPH_QDRANT_API_KEY`` when the client connects, so it is never written to a
manifest, a run record or a log line. An address with a user, a password, a query
or a fragment is refused, as is any other ``scheme://``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from sealgraph.errors import InputError
from sealgraph.index._registry import shown_address as _shown

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_PORT",
    "SCHEMES",
    "QdrantAddress",
    "parse_qdrant_address",
]

API_KEY_ENV = "SEALGRAPH_QDRANT_API_KEY"
"""Environment variable holding the Qdrant API key (sent as the ``api-key`` header)."""
DEFAULT_PORT = 6333
"""Qdrant's HTTP port."""
SCHEMES = ("qdrant", "qdrants", "qdrant+memory")
"""The schemes of Qdrant addresses (registered in :mod:`sealgraph.index._registry`)."""
# Qdrant allows more, but a collection name also names alias-free generations and
# shows up in messages and run records: letters, digits, '_' and '-' keep it plain.
_COLLECTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


@dataclass(frozen=True, slots=True)
class QdrantAddress:
    """A Qdrant collection: on a server (``host``, ``port``, ``tls``) or in local memory."""

    collection: str
    host: str | None = None
    """None for the in-process local mode."""
    port: int = DEFAULT_PORT
    tls: bool = False

    @property
    def in_memory(self) -> bool:
        """True for ``qdrant+memory://``: the client's local mode, in this process only."""
        return self.host is None

    @property
    def url(self) -> str:
        """The address as given (normalised); never holds a secret."""
        if self.in_memory:
            return f"qdrant+memory://{self.collection}"
        scheme = "qdrants" if self.tls else "qdrant"
        host = f"[{self.host}]" if self.host and ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}/{self.collection}"

    @property
    def server_url(self) -> str:
        """The HTTP(S) URL of the server (without the collection)."""
        host = f"[{self.host}]" if self.host and ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def __str__(self) -> str:
        return self.url


def parse_qdrant_address(value: str | QdrantAddress) -> QdrantAddress:
    """Return the Qdrant collection that ``value`` (``qdrant://``, ``qdrants://``, ``qdrant+memory://``) names.

    Raises:
        InputError: ``value`` looks like a URL but is not a Qdrant one, or names
            no valid collection, or carries a user, password, query or fragment
            (an API key belongs in ``$SEALGRAPH_QDRANT_API_KEY``).

    """
    if isinstance(value, QdrantAddress):
        return value
    scheme = value.split("://", 1)[0].lower()
    if scheme not in SCHEMES:
        raise InputError(
            f"not a Qdrant address: {_shown(value)}: give qdrant://HOST:PORT/COLLECTION, "
            f"qdrants://HOST:PORT/COLLECTION (TLS) or qdrant+memory://COLLECTION"
        )
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise InputError(f"bad index address {_shown(value)}: {exc}") from None
    if parts.username is not None or parts.password is not None:
        raise InputError(
            f"an index address holds no user or key ({_shown(value)}); "
            f"set the Qdrant API key in ${API_KEY_ENV}"
        )
    if parts.query or parts.fragment or value.endswith(("?", "#")):
        raise InputError(f"an index address takes no query or fragment: {_shown(value)}")
    if scheme == "qdrant+memory":
        name = parts.netloc + parts.path
        return QdrantAddress(collection=_collection(name, value))
    if not parts.hostname:
        raise InputError(f"no host in the index address {_shown(value)}")
    return QdrantAddress(
        collection=_collection(parts.path.removeprefix("/"), value),
        host=parts.hostname,
        port=port or DEFAULT_PORT,
        tls=scheme == "qdrants",
    )


def _collection(name: str, value: str) -> str:
    if not _COLLECTION.fullmatch(name):
        raise InputError(
            f"bad collection name in the index address {_shown(value)}: 1 to 128 letters, "
            f"digits, '_' or '-', starting with a letter or digit"
        )
    return name
