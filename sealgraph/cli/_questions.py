"""Questions read from a file or standard input, for ``sealgraph ask --questions``.

Two formats, told apart by the first line that is not blank: JSON Lines (each line an
object with ``question`` and, optionally, ``id``) or plain text (one question a line).
A line that is not a usable question is kept as a :class:`QuestionLine` with its error,
so one bad line is reported and the others are still answered.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sealgraph.errors import InputError, SealgraphError

__all__ = ["QuestionLine", "read_questions"]

MAX_LINE_BYTES = 64 * 1024
"""A longer line is refused on its own (the question limit is far below it)."""


@dataclass(frozen=True)
class QuestionLine:
    """One question of the batch, or the reason its line could not be used."""

    id: str
    """The line's ``id`` (JSON Lines), else its line number as ``line N``."""
    question: str
    """The question, validated like ``ask QUESTION``'s; empty when ``error`` is set."""
    error: str = ""
    """Why the line is not a question (one line); empty when it is one."""


def read_questions(source: str) -> Iterator[QuestionLine]:
    """Yield the questions of ``source``: a file path, or ``-`` for standard input.

    Raises:
        InputError: The file cannot be read (missing, a folder, not text).

    """
    if source == "-":
        if sys.stdin is None or sys.stdin.closed:
            raise InputError("--questions -: standard input is closed")
        yield from _read(sys.stdin, "standard input")
        return
    path = Path(source)
    if path.is_dir():
        raise InputError(f"--questions {source}: is a folder; give a file of questions")
    try:
        stream = path.open(encoding="utf-8", errors="strict", newline=None)
    except OSError as exc:
        raise InputError(f"--questions {source}: cannot read it ({exc.strerror})") from None
    with stream:
        yield from _read(stream, source)


def _read(stream: IO[str], name: str) -> Iterator[QuestionLine]:
    jsonl: bool | None = None
    try:
        for number, raw in enumerate(stream, start=1):
            line = raw.strip()
            if not line:
                continue
            if jsonl is None:
                jsonl = line.startswith("{")
            yield _parse(line, number, jsonl=jsonl)
    except UnicodeDecodeError:
        raise InputError(f"--questions {name}: not UTF-8 text") from None


def _parse(line: str, number: int, *, jsonl: bool) -> QuestionLine:
    from sealgraph.nodes.search import validate_question

    default_id = f"line {number}"
    if len(line.encode("utf-8", errors="replace")) > MAX_LINE_BYTES:
        return QuestionLine(default_id, "", f"line {number} is longer than {MAX_LINE_BYTES} bytes")
    text: object = line
    qid = default_id
    if jsonl:
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            return QuestionLine(default_id, "", f"line {number} is not JSON ({exc.msg})")
        if not isinstance(item, dict):
            return QuestionLine(default_id, "", f"line {number} is not a JSON object")
        raw_id = item.get("id")
        if isinstance(raw_id, (str, int)) and str(raw_id).strip():
            qid = str(raw_id).strip()
        text = item.get("question")
    try:
        return QuestionLine(qid, validate_question(text))
    except SealgraphError as exc:
        return QuestionLine(qid, "", f"{qid}: {exc}")
