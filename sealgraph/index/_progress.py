"""Progress of a build on stderr: a bar on a terminal, plain lines in a log.

:data:`ProgressFn` is what a build reports to (``(stage, done, total)``);
:class:`_StderrProgress` is the report a build uses when its caller gives none.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import ClassVar, TextIO

from sealgraph.terminal import write_control

ProgressFn = Callable[[str, int, int], None]
"""Progress callback: ``(stage, done, total)`` with stage ``chunking`` or ``embedding``."""

_LOG_DELAY_S = 10.0  # off a terminal, a stage shorter than this prints nothing
_LOG_INTERVAL_S = 30.0  # ... and a longer one prints a line at least this often
_LOG_STEP = 0.05  # ... or whenever this much more of it is done
_LOG_MIN_GAP_S = 5.0  # ... but never twice within this


class _StderrProgress:
    """Progress on stderr for slow stages only.

    On a terminal: a one-line bar redrawn in place, with the rate and the time
    left. Otherwise (a log file, a pipe): plain lines such as
    ``sealgraph: embedding 2,560/17,440 chunks (14.7 chunks/s, ETA 16m50s)``. Once
    a stage has run ``log_delay_s``, a line is printed at every ``log_step`` of it
    or every ``log_interval_s``, whichever comes first (but never within
    ``log_min_gap_s`` of the previous one), and a last one when the stage ends; so
    short builds print nothing. The rate counts what this stage did, not what a
    resumed build found done.
    """

    _UNITS: ClassVar[dict[str, str]] = {"chunking": "documents", "embedding": "chunks"}

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        delay_s: float = 0.5,
        interval_s: float = 0.1,
        log_delay_s: float | None = None,
        log_interval_s: float | None = None,
        log_step: float | None = None,
        log_min_gap_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())
        self._delay_s = delay_s
        self._interval_s = interval_s
        # Module defaults read here, so that they can be changed (tests, a caller).
        self._log_delay_s = _LOG_DELAY_S if log_delay_s is None else log_delay_s
        self._log_interval_s = _LOG_INTERVAL_S if log_interval_s is None else log_interval_s
        self._log_step = _LOG_STEP if log_step is None else log_step
        self._log_min_gap_s = _LOG_MIN_GAP_S if log_min_gap_s is None else log_min_gap_s
        self._clock = clock
        self._stage = ""
        self._stage_start = 0.0
        self._start_done = 0
        self._last = 0.0
        self._last_done = 0
        self._printed = False
        self._width = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = self._clock()
        if stage != self._stage:
            self._stage, self._stage_start, self._start_done = stage, now, done
            self._last, self._last_done, self._printed, self._width = 0.0, done, False, 0
        if self._tty:
            self._draw_bar(stage, done, total, now)
        else:
            self._log_line(stage, done, total, now)

    def _draw_bar(self, stage: str, done: int, total: int, now: float) -> None:
        finished = done >= total
        if now - self._stage_start < self._delay_s:
            return  # quick stages never show a bar
        if not finished and now - self._last < self._interval_s:
            return
        self._last = now
        width = 30
        filled = width if total <= 0 else int(width * min(done, total) / total)
        bar = "#" * filled + "." * (width - filled)
        line = f"{stage:<10} [{bar}] {done}/{total}"
        speed = self._speed(stage, done, total, now)
        if speed:
            line += f"  {speed}"
        write_control(self._stream, "\r")
        self._stream.write(line.ljust(self._width))
        self._width = len(line)
        if finished:
            self._stream.write("\n")
        self._stream.flush()

    def _log_line(self, stage: str, done: int, total: int, now: float) -> None:
        if now - self._stage_start < self._log_delay_s:
            return  # short stages stay quiet, even when they end
        finished = done >= total
        if self._printed and not finished:
            since = now - self._last
            if since < self._log_min_gap_s:
                return
            if since < self._log_interval_s and done - self._last_done < self._log_step * total:
                return
        self._last, self._last_done, self._printed = now, done, True
        unit = self._UNITS.get(stage)
        counts = f"{done:,}/{total:,}" + (f" {unit}" if unit else "")
        speed = self._speed(stage, done, total, now)
        self._stream.write(f"sealgraph: {stage} {counts}{f' ({speed})' if speed else ''}\n")
        self._stream.flush()

    def _speed(self, stage: str, done: int, total: int, now: float) -> str:
        """Return ``14.7 chunks/s, ETA 16m50s`` (``in 19m46s`` once done); empty if unknown."""
        elapsed = now - self._stage_start
        rate = (done - self._start_done) / elapsed if elapsed > 0 else 0.0
        unit = self._UNITS.get(stage, "")
        parts = []
        if rate > 0:
            parts.append(f"{rate:.1f}" if rate < 100 else f"{rate:,.0f}")
            parts[-1] += f" {unit}/s" if unit else "/s"
        if done >= total:
            if elapsed > 0:
                parts.append(f"in {_duration(elapsed)}")
        elif rate > 0:
            parts.append(f"ETA {_duration((total - done) / rate)}")
        return ", ".join(parts)


def _duration(seconds: float) -> str:
    """Return ``45s``, ``16m50s`` or ``2h05m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
