"""Waiting on the model, made visible: who is told when an LLM call starts and ends.

A call to the model can take seconds (a busy server) or its whole bound (a server that
accepts the connection and never answers). A front end that shows progress (the
``ask`` command) registers a listener with :func:`listening`; every model call of the
process then reports an :class:`LLMWait` when it starts and when it ends, whatever
thread it runs on. With no listener nothing is reported and nothing costs anything.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["LLMWait", "WaitListener", "listening", "waiting"]


@dataclass(frozen=True)
class LLMWait:
    """One model call that is being waited on."""

    step: str
    """The SEAL step that called (``needs``, ``extract``, ``assess``, ``plan``, ``generate``)."""
    call: int
    """The step's call number, from 1 (retries and method probes count)."""
    bound_s: float
    """Wall-clock seconds the call may take at most: what is left of its step and run."""
    started: float
    """``time.monotonic()`` when the call started."""

    def left(self, now: float | None = None) -> float:
        """Seconds left of the call's bound at ``now`` (monotonic; default: now)."""
        at = time.monotonic() if now is None else now
        return max(0.0, self.bound_s - (at - self.started))


WaitListener = Callable[[LLMWait, bool], None]
"""Called with the call and ``True`` when it starts, ``False`` when it ended."""

_lock = threading.Lock()
_listeners: list[WaitListener] = []


@contextmanager
def listening(listener: WaitListener) -> Iterator[None]:
    """Report every model call of the process to ``listener`` while the block runs."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


@contextmanager
def waiting(step: str, call: int, bound_s: float) -> Iterator[None]:
    """Mark a model call: listeners hear when it starts and when it ends."""
    with _lock:
        listeners = list(_listeners)
    if not listeners:
        yield
        return
    wait = LLMWait(step=step, call=call, bound_s=bound_s, started=time.monotonic())
    for listener in listeners:
        listener(wait, True)
    try:
        yield
    finally:
        for listener in listeners:
            listener(wait, False)
