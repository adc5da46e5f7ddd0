"""Fixtures of the reliability suite; its helpers live in ``tests/support`` (:mod:`support.cli`)."""

from __future__ import annotations

import pytest
from support.cli import run_cli


@pytest.fixture
def cli():
    """The :func:`support.cli.run_cli` helper."""
    return run_cli
