"""Old import paths of modules that moved, kept working (with a deprecation warning).

A moved module's old path is a one-line shim calling :func:`alias`: importing it
gives the module at its new path itself (the same object, so monkeypatching and
``isinstance`` behave as before), and says once where it lives now.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType

__all__ = ["alias"]


def alias(old: str, new: str, *, submodules: tuple[str, ...] = ()) -> ModuleType:
    """Make ``old`` (and ``old.<sub>`` for each of ``submodules``) name the module ``new``."""
    warnings.warn(
        f"{old} moved to {new}; import it from there (the old path will be removed)",
        DeprecationWarning,
        stacklevel=3,
    )
    module = importlib.import_module(new)
    sys.modules[old] = module
    for sub in submodules:
        sys.modules[f"{old}.{sub}"] = importlib.import_module(f"{new}.{sub}")
    return module
