"""Where an index lives, and the backend that keeps it: chosen by the address's scheme.

Every place that takes an index path (``--index``, ``$SEALGRAPH_INDEX``,
:func:`sealgraph.index.build_index`, :func:`sealgraph.index.load_index`, ``eval
--index``) reads it with :func:`locate`: a value without ``://`` is a folder (the
folder backend, :mod:`sealgraph.index.folder`); ``SCHEME://...`` is given to the
backend registered for ``SCHEME``: ``qdrant``, ``qdrants`` and ``qdrant+memory``
(:mod:`sealgraph.index.qdrant`). A backend is registered by the import path of its
:class:`IndexBackend` object and imported when an address of its scheme is first
used, so its libraries are needed only where its addresses are.

An address with a scheme no backend registered is a one-line error, as is one its
backend refuses (a user, a password, a query or a fragment: an API key is never part
of an address, so it never reaches a manifest, a run record or a log line).
"""

from __future__ import annotations

import importlib
import os
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from sealgraph.errors import InputError

__all__ = [
    "IndexBackend",
    "index_location",
    "is_index_address",
    "locate",
    "parse_index_address",
    "register_backend",
    "shown_address",
    "user_index_path",
]


@runtime_checkable
class IndexBackend(Protocol):
    """A kind of index store: what :mod:`sealgraph.index`'s public functions ask of it.

    ``location`` is what :meth:`locate` made of an address (a folder's ``Path``, a
    Qdrant collection's address); ``settings`` are :func:`sealgraph.index.build_index`'s
    keyword arguments. Each method returns the index loaded (a
    :class:`~sealgraph.index.protocol.SearchIndex`) unless said otherwise, and raises
    the errors the public function documents.
    """

    name: str
    """The backend's name, for messages."""

    def locate(self, address: str) -> Any:
        """Return the location ``address`` names; raise InputError for a bad one."""

    def build(self, inputs: Any, location: Any, **settings: Any) -> Any:
        """Build an index of ``inputs`` at ``location``, or add them to the one there."""

    def load(self, location: Any, *, embedder: Any, warn: Any, lexicon: Any) -> Any:
        """Open the index at ``location``."""

    def remove(
        self, location: Any, targets: list[str], *, embedder: Any, lock_timeout: float, warn: Any
    ) -> Any:
        """Remove the documents of ``targets`` (files, folders or ids)."""

    def refresh(self, location: Any, *, embedder: Any, lock_timeout: float, warn: Any) -> Any:
        """Rebuild the lexical part with this sealgraph's tokenizer."""

    def verify(self, location: Any) -> int:
        """Check the index fully; return how many files or points were checked."""

    def manifest(self, location: Any) -> dict[str, Any]:
        """Return the committed manifest without opening the index (IndexCorruptError: none)."""


FOLDER = "sealgraph.index.folder:BACKEND"
"""The backend of a value without ``SCHEME://``."""
_BACKENDS: dict[str, str | IndexBackend] = {
    "qdrant": "sealgraph.index.qdrant:BACKEND",
    "qdrants": "sealgraph.index.qdrant:BACKEND",
    "qdrant+memory": "sealgraph.index.qdrant:BACKEND",
}
_LOCK = threading.Lock()


def register_backend(scheme: str, backend: IndexBackend | str) -> None:
    """Make ``SCHEME://...`` addresses name indexes of ``backend``.

    Args:
        scheme: The address scheme, lower case (``"qdrant"``); registering it again
            replaces the backend.
        backend: An :class:`IndexBackend`, or the import path of one
            (``"package.module:NAME"``), imported when an address of ``scheme`` is first
            used: the backend's own libraries are then only needed where it is used.

    Raises:
        InputError: ``scheme`` is not a URL scheme (letters, digits, ``+``, ``-``, ``.``,
            starting with a letter).

    """
    if not scheme or not scheme[0].isalpha() or not all(c.isalnum() or c in "+-." for c in scheme):
        raise InputError(f"bad index address scheme {scheme!r}")
    with _LOCK:
        _BACKENDS[scheme.lower()] = backend


def _backend(entry: str | IndexBackend) -> IndexBackend:
    if not isinstance(entry, str):
        return entry
    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)


def schemes() -> list[str]:
    """Return the schemes backends are registered for, sorted."""
    with _LOCK:
        return sorted(_BACKENDS)


def locate(value: str | os.PathLike[str] | Any) -> tuple[IndexBackend, Any]:
    """Return the backend of the index ``value`` names, and the location it made of it.

    A location a backend made earlier (a Qdrant address) is its own backend's again.

    Raises:
        InputError: ``value`` has a scheme no backend is registered for, or one its
            backend refuses.

    """
    if isinstance(value, str | os.PathLike) and not is_index_address(value):
        return _backend(FOLDER), Path(value)
    if not isinstance(value, str):  # a location, e.g. a QdrantAddress
        value = str(value)
    scheme = value.split("://", 1)[0].lower()
    with _LOCK:
        entry = _BACKENDS.get(scheme)
    if entry is None:
        listed = ", ".join(f"{s}://..." for s in schemes())
        raise InputError(
            f"unknown index address {shown_address(value)}: give a folder or one of {listed}"
        )
    backend = _backend(entry)
    return backend, backend.locate(value)


def parse_index_address(value: str | os.PathLike[str] | Any) -> Any:
    """Return the location ``value`` names: a folder's ``Path``, or its backend's location."""
    return locate(value)[1]


def is_index_address(value: object) -> bool:
    """Tell whether ``value`` names an index by address (``SCHEME://...``), not a folder."""
    if isinstance(value, os.PathLike):
        return False
    if isinstance(value, str):
        return "://" in value
    return value is not None and "://" in str(value)  # a location a backend made


def user_index_path(value: str, *, resolve: bool = False) -> str:
    """Return an index path a user gave as it is recorded: ``~`` expanded (and resolved).

    An address is kept as given, normalised by its backend (``Path`` would fold its ``//``).
    """
    if is_index_address(value):
        return str(parse_index_address(value))
    path = Path(value).expanduser()
    return str(path.resolve() if resolve else path)


def index_location(index: object) -> str:
    """Where a loaded index lives, for messages: its address, else its directory."""
    location = getattr(index, "location", None)
    return str(location) if location else str(getattr(index, "path", "?"))


def shown_address(value: str) -> str:
    """Return an address as messages show it: the scheme and host only (it may hold a key)."""
    head, _, rest = value.partition("://")
    host = rest.split("/", 1)[0].rpartition("@")[2]
    return repr(f"{head}://{host}/..." if "/" in rest else f"{head}://{host}")
