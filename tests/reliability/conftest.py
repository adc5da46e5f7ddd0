"""Fixtures of the reliability suite; the helpers live in ``reliability_support``.

pytest imports every ``conftest.py`` of this rootdir-style test tree as the module
``conftest``, so ``from conftest import ...`` may find this file instead of
``tests/conftest.py``: this module re-exports the root conftest's helpers (and the
suite's own) so both spellings work.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from reliability_support import CliResult, assert_clear_error, run_cli, snapshot

_spec = importlib.util.spec_from_file_location(
    "sealgraph_tests_root_conftest", Path(__file__).resolve().parents[1] / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_root = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_root)
TINY_DOCS = _root.TINY_DOCS
HashEmbedder = _root.HashEmbedder
write_tiny_docs = _root.write_tiny_docs

__all__ = [
    "TINY_DOCS",
    "CliResult",
    "HashEmbedder",
    "assert_clear_error",
    "run_cli",
    "snapshot",
    "write_tiny_docs",
]


@pytest.fixture
def cli():
    """The :func:`reliability_support.run_cli` helper."""
    return run_cli
