"""Structured output: which method to ask with, the messages, and reading and checking replies.

**Methods.** ``llm.structured_output_method = auto`` falls through the methods in
turn (:class:`MethodChoice`): it remembers, per (base_url, model), the method whose
reply held JSON, the methods the server said it does not support (never tried
again) and those whose reply held no JSON (tried last).

**Messages.** :func:`messages_for` sends the step's system and user message; JSON mode
and plain completions also get the reply's compact JSON schema (:func:`schema_hint`);
a retry gets the rejected reply and what was wrong with it.

**Replies.** Whatever the method, a reply is read the same way (:func:`read_reply`: a
tool call's arguments, else the one JSON object in its text, code fences and prose
around it allowed) and checked (:func:`check_reply`) against its pydantic schema and
the step's own checks.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from sealgraph.reasoning.llm._failures import describe_error
from sealgraph.reasoning.llm._request import StepRequest, StepRun

log = logging.getLogger(__package__)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


# --- which method to ask with ----------------------------------------------------------


@dataclass
class _MethodMemory:
    """What the reasoner learnt about one (base_url, model)'s structured output methods."""

    working: str | None = None
    """The method whose reply held JSON (used first from then on)."""
    unsupported: dict[str, str] = field(default_factory=dict)
    """Method → the server's error saying it is unsupported (never tried again)."""
    unparsable: set[str] = field(default_factory=set)
    """Methods whose reply held no JSON while none worked yet (tried last)."""


class MethodChoice:
    """The structured output methods one reasoner asks with, and what it learnt about them.

    Shared by the reasoner's runs (hence the lock). ``configured`` is
    ``llm.structured_output_method``; under ``auto`` the methods are tried in
    ``order`` (the chat model's own default first), and what each attempt learns is
    remembered per ``key`` (base_url, model).
    """

    def __init__(
        self, configured: str, order: tuple[str, ...], key: tuple[str, str], model_desc: str
    ) -> None:
        self.configured = configured
        self.order = order
        self.key = key
        self.model_desc = model_desc
        self._methods: dict[tuple[str, str], _MethodMemory] = {}
        self._lock = threading.Lock()

    @property
    def auto(self) -> bool:
        """Whether the method adapts to the server (``auto``)."""
        return self.configured == "auto"

    def working(self) -> str | None:
        """Return the method remembered for this reasoner's model (None before one answered)."""
        if not self.auto:
            return self.configured
        with self._lock:
            memory = self._methods.get(self.key)
            return memory.working if memory else None

    def candidates(self) -> list[str]:
        """Return the methods one attempt may try, in order (``auto``), or the configured one."""
        if not self.auto:
            return [self.configured]
        with self._lock:
            memory = self._methods.setdefault(self.key, _MethodMemory())
            order = list(self.order)
            if memory.working:
                order.remove(memory.working)
                order.insert(0, memory.working)
            order = [m for m in order if m not in memory.unsupported]
            if not memory.working:
                fresh = [m for m in order if m not in memory.unparsable]
                order = fresh or order[-1:]
            return order

    def unsupported(self) -> str:
        """Return ``method: error`` of every method the server said it does not support."""
        with self._lock:
            return "; ".join(f"{m}: {e}" for m, e in self._methods[self.key].unsupported.items())

    def confirmed(self, method: str) -> bool:
        """Whether ``method`` is the one remembered as working."""
        with self._lock:
            memory = self._methods.get(self.key)
            return memory is not None and memory.working == method

    def learn(self, method: str, *, unsupported: str = "", unparsable: bool = False) -> None:
        """Remember that the server does not support ``method``, or that its reply held no JSON."""
        with self._lock:
            memory = self._methods.setdefault(self.key, _MethodMemory())
            if unsupported:
                memory.unsupported[method] = unsupported
                if memory.working == method:
                    memory.working = None
            elif unparsable:
                memory.unparsable.add(method)

    def remember(self, method: str, run: StepRun, probed: bool) -> None:
        """Remember the method whose reply held JSON; note it when it took a probe to find."""
        with self._lock:
            memory = self._methods.setdefault(self.key, _MethodMemory())
            if memory.working == method:
                return
            memory.working = method
            memory.unparsable.discard(method)
            skipped = dict(memory.unsupported)
        log.info("structured output: %s works for %s (remembered)", method, self.model_desc)
        if probed or skipped:
            run.notes.append(
                f"structured output: {method} works for {self.model_desc}; remembered "
                "for the following steps (llm.structured_output_method=auto)"
            )


# --- the messages ------------------------------------------------------------------------


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


def messages_for(
    step: StepRequest[M, T], method: str, feedback: tuple[str, str] | None
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


def placeholder_in(data: Any, example: dict[str, Any]) -> bool:
    """Whether a reply writes a placeholder of the prompt's example ("ANSWER", "ENTITY").

    Small models echo the example with a detail changed ("ANSWER, as passage 2 states
    [1]."), which an exact comparison misses; the example's capitalised placeholder
    words never belong in a real reply.
    """
    placeholders = {w for text in _strings(example) for w in _PLACEHOLDER.findall(text)}
    return bool(placeholders) and any(
        w in placeholders for text in _strings(data) for w in _PLACEHOLDER.findall(text)
    )


def json_objects(text: str) -> list[dict[str, Any]]:
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
class Read:
    """What one reply holds: the JSON object found in it, and the text it was read from."""

    data: dict[str, Any] | None
    """The reply's JSON object (a tool call's arguments, else the one in its text)."""
    text: str
    """The reply as the model wrote it (tool-call arguments or content), for notes."""
    parsed: BaseModel | None = None
    """An instance the model's runnable returned itself (no raw message to read)."""
    cut: bool = False
    """True when generation stopped at the token bound (``finish_reason: length``)."""


def _read_message(raw: Any, given: Any, schema: type[BaseModel]) -> Read:
    """Read a chat message: its tool call's arguments, else the JSON object in its text."""
    meta = getattr(raw, "response_metadata", None) or {}
    cut = meta.get("finish_reason") == "length"
    for call in getattr(raw, "tool_calls", None) or []:
        args = call.get("args")
        if isinstance(args, dict):
            return Read(args, json.dumps(args, ensure_ascii=False), cut=cut)
    for call in getattr(raw, "invalid_tool_calls", None) or []:
        args = call.get("args")
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        objects = json_objects(text or "")
        return Read(_pick(objects, schema), text or "", cut=cut)
    text = _content_text(getattr(raw, "content", raw))
    data = _pick(json_objects(text), schema)
    if data is None and isinstance(given, schema):
        return Read(None, text, parsed=given, cut=cut)
    return Read(data, text, cut=cut)


def read_reply(reply: Any, schema: type[BaseModel]) -> Read:
    """Read a reply of any method.

    A ``with_structured_output(include_raw=True)`` dict, a plain ``AIMessage``, or
    what a model's own runnable returned (an instance, a dict).
    """
    if isinstance(reply, dict) and "raw" in reply:
        return _read_message(reply.get("raw"), reply.get("parsed"), schema)
    if isinstance(reply, BaseMessage):
        return _read_message(reply, None, schema)
    if isinstance(reply, schema):
        return Read(None, reply.model_dump_json(), parsed=reply)
    if isinstance(reply, dict):
        return Read(reply, json.dumps(reply, ensure_ascii=False))
    return Read(None, "" if reply is None else str(reply))


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


def check_reply(run: StepRun, step: StepRequest[M, T], method: str, read: Read) -> M:
    """Validate a reply against its schema and the step's own checks.

    Raise the rejection (noted in ``run``, with what to tell the next attempt) when
    it copies the prompt's example, does not validate, or fails the step's check.
    """
    cut = f" (cut at llm.max_tokens.{step.step})" if read.cut else ""
    if read.parsed is not None:
        parsed = read.parsed
    else:
        assert read.data is not None
        if step.example is not None and (
            read.data == step.example or placeholder_in(read.data, step.example)
        ):
            raise run.rejected(
                "the reply copies the JSON example of the instructions; "
                "answer from the question and passages given",
                read.text,
            )
        try:
            parsed = _validate(read.data, step.schema)
        except ValidationError as exc:
            raise run.rejected(f"{describe_error(exc)}{cut}", read.text) from exc
    if not isinstance(parsed, step.schema):
        raise run.rejected(f"unparsable reply: no {step.schema.__name__}", read.text)
    problem = step.validate(parsed) if step.validate else None
    if problem:
        raise run.rejected(problem, read.text)
    run.method = method
    return parsed
