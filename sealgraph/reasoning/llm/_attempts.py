"""One LLM step, start to end: its attempts, retries, bounds, circuit and offline fallback.

:class:`StepRunner` runs a :class:`~sealgraph.reasoning.llm._request.StepRequest`:

* **Before any call** (:meth:`StepRunner._start`) a step falls back without a call
  when the run's LLM circuit is open, its time (``llm.deadline_s``) is spent, or its
  calls (``llm.max_calls``) are made.
* **One attempt** (:meth:`StepRunner._attempts`) calls the model, trying the
  structured output methods in turn under ``auto``
  (:class:`~sealgraph.reasoning.llm._structured.MethodChoice`), and checks the reply.
  Each HTTP call is bounded by what is left of the step (wall clock) and its reply by
  size (:mod:`sealgraph.reasoning.llm._http`). A failure raises
  :class:`~sealgraph.reasoning.llm._failures.StepFailed`; a permanent one opens the
  run's LLM circuit and is not retried. The logic is written once for sync and async
  runs: a generator yields each model call, and :meth:`StepRunner._attempt` or
  :meth:`StepRunner._aattempt` makes it.
* **The chain** (:meth:`StepRunner._chain`): the attempt ``.with_retry`` for
  ``llm.retries`` more attempts, then ``.with_fallbacks`` to the offline reasoner's
  step. The :class:`~sealgraph.reasoning.base.StepOutcome` says how many calls it
  made, how long they took, and whether (and why) it fell back.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import replace
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda, ensure_config
from pydantic import BaseModel

from sealgraph.config import LLMConfig
from sealgraph.reasoning.base import FELL_BACK, LLMBudget, StepOutcome
from sealgraph.reasoning.llm._client import METHODS, max_tokens_param, native_method
from sealgraph.reasoning.llm._failures import (
    PERMANENT,
    TRANSIENT,
    UNSUPPORTED,
    MethodUnavailable,
    StepFailed,
    describe_error,
    error_kind,
    excerpt,
    permanent_reason,
    retryable,
)
from sealgraph.reasoning.llm._http import attempt_limits, reply_byte_bound
from sealgraph.reasoning.llm._request import StepRequest, StepRun, usage
from sealgraph.reasoning.llm._structured import (
    MethodChoice,
    Read,
    check_reply,
    messages_for,
    read_reply,
)
from sealgraph.reasoning.llm.waits import waiting
from sealgraph.reasoning.stream import AnswerStream, AsyncAnswerStream, internal, with_callback

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

MIN_ATTEMPT_S = 0.05
"""An attempt is not started with less step time left than this: it could not finish."""
RUN_DEADLINE_SPENT = "run deadline spent"
"""Fallback reason of a step started after the run's ``llm.deadline_s`` was used up."""
MAX_CALLS_SPENT = "llm.max_calls spent"
"""Fallback reason of a step started (or cut short) once the run's ``llm.max_calls`` were made."""
CIRCUIT_OPEN = "LLM circuit open"
"""Prefix of the fallback reason of a step started after the run's LLM circuit opened."""

_Call = tuple[str, list[BaseMessage], float, float]
"""One model call of an attempt: (method, messages, socket timeout, wall-clock bound)."""


def _model_identity(model: Any, openai: bool) -> tuple[tuple[str, str], str]:
    """Return the model's (base_url, name) key and its description for notes."""
    base = getattr(model, "openai_api_base", None)
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    key = (str(base or ""), str(name or type(model).__name__))
    where = f"at {base}" if base else "(OpenAI API)" if openai else ""
    return key, " ".join(p for p in (f"model {key[1]!r}", where) if p)


class StepRunner:
    """Runs the LLM steps of one reasoner: attempts, retries, bounds and fallbacks.

    Args:
        model: The prepared chat model (:func:`~sealgraph.reasoning.llm._client.prepared_model`).
        config: Retries, timeouts, deadlines, token bounds and the structured-output method.
        openai: Whether ``model`` is a ``ChatOpenAI`` (per-request timeout and token bound).

    """

    def __init__(self, model: Any, config: LLMConfig, *, openai: bool) -> None:
        self.model = model
        self.config = config
        self._openai = openai
        key, desc = _model_identity(model, openai)
        native = native_method(model)
        order = (native, *(m for m in METHODS if m != native))
        self.methods = MethodChoice(config.structured_output_method, order, key, desc)
        self._max_tokens_param = max_tokens_param(config, getattr(model, "openai_api_base", None))

    # --- one model call ------------------------------------------------------------------

    def bound(self, step: StepRequest[Any, Any]) -> int | None:
        """Return the token bound of ``step``: ``llm.max_tokens.<step>``, else the step's own."""
        return self.config.max_tokens.for_step(step.step, step.max_tokens)

    def _request_kwargs(self, step: StepRequest[M, T], timeout_s: float) -> dict[str, Any]:
        """Per-request settings for a ``ChatOpenAI``: the timeout and the step's token bound.

        The OpenAI SDK takes a per-request timeout: the attempt gets the step's
        remaining time, not the client's fixed one. ``ChatOpenAI`` sends a
        ``max_tokens`` binding as ``max_completion_tokens``; for servers that only
        read ``max_tokens`` it goes in the request body as such (``extra_body``).
        """
        if not self._openai:
            return {}
        kwargs: dict[str, Any] = {"timeout": timeout_s}
        bound = self.bound(step)
        if bound is not None:
            if self._max_tokens_param == "max_tokens":
                own = getattr(self.model, "extra_body", None) or {}
                kwargs["extra_body"] = {**own, "max_tokens": bound}
            else:
                kwargs["max_tokens"] = bound
        return kwargs

    def _runnable(
        self,
        run: StepRun,
        method: str,
        step: StepRequest[M, T],
        timeout_s: float,
        config: RunnableConfig,
    ) -> tuple[Runnable, RunnableConfig]:
        """Return the model call of one attempt, and its config.

        The call is tagged ``nostream`` (its JSON is not answer text; see
        :mod:`sealgraph.reasoning.stream`); the generate step's call also carries
        the step's answer stream.
        """
        kwargs = self._request_kwargs(step, timeout_s)
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

    def _limits(self, step: StepRequest[M, T], seconds: float):
        """Set the attempt's wall-clock and size bounds for the HTTP clients while it runs."""
        bound = self.bound(step)
        return attempt_limits(
            seconds, reply_byte_bound(bound), step=str(step.step), max_tokens=bound
        )

    def _call(
        self, run: StepRun, step: StepRequest[M, T], request: _Call, config: RunnableConfig
    ) -> Any:
        """Call the model: the one sync call point (:meth:`_acall` is the async one)."""
        method, messages, timeout_s, seconds = request
        runnable, config = self._runnable(run, method, step, timeout_s, config)
        with self._limits(step, seconds), waiting(str(step.step), run.calls, seconds):
            return runnable.invoke(messages, config)

    async def _acall(
        self, run: StepRun, step: StepRequest[M, T], request: _Call, config: RunnableConfig
    ) -> Any:
        """Await the model (``ainvoke``): the one async call point."""
        method, messages, timeout_s, seconds = request
        runnable, config = self._runnable(run, method, step, timeout_s, config)
        with self._limits(step, seconds), waiting(str(step.step), run.calls, seconds):
            return await runnable.ainvoke(messages, config)

    # --- one attempt -----------------------------------------------------------------------

    def _attempt(self, run: StepRun, step: StepRequest[M, T], config: RunnableConfig) -> M:
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

    async def _aattempt(self, run: StepRun, step: StepRequest[M, T], config: RunnableConfig) -> M:
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

    def _attempts(self, run: StepRun, step: StepRequest[M, T]) -> Generator[_Call, Any, M]:
        """One attempt: call (trying methods in turn under ``auto``) and check the reply.

        Raise :class:`StepFailed` when it is unusable; a permanent failure opens the
        circuit (not retryable). The logic is written once, for sync and async runs:
        each model call is yielded as ``(method, messages, timeout_s, seconds)`` (the
        socket timeout, and the attempt's wall-clock bound: what is left of the step,
        itself never more than what is left of the run), the caller
        (:meth:`_attempt` or :meth:`_aattempt`) makes it and sends the reply back, or
        throws the call's exception in.
        """
        methods = self.methods.candidates()
        if not methods:
            why = self.methods.unsupported()
            raise run.open_circuit(f"the server supports no structured output method ({why})")
        for i, method in enumerate(methods):
            following = methods[i + 1] if i + 1 < len(methods) else None
            left = self._time_for_call(run)
            run.calls += 1
            messages = messages_for(step, method, run.feedback)
            try:
                reply = yield method, messages, min(self.config.timeout_s, left), left
            except Exception as exc:  # timeouts, HTTP errors, bad bodies: this call failed
                self._call_failed(run, method, following, exc)
                continue  # the server does not support the method: try the following one
            run.count_usage(reply)
            read = self._read(reply, step)
            if read.data is None and read.parsed is None:
                self._no_json(run, step, method, following, read)
                continue  # no JSON with this method: try the following one
            if self.methods.auto:
                self.methods.remember(method, run, probed=i > 0)
            return check_reply(run, step, method, read)
        raise AssertionError("unreachable: the last method returns or raises")  # pragma: no cover

    def _time_for_call(self, run: StepRun) -> float:
        """Return the step's time left; raise when it or the run's calls are spent."""
        left = run.left()
        if left < MIN_ATTEMPT_S:
            raise run.not_made("step deadline spent", f"the step's {run.bound_s:g} s are spent")
        if run.calls_left is not None and run.calls >= run.calls_left:
            raise run.not_made(MAX_CALLS_SPENT, f"{MAX_CALLS_SPENT} (the run's calls are made)")
        return left

    def _call_failed(
        self, run: StepRun, method: str, following: str | None, exc: Exception
    ) -> None:
        """Handle a failed model call: return to try the ``following`` method, else raise.

        An unsupported method falls through to the following one under ``auto``; when
        none follows, the step fails (methods that answered without JSON remain) or
        the circuit opens. A permanent failure opens the circuit; the rest fail the
        attempt, retryable when transient.
        """
        kind = error_kind(exc)
        text = describe_error(exc)
        if kind == UNSUPPORTED and self.methods.auto:
            self.methods.learn(method, unsupported=text)
            if following is not None:
                run.notes.append(
                    f"attempt {run.calls}: the server does not support {method} "
                    f"({text}); trying {following}"
                )
                return
            if self.methods.candidates():  # methods that answered without JSON remain
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
            raise run.open_circuit(permanent_reason(exc)) from exc
        raise run.failed(text, retryable=kind == TRANSIENT) from exc

    def _read(self, reply: Any, step: StepRequest[M, T]) -> Read:
        """Read a reply, and whether it was cut at the step's token bound."""
        read = read_reply(reply, step.schema)
        bound = self.bound(step)
        if not read.cut and bound is not None and usage(reply)[1] >= bound:
            # Some servers end a cut tool call with finish_reason "tool_calls": the
            # completion tokens tell that it stopped at the bound all the same.
            read = replace(read, cut=True)
        return read

    def _no_json(
        self,
        run: StepRun,
        step: StepRequest[M, T],
        method: str,
        following: str | None,
        read: Read,
    ) -> None:
        """Handle a reply with no JSON: return to try the ``following`` method, else raise.

        Under ``auto``, a method not yet known to work is left for the following one
        (and tried last from then on); otherwise the reply is rejected.
        """
        why = f"unparsable reply: no JSON {step.schema.__name__} object"
        if read.cut:
            why += f" (cut at llm.max_tokens.{step.step})"
        if self.methods.auto and following is not None and not self.methods.confirmed(method):
            self.methods.learn(method, unparsable=True)
            shown = excerpt(read.text) if read.text.strip() else "(empty)"
            run.notes.append(
                f"attempt {run.calls}: {method} gave an {why} ({shown}); trying {following}"
            )
            return
        raise run.rejected(why, read.text)

    # --- one step ---------------------------------------------------------------------------

    def run(
        self,
        step: StepRequest[M, T] | StepOutcome[T],
        time_left: float | None,
        budget: LLMBudget | None,
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
            outcome = self._outcome(run, *self._chain(run, step).invoke(str(step.step)))
        if stream is not None:
            stream.finish(str(getattr(outcome.value, "answer", "")))
        return outcome

    async def arun(
        self,
        step: StepRequest[M, T] | StepOutcome[T],
        time_left: float | None,
        budget: LLMBudget | None,
    ) -> StepOutcome[T]:
        """:meth:`run`, awaiting the model calls."""
        if isinstance(step, StepOutcome):  # nothing to ask
            return step
        stream = None if step.stream is None else AsyncAnswerStream(ensure_config(), step.stream)
        run = self._start(step, time_left, budget)
        if isinstance(run, StepOutcome):
            outcome = run
        else:
            run.stream = stream
            outcome = self._outcome(run, *(await self._chain(run, step).ainvoke(str(step.step))))
        if stream is not None:
            await stream.finish(str(getattr(outcome.value, "answer", "")))
        return outcome

    def _no_call(self, step: StepRequest[M, T], reason: str, note: str) -> StepOutcome[T]:
        offline = step.offline()
        return StepOutcome(offline.value, 0, (note, FELL_BACK), True, reason, 0.0)

    def _start(
        self, step: StepRequest[M, T], time_left: float | None, budget: LLMBudget | None
    ) -> StepRun | StepOutcome[T]:
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
        return StepRun(bound if time_left is None else min(bound, time_left), budget.calls_left)

    def _chain(self, run: StepRun, step: StepRequest[M, T]) -> Runnable:
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
                retry_if_exception_type=retryable,
                stop_after_attempt=self.config.retries + 1,
                wait_exponential_jitter=False,  # the deadline, not a back-off, bounds retries
            )
            | RunnableLambda(lambda reply: (step.convert(reply), False), name="llm_reply")
        ).with_fallbacks(
            [RunnableLambda(fall_back, name="offline_reasoner")],
            exceptions_to_handle=(StepFailed,),
        )

    def _outcome(self, run: StepRun, value: T, fell_back: bool) -> StepOutcome[T]:
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
