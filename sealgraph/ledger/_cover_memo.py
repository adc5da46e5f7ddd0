"""A scoped memo of need coverage, for callers that grade the same sets many times.

Fixed-k replacement scores every candidate against the evidence set, and each
score grades the hop needs of every passage of the set again: a ``chain`` need
grades the set's bridge coverage once per passage (its first hops), a candidate's
set coverage and its own coverage grade the same passage in the same context. The
hop and relation coverage functions are pure in (item, passage, context, items), so
inside :func:`coverage_memo` each such grade is computed once.

Keys are object identities (hashing passages and need items by value costs more
than the grades they would save); every keyed object is held by the memo until
the block ends, so no identity is reused while it is open. The context is keyed
as a set, narrowed to what the function reads of it: every coverage function reads
it as one (``any``, ``max``, unions), never by order or count.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from sealgraph.ledger.extract import PassageFeatures
from sealgraph.model import NeedItem

__all__ = ["ContextOf", "CoverFn", "coverage_memo", "memoised", "remember"]

CoverFn = Callable[
    [NeedItem, PassageFeatures, Sequence[PassageFeatures], Sequence[NeedItem]], float
]
"""A coverage function: ``(item, passage, context, items) -> grade``."""

T = TypeVar("T")

_MEMO: ContextVar[dict[tuple[Any, ...], tuple[Any, tuple[Any, ...]]] | None] = ContextVar(
    "sealgraph_coverage_memo", default=None
)


@contextmanager
def coverage_memo() -> Iterator[None]:
    """Memoise the hop and relation coverage grades computed inside the block.

    Nested blocks share the outermost memo. The passages, need items and the
    lexicon must not change meaning inside the block (a node's are fixed).
    """
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def remember(key: tuple[Any, ...], keep: tuple[Any, ...], compute: Callable[[], T]) -> T:
    """Return ``compute()``, once per ``key`` inside :func:`coverage_memo` (always outside).

    ``key`` holds identities (``id``) of the objects in ``keep``, which the memo holds
    until the block ends, so that no other object takes one of those identities.
    """
    memo = _MEMO.get()
    if memo is None:
        return compute()
    hit = memo.get(key)
    if hit is None:
        hit = (compute(), keep)
        memo[key] = hit
    return hit[0]


ContextOf = Callable[
    [NeedItem, PassageFeatures, Sequence[PassageFeatures], Sequence[NeedItem]],
    Sequence[PassageFeatures],
]
"""The part of its context a coverage function reads: ``(item, passage, context, items)``."""


def memoised(context_of: ContextOf | None = None) -> Callable[[CoverFn], CoverFn]:
    """Make a coverage function run once per key inside :func:`coverage_memo`.

    ``context_of`` narrows the context to the passages the grade depends on (a
    bridge read from its anchors alone is the same whatever else the set holds),
    so a grade is shared by every set that differs only elsewhere; None keys on
    the whole context.
    """

    def decorate(fn: CoverFn) -> CoverFn:
        @functools.wraps(fn)
        def wrapper(
            item: NeedItem,
            passage: PassageFeatures,
            context: Sequence[PassageFeatures],
            items: Sequence[NeedItem],
        ) -> float:
            if _MEMO.get() is None:
                return fn(item, passage, context, items)
            read = context if context_of is None else context_of(item, passage, context, items)
            return remember(
                (fn, id(item), id(passage), frozenset(map(id, read)), id(items)),
                (item, passage, tuple(read), items),
                lambda: fn(item, passage, context, items),
            )

        return wrapper

    return decorate
