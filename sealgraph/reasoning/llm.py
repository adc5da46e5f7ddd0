"""The LLM reasoner: schema-checked LLM calls, bounded in time and calls, with offline fallback.

Each SEAL step makes one call per loop when the model answers well (extraction is
batched over the new passages): one call reads the question's needs before the
search, then extract, assess and plan each loop, and generate once. Need support
for packing costs no call of its own: the assess reply names the passages that
support the needs.

**Messages.** Each step sends a short system message (the task, the reply's fields,
a one-line JSON example with placeholder values) and a user message holding the
question and the fenced data (``sealgraph/prompts/<step>.md``). For JSON mode and
plain completions the system message also carries the reply's compact JSON schema.

**Structured output that adapts.** ``llm.structured_output_method = auto`` (the
default) first asks the way the chat model class does by default (``json_schema``
for ``ChatOpenAI``), then falls through function_calling → json_schema → json_mode
→ plain when the server answers that a method is unsupported (HTTP 4xx/5xx whose
message says so: ``response_format type must be one of "text" or "json_object"``,
``tools param requires --jinja flag``, ...) or when the reply holds no JSON at all.
The method that answers with JSON is remembered per (base_url, model) for the
reasoner's lifetime, shared by its runs, and noted in the trace when it took a
probe to find. Whatever the method, the reply is read the same way (a tool call's
arguments, else the one JSON object in its text, code fences and prose around it
allowed) and validated against its pydantic schema, which forbids unknown keys: a
reply that does not validate (``{"totally": "wrong"}``, ``{}``, plain text) is a
failure, never an empty extraction or plan.

**Retries that tell.** A rejected reply is retried (``llm.retries``) with two more
messages: the reply as the model wrote it (truncated), then what was wrong with it.
A timeout or a passing server error is retried as it was. A permanent failure (a
refused connection, a rejected key, a missing model, a server that supports no
method) is not retried: it opens the run's LLM circuit (:attr:`StepOutcome.circuit`,
kept in the graph state as ``llm_circuit``), and every later step of that run falls
back without a call. The trace keeps each rejected reply (truncated) in its note and
counts one fallback per step.

**Bounded cost.** Each request carries the step's ``llm.max_tokens.<step>`` (as
``max_tokens`` for a server with a base URL, see ``llm.max_tokens_param``); a run
makes at most ``llm.max_calls`` calls (probes and retries included; the graph
state's ``llm_calls`` counts them); and time is bounded at two levels (see
:class:`~sealgraph.config.LLMConfig`): a step, all its attempts included, gets at
most ``step_bound_s`` and never more than what the run has left of ``deadline_s``
(``time_left``, kept in the graph state); each HTTP attempt ends, by wall clock,
when what was left of the step is spent, whatever the server does (a body trickled
a byte at a time included), and each of its socket reads waits ``timeout_s`` at
most. When the run's time or calls are spent, steps fall back without making a call.

**Bounded replies.** A reply is bounded by its own size, not by the ``usage`` the
server reports: its HTTP body may hold at most
``min(64 KiB + 1 KiB × llm.max_tokens.<step>, 8 MiB)`` (8 MiB for a step without a
token bound; :func:`~sealgraph.reasoning._http.reply_byte_bound`). Reading stops
as soon as a body grows past it, so a 50 MB reply is never held, and the step
falls back ("reply too large", not retried: the server ignores the token bound).
Both bounds live in the HTTP clients the reasoner gives ``ChatOpenAI``
(:mod:`sealgraph.reasoning._http`).

One step is one LangChain chain built per call: the attempt (model calls, schema
and sanity checks) ``.with_retry`` for ``LLMConfig.retries`` more attempts, then
``.with_fallbacks`` to the offline reasoner, which does that step instead; the
outcome says so (and why), so the graph logs the fallback.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Generic, Literal, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda, ensure_config
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sealgraph.config import LLMConfig
from sealgraph.errors import ConfigError
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import Gap, NeedItem
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger, Facts, Provenance, Qualifier, Relation
from sealgraph.ledger.needs import (
    MAX_HOPS,
    NeedEntity,
    QuestionNeeds,
    linked_docs,
    relation_words,
)
from sealgraph.prompts import fence, passages_block, prompt_example, prompt_messages, unfence
from sealgraph.reasoning._http import (
    AttemptCut,
    ReplyTooLarge,
    attempt_limits,
    guard_client,
    guarded_clients,
    reply_byte_bound,
)
from sealgraph.reasoning.answer import SpanText
from sealgraph.reasoning.base import (
    FELL_BACK,
    GeneratedAnswer,
    LLMBudget,
    StepOutcome,
    Verdict,
)
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.reasoning.stream import AnswerStream, AsyncAnswerStream, internal, with_callback
from sealgraph.repair.microqueries import MicroQuery
from sealgraph.text.names import content_words, normalize_name
from sealgraph.types import Chunk

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

MIN_ATTEMPT_S = 0.05
"""An attempt is not started with less step time left than this: it could not finish."""
EXCERPT_CHARS = 200
"""Longest excerpt of an error message or a rejected reply kept in a note."""
FEEDBACK_CHARS = 600
"""Longest excerpt of a rejected reply sent back to the model with a retry."""
RUN_DEADLINE_SPENT = "run deadline spent"
"""Fallback reason of a step started after the run's ``llm.deadline_s`` was used up."""
MAX_CALLS_SPENT = "llm.max_calls spent"
"""Fallback reason of a step started (or cut short) once the run's ``llm.max_calls`` were made."""
CIRCUIT_OPEN = "LLM circuit open"
"""Prefix of the fallback reason of a step started after the run's LLM circuit opened."""
METHODS = ("function_calling", "json_schema", "json_mode", "plain")
"""Structured output methods in the order ``auto`` falls through them (after the
chat model's own default method, which it tries first)."""


class _Reply(BaseModel):
    # Every reply model: unknown keys are an error (a schema-invalid reply must not
    # pass as an empty one), and no field has a default, so {} never validates. The
    # answer is the one exception: its citations may come as [n] markers instead.
    model_config = ConfigDict(extra="forbid")


class ExtractedEntity(_Reply):
    """An entity named in a passage."""

    name: str = Field(description="Canonical name")
    aliases: list[str] = Field(description="Other names used in the passage (may be empty)")
    passage: int = Field(description="Number of the passage it comes from")


class ExtractedRelation(_Reply):
    """A (subject, relation, object) triple."""

    subject: str
    relation: str
    object: str
    passage: int


class ExtractedQualifier(_Reply):
    """A date, number or place attached to an entity."""

    entity: str
    type: Literal["date", "number", "place"]
    value: str
    passage: int


class Extraction(_Reply):
    """Facts read from a batch of passages (empty lists when there is nothing)."""

    entities: list[ExtractedEntity]
    relations: list[ExtractedRelation]
    qualifiers: list[ExtractedQualifier]


class NeedsReading(_Reply):
    """What a question asks for, read before any search (maps onto ``QuestionNeeds``)."""

    answer_type: Literal["person", "date", "number", "place", "yes_no", "choice", "other"]
    hops: int = Field(description="Facts to chain to reach the answer, 1 to 4")
    structure: Literal["single", "bridge", "comparison", "multi_step"]
    entities: list[str] = Field(description="Names the question itself names, as written")
    options: list[str] = Field(description="The options a choice question names (else empty)")
    answer_modifiers: list[str] = Field(
        description="Names among entities that only describe the answer (may be empty)"
    )
    compared_attribute: str = Field(description='What a comparison compares, "" when none')


class GapOut(_Reply):
    """One missing piece of evidence."""

    kind: Literal["missing_entity", "missing_relation", "missing_qualifier"]
    entity: str
    relation: str = Field(description='The relation asked for, "" when none')
    qualifier: Literal["date", "number", "place"] | None = Field(
        description="The qualifier asked for, null when none"
    )
    reason: str


class Assessment(_Reply):
    """The sufficiency gate's verdict (no gaps when sufficient)."""

    sufficient: bool
    gaps: list[GapOut]
    supporting: list[int] = Field(
        description="Numbers of the passages holding evidence the answer needs (may be empty)"
    )


class QueryOut(_Reply):
    """One micro-query."""

    text: str = Field(description="Short atomic query naming one entity and one relation")
    entity: str = Field(description="The entity the query is anchored on")
    gap_kind: Literal["missing_entity", "missing_relation", "missing_qualifier"]


class QueryPlan(_Reply):
    """Micro-queries for the open gaps (empty when none is needed)."""

    queries: list[QueryOut]


class AnswerOut(_Reply):
    """A cited answer."""

    # The one answer contract: citations as [n] markers in the text, in the list, or
    # both; the numbers are read from both and checked once against the packed spans
    # (LLMReasoner.generate).

    answer: str = Field(description="Short answer with an [n] citation after each claim")
    citations: list[int] = Field(
        default_factory=list,
        description="Numbers of the passages cited (may be left out when the answer has [n])",
    )
    insufficient: bool = Field(
        default=False, description="True when the context does not hold the answer"
    )


_MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")


def cited_numbers(answer: AnswerOut) -> set[int]:
    """Return the passage numbers an answer cites: its ``[n]`` markers and its citations list."""
    marked = {int(n) for m in _MARKER.finditer(answer.answer) for n in re.split(r"[,;]", m[1])}
    return marked | set(answer.citations)


def chat_model_from_config(config: LLMConfig):
    """Build ``ChatOpenAI`` for any OpenAI-compatible server from :class:`LLMConfig`.

    Its HTTP clients are guarded (:func:`~sealgraph.reasoning._http.guarded_clients`):
    each attempt is bounded by wall clock and its reply by size.
    """
    import os

    from langchain_openai import ChatOpenAI

    key = os.environ.get(config.api_key_env)
    if not key and config.base_url is None:
        raise ConfigError(
            f"LLM mode needs an API key in ${config.api_key_env} (or set llm.base_url "
            "for a local OpenAI-compatible server)"
        )
    http_client, http_async_client = guarded_clients()
    return ChatOpenAI(
        model=config.model,
        base_url=config.base_url,
        api_key=key or "not-needed",
        temperature=config.temperature,
        timeout=config.timeout_s,
        max_retries=0,  # retries are ours, so every attempt is counted, bounded and logged
        http_client=http_client,
        http_async_client=http_async_client,
    )


def _openai_chat_class() -> type | None:
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # pragma: no cover - langchain-openai is a dependency
        return None
    return BaseChatOpenAI


_SDK_CLIENTS = ("client", "async_client", "root_client", "root_async_client")


def _prepared_model(model: Any) -> Any:
    """Return ``model`` ready for bounded attempts (a copy when it was not).

    For a ``ChatOpenAI``: the OpenAI SDK's own retries off (the SDK retries
    timeouts and 5xx replies itself, twice by default, each retry with the full
    timeout, which would multiply a step's time behind our back), and HTTP
    clients whose transports bound each attempt by wall clock and its reply by
    size (:mod:`sealgraph.reasoning._http`). Clients the user gave the model are
    guarded in place (requests outside an attempt pass through unchanged); missing
    ones are made. The copy is rebuilt from the model's fields, as LangChain's
    configurable fields do, minus the SDK clients, so that they are rebuilt.
    """
    cls = _openai_chat_class()
    if cls is None or not isinstance(model, cls):
        return model
    given = {"http_client": model.http_client, "http_async_client": model.http_async_client}
    for name, client in given.items():
        if client is not None and not guard_client(client):
            log.warning(
                "the %s given to the chat model is not an httpx client sealgraph can guard: "
                "LLM attempts through it are bounded by its timeouts only",
                name,
            )
    if model.max_retries == 0 and all(c is not None for c in given.values()):
        return model
    fields = {
        k: v
        for k, v in model.__dict__.items()
        if k in type(model).model_fields and k not in _SDK_CLIENTS
    }
    if any(c is None for c in given.values()):
        proxy = fields.get("openai_proxy") or None
        made = dict(zip(given, guarded_clients(proxy=proxy), strict=True))
        fields.update({k: v if v is not None else made[k] for k, v in given.items()})
        if "openai_proxy" in fields:  # carried by the clients made (ChatOpenAI takes one)
            fields["openai_proxy"] = None
    return type(model)(**{**fields, "max_retries": 0})


def _native_method(model: Any) -> str:
    """Return the structured output method the chat model class uses by default.

    ``ChatOpenAI`` defaults to ``json_schema`` (the server constrains generation to
    the schema, the surest way for a small model); a model whose
    ``with_structured_output`` has no ``method`` (LangChain's base class) calls tools.
    """
    try:
        param = inspect.signature(type(model).with_structured_output).parameters.get("method")
    except (AttributeError, TypeError, ValueError):
        param = None
    default = getattr(param, "default", None)
    return default if default in METHODS else "function_calling"


class MethodUnavailable(Exception):
    """The chat model cannot even build a request for a structured output method."""


class StepFailed(Exception):
    """One attempt of an LLM step failed; ``retryable`` says whether another may start."""

    def __init__(self, reason: str, *, retryable: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


def _retryable(exc: BaseException) -> bool:
    # Only our own attempt failures are retried; anything else is a bug and surfaces.
    return isinstance(exc, StepFailed) and exc.retryable


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
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


def _describe_error(exc: BaseException) -> str:
    """One line naming the error: the type and a short message (validation errors per field).

    An attempt sealgraph cut itself (wall clock, reply size) is named by its own message.
    """
    cut = next((e for e in _chain(exc) if isinstance(e, AttemptCut)), None)
    if cut is not None:
        return _excerpt(str(cut))
    cause = next((e for e in _chain(exc) if isinstance(e, ValidationError)), None)
    if isinstance(cause, ValidationError):
        # Unknown keys and missing fields first, by name: what a retry must fix.
        errors = cause.errors()

        def loc(e: Any) -> str:
            return ".".join(str(p) for p in e["loc"]) or "(reply)"

        extra = [loc(e) for e in errors if e["type"] == "extra_forbidden"]
        missing = [loc(e) for e in errors if e["type"] == "missing"]
        other = [
            f"{loc(e)}: {e['msg']}"
            for e in errors
            if e["type"] not in ("extra_forbidden", "missing")
        ]
        parts = [f"unknown key(s) {', '.join(extra)}"] if extra else []
        parts += [f"missing required field(s) {', '.join(missing)}"] if missing else []
        parts += other[:3]
        more = f" (+{len(other) - 3} more)" if len(other) > 3 else ""
        return _excerpt(f"{cause.title} does not match its schema: {'; '.join(parts)}{more}")
    return _excerpt(f"{type(exc).__name__}: {exc}")


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


def _error_kind(exc: BaseException) -> str:
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


def _permanent_reason(exc: BaseException) -> str:
    """Why nothing will work for the rest of the run, from a permanent error."""
    chain = _chain(exc)
    innermost = chain[-1]
    if set().union(*(_names(e) for e in chain)) & {"ConnectionRefusedError", "ConnectError"}:
        return f"cannot connect to the LLM server ({_describe_error(innermost)})"
    status = _status(chain)
    what = {401: "the API key was rejected", 403: "access was denied", 404: "not found"}
    lead = what.get(status or 0, "the LLM server refused the request")
    return f"{lead} ({_describe_error(exc)})"


# --- reading a reply ---------------------------------------------------------------------


_PLACEHOLDER = re.compile(r"\b[A-Z]{4,}\b")


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _placeholder_in(data: Any, example: dict[str, Any]) -> bool:
    """Whether a reply writes a placeholder of the prompt's example ("ANSWER", "ENTITY").

    Small models echo the example with a detail changed ("ANSWER, as passage 2 states
    [1]."), which an exact comparison misses; the example's capitalised placeholder
    words never belong in a real reply.
    """
    placeholders = {w for text in _strings(example) for w in _PLACEHOLDER.findall(text)}
    return bool(placeholders) and any(
        w in placeholders for text in _strings(data) for w in _PLACEHOLDER.findall(text)
    )


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Return the JSON objects written in ``text`` (prose and code fences around them allowed)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1 and len(found) < 8:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        i = text.find("{", end)
    return found


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(
            b if isinstance(b, str) else str(b.get("text", "")) if isinstance(b, dict) else ""
            for b in content
        )
    return "" if content is None else str(content)


@dataclass
class _Read:
    """What one reply holds: the JSON object found in it, and the text it was read from."""

    data: dict[str, Any] | None
    """The reply's JSON object (a tool call's arguments, else the one in its text)."""
    text: str
    """The reply as the model wrote it (tool-call arguments or content), for notes."""
    parsed: BaseModel | None = None
    """An instance the model's runnable returned itself (no raw message to read)."""
    cut: bool = False
    """True when generation stopped at the token bound (``finish_reason: length``)."""


def _read_reply(reply: Any, schema: type[BaseModel]) -> _Read:
    """Read a reply of any method.

    A ``with_structured_output(include_raw=True)`` dict, a plain ``AIMessage``, or
    what a model's own runnable returned (an instance, a dict).
    """
    if isinstance(reply, dict) and "raw" in reply:
        raw, given = reply.get("raw"), reply.get("parsed")
    elif isinstance(reply, BaseMessage):
        raw, given = reply, None
    elif isinstance(reply, schema):
        return _Read(None, reply.model_dump_json(), parsed=reply)
    elif isinstance(reply, dict):
        return _Read(reply, json.dumps(reply, ensure_ascii=False))
    else:
        return _Read(None, "" if reply is None else str(reply))
    meta = getattr(raw, "response_metadata", None) or {}
    cut = meta.get("finish_reason") == "length"
    for call in getattr(raw, "tool_calls", None) or []:
        args = call.get("args")
        if isinstance(args, dict):
            return _Read(args, json.dumps(args, ensure_ascii=False), cut=cut)
    for call in getattr(raw, "invalid_tool_calls", None) or []:
        args = call.get("args")
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        objects = _json_objects(text or "")
        return _Read(_pick(objects, schema), text or "", cut=cut)
    text = _content_text(getattr(raw, "content", raw))
    data = _pick(_json_objects(text), schema)
    if data is None and isinstance(given, schema):
        return _Read(None, text, parsed=given, cut=cut)
    return _Read(data, text, cut=cut)


def _usage(reply: Any) -> tuple[int, int]:
    """Return (prompt, completion) tokens a reply reports, (0, 0) when it reports none."""
    raw = reply.get("raw") if isinstance(reply, dict) else reply
    usage = getattr(raw, "usage_metadata", None) or {}
    if usage:
        return int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    meta = getattr(raw, "response_metadata", None) or {}
    usage = meta.get("token_usage") or meta.get("usage") or {}
    if not isinstance(usage, dict):
        return 0, 0
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def _pick(objects: Sequence[dict[str, Any]], schema: type[BaseModel]) -> dict[str, Any] | None:
    """Return the first object that validates against ``schema``, else the first one (or None)."""
    for obj in objects:
        try:
            schema.model_validate(obj)
        except ValidationError:
            continue
        return obj
    return objects[0] if objects else None


def _validate(data: dict[str, Any], schema: type[M]) -> M:
    """Validate ``data``; a reply wrapped in one key (``{"Extraction": {...}}``) is unwrapped."""
    try:
        return schema.model_validate(data)
    except ValidationError:
        if len(data) == 1:
            (inner,) = data.values()
            if isinstance(inner, dict):
                try:
                    return schema.model_validate(inner)
                except ValidationError:
                    pass
        raise


def _compact(node: Any) -> Any:
    # Titles repeat the names; an object's own description is the class docstring.
    if isinstance(node, dict):
        drop = {"title"} | ({"description"} if "properties" in node else set())
        return {k: _compact(v) for k, v in node.items() if not (k in drop and isinstance(v, str))}
    if isinstance(node, list):
        return [_compact(v) for v in node]
    return node


@cache
def schema_hint(schema: type[BaseModel]) -> str:
    """Return the line giving JSON mode and plain completions the reply's compact JSON schema."""
    compact = json.dumps(_compact(schema.model_json_schema()), separators=(",", ":"))
    return f"Reply with JSON only: one JSON object that follows this JSON schema: {compact}"


# --- one step's book-keeping ---------------------------------------------------------------


@dataclass
class _StepRun:
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
        prompt, completion = _usage(reply)
        self.prompt_tokens += prompt
        self.completion_tokens += completion

    def left(self) -> float:
        return self.start + self.bound_s - time.monotonic()

    def failed(self, reason: str, *, retryable: bool = True) -> StepFailed:
        self.failures.append(reason)
        self.notes.append(f"attempt {self.calls} failed: {reason}")
        return StepFailed(reason, retryable=retryable)

    def rejected(self, reason: str, reply: str) -> StepFailed:
        """Note an unusable reply (with the reply) and tell the next attempt what was wrong."""
        self.feedback = (_excerpt(reply, FEEDBACK_CHARS) if reply.strip() else "(empty)", reason)
        shown = _excerpt(reply) if reply.strip() else "(empty)"
        self.failures.append(reason)
        self.notes.append(f"attempt {self.calls} failed: {reason}; reply: {shown}")
        return StepFailed(reason)

    def open_circuit(self, reason: str) -> StepFailed:
        self.circuit = reason
        self.failures.append(reason)
        self.notes.append(
            f"attempt {self.calls} failed: {reason}; the LLM circuit opens: "
            "the run's remaining LLM steps use the offline reasoner, no call made"
        )
        return StepFailed(reason, retryable=False)

    def not_made(self, why: str, note: str) -> StepFailed:
        self.stop = why
        self.notes.append(f"attempt {self.calls + 1} not made: {note}")
        return StepFailed(why, retryable=False)

    def reason(self) -> str:
        if self.circuit:
            return self.circuit
        last = self.failures[-1] if self.failures else (self.stop or "step deadline spent")
        return f"{last} ({self.stop})" if self.stop and self.failures else last

    def seconds(self) -> float:
        end = self.llm_end if self.llm_end is not None else time.monotonic()
        return round(end - self.start, 3)


@dataclass(frozen=True)
class _Step(Generic[M, T]):
    """What one LLM step needs: its messages, schema and checks, and how to use a reply."""

    name: str
    """The step (``needs``, ``extract``, ``assess``, ``plan``, ``generate``): its
    ``llm.max_tokens`` entry."""
    schema: type[M]
    system: str
    user: str
    convert: Callable[[M], T]
    offline: Callable[[], StepOutcome[T]]
    validate: Callable[[M], str | None] | None = None
    example: dict[str, Any] | None = None
    """The prompt's JSON example: a reply that copies it is rejected."""
    stream: str | None = None
    """The question, when the reply's ``answer`` field streams as text (generate)."""


@dataclass
class _MethodMemory:
    """What the reasoner learnt about one (base_url, model)'s structured output methods."""

    working: str | None = None
    """The method whose reply held JSON (used first from then on)."""
    unsupported: dict[str, str] = field(default_factory=dict)
    """Method → the server's error saying it is unsupported (never tried again)."""
    unparsable: set[str] = field(default_factory=set)
    """Methods whose reply held no JSON while none worked yet (tried last)."""


class LLMReasoner:
    """Reasoner backed by a LangChain chat model, falling back to :class:`OfflineReasoner`.

    Args:
        model: Any LangChain chat model supporting ``with_structured_output``. A
            ``ChatOpenAI`` gets the OpenAI SDK's own retries turned off (ours are
            counted and bounded), guarded HTTP clients (each attempt ends by wall
            clock with what is left of its step; a reply past its byte bound is cut
            as it is read), a per-request timeout and the step's token bound; other
            models must bound their own calls and output.
        config: Retries, timeouts, deadlines, token bounds and the structured-output method.

    """

    name = "llm"
    streams_answer = True
    """The generate step streams its answer (:mod:`sealgraph.reasoning.stream`)."""

    def __init__(self, model: Any, config: LLMConfig | None = None) -> None:
        self.model = _prepared_model(model)
        self.config = config or LLMConfig()
        self.offline = OfflineReasoner()
        cls = _openai_chat_class()
        self._openai = cls is not None and isinstance(self.model, cls)
        base = getattr(self.model, "openai_api_base", None)
        name = getattr(self.model, "model_name", None) or getattr(self.model, "model", None)
        self._key = (str(base or ""), str(name or type(self.model).__name__))
        where = f"at {base}" if base else "(OpenAI API)" if self._openai else ""
        self._model_desc = " ".join(p for p in (f"model {self._key[1]!r}", where) if p)
        native = _native_method(self.model)
        self._order = (native, *(m for m in METHODS if m != native))
        self._methods: dict[tuple[str, str], _MethodMemory] = {}
        self._lock = threading.Lock()
        param = self.config.max_tokens_param
        if param == "auto":  # the OpenAI API reads max_completion_tokens; other servers max_tokens
            other_server = bool(base) and "api.openai.com" not in str(base)
            param = "max_tokens" if other_server else "max_completion_tokens"
        self._max_tokens_param = param

    # --- structured output methods -------------------------------------------------------

    @property
    def _auto(self) -> bool:
        return self.config.structured_output_method == "auto"

    def structured_output_method(self) -> str | None:
        """Return the method remembered for this reasoner's model (None before one answered)."""
        if not self._auto:
            return self.config.structured_output_method
        with self._lock:
            memory = self._methods.get(self._key)
            return memory.working if memory else None

    def _candidates(self) -> list[str]:
        """Return the methods one attempt may try, in order (``auto``), or the configured one."""
        if not self._auto:
            return [self.config.structured_output_method]
        with self._lock:
            memory = self._methods.setdefault(self._key, _MethodMemory())
            order = list(self._order)
            if memory.working:
                order.remove(memory.working)
                order.insert(0, memory.working)
            order = [m for m in order if m not in memory.unsupported]
            if not memory.working:
                fresh = [m for m in order if m not in memory.unparsable]
                order = fresh or order[-1:]
            return order

    def _confirmed(self, method: str) -> bool:
        with self._lock:
            memory = self._methods.get(self._key)
            return memory is not None and memory.working == method

    def _learn(self, method: str, *, unsupported: str = "", unparsable: bool = False) -> None:
        with self._lock:
            memory = self._methods.setdefault(self._key, _MethodMemory())
            if unsupported:
                memory.unsupported[method] = unsupported
                if memory.working == method:
                    memory.working = None
            elif unparsable:
                memory.unparsable.add(method)

    def _remember(self, method: str, run: _StepRun, probed: bool) -> None:
        """Remember the method whose reply held JSON; note it when it took a probe to find."""
        with self._lock:
            memory = self._methods.setdefault(self._key, _MethodMemory())
            if memory.working == method:
                return
            memory.working = method
            memory.unparsable.discard(method)
            skipped = dict(memory.unsupported)
        log.info("structured output: %s works for %s (remembered)", method, self._model_desc)
        if probed or skipped:
            run.notes.append(
                f"structured output: {method} works for {self._model_desc}; remembered "
                "for the following steps (llm.structured_output_method=auto)"
            )

    # --- the chain of one step -----------------------------------------------------------

    def _request_kwargs(self, step: str, timeout_s: float) -> dict[str, Any]:
        """Per-request settings for a ``ChatOpenAI``: the timeout and the step's token bound.

        The OpenAI SDK takes a per-request timeout: the attempt gets the step's
        remaining time, not the client's fixed one. ``ChatOpenAI`` sends a
        ``max_tokens`` binding as ``max_completion_tokens``; for servers that only
        read ``max_tokens`` it goes in the request body as such (``extra_body``).
        """
        if not self._openai:
            return {}
        kwargs: dict[str, Any] = {"timeout": timeout_s}
        bound = getattr(self.config.max_tokens, step)
        if bound is not None:
            if self._max_tokens_param == "max_tokens":
                own = getattr(self.model, "extra_body", None) or {}
                kwargs["extra_body"] = {**own, "max_tokens": bound}
            else:
                kwargs["max_tokens"] = bound
        return kwargs

    def _runnable(
        self,
        run: _StepRun,
        method: str,
        step: _Step[M, T],
        timeout_s: float,
        config: RunnableConfig,
    ) -> tuple[Runnable, RunnableConfig]:
        """Return the model call of one attempt, and its config.

        The call is tagged ``nostream`` (its JSON is not answer text; see
        :mod:`sealgraph.reasoning.stream`); the generate step's call also carries
        the step's answer stream.
        """
        kwargs = self._request_kwargs(step.name, timeout_s)
        if method == "plain":
            runnable: Runnable = self.model.bind(**kwargs) if kwargs else self.model
        else:
            try:
                # ChatOpenAI forwards extra with_structured_output kwargs into the request.
                runnable = self.model.with_structured_output(
                    step.schema, method=method, include_raw=True, **kwargs
                )
            except (NotImplementedError, TypeError, ValueError) as exc:
                raise MethodUnavailable(f"{type(exc).__name__}: {exc}") from exc
        config = internal(config)
        if run.stream is not None:
            config = with_callback(config, run.stream)
        return runnable, config

    def _limits(self, step: _Step[M, T], seconds: float):
        """Set the attempt's wall-clock and size bounds for the HTTP clients while it runs."""
        bound = getattr(self.config.max_tokens, step.name, None)
        return attempt_limits(seconds, reply_byte_bound(bound), step=step.name, max_tokens=bound)

    def _call(
        self,
        run: _StepRun,
        step: _Step[M, T],
        request: tuple[str, Any, float, float],
        config: RunnableConfig,
    ) -> Any:
        """Call the model: the one sync call point (:meth:`_acall` is the async one)."""
        method, messages, timeout_s, seconds = request
        runnable, config = self._runnable(run, method, step, timeout_s, config)
        with self._limits(step, seconds):
            return runnable.invoke(messages, config)

    async def _acall(
        self,
        run: _StepRun,
        step: _Step[M, T],
        request: tuple[str, Any, float, float],
        config: RunnableConfig,
    ) -> Any:
        """Await the model (``ainvoke``): the one async call point."""
        method, messages, timeout_s, seconds = request
        runnable, config = self._runnable(run, method, step, timeout_s, config)
        with self._limits(step, seconds):
            return await runnable.ainvoke(messages, config)

    def _messages(
        self, step: _Step[M, T], method: str, feedback: tuple[str, str] | None
    ) -> list[BaseMessage]:
        """System and user message; JSON mode and plain get the schema; a retry, the feedback."""
        system = step.system
        if method in ("json_mode", "plain"):
            system = f"{system}\n\n{schema_hint(step.schema)}"
        messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(step.user)]
        if feedback is not None:
            reply, problem = feedback
            messages += [
                AIMessage(reply),
                HumanMessage(
                    f"That reply was rejected: {problem}. Reply again with one JSON object "
                    "as described above, with this corrected."
                ),
            ]
        return messages

    def _attempt(self, run: _StepRun, step: _Step[M, T], config: RunnableConfig) -> M:
        """One attempt, calling the model with :meth:`_call` (see :meth:`_attempts`)."""
        attempts = self._attempts(run, step)
        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                request = attempts.throw(error) if error else attempts.send(reply)
            except StopIteration as done:
                return done.value
            try:
                reply, error = self._call(run, step, request, config), None
            except Exception as exc:  # thrown into the attempt, which handles it
                reply, error = None, exc

    async def _aattempt(self, run: _StepRun, step: _Step[M, T], config: RunnableConfig) -> M:
        """One attempt, awaiting the model with :meth:`_acall` (see :meth:`_attempts`)."""
        attempts = self._attempts(run, step)
        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                request = attempts.throw(error) if error else attempts.send(reply)
            except StopIteration as done:
                return done.value
            try:
                reply, error = await self._acall(run, step, request, config), None
            except Exception as exc:  # thrown into the attempt, which handles it
                reply, error = None, exc

    def _attempts(
        self, run: _StepRun, step: _Step[M, T]
    ) -> Generator[tuple[str, list[BaseMessage], float, float], Any, M]:
        """One attempt: call (trying methods in turn under ``auto``) and check the reply.

        Raise :class:`StepFailed` when it is unusable; a permanent failure opens the
        circuit (not retryable). The logic is written once, for sync and async runs:
        each model call is yielded as ``(method, messages, timeout_s, seconds)`` (the
        socket timeout, and the attempt's wall-clock bound: what is left of the step,
        itself never more than what is left of the run), the caller
        (:meth:`_attempt` or :meth:`_aattempt`) makes it and sends the reply back, or
        throws the call's exception in.
        """
        methods = self._candidates()
        if not methods:
            with self._lock:
                why = "; ".join(
                    f"{m}: {e}" for m, e in self._methods[self._key].unsupported.items()
                )
            raise run.open_circuit(f"the server supports no structured output method ({why})")
        for i, method in enumerate(methods):
            last = i == len(methods) - 1
            left = run.left()
            if left < MIN_ATTEMPT_S:
                raise run.not_made("step deadline spent", f"the step's {run.bound_s:g} s are spent")
            if run.calls_left is not None and run.calls >= run.calls_left:
                raise run.not_made(MAX_CALLS_SPENT, f"{MAX_CALLS_SPENT} (the run's calls are made)")
            run.calls += 1
            messages = self._messages(step, method, run.feedback)
            try:
                reply = yield method, messages, min(self.config.timeout_s, left), left
            except Exception as exc:  # timeouts, HTTP errors, bad bodies: this call failed
                kind = _error_kind(exc)
                text = _describe_error(exc)
                if kind == UNSUPPORTED and self._auto:
                    self._learn(method, unsupported=text)
                    if not last:
                        run.notes.append(
                            f"attempt {run.calls}: the server does not support {method} "
                            f"({text}); trying {methods[i + 1]}"
                        )
                        continue
                    if self._candidates():  # methods that answered without JSON remain
                        raise run.failed(f"the server does not support {method} ({text})") from exc
                    raise run.open_circuit(
                        f"the server supports no structured output method (last, {method}: {text})"
                    ) from exc
                if kind == UNSUPPORTED:
                    raise run.open_circuit(
                        f"the server does not support llm.structured_output_method={method} "
                        f"({text}); set it to auto"
                    ) from exc
                if kind == PERMANENT:
                    raise run.open_circuit(_permanent_reason(exc)) from exc
                raise run.failed(text, retryable=kind == TRANSIENT) from exc
            run.count_usage(reply)
            read = _read_reply(reply, step.schema)
            bound = getattr(self.config.max_tokens, step.name, None)
            if not read.cut and bound is not None and _usage(reply)[1] >= bound:
                # Some servers end a cut tool call with finish_reason "tool_calls": the
                # completion tokens tell that it stopped at the bound all the same.
                read = replace(read, cut=True)
            if read.data is None and read.parsed is None:
                why = f"unparsable reply: no JSON {step.schema.__name__} object"
                if read.cut:
                    why += f" (cut at llm.max_tokens.{step.name})"
                if self._auto and not last and not self._confirmed(method):
                    self._learn(method, unparsable=True)
                    shown = _excerpt(read.text) if read.text.strip() else "(empty)"
                    run.notes.append(
                        f"attempt {run.calls}: {method} gave an {why} ({shown}); "
                        f"trying {methods[i + 1]}"
                    )
                    continue
                raise run.rejected(why, read.text)
            if self._auto:
                self._remember(method, run, probed=i > 0)
            return self._check(run, step, method, read)
        raise AssertionError("unreachable: the last method returns or raises")  # pragma: no cover

    def _check(self, run: _StepRun, step: _Step[M, T], method: str, read: _Read) -> M:
        """Validate a reply against its schema and the step's own checks."""
        cut = f" (cut at llm.max_tokens.{step.name})" if read.cut else ""
        if read.parsed is not None:
            parsed = read.parsed
        else:
            assert read.data is not None
            if step.example is not None and (
                read.data == step.example or _placeholder_in(read.data, step.example)
            ):
                raise run.rejected(
                    "the reply copies the JSON example of the instructions; "
                    "answer from the question and passages given",
                    read.text,
                )
            try:
                parsed = _validate(read.data, step.schema)
            except ValidationError as exc:
                raise run.rejected(f"{_describe_error(exc)}{cut}", read.text) from exc
        if not isinstance(parsed, step.schema):
            raise run.rejected(f"unparsable reply: no {step.schema.__name__}", read.text)
        problem = step.validate(parsed) if step.validate else None
        if problem:
            raise run.rejected(problem, read.text)
        run.method = method
        return parsed

    def _no_call(self, step: _Step[M, T], reason: str, note: str) -> StepOutcome[T]:
        offline = step.offline()
        return StepOutcome(offline.value, 0, (note, FELL_BACK), True, reason, 0.0)

    def _run(
        self, step: _Step[M, T] | StepOutcome[T], time_left: float | None, budget: LLMBudget | None
    ) -> StepOutcome[T]:
        """Run one step: attempt, retry, fall back; count calls and time."""
        if isinstance(step, StepOutcome):  # nothing to ask
            return step
        stream = None if step.stream is None else AnswerStream(ensure_config(), step.stream)
        run = self._start(step, time_left, budget)
        if isinstance(run, StepOutcome):
            outcome = run
        else:
            run.stream = stream
            outcome = self._outcome(run, *self._chain(run, step).invoke(step.name))
        if stream is not None:
            stream.finish(str(getattr(outcome.value, "answer", "")))
        return outcome

    async def _arun(
        self, step: _Step[M, T] | StepOutcome[T], time_left: float | None, budget: LLMBudget | None
    ) -> StepOutcome[T]:
        """:meth:`_run`, awaiting the model calls."""
        if isinstance(step, StepOutcome):  # nothing to ask
            return step
        stream = None if step.stream is None else AsyncAnswerStream(ensure_config(), step.stream)
        run = self._start(step, time_left, budget)
        if isinstance(run, StepOutcome):
            outcome = run
        else:
            run.stream = stream
            outcome = self._outcome(run, *(await self._chain(run, step).ainvoke(step.name)))
        if stream is not None:
            await stream.finish(str(getattr(outcome.value, "answer", "")))
        return outcome

    def _start(
        self, step: _Step[M, T], time_left: float | None, budget: LLMBudget | None
    ) -> _StepRun | StepOutcome[T]:
        """Return the step's book-keeping, or its fallback outcome when no call may be made."""
        budget = budget or LLMBudget()
        if budget.circuit:
            reason = f"{CIRCUIT_OPEN}: {budget.circuit}"
            return self._no_call(step, reason, f"{reason}; no call made")
        if time_left is not None and time_left < MIN_ATTEMPT_S:
            note = f"{RUN_DEADLINE_SPENT}: no LLM time left (llm.deadline_s), no call made"
            return self._no_call(step, RUN_DEADLINE_SPENT, note)
        if budget.calls_left is not None and budget.calls_left <= 0:
            note = f"{MAX_CALLS_SPENT}: the run made its llm.max_calls calls, no call made"
            return self._no_call(step, MAX_CALLS_SPENT, note)
        bound = self.config.step_bound_s
        return _StepRun(bound if time_left is None else min(bound, time_left), budget.calls_left)

    def _chain(self, run: _StepRun, step: _Step[M, T]) -> Runnable:
        """Return the step's chain: attempt (sync or async), retried, then the offline fallback."""

        def fall_back(_: Any) -> tuple[T, bool]:
            run.llm_end = time.monotonic()
            return step.offline().value, True

        async def aattempt(_step: Any, config: RunnableConfig) -> M:
            return await self._aattempt(run, step, config)

        attempt = RunnableLambda(
            lambda _step, config: self._attempt(run, step, config),
            afunc=aattempt,
            name="llm_attempt",
        )
        return (
            attempt.with_retry(
                retry_if_exception_type=_retryable,
                stop_after_attempt=self.config.retries + 1,
                wait_exponential_jitter=False,  # the deadline, not a back-off, bounds retries
            )
            | RunnableLambda(lambda reply: (step.convert(reply), False), name="llm_reply")
        ).with_fallbacks(
            [RunnableLambda(fall_back, name="offline_reasoner")],
            exceptions_to_handle=(StepFailed,),
        )

    def _outcome(self, run: _StepRun, value: T, fell_back: bool) -> StepOutcome[T]:
        if fell_back:
            return StepOutcome(
                value,
                run.calls,
                (*run.notes, FELL_BACK),
                True,
                run.reason(),
                run.seconds(),
                circuit=run.circuit,
                prompt_tokens=run.prompt_tokens,
                completion_tokens=run.completion_tokens,
            )
        return StepOutcome(
            value,
            run.calls,
            tuple(run.notes),
            False,
            "",
            run.seconds(),
            method=run.method,
            prompt_tokens=run.prompt_tokens,
            completion_tokens=run.completion_tokens,
        )

    def _step(
        self,
        name: str,
        prompt: str,
        schema: type[M],
        convert: Callable[[M], T],
        offline: Callable[[], StepOutcome[T]],
        validate: Callable[[M], str | None] | None = None,
        **values: str,
    ) -> _Step[M, T]:
        system, user = prompt_messages(prompt, **values)
        return _Step(name, schema, system, user, convert, offline, validate, prompt_example(prompt))

    # --- the steps ----------------------------------------------------------------------

    def needs(
        self,
        question: str,
        gazetteer: Gazetteer,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[QuestionNeeds]:
        """One call reading the question's needs; its names are linked through the gazetteer.

        The model gives the answer type, the hop count and structure, the names the
        question writes, a choice's options, the names that only describe the answer
        and a comparison's compared attribute (:class:`NeedsReading`). Each name is
        resolved against the corpus as the offline reader resolves one
        (:func:`_needs`). A hop count out of range, or one its structure contradicts
        ("bridge" with 1 hop), is rejected: retried, then the offline reading
        (:func:`~sealgraph.ledger.needs.question_needs`) is used instead.
        """
        return self._run(self._needs_step(question, gazetteer), time_left, budget)

    async def aneeds(
        self,
        question: str,
        gazetteer: Gazetteer,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[QuestionNeeds]:
        """:meth:`needs`, awaiting the model (``ainvoke``)."""
        return await self._arun(self._needs_step(question, gazetteer), time_left, budget)

    def _needs_step(
        self, question: str, gazetteer: Gazetteer
    ) -> _Step[Any, Any] | StepOutcome[QuestionNeeds]:
        """Return the :meth:`needs` step (or its outcome when no call is needed)."""

        def check(r: NeedsReading) -> str | None:
            if not 1 <= r.hops <= MAX_HOPS:
                return f"hops must be 1 to {MAX_HOPS}, got {r.hops}"
            fits = {
                "single": r.hops == 1,
                "bridge": r.hops == 2,
                "multi_step": r.hops >= 3,
                "comparison": True,
            }[r.structure]
            if not fits:
                return f"structure {r.structure!r} does not fit hops={r.hops}"
            return None

        step = self._step(
            "needs",
            "needs",
            NeedsReading,
            lambda r: _needs(question, r, gazetteer),
            lambda: self.offline.needs(question, gazetteer),
            check,
            question=fence(question),
        )
        return step

    def extract(
        self,
        question: str,
        chunks: Sequence[Chunk],
        features: Sequence[PassageFeatures],
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[Facts]:
        """One batched extraction call over the new passages, focused by the question."""
        return self._run(self._extract_step(question, chunks, features), time_left, budget)

    async def aextract(
        self,
        question: str,
        chunks: Sequence[Chunk],
        features: Sequence[PassageFeatures],
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[Facts]:
        """:meth:`extract`, awaiting the model (``ainvoke``)."""
        return await self._arun(self._extract_step(question, chunks, features), time_left, budget)

    def _extract_step(
        self, question: str, chunks: Sequence[Chunk], features: Sequence[PassageFeatures]
    ) -> _Step[Any, Any] | StepOutcome[Facts]:
        """Return the :meth:`extract` step (or its outcome when no call is needed)."""
        if not chunks:
            return StepOutcome(Facts())
        step = self._step(
            "extract",
            "extract",
            Extraction,
            lambda out: _facts(out, chunks, features),
            lambda: self.offline.extract(question, chunks, features),
            question=fence(question),
            passages=passages_block(chunks),
        )
        return step

    def assess(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        ledger: EntityLedger,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[Verdict]:
        """One assess call: the model's gaps, and the passages it says support the needs.

        The same reply names the supporting passages (``Assessment.supporting``), so
        need support costs no call of its own: a named passage gets support 1, the
        others 0 (``Verdict.support``; None when it named no valid passage number).
        The graph keeps it for packing, which asks :meth:`support` for it.
        """
        return self._run(self._assess_step(needs, items, features, ledger), time_left, budget)

    async def aassess(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        ledger: EntityLedger,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[Verdict]:
        """:meth:`assess`, awaiting the model (``ainvoke``)."""
        return await self._arun(
            self._assess_step(needs, items, features, ledger), time_left, budget
        )

    def _assess_step(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        ledger: EntityLedger,
    ) -> _Step[Any, Any] | StepOutcome[Verdict]:
        """Return the :meth:`assess` step (or its outcome when no call is needed)."""
        names = "\n".join(fence(e.name) for e in ledger.entities.values()) or "(empty)"

        def check(a: Assessment) -> str | None:
            if not a.sufficient and not a.gaps:
                return "the evidence is called insufficient but no gap is named"
            return None

        def convert(a: Assessment) -> Verdict:
            gaps = tuple(
                Gap(g.kind, unfence(g.entity), unfence(g.relation), g.qualifier, unfence(g.reason))
                for g in ([] if a.sufficient else a.gaps)
            )
            named = {n for n in a.supporting if 1 <= n <= len(features)}
            support = (
                {f.chunk_id: float(n in named) for n, f in enumerate(features, 1)}
                if named
                else None
            )
            return Verdict(gaps, support)

        step = self._step(
            "assess",
            "assess",
            Assessment,
            convert,
            lambda: self.offline.assess(needs, items, features, ledger),
            check,
            question=fence(needs.question),
            ledger=names,
            passages=passages_block(features),
        )
        return step

    def support(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        *,
        assessed: Mapping[str, float] | None = None,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[dict[str, float] | None]:
        """Return the need support the last assessment judged (no call is made).

        ``assessed`` is the ``Verdict.support`` of the last :meth:`assess` (the graph
        keeps it in its state as ``need_support``). When it does not cover every
        evidence passage (the assess step fell back to the offline gate, the model
        named no supporting passage, or the evidence changed since), the offline need
        support (:func:`~sealgraph.reasoning.offline.need_support`) is used, with a
        note saying so.
        """
        ids = [f.chunk_id for f in features]
        if assessed is not None and ids and all(i in assessed for i in ids):
            return StepOutcome({i: float(assessed[i]) for i in ids})
        note = "no need support from the last assessment: the offline need coverage is used"
        return StepOutcome(self.offline.support(needs, items, features).value, notes=(note,))

    def plan(
        self,
        needs: QuestionNeeds,
        gaps: Sequence[Gap],
        issued: Sequence[str],
        doc_titles: dict[str, str],
        limit: int,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[list[MicroQuery]]:
        """One micro-query call for all open gaps.

        A query that copies the prompt's example query is rejected (small models echo
        examples): the retry says so.
        """
        return self._run(self._plan_step(needs, gaps, issued, doc_titles, limit), time_left, budget)

    async def aplan(
        self,
        needs: QuestionNeeds,
        gaps: Sequence[Gap],
        issued: Sequence[str],
        doc_titles: dict[str, str],
        limit: int,
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[list[MicroQuery]]:
        """:meth:`plan`, awaiting the model (``ainvoke``)."""
        return await self._arun(
            self._plan_step(needs, gaps, issued, doc_titles, limit), time_left, budget
        )

    def _plan_step(
        self,
        needs: QuestionNeeds,
        gaps: Sequence[Gap],
        issued: Sequence[str],
        doc_titles: dict[str, str],
        limit: int,
    ) -> _Step[Any, Any] | StepOutcome[list[MicroQuery]]:
        """Return the :meth:`plan` step (or its outcome when no call is needed)."""
        if not gaps:
            return StepOutcome([])
        examples = {
            normalize_name(str(q.get("text", "")))
            for q in prompt_example("micro_query").get("queries", [])
        }

        def check(out: QueryPlan) -> str | None:
            copied = [q.text for q in out.queries if normalize_name(unfence(q.text)) in examples]
            if copied:
                return (
                    f"the query {copied[0]!r} copies the example of the instructions; "
                    "write queries naming the entities of the open gaps"
                )
            return None

        def convert(out: QueryPlan) -> list[MicroQuery]:
            seen = {normalize_name(q) for q in issued}
            queries = []
            for q in out.queries:
                text = unfence(q.text)
                key = normalize_name(text)
                if key and key not in seen and len(queries) < limit:
                    seen.add(key)
                    queries.append(MicroQuery(text, unfence(q.entity), q.gap_kind, ()))
            return queries

        step = self._step(
            "plan",
            "micro_query",
            QueryPlan,
            convert,
            lambda: self.offline.plan(needs, gaps, issued, doc_titles, limit),
            check,
            question=fence(needs.question),
            gaps="\n".join(
                fence(f"- {g.kind}: {g.entity} {g.relation} ({g.reason})") for g in gaps
            ),
            issued="\n".join(fence(f"- {q}") for q in issued) or "(none)",
        )
        return step

    def generate(
        self,
        needs: QuestionNeeds,
        spans: Sequence[SpanText],
        gaps: Sequence[Gap],
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[GeneratedAnswer]:
        """One generation call, under one answer contract.

        The answer cites passages as ``[n]`` markers in its text, in its citations
        list, or both; the numbers are read from both (:func:`cited_numbers`) and
        checked once: an answer that does not decline must cite at least one packed
        span and no number that is not one. A rejected answer is retried with the
        reason, then the offline answer is used.
        """
        return self._run(self._generate_step(needs, spans, gaps), time_left, budget)

    async def agenerate(
        self,
        needs: QuestionNeeds,
        spans: Sequence[SpanText],
        gaps: Sequence[Gap],
        *,
        time_left: float | None = None,
        budget: LLMBudget | None = None,
    ) -> StepOutcome[GeneratedAnswer]:
        """:meth:`generate`, awaiting the model (``ainvoke``)."""
        return await self._arun(self._generate_step(needs, spans, gaps), time_left, budget)

    def _generate_step(
        self, needs: QuestionNeeds, spans: Sequence[SpanText], gaps: Sequence[Gap]
    ) -> _Step[Any, Any] | StepOutcome[GeneratedAnswer]:
        """Return the :meth:`generate` step (or its outcome when no call is needed)."""
        valid = {s.n for s in spans}

        def check(a: AnswerOut) -> str | None:
            if a.insufficient:
                return None
            cited = cited_numbers(a)
            unknown = sorted(cited - valid)
            if unknown:
                given = ", ".join(f"[{n}]" for n in sorted(valid)) or "none"
                return (
                    f"the answer cites {', '.join(f'[{n}]' for n in unknown)}, which is not "
                    f"a passage of the context (its passages: {given})"
                )
            if not cited:
                return "the answer cites no passage: write [n] after each claim"
            return None

        def convert(a: AnswerOut) -> GeneratedAnswer:
            cited = tuple(sorted(cited_numbers(a) & valid))
            return GeneratedAnswer(unfence(a.answer), cited, a.insufficient)

        step = self._step(
            "generate",
            "generate",
            AnswerOut,
            convert,
            lambda: self.offline.generate(needs, spans, gaps),
            check,
            question=fence(needs.question),
            context=passages_block(spans),
        )
        return replace(step, stream=needs.question)  # the answer streams as text


def _written(name: str, question: str) -> re.Match[str] | None:
    """Where the question writes ``name`` (case aside, as whole words), None when it does not."""
    if not name:
        return None
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", question, re.IGNORECASE)


def _needs(question: str, r: NeedsReading, gazetteer: Gazetteer) -> QuestionNeeds:
    """Turn the model's reading into ``QuestionNeeds``, its names resolved against the corpus.

    A name is kept as the question writes it, or as the gazetteer name written inside
    it that the question writes ("Quiet Harbour" for a reply's "Quiet Harbour
    (film)"); a name the question does not write is dropped (the model may not add
    entities, the answer least of all). Each kept name links to its documents as the
    offline reader links a name (:func:`~sealgraph.ledger.needs.linked_docs`, else
    the gazetteer names written inside it). Entities keep the question's order;
    relation terms are the question's words outside them
    (:func:`~sealgraph.ledger.needs.relation_words`), plus the words of the compared
    attribute; options are kept for a choice question only, answer modifiers only
    when they are among the entities.
    """
    found: list[tuple[int, NeedEntity]] = []
    spans: list[tuple[int, int]] = []
    seen: set[str] = set()
    for raw in r.entities:
        name = " ".join(unfence(raw).split())
        hit = _written(name, question) or next(
            (
                m
                for mention in gazetteer.find_mentions(name, min_kind="acronym")
                if (m := _written(mention.surface, question))
            ),
            None,
        )
        if hit is None:
            continue
        surface = hit.group(0)
        key = normalize_name(surface)
        if not key or key in seen:
            continue
        seen.add(key)
        targets = linked_docs(surface, gazetteer)
        if not targets:
            mentions = gazetteer.find_mentions(surface, min_kind="acronym")
            if mentions:
                targets = max(mentions, key=lambda m: m.end - m.start).targets
        found.append((hit.start(), NeedEntity(surface, key, targets, "llm")))
        pattern = re.compile(rf"(?<!\w){re.escape(surface)}(?!\w)", re.IGNORECASE)
        spans.extend(m.span() for m in pattern.finditer(question))
    found.sort(key=lambda t: t[0])
    entities = tuple(e for _, e in found)
    relation = relation_words(question, spans)
    compared = content_words(unfence(r.compared_attribute))
    relation += tuple(w for w in dict.fromkeys(compared) if w not in relation)
    keys = {e.key for e in entities}
    options: dict[str, str] = {}
    if r.answer_type == "choice":
        for raw in r.options:
            option = " ".join(unfence(raw).split())
            if normalize_name(option):
                options.setdefault(normalize_name(option), option)
    modifiers = (normalize_name(unfence(m)) for m in r.answer_modifiers)
    return QuestionNeeds(
        question=question,
        entities=entities,
        relation_terms=relation,
        answer_type=r.answer_type,
        structure=r.structure,
        options=tuple(options.values()),
        hops=r.hops,
        answer_modifiers=tuple(dict.fromkeys(k for k in modifiers if k in keys)),
    )


def _facts(out: Extraction, chunks: Sequence[Chunk], features: Sequence[PassageFeatures]) -> Facts:
    """Turn the model's extraction into ledger facts with provenance."""
    topic = {normalize_name(c.title): c.doc_id for c in chunks}

    def pid(n: int) -> Chunk:
        return chunks[min(max(n, 1), len(chunks)) - 1]

    # Every passage's own topic entity keeps its document link, whatever the model read.
    ents = [
        (f.topic, c.title, (c.doc_id,), Provenance(c.chunk_id, 0), 1.0)
        for c, f in zip(chunks, features, strict=True)
    ]
    for e in out.entities:
        name = unfence(e.name)
        key = normalize_name(name)
        if not key:
            continue
        docs = (topic[key],) if key in topic else ()
        ents.append((key, name, docs, Provenance(pid(e.passage).chunk_id, 0), 0.9))
        for alias in map(unfence, e.aliases):
            akey = normalize_name(alias)
            if akey:
                ents.append((akey, alias, docs, Provenance(pid(e.passage).chunk_id, 0), 0.8))
    rels = tuple(
        Relation(
            normalize_name(unfence(r.subject)),
            unfence(r.relation),
            normalize_name(unfence(r.object)),
            Provenance(pid(r.passage).chunk_id, 0),
            0.9,
        )
        for r in out.relations
    )
    quals = tuple(
        Qualifier(
            normalize_name(unfence(q.entity)),
            q.type,
            unfence(q.value),
            Provenance(pid(q.passage).chunk_id, 0),
        )
        for q in out.qualifiers
    )
    return Facts(tuple(ents), rels, quals, tuple(c.chunk_id for c in chunks))
