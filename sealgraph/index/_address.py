"""Where an index lives: a folder, or a Qdrant collection named by URL.

Every place that takes an index path (``--index``, ``$SEALGRAPH_INDEX``,
:func:`sealgraph.index.build_index`, :func:`sealgraph.index.load_index`, ``eval
--index``) reads it with :func:`parse_index_address`:

* ``qdrant://HOST[:PORT]/COLLECTION``: a Qdrant server over plain HTTP (port 6333
  by default);
* ``qdrants://HOST[:PORT]/COLLECTION``: the same over TLS (HTTPS);
* ``qdrant+memory://COLLECTION``: the client's in-process local mode, in memory
  (tests and trials: nothing persists, and only this process sees it);
* anything else without ``://``: a folder.

The API key is never part of the address: it is read from
``$SEALGRAPH_QDRANT_API_KEY`` when the client connects, so it is never written to a
manifest, a run record or a log line. An address with a user, a password, a query
or a fragment is refused, as is any other ``scheme://``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from sealgraph.errors import InputError

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_PORT",
    "QdrantAddress",
    "index_location",
    "is_index_address",
    "parse_index_address",
    "user_index_path",
]

API_KEY_ENV = "SEALGRAPH_QDRANT_API_KEY"
"""Environment variable holding the Qdrant API key (sent as the ``api-key`` header)."""
DEFAULT_PORT = 6333
"""Qdrant's HTTP port."""
_SCHEMES = ("qdrant", "qdrants", "qdrant+memory")
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


def is_index_address(value: object) -> bool:
    """Tell whether ``value`` is a string (or address) naming an index by URL, not a folder."""
    return isinstance(value, QdrantAddress) or (isinstance(value, str) and "://" in value)


def user_index_path(value: str, *, resolve: bool = False) -> str:
    """Return an index path a user gave as it is recorded: ``~`` expanded (and resolved).

    An address is kept as given (``Path`` would fold its ``//``).
    """
    if is_index_address(value):
        return str(parse_index_address(value))
    path = Path(value).expanduser()
    return str(path.resolve() if resolve else path)


def index_location(index: object) -> str:
    """Where a loaded index lives, for messages: its address, else its directory."""
    location = getattr(index, "location", None)
    return str(location) if location else str(getattr(index, "path", "?"))


def parse_index_address(value: str | os.PathLike[str] | QdrantAddress) -> Path | QdrantAddress:
    """Return the folder or the Qdrant collection that ``value`` names.

    Raises:
        InputError: ``value`` looks like a URL but is not a Qdrant one, or names
            no valid collection, or carries a user, password, query or fragment
            (an API key belongs in ``$SEALGRAPH_QDRANT_API_KEY``).

    """
    if isinstance(value, QdrantAddress):
        return value
    if not isinstance(value, str) or "://" not in value:
        return Path(value)
    scheme = value.split("://", 1)[0].lower()
    if scheme not in _SCHEMES:
        raise InputError(
            f"unknown index address {_shown(value)}: give a folder, qdrant://HOST:PORT/"
            f"COLLECTION, qdrants://HOST:PORT/COLLECTION (TLS) or qdrant+memory://COLLECTION"
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


def _shown(value: str) -> str:
    # A mistyped address may hold a key: show the scheme and host part only.
    head, _, rest = value.partition("://")
    host = rest.split("/", 1)[0].rpartition("@")[2]
    return repr(f"{head}://{host}/..." if "/" in rest else f"{head}://{host}")
