"""The lexicon registry: lexicons known by name, and the one path a user names.

:func:`get_lexicon` finds a lexicon among the registered ones, those installed
packages declare under the ``sealgraph.lexicons`` entry-point group, and the one
``package.module:NAME`` path ``$SEALGRAPH_LEXICON`` names; it never imports what
data names. :func:`import_lexicon` imports a path the user gave. All are importable
from :mod:`sealgraph.text.lexicon`.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import threading
from typing import Any

from sealgraph.errors import ConfigError
from sealgraph.text.lexicon import _SPEC_RE, Lexicon

__all__ = [
    "ENTRY_POINT_GROUP",
    "LEXICON_ENV",
    "get_lexicon",
    "import_lexicon",
    "lexicon_spec",
    "register_lexicon",
]

_REGISTRY: dict[str, Lexicon] = {}
_REGISTRY_LOCK = threading.Lock()


def register_lexicon(lexicon: Lexicon, name: str | None = None) -> str:
    """Make ``lexicon`` known under ``name`` (default: its own name); return the name.

    Raises:
        ConfigError: Another lexicon is registered under that name.

    """
    key = name or lexicon.name
    with _REGISTRY_LOCK:
        found = _REGISTRY.get(key)
        if found is not None and found is not lexicon:
            raise ConfigError(f"another lexicon is already registered as {key!r}")
        _REGISTRY[key] = lexicon
    return key


LEXICON_ENV = "SEALGRAPH_LEXICON"
"""Environment variable naming a ``package.module:NAME`` lexicon the user trusts to import."""

ENTRY_POINT_GROUP = "sealgraph.lexicons"
"""Entry-point group through which an installed package registers lexicons by name."""


def get_lexicon(spec: str | Lexicon) -> Lexicon:
    """Return the lexicon known as ``spec``, never importing what data names.

    ``spec`` is looked up, in order, among the registered lexicons (``"english"``,
    those given to :func:`register_lexicon` or :func:`import_lexicon`), the
    lexicons installed packages declare in the ``sealgraph.lexicons`` entry-point
    group, and the one ``package.module:NAME`` path that ``$SEALGRAPH_LEXICON``
    names. A :class:`Lexicon` is returned as is. Any other ``package.module:NAME``
    path is refused, not imported: a spec read from an index manifest, a run's
    config or a served client's context is data, and data never chooses code to
    run. Code the user runs imports its own lexicon with :func:`import_lexicon`
    (``SealConfig(lexicon=...)``, ``build_index(..., lexicon=...)``, ``--lexicon``).

    Raises:
        ConfigError: Unknown name, or a path that was not made known by the user.

    """
    if isinstance(spec, Lexicon):
        return spec
    key = _spec_key(spec)
    found = _REGISTRY.get(key) or _from_entry_point(key)
    if found is not None:
        return found
    if ":" not in key:
        known = ", ".join(sorted({*_REGISTRY, *_entry_point_names()}))
        raise ConfigError(
            f"unknown lexicon {key!r}: use one of {known}, or 'package.module:NAME' naming "
            f"a sealgraph.text.lexicon.Lexicon object"
        )
    if key == os.environ.get(LEXICON_ENV, "").strip():
        return import_lexicon(key)
    raise ConfigError(
        f"lexicon {key!r} is a module path, which sealgraph imports only when you name it "
        f"yourself: pass --lexicon {key} (or set {LEXICON_ENV}={key}, or call "
        f"sealgraph.text.lexicon.import_lexicon({key!r})) if you trust that code"
    )


def import_lexicon(spec: str | Lexicon) -> Lexicon:
    """Return the lexicon ``spec`` names, importing a ``package.module:NAME`` path.

    For code the user runs and flags the user types (``SealConfig(lexicon=...)`` in
    Python, ``build_index(..., lexicon=...)``, ``--lexicon``, ``$SEALGRAPH_LEXICON``):
    the imported lexicon is registered under its path, so :func:`get_lexicon` finds
    it afterwards (an index that records the path then opens with it). Never call
    this with a spec read from data (a manifest, a served request).

    Raises:
        ConfigError: Unknown name, a path that cannot be imported, or an attribute
            that is not a :class:`Lexicon`.

    """
    if isinstance(spec, Lexicon):
        return spec
    key = _spec_key(spec)
    found = _REGISTRY.get(key) or _from_entry_point(key)
    if found is not None or ":" not in key:
        return found if found is not None else get_lexicon(key)
    if not _SPEC_RE.match(key):
        raise ConfigError(
            f"lexicon {key!r} is not a valid 'package.module:NAME' path to a Lexicon object"
        )
    module_name, attribute = key.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"lexicon {key!r}: cannot import {module_name}: {exc}") from None
    value = getattr(module, attribute, None)
    if not isinstance(value, Lexicon):
        what = "nothing" if value is None else f"a {type(value).__name__}"
        raise ConfigError(
            f"lexicon {key!r}: {module_name}.{attribute} is {what}, not a sealgraph.text.lexicon.Lexicon"
        )
    with _REGISTRY_LOCK:
        return _REGISTRY.setdefault(key, value)


def _spec_key(spec: object) -> str:
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(
            f"lexicon must be a name such as 'english' or 'package.module:NAME', got {spec!r}"
        )
    return spec.strip()


def _entry_point_names() -> list[str]:
    return [ep.name for ep in _entry_points()]


def _entry_points() -> list[Any]:
    try:
        return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
    except Exception:  # a broken distribution's metadata: no entry points, not a crash
        return []


def _from_entry_point(key: str) -> Lexicon | None:
    """Return the lexicon an installed package declares as ``key`` (loaded once), or None."""
    for ep in _entry_points():
        if ep.name != key:
            continue
        try:
            value = ep.load()
        except Exception as exc:  # the package's own import error
            raise ConfigError(
                f"lexicon {key!r}: cannot load entry point {ep.value}: {exc}"
            ) from None
        if not isinstance(value, Lexicon):
            raise ConfigError(
                f"lexicon {key!r}: entry point {ep.value} is a {type(value).__name__}, not a "
                f"sealgraph.text.lexicon.Lexicon"
            )
        with _REGISTRY_LOCK:
            return _REGISTRY.setdefault(key, value)
    return None


def lexicon_spec(lexicon: Lexicon) -> str:
    """Return the name under which ``lexicon`` can be found again (recorded by indexes).

    The registered name or the ``"package.module:NAME"`` path it was loaded from; a
    lexicon never registered is registered under its own name.
    """
    with _REGISTRY_LOCK:
        names = [k for k, v in _REGISTRY.items() if v is lexicon]
    if names:
        paths = [k for k in names if ":" in k]
        return paths[0] if paths else names[0]
    return register_lexicon(lexicon)
