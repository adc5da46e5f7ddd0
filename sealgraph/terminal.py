r"""Text for a terminal or a log: data is shown, never obeyed.

File names, titles, document text, answers and error messages all reach a
terminal, and any of them can come from a stranger: an ``ESC[2J`` in a file name
would clear the screen, an OSC sequence would retitle the window, and a newline
in a file name would print a forged ``sealgraph: error:`` line. :func:`printable`
shows such characters as escapes (``\u001b``, ``\n``); :class:`SafeTextStream`
applies it to everything written to a stream, which the command line does for
its standard output and error; it keeps newlines, so that a block of text stays
a block. Whatever is shown as, or inside, one line (an id, a title, a path, a
message naming them) goes through :func:`one_line`, which escapes newlines too:
one line of output is one line whatever a file name holds. The few control sequences sealgraph writes on
purpose (a progress bar's carriage return) go through :func:`write_control`.

The escapes are JSON's ``\uXXXX``, so a JSON document printed through a safe
stream stays valid JSON.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["SafeTextStream", "one_line", "printable", "safe_std_streams", "write_control"]

# C0 controls but tab and newline, DEL, C1 controls, and the Unicode characters that
# reorder or break lines on display (bidi embeddings, overrides and isolates, line
# and paragraph separators).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_UNSAFE_RE = re.compile(f"[{_CONTROLS}]")
_UNSAFE_LINE_RE = re.compile(f"[{_CONTROLS}\n]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return "\\n" if char == "\n" else f"\\u{ord(char):04x}"


def printable(text: object, *, one_line: bool = False) -> str:
    r"""Return ``text`` with every control character shown as an escape.

    Tabs and newlines are kept, unless ``one_line``: then a newline is shown as
    ``\n`` too, so one message is one line whatever a file name holds.
    """
    value = str(text)
    pattern = _UNSAFE_LINE_RE if one_line else _UNSAFE_RE
    return pattern.sub(_escape, value) if pattern.search(value) else value


def one_line(text: object) -> str:
    r"""Return ``text`` safe for one line of terminal output.

    Control characters (C0, C1, bidi controls, line separators) and newlines are
    shown as escapes (``\u001b``, ``\n``): a file name holding a newline cannot
    print a second, forged line (``sealgraph: error: ...``).
    """
    return printable(text, one_line=True)


class SafeTextStream:
    """A text stream whose :meth:`write` shows control characters as escapes.

    Everything else (``flush``, ``isatty``, ``encoding``, ``fileno``...) is the
    wrapped stream's.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` with its control characters escaped (newlines and tabs kept)."""
        return self._stream.write(printable(text))

    def writelines(self, lines: Any) -> None:
        """Write each line as :meth:`write` does."""
        for line in lines:
            self.write(line)

    def write_control(self, sequence: str) -> int:
        """Write a control sequence sealgraph itself produces, as it is."""
        return self._stream.write(sequence)

    @property
    def wrapped(self) -> TextIO:
        """The stream written to."""
        return self._stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def write_control(stream: Any, sequence: str) -> None:
    """Write a control sequence of sealgraph's own (carriage return, erase-line) to ``stream``.

    Through a :class:`SafeTextStream` it bypasses the escaping; any other stream
    takes it as it is.
    """
    raw = getattr(stream, "write_control", None)
    if callable(raw):
        raw(sequence)
    else:
        stream.write(sequence)


@contextmanager
def safe_std_streams() -> Iterator[None]:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`SafeTextStream` for a block."""
    saved = sys.stdout, sys.stderr
    if saved[0] is not None and not isinstance(saved[0], SafeTextStream):
        sys.stdout = SafeTextStream(saved[0])  # type: ignore[assignment]
    if saved[1] is not None and not isinstance(saved[1], SafeTextStream):
        sys.stderr = SafeTextStream(saved[1])  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
