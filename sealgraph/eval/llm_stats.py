"""What the LLM methods of an evaluation cost: calls, tokens, fallbacks, circuits, time.

:func:`llm_summary` aggregates, for one method over its questions, the graph's
``llm_call``, ``llm_fallback`` and ``llm_circuit`` events (see
:meth:`sealgraph.nodes._common.NodeLog.outcome_notes`) kept in
:attr:`sealgraph.eval.methods.MethodOutput.llm_events`. It is stored under
``report["methods"][NAME]["llm"]`` for the methods that call an LLM (``NAME+llm``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["LLM_TABLE_COLUMNS", "format_llm_table", "llm_summary"]


def llm_summary(
    runs: Sequence[Sequence[Mapping[str, Any]]], seconds: Sequence[float]
) -> dict[str, Any]:
    """Aggregate the LLM events of one method's questions.

    Args:
        runs: Per question, the run's LLM events.
        seconds: Per question, its wall time in seconds.

    Returns:
        ``calls``, ``prompt_tokens`` and ``completion_tokens`` (totals; tokens are 0
        when the server reports no usage), ``fallbacks`` (total) and
        ``fallbacks_by_step`` (step -> reason -> count: one per step that fell back),
        ``circuit_openings`` and ``questions_with_open_circuit``, ``circuits``
        (step -> reason -> count), and ``seconds_per_question`` (mean).

    """
    calls = prompt = completion = fallbacks = openings = open_questions = 0
    by_step: dict[str, dict[str, int]] = {}
    circuits: dict[str, dict[str, int]] = {}
    for events in runs:
        opened = False
        for event in events:
            data = event.get("data") or {}
            kind = event.get("kind")
            step = str(data.get("step") or event.get("node", ""))
            if kind == "llm_call":
                calls += int(event.get("llm_calls", 0))
                prompt += int(data.get("prompt_tokens") or 0)
                completion += int(data.get("completion_tokens") or 0)
            elif kind == "llm_fallback":
                fallbacks += 1
                reason = str(data.get("reason") or event.get("message", ""))
                reasons = by_step.setdefault(step, {})
                reasons[reason] = reasons.get(reason, 0) + 1
            elif kind == "llm_circuit":
                openings += 1
                opened = True
                reason = str(data.get("reason", ""))
                reasons = circuits.setdefault(step, {})
                reasons[reason] = reasons.get(reason, 0) + 1
        open_questions += opened
    n = len(seconds)
    return {
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "fallbacks": fallbacks,
        "fallbacks_by_step": by_step,
        "circuit_openings": openings,
        "questions_with_open_circuit": open_questions,
        "circuits": circuits,
        "seconds_per_question": round(sum(seconds) / n, 3) if n else 0.0,
    }


LLM_TABLE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("calls", "llm_calls", "d"),
    ("prompt_tokens", "prompt_tok", "d"),
    ("completion_tokens", "compl_tok", "d"),
    ("fallbacks", "fallbacks", "d"),
    ("questions_with_open_circuit", "circuit_q", "d"),
    ("seconds_per_question", "s/question", ".2f"),
)
"""Columns of the LLM table: (key of ``metrics["llm"]``, header, format spec)."""


def format_llm_table(methods: Mapping[str, Mapping[str, Any]]) -> str:
    """Render the LLM table of the methods that called an LLM ("" when none did).

    One row per LLM method, then one line per (step, reason) it fell back for.
    """
    from sealgraph.eval.report import format_table

    llm = {name: values["llm"] for name, values in methods.items() if values.get("llm")}
    if not llm:
        return ""
    lines = [format_table(llm, LLM_TABLE_COLUMNS)]
    for name, stats in llm.items():
        for step, reasons in stats.get("fallbacks_by_step", {}).items():
            for reason, count in reasons.items():
                lines.append(f"{name}: {step} fell back {count}x: {reason}")
        for step, reasons in stats.get("circuits", {}).items():
            for reason, count in reasons.items():
                lines.append(f"{name}: LLM circuit opened at {step} {count}x: {reason}")
    return "\n".join(lines)
