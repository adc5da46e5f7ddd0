"""Stream the answer as text tokens through LangGraph's ``messages`` stream mode.

The LLM steps ask for JSON (structured output), which is no use to a reader as it
streams, so every step's model call is tagged ``nostream`` (LangGraph's
``TAG_NOSTREAM``: ``stream_mode="messages"`` skips it) and ``sealgraph:internal``.
The generate step's answer is streamed instead as a chat-model run of its own,
``sealgraph_answer``, started with the generate node's callbacks, so its
``AIMessageChunk`` tokens carry the node's metadata (``langgraph_node ==
"generate"``, the subgraph namespace when sealgraph runs as a subgraph):

* while the generate call streams (LangGraph's messages handler makes the chat
  model stream), :class:`AnswerStream` reads the ``answer`` field of the partial
  JSON (the text, or a tool call's arguments) and sends what it adds;
* when the model did not stream, the step fell back to the offline answer, or a
  retry answered differently, the final answer (or what it adds to what was sent)
  is sent in one chunk. A rejected attempt's text cannot be taken back: its
  message ends and the final answer comes as a new message (another id). The
  final state's ``answer`` is always the authoritative one.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any
from uuid import UUID, uuid4

from langchain_core.callbacks import (
    AsyncCallbackHandler,
    AsyncCallbackManager,
    BaseCallbackHandler,
    BaseCallbackManager,
    CallbackManager,
)
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, LLMResult
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.json import parse_partial_json

INTERNAL_TAGS = ("nostream", "sealgraph:internal")
"""Tags of every structured-output model call: LangGraph's messages mode skips them."""
ANSWER_RUN = "sealgraph_answer"
"""Name of the chat-model run whose tokens are the answer text."""


def partial_answer(raw: str) -> str | None:
    """Return the ``answer`` field of a partial JSON reply (None when none is readable yet).

    A trailing unfinished HTML entity (``&am``) is held back: the answer is
    unescaped (:func:`sealgraph.prompts.unfence`) and must only grow.
    """
    start = raw.find("{")
    if start < 0:
        return None
    try:
        data = parse_partial_json(raw[start:])
    except Exception:  # an unreadable prefix: wait for more tokens
        return None
    answer = data.get("answer") if isinstance(data, dict) else None
    if not isinstance(answer, str):
        return None
    amp = answer.rfind("&")
    if amp >= 0 and ";" not in answer[amp:]:
        answer = answer[:amp]
    return html.unescape(answer)


def _token_text(chunk: Any) -> str:
    message = getattr(chunk, "message", None)
    if message is None:
        return ""
    args = "".join(
        str(c.get("args") or "") for c in getattr(message, "tool_call_chunks", None) or ()
    )
    if args:
        return args
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        b if isinstance(b, str) else str(b.get("text", "")) if isinstance(b, dict) else ""
        for b in content or ()
    )


def with_callback(config: RunnableConfig, handler: Any) -> RunnableConfig:
    """Return ``config`` with ``handler`` added to its callbacks, tagged as internal."""
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        callbacks = callbacks.copy()
        callbacks.add_handler(handler, inherit=True)
    else:
        callbacks = [*(callbacks or ()), handler]
    return {**config, "callbacks": callbacks}


def internal(config: RunnableConfig) -> RunnableConfig:
    """Return ``config`` tagged :data:`INTERNAL_TAGS` (not streamed as answer tokens)."""
    tags = list(config.get("tags") or ())
    return {**config, "tags": [*tags, *(t for t in INTERNAL_TAGS if t not in tags)]}


class _Answer:
    """What the answer stream sent: the attempt's raw reply text and the answer text sent."""

    def __init__(self, config: RunnableConfig, question: str) -> None:
        self.config = config
        self.question = question
        self.raw = ""
        self.sent = ""
        self.run: Any = None
        self.msg_id = ""

    def _manager_args(self) -> dict[str, Any]:
        return {
            "inheritable_callbacks": self.config.get("callbacks"),
            "inheritable_tags": list(self.config.get("tags") or ()),
            "inheritable_metadata": dict(self.config.get("metadata") or {}),
        }

    def _start_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        run_id = uuid4()
        self.msg_id = f"run-{run_id}"
        return ({"name": ANSWER_RUN}, [[HumanMessage(self.question)]]), {
            "run_id": run_id,
            "name": ANSWER_RUN,
        }

    def delta(self) -> str:
        """Return what the raw reply adds to the text sent ("" when nothing, or it diverged)."""
        answer = partial_answer(self.raw)
        if answer is None or not answer.startswith(self.sent):
            return ""
        return answer[len(self.sent) :]

    def chunk(self, text: str) -> ChatGenerationChunk:
        self.sent += text
        return ChatGenerationChunk(message=AIMessageChunk(content=text, id=self.msg_id))

    def result(self) -> LLMResult:
        message = AIMessage(self.sent, id=self.msg_id)
        return LLMResult(generations=[[ChatGeneration(message=message)]])


class AnswerStream(BaseCallbackHandler):
    """Callback handler of the generate step's model call (sync runs); see the module doc."""

    run_inline = True

    def __init__(self, config: Mapping[str, Any], question: str) -> None:
        self._a = _Answer(dict(config), question)  # type: ignore[arg-type]

    def _send(self, text: str) -> None:
        if not text:
            return
        if self._a.run is None:
            manager = CallbackManager.configure(**self._a._manager_args())
            args, kwargs = self._a._start_args()
            self._a.run = manager.on_chat_model_start(*args, **kwargs)[0]
        self._a.run.on_llm_new_token(text, chunk=self._a.chunk(text))

    def _end(self) -> None:
        if self._a.run is not None:
            self._a.run.on_llm_end(self._a.result())
        self._a.run, self._a.sent = None, ""

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        """Start a new attempt's reply afresh."""
        self._a.raw = ""

    def on_llm_new_token(self, token: str, *, chunk: Any = None, run_id: UUID, **kw: Any) -> None:
        """Send what the reply's ``answer`` field gained."""
        self._a.raw += _token_text(chunk) if chunk is not None else token
        self._send(self._a.delta())

    def finish(self, answer: str) -> None:
        """Send the rest of the final answer (all of it, as a new message, when it differs)."""
        if not answer.startswith(self._a.sent):
            self._end()
        self._send(answer[len(self._a.sent) :])
        self._end()


class AsyncAnswerStream(AsyncCallbackHandler):
    """:class:`AnswerStream` for async runs (its callbacks go through an async manager)."""

    run_inline = True

    def __init__(self, config: Mapping[str, Any], question: str) -> None:
        self._a = _Answer(dict(config), question)  # type: ignore[arg-type]

    async def _send(self, text: str) -> None:
        if not text:
            return
        if self._a.run is None:
            manager = AsyncCallbackManager.configure(**self._a._manager_args())
            args, kwargs = self._a._start_args()
            self._a.run = (await manager.on_chat_model_start(*args, **kwargs))[0]
        await self._a.run.on_llm_new_token(text, chunk=self._a.chunk(text))

    async def _end(self) -> None:
        if self._a.run is not None:
            await self._a.run.on_llm_end(self._a.result())
        self._a.run, self._a.sent = None, ""

    async def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        """Start a new attempt's reply afresh."""
        self._a.raw = ""

    async def on_llm_new_token(
        self, token: str, *, chunk: Any = None, run_id: UUID, **kw: Any
    ) -> None:
        """Send what the reply's ``answer`` field gained."""
        self._a.raw += _token_text(chunk) if chunk is not None else token
        await self._send(self._a.delta())

    async def finish(self, answer: str) -> None:
        """Send the rest of the final answer (all of it, as a new message, when it differs)."""
        if not answer.startswith(self._a.sent):
            await self._end()
        await self._send(answer[len(self._a.sent) :])
        await self._end()
