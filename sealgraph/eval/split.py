"""Deterministic halves of a question set: tune on one, check on the other.

A question belongs to half ``a`` or ``b`` by the first byte of the SHA-256 of its
id (UTF-8): even is ``a``, odd is ``b``. The split depends on nothing but the id,
so a question stays in its half whatever file, order, ``--limit`` or machine it
is evaluated with, and adding questions never moves the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TypeVar

from sealgraph.errors import InputError

__all__ = ["SPLITS", "check_split", "select_split", "split_of"]

SPLITS: tuple[str, ...] = ("a", "b")
"""The two halves, as given to ``--split``."""

Q = TypeVar("Q")


def split_of(qid: str) -> str:
    """Return the half (``"a"`` or ``"b"``) of the question with id ``qid``."""
    return SPLITS[hashlib.sha256(qid.encode("utf-8")).digest()[0] % 2]


def check_split(split: str | None) -> None:
    """Raise a clear error unless ``split`` is None or one of :data:`SPLITS`.

    Raises:
        InputError: An unknown half.

    """
    if split is not None and split not in SPLITS:
        raise InputError(f"--split must be one of {', '.join(SPLITS)}, got {split!r}")


def select_split(questions: Sequence[Q], split: str | None, qid: Callable[[Q], str]) -> list[Q]:
    """Keep the questions of half ``split`` (all of them for None), in their order.

    Args:
        questions: The questions.
        split: ``"a"``, ``"b"`` or None.
        qid: Returns a question's id.

    Raises:
        InputError: An unknown half.

    """
    check_split(split)
    if split is None:
        return list(questions)
    return [q for q in questions if split_of(qid(q)) == split]
