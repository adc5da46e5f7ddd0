"""What went wrong in an LLM call: the failure exceptions, their kind and their one-line account.

An exception raised by a model call is classified (:func:`error_kind`) into
:data:`TRANSIENT` (retry it), :data:`FINAL` (the same request fails again),
:data:`UNSUPPORTED` (the structured output method is not supported) or
:data:`PERMANENT` (nothing will work for the rest of the run), read from the names of
its exception classes and the HTTP status, so that no client library has to be
imported. :func:`describe_error` names it in one line for notes and retries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from sealgraph.reasoning.llm._http import AttemptCut, ReplyTooLarge

EXCERPT_CHARS = 200
"""Longest excerpt of an error message or a rejected reply kept in a note."""


class MethodUnavailable(Exception):
    """The chat model cannot even build a request for a structured output method."""


class StepFailed(Exception):
    """One attempt of an LLM step failed; ``retryable`` says whether another may start."""

    def __init__(self, reason: str, *, retryable: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


def retryable(exc: BaseException) -> bool:
    """Whether another attempt may follow ``exc``: only our own retryable failures."""
    # Only our own attempt failures are retried; anything else is a bug and surfaces.
    return isinstance(exc, StepFailed) and exc.retryable


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """Return ``text`` on one line, cut to ``limit`` characters (with an ellipsis)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _chain(exc: BaseException) -> list[BaseException]:
    """Return the exception and its causes, outermost first (exception chains can loop)."""
    out: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and all(cause is not e for e in out):
        out.append(cause)
        cause = cause.__cause__ or cause.__context__
    return out


def _describe_validation(cause: ValidationError) -> str:
    """One line naming what a reply got wrong: unknown keys, missing fields, the rest."""
    # Unknown keys and missing fields first, by name: what a retry must fix.
    errors = cause.errors()

    def loc(e: Any) -> str:
        return ".".join(str(p) for p in e["loc"]) or "(reply)"

    extra = [loc(e) for e in errors if e["type"] == "extra_forbidden"]
    missing = [loc(e) for e in errors if e["type"] == "missing"]
    other = [
        f"{loc(e)}: {e['msg']}" for e in errors if e["type"] not in ("extra_forbidden", "missing")
    ]
    parts = [f"unknown key(s) {', '.join(extra)}"] if extra else []
    parts += [f"missing required field(s) {', '.join(missing)}"] if missing else []
    parts += other[:3]
    more = f" (+{len(other) - 3} more)" if len(other) > 3 else ""
    return excerpt(f"{cause.title} does not match its schema: {'; '.join(parts)}{more}")


def describe_error(exc: BaseException) -> str:
    """One line naming the error: the type and a short message (validation errors per field).

    An attempt sealgraph cut itself (wall clock, reply size) is named by its own message.
    """
    cut = next((e for e in _chain(exc) if isinstance(e, AttemptCut)), None)
    if cut is not None:
        return excerpt(str(cut))
    cause = next((e for e in _chain(exc) if isinstance(e, ValidationError)), None)
    if isinstance(cause, ValidationError):
        return _describe_validation(cause)
    return excerpt(f"{type(exc).__name__}: {exc}")


# --- what kind of failure an exception is ----------------------------------------------

TRANSIENT, FINAL, UNSUPPORTED, PERMANENT = "transient", "final", "unsupported", "permanent"
"""Error kinds: retry it; do not retry this request (the same one fails again); the
structured output method is unsupported (fall through, or open the circuit); nothing
will work for the rest of the run (open the circuit)."""

_METHOD_WORDS = re.compile(
    r"response_format|json_schema|json_object|tool_choice|\btools?\b|function|grammar|structured",
    re.IGNORECASE,
)
_NOT_SUPPORTED = re.compile(
    # "Input should be 'text' or 'json_object'" (literal_error): the request validation
    # of llama-cpp-python's server, answered with HTTP 500, for an unknown response_format.
    r"input should be|literal_error|"
    r"not supported|unsupported|does ?n[o']t support|not implemented|must be one of|"
    r"requires? --|\brequires? the\b|unknown|unrecognized|not recognized|invalid|"
    r"not allowed|not permitted|not available",
    re.IGNORECASE,
)


def _names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def _status(chain: Sequence[BaseException]) -> int | None:
    for e in chain:
        status = getattr(e, "status_code", None)
        if isinstance(status, int):
            return status
    return None


def error_kind(exc: BaseException) -> str:
    """Classify an exception raised by a model call (see :data:`TRANSIENT` and friends).

    Read from the names of the exception classes (the OpenAI SDK's, httpx's and
    LangChain's provider-neutral ``Model*Error``) and the HTTP status, so that no
    client library has to be imported.
    """
    chain = _chain(exc)
    names = set().union(*(_names(e) for e in chain))
    if "MethodUnavailable" in names:
        return UNSUPPORTED
    if any(isinstance(e, ReplyTooLarge) for e in chain):
        return FINAL  # the server ignores the token bound: the same request does it again
    if names & {"TimeoutError", "ModelTimeoutError", "APITimeoutError", "TimeoutException"}:
        return TRANSIENT
    if names & {"ConnectionRefusedError", "ConnectError"}:
        return PERMANENT  # nothing listens there (or the name does not resolve)
    status = _status(chain)
    if status in (401, 403, 404) or names & {
        "ModelAuthenticationError",
        "ModelPermissionDeniedError",
        "ModelNotFoundError",
    }:
        return PERMANENT
    if status is not None and status >= 400:
        text = " ".join(str(e) for e in chain)
        if _METHOD_WORDS.search(text) and _NOT_SUPPORTED.search(text):
            return UNSUPPORTED
    if "ContextOverflowError" in names or status in (400, 413, 422):
        return FINAL
    return TRANSIENT


def permanent_reason(exc: BaseException) -> str:
    """Why nothing will work for the rest of the run, from a permanent error."""
    chain = _chain(exc)
    innermost = chain[-1]
    if set().union(*(_names(e) for e in chain)) & {"ConnectionRefusedError", "ConnectError"}:
        return f"cannot connect to the LLM server ({describe_error(innermost)})"
    status = _status(chain)
    what = {401: "the API key was rejected", 403: "access was denied", 404: "not found"}
    lead = what.get(status or 0, "the LLM server refused the request")
    return f"{lead} ({describe_error(exc)})"
