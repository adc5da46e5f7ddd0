"""A minimal progress bar on stderr (no dependency).

On a terminal the bar redraws in place; elsewhere (CI logs, pipes) it prints a
single line when each task finishes so that logs stay readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from sealgraph.terminal import write_control

__all__ = ["ProgressBar"]

_WIDTH = 24
_REDRAW_S = 0.1
_ERASE_TO_END = "\x1b[K"  # erase the rest of the line after a redraw


class ProgressBar:
    """Counts finished items of one task and shows it on a stream.

    Args:
        total: Number of items the task will process.
        label: What is running, shown before the bar.
        stream: Where to draw (stderr by default).
        enabled: False draws nothing.

    """

    def __init__(
        self, total: int, label: str, *, stream: TextIO | None = None, enabled: bool = True
    ) -> None:
        self.total = max(total, 0)
        self.label = label
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = enabled
        self._interactive = enabled and bool(getattr(self._stream, "isatty", lambda: False)())
        self._started = time.perf_counter()
        self._last_draw = 0.0
        if self._interactive:
            self._draw()

    def advance(self, n: int = 1) -> None:
        """Mark ``n`` more items as finished."""
        self.done = min(self.done + n, self.total)
        now = time.perf_counter()
        if self._interactive and (now - self._last_draw >= _REDRAW_S or self.done == self.total):
            self._draw()

    def close(self) -> None:
        """Finish the bar: one final line with the elapsed time."""
        if not self._enabled:
            return
        elapsed = time.perf_counter() - self._started
        line = f"{self._line()} {elapsed:.1f}s"
        if self._interactive:
            write_control(self._stream, "\r")
            self._stream.write(line)
            write_control(self._stream, _ERASE_TO_END)
            self._stream.write("\n")
        else:
            self._stream.write(line + "\n")
        self._stream.flush()

    def _line(self) -> str:
        share = self.done / self.total if self.total else 1.0
        filled = round(share * _WIDTH)
        bar = "#" * filled + "-" * (_WIDTH - filled)
        return f"{self.label} [{bar}] {self.done}/{self.total}"

    def _draw(self) -> None:
        self._last_draw = time.perf_counter()
        write_control(self._stream, "\r")
        self._stream.write(self._line())
        write_control(self._stream, _ERASE_TO_END)
        self._stream.flush()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is None:
            self.close()
        elif self._interactive:
            self._stream.write("\n")  # keep the error message off the bar's line
            self._stream.flush()
