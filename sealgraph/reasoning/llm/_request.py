"""What one LLM step asks for, and the book-keeping of one call of it.

:class:`StepRequest` is a step ready to ask: its messages, reply schema, checks,
how a reply becomes the step's value and how the offline reasoner does it instead
(built per call by :mod:`sealgraph.reasoning.llm._steps`). :class:`StepRun` keeps the
account of one call of it: attempts made, notes, failures, time and tokens (a fresh
one per call, since runs may be concurrent).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from sealgraph.reasoning.base import StepOutcome
from sealgraph.reasoning.llm._failures import StepFailed, excerpt

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

FEEDBACK_CHARS = 600
"""Longest excerpt of a rejected reply sent back to the model with a retry."""


@dataclass(frozen=True)
class StepRequest(Generic[M, T]):
    """What one LLM step needs: its messages, schema and checks, and how to use a reply."""

    step: str
    """The step's name (a :class:`~sealgraph.model.Step` for the built-in ones): its
    ``llm.max_tokens`` entry, and its name in notes."""
    schema: type[M]
    """The reply's pydantic schema."""
    system: str
    """The system message (the task, the reply's fields, the JSON example)."""
    user: str
    """The user message (the question and the fenced data)."""
    convert: Callable[[M], T]
    """Turns a checked reply into the step's value."""
    offline: Callable[[], StepOutcome[T]]
    """The offline reasoner's step, used when the LLM step falls back."""
    validate: Callable[[M], str | None] | None = None
    """The step's own check of a reply: what is wrong with it, None when nothing is."""
    example: dict[str, Any] | None = None
    """The prompt's JSON example: a reply that copies it is rejected."""
    stream: str | None = None
    """The question, when the reply's ``answer`` field streams as text (generate)."""
    max_tokens: int | None = None
    """The step's own token bound, used when ``llm.max_tokens`` names none for it."""


def usage(reply: Any) -> tuple[int, int]:
    """Return (prompt, completion) tokens a reply reports, (0, 0) when it reports none."""
    raw = reply.get("raw") if isinstance(reply, dict) else reply
    tokens = getattr(raw, "usage_metadata", None) or {}
    if tokens:
        return int(tokens.get("input_tokens") or 0), int(tokens.get("output_tokens") or 0)
    meta = getattr(raw, "response_metadata", None) or {}
    tokens = meta.get("token_usage") or meta.get("usage") or {}
    if not isinstance(tokens, dict):
        return 0, 0
    return int(tokens.get("prompt_tokens") or 0), int(tokens.get("completion_tokens") or 0)


@dataclass
class StepRun:
    """Book-keeping of one step call (a fresh one per call: runs may be concurrent)."""

    bound_s: float
    """Seconds the step may take, all attempts included."""
    calls_left: int | None = None
    """Calls the run may still make (``llm.max_calls`` minus what it made), None: no bound."""
    start: float = field(default_factory=time.monotonic)
    calls: int = 0
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    stop: str = ""
    """Why an attempt was not started: the step's time or the run's calls were spent."""
    circuit: str = ""
    """The permanent failure that opened the run's LLM circuit in this step."""
    method: str = ""
    """The structured output method of the reply that was used."""
    feedback: tuple[str, str] | None = None
    """(rejected reply, what was wrong with it), sent with the next attempt."""
    llm_end: float | None = None
    prompt_tokens: int = 0
    """Prompt tokens of the replies, as the server reported them (0 when it did not)."""
    completion_tokens: int = 0
    """Completion tokens of the replies, as the server reported them (0 when it did not)."""
    stream: Any = None
    """The step's :class:`~sealgraph.reasoning.stream.AnswerStream` (generate only)."""

    def count_usage(self, reply: Any) -> None:
        """Add a reply's token usage (``usage_metadata``, else ``token_usage``) to the step's."""
        prompt, completion = usage(reply)
        self.prompt_tokens += prompt
        self.completion_tokens += completion

    def left(self) -> float:
        """Seconds the step has left."""
        return self.start + self.bound_s - time.monotonic()

    def failed(self, reason: str, *, retryable: bool = True) -> StepFailed:
        """Note a failed attempt and return its failure to raise."""
        self.failures.append(reason)
        self.notes.append(f"attempt {self.calls} failed: {reason}")
        return StepFailed(reason, retryable=retryable)

    def rejected(self, reason: str, reply: str) -> StepFailed:
        """Note an unusable reply (with the reply) and tell the next attempt what was wrong."""
        self.feedback = (excerpt(reply, FEEDBACK_CHARS) if reply.strip() else "(empty)", reason)
        shown = excerpt(reply) if reply.strip() else "(empty)"
        self.failures.append(reason)
        self.notes.append(f"attempt {self.calls} failed: {reason}; reply: {shown}")
        return StepFailed(reason)

    def open_circuit(self, reason: str) -> StepFailed:
        """Note the permanent failure that opens the run's LLM circuit (not retryable)."""
        self.circuit = reason
        self.failures.append(reason)
        self.notes.append(
            f"attempt {self.calls} failed: {reason}; the LLM circuit opens: "
            "the run's remaining LLM steps use the offline reasoner, no call made"
        )
        return StepFailed(reason, retryable=False)

    def not_made(self, why: str, note: str) -> StepFailed:
        """Note an attempt that was not started (time or calls spent; not retryable)."""
        self.stop = why
        self.notes.append(f"attempt {self.calls + 1} not made: {note}")
        return StepFailed(why, retryable=False)

    def reason(self) -> str:
        """Why the step fell back: the circuit, else its last failure (and why it stopped)."""
        if self.circuit:
            return self.circuit
        last = self.failures[-1] if self.failures else (self.stop or "step deadline spent")
        return f"{last} ({self.stop})" if self.stop and self.failures else last

    def seconds(self) -> float:
        """Wall time of the step's LLM calls, rounded to the millisecond."""
        end = self.llm_end if self.llm_end is not None else time.monotonic()
        return round(end - self.start, 3)
