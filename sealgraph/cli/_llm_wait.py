"""Lines on stderr while ``ask --llm`` waits on the model, with the time left.

A model call prints one line when it starts and, while it lasts, one line every
:data:`TICK_S` seconds, so a server that accepts the connection and never answers is
seen at once and its wait is seen to be bounded.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from sealgraph.reasoning.llm.waits import LLMWait

__all__ = ["TICK_S", "WaitNotices"]

TICK_S = 10.0
"""Seconds between two "still waiting" lines of one call."""


class WaitNotices:
    """A :data:`~sealgraph.reasoning.llm.waits.WaitListener` that writes to stderr."""

    def __init__(self, write: Callable[[str], None] | None = None, tick_s: float = TICK_S) -> None:
        self._write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self._tick_s = tick_s
        self._done: dict[int, threading.Event] = {}
        self._lock = threading.Lock()

    def __call__(self, wait: LLMWait, started: bool) -> None:
        key = id(wait)
        if not started:
            with self._lock:
                done = self._done.pop(key, None)
            if done is not None:
                done.set()
            return
        done = threading.Event()
        with self._lock:
            self._done[key] = done
        self._write(
            f"sealgraph: waiting for the LLM ({wait.step}, call {wait.call}): "
            f"up to {wait.bound_s:.0f} s, then the offline reasoner answers this step"
        )
        threading.Thread(target=self._tick, args=(wait, done), daemon=True).start()

    def _tick(self, wait: LLMWait, done: threading.Event) -> None:
        while not done.wait(self._tick_s):
            self._write(
                f"sealgraph: still waiting for the LLM ({wait.step}): {wait.left():.0f} s left"
            )
