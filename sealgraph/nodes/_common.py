"""Helpers every node uses: resolve the runtime context and write events."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from sealgraph.config import SealConfig, apply_run_overrides
from sealgraph.errors import InputError
from sealgraph.graph.context import SealContext
from sealgraph.graph.events import Event, make_event
from sealgraph.index.protocol import require_search_index
from sealgraph.reasoning.base import FELL_BACK, LLMBudget


def resolve(
    state: dict[str, Any], runtime: Any, default: SealContext
) -> tuple[SealContext, SealConfig]:
    """Return the run's complete context and effective config.

    ``runtime.context`` may be None, or a :class:`SealContext` with some fields left
    None (LangGraph builds one from a dict such as the server's ``context={}``):
    whatever it leaves out comes from ``default``, the context the graph was built
    with. Any other object is a parent graph's own context (sealgraph running as a
    subgraph) and is not sealgraph's to read: the built context applies.

    Raises:
        InputError: The run context's index is not a loaded sealgraph index.

    """
    given = getattr(runtime, "context", None)
    if not isinstance(given, SealContext) or given is default:
        ctx = default
    else:
        if given.index is not None and given.index is not default.index:
            require_search_index(
                given.index,
                where="the run context (SealContext.index)",
                expected="sealgraph.index.load_index(...)",
            )
        ctx = SealContext(
            index=default.index if given.index is None else given.index,
            reasoner=default.reasoner if given.reasoner is None else given.reasoner,
            config=_base_config(given.config, default.config),
        )
    cfg = apply_run_overrides(ctx.config, state.get("config"))
    return ctx, cfg


def _base_config(given: Any, default: Any) -> SealConfig:
    if given is None:
        return default
    if isinstance(given, SealConfig):
        return given
    if isinstance(given, Mapping):  # what a JSON client can send: a run's own overrides
        return apply_run_overrides(default, given)
    raise InputError(
        f"the run context's config must be a SealConfig or a dict, got {type(given).__name__}"
    )


class EventWriter:
    """Collects one node call's events, stamping step, loop and elapsed time."""

    def __init__(self, node: str, config: RunnableConfig | None, loop: int) -> None:
        self.node = node
        meta = (config or {}).get("metadata") or {}
        self.step = int(meta.get("langgraph_step", 0))
        self.loop = loop
        self._t0 = time.perf_counter()
        self.events: list[Event] = []

    def add(
        self,
        kind: str,
        message: str,
        data: dict[str, Any] | None = None,
        *,
        llm_calls: int = 0,
        tokens: int = 0,
    ) -> None:
        """Append one event."""
        self.events.append(
            make_event(
                self.node,
                kind,
                message,
                data,
                step=self.step,
                loop=self.loop,
                llm_calls=llm_calls,
                tokens=tokens,
            )
        )

    def done(self) -> list[Event]:
        """Return the events with the node's elapsed milliseconds filled in."""
        ms = round((time.perf_counter() - self._t0) * 1000, 3)
        for e in self.events:
            e["ms"] = ms
        return self.events

    def outcome_notes(self, outcome: Any, step: str) -> None:
        """Log the LLM calls, retries and fallbacks reported by a reasoner step.

        Each failed attempt is an ``llm_note``; a step that fell back writes one
        ``llm_fallback`` event whose data holds the step and the reason (its last
        failure), which is what ``ask --json`` reports as ``llm_fallbacks``; a step
        that opened the run's LLM circuit writes one ``llm_circuit`` event (``ask
        --json``'s ``llm_circuit``).
        """
        calls = int(getattr(outcome, "llm_calls", 0))
        if calls:
            data: dict[str, Any] = {
                "step": step,
                "seconds": float(getattr(outcome, "seconds", 0.0)),
                "prompt_tokens": int(getattr(outcome, "prompt_tokens", 0)),
                "completion_tokens": int(getattr(outcome, "completion_tokens", 0)),
            }
            if getattr(outcome, "method", ""):
                data["method"] = outcome.method  # the structured output method that answered
            self.add("llm_call", f"{step}: {calls} LLM call(s)", data, llm_calls=calls)
        notes = list(getattr(outcome, "notes", ()))
        fallback = bool(getattr(outcome, "fallback", False))
        if fallback and notes and notes[-1] == FELL_BACK:
            notes.pop()  # the llm_fallback event below says it
        for note in notes:
            self.add("llm_note", f"{step}: {note}", {"step": step})
        if fallback:
            reason = str(getattr(outcome, "fallback_reason", "") or "LLM step failed")
            self.add(
                "llm_fallback",
                f"{step}: {FELL_BACK} ({reason})",
                {"step": step, "reason": reason, "attempts": calls},
            )
        circuit = str(getattr(outcome, "circuit", "") or "")
        if circuit:
            self.add(
                "llm_circuit",
                f"{step}: LLM circuit open ({circuit}); the run's remaining LLM steps "
                "use the offline reasoner",
                {"step": step, "reason": circuit},
            )


def llm_time_left(state: Mapping[str, Any], cfg: SealConfig) -> float:
    """Seconds of LLM time the run has left: ``llm.deadline_s`` minus the state's ``llm_seconds``."""
    return cfg.llm.deadline_s - float(state.get("llm_seconds") or 0.0)


def llm_budget(state: Mapping[str, Any], cfg: SealConfig) -> LLMBudget:
    """Return what the run has left besides time (see :class:`LLMBudget`).

    That is ``llm.max_calls`` minus the state's ``llm_calls``, and the state's
    ``llm_circuit``.
    """
    max_calls = cfg.llm.max_calls
    calls_left = None if max_calls is None else max_calls - int(state.get("llm_calls") or 0)
    return LLMBudget(calls_left=calls_left, circuit=str(state.get("llm_circuit") or ""))


def llm_seconds_update(outcome: Any) -> dict[str, Any]:
    """Return the state update charging a step's LLM time and calls to the run.

    Also opens the run's LLM circuit (``llm_circuit``) when the step did. Offline
    steps spend nothing, so an offline run never writes these keys and its
    checkpoints stay as deterministic as before.
    """
    update: dict[str, Any] = {}
    seconds = float(getattr(outcome, "seconds", 0.0))
    if seconds > 0:
        update["llm_seconds"] = seconds
    calls = int(getattr(outcome, "llm_calls", 0))
    if calls > 0:
        update["llm_calls"] = calls
    circuit = str(getattr(outcome, "circuit", "") or "")
    if circuit:
        update["llm_circuit"] = circuit
    return update
