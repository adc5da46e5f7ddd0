"""Async runs: nodes work in a thread, their LLM calls are awaited on the run's event loop.

``graph.ainvoke`` / ``astream`` run each node's one implementation in a worker
thread (search, extraction and packing are CPU work that must not hold the event
loop), with the run's reasoner wrapped in :class:`LoopReasoner`: a step that the
reasoner has an async version of (``aneeds``, ``aextract``, ``aassess``,
``aplan``, ``agenerate``) is awaited on the run's event loop, in the node's
context (so LangGraph's callbacks and stream handlers see its model calls), while
the worker thread waits for it. Steps without an async version (the offline
reasoner's, which are fast CPU work) run in the worker thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


def on_loop(loop: asyncio.AbstractEventLoop, make: Callable[[], Awaitable[T]]) -> T:
    """Await ``make()`` on ``loop`` (from another thread) in the caller's context; return its result."""
    context = contextvars.copy_context()
    done: concurrent.futures.Future[T] = concurrent.futures.Future()

    def finished(task: asyncio.Future[T]) -> None:
        if task.cancelled():
            done.cancel()
        elif task.exception() is not None:
            done.set_exception(task.exception())  # type: ignore[arg-type]
        else:
            done.set_result(task.result())

    def start() -> None:
        asyncio.ensure_future(make()).add_done_callback(finished)

    loop.call_soon_threadsafe(context.run, start)
    return done.result()


class LoopReasoner:
    """A reasoner whose async steps run on ``loop`` (see the module doc); the rest passes through."""

    def __init__(self, reasoner: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._reasoner = reasoner
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._reasoner, name)
        async_step = getattr(self._reasoner, f"a{name}", None)
        if not callable(attr) or not inspect.iscoroutinefunction(async_step):
            return attr

        def step(*args: Any, **kwargs: Any) -> Any:
            return on_loop(self._loop, lambda: async_step(*args, **kwargs))

        return step
