"""What every node uses: its event writer and the run's LLM accounts."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config

from sealgraph.config import SealConfig
from sealgraph.graph.events import Event, make_event
from sealgraph.model import Step
from sealgraph.reasoning.base import FELL_BACK, LLMBudget, StepOutcome


class EventWriter:
    """Collects one node call's events, stamping step, loop and elapsed time."""

    def __init__(self, node: str, loop: int) -> None:
        self.node = node
        meta = _node_config().get("metadata") or {}
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

    def outcome_notes(self, outcome: StepOutcome[Any], step: Step | str) -> None:
        """Log the LLM calls, retries and fallbacks reported by a reasoner step.

        Each failed attempt is an ``llm_note``; a step that fell back writes one
        ``llm_fallback`` event whose data holds the step and the reason (its last
        failure), which is what ``ask --json`` reports as ``llm_fallbacks``; a step
        that opened the run's LLM circuit writes one ``llm_circuit`` event (``ask
        --json``'s ``llm_circuit``).
        """
        step = str(step)  # plain text in the state: checkpoints hold plain data only
        if outcome.llm_calls:
            data: dict[str, Any] = {
                "step": step,
                "seconds": float(outcome.seconds),
                "prompt_tokens": int(outcome.prompt_tokens),
                "completion_tokens": int(outcome.completion_tokens),
            }
            if outcome.method:
                data["method"] = outcome.method  # the structured output method that answered
            self.add(
                "llm_call",
                f"{step}: {outcome.llm_calls} LLM call(s)",
                data,
                llm_calls=outcome.llm_calls,
            )
        notes = list(outcome.notes)
        if outcome.fallback and notes and notes[-1] == FELL_BACK:
            notes.pop()  # the llm_fallback event below says it
        for note in notes:
            self.add("llm_note", f"{step}: {note}", {"step": step})
        if outcome.fallback:
            reason = outcome.fallback_reason or "LLM step failed"
            self.add(
                "llm_fallback",
                f"{step}: {FELL_BACK} ({reason})",
                {"step": step, "reason": reason, "attempts": outcome.llm_calls},
            )
        if outcome.circuit:
            self.add(
                "llm_circuit",
                f"{step}: LLM circuit open ({outcome.circuit}); the run's remaining LLM steps "
                "use the offline reasoner",
                {"step": step, "reason": outcome.circuit},
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


def llm_seconds_update(outcome: StepOutcome[Any]) -> dict[str, Any]:
    """Return the state update charging a step's LLM time and calls to the run.

    Also opens the run's LLM circuit (``llm_circuit``) when the step did. Offline
    steps spend nothing, so an offline run never writes these keys and its
    checkpoints stay as deterministic as before.
    """
    update: dict[str, Any] = {}
    if outcome.seconds > 0:
        update["llm_seconds"] = float(outcome.seconds)
    if outcome.llm_calls > 0:
        update["llm_calls"] = int(outcome.llm_calls)
    if outcome.circuit:
        update["llm_circuit"] = outcome.circuit
    return update


def node_config() -> RunnableConfig:
    """Return the running node's LangGraph config (step number, callbacks), or {} outside one."""
    return _node_config()


def _node_config() -> RunnableConfig:
    try:
        return get_config()
    except RuntimeError:  # called outside a graph run (a unit test of one node)
        return {}
