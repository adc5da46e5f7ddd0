"""A permanent LLM failure opens a circuit for the run; ``llm.max_calls`` caps a run's calls.

With scripted fake chat models: which failures open the circuit (and are never
retried), that a step given an open circuit or no calls left makes no call, and,
through the graph, that the circuit and the call account are per run (kept in the
graph state, like ``llm_seconds``), that the run's log says so, and that ``ask``
reports it. The same against the fake HTTP server (a refused connection through
``sealgraph ask --llm --json``) is in ``tests/reliability/test_llm_servers.py``.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from support.fakes import GRAPH_QUESTION, GRAPH_READING, NO_FACTS, ScriptedChatModel

from sealgraph import build_graph
from sealgraph.cli.ask_cmd import circuit_warning, fallback_warning, llm_circuit, llm_fallbacks
from sealgraph.config import LLMConfig
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import question_needs
from sealgraph.reasoning.answer import SpanText
from sealgraph.reasoning.base import FELL_BACK, LLMBudget
from sealgraph.reasoning.llm import CIRCUIT_OPEN, MAX_CALLS_SPENT, LLMReasoner
from sealgraph.reasoning.offline import OfflineReasoner

_ids = itertools.count()
Scripted = ScriptedChatModel


def tool(name: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{next(_ids)}"}])


class HTTPStatusError(Exception):
    """An HTTP error as the OpenAI SDK raises one (it carries ``status_code``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Error code: {status} - {message}")
        self.status_code = status


GAZETTEER = Gazetteer([("vey", "Ilse Vey")])
QUESTION = "Where was Ilse Vey born?"
NEEDS = question_needs(QUESTION, GAZETTEER)
SPANS = [SpanText(1, "vey", "Ilse Vey", "Ilse Vey was born in Tallmoor in 1950.")]
REFUSED = ConnectionRefusedError(111, "Connection refused")


def offline_answer():
    return OfflineReasoner().generate(NEEDS, SPANS, []).value


# --- which failures open the circuit --------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (REFUSED, "cannot connect to the LLM server (ConnectionRefusedError: "),
        (HTTPStatusError(401, "Incorrect API key provided"), "the API key was rejected"),
        (HTTPStatusError(404, "model 'tiny' not found"), "not found"),
    ],
)
def test_a_permanent_failure_opens_the_circuit_and_is_not_retried(error, reason):
    model = Scripted(script=[error, tool("AnswerOut", answer="Tallmoor [1]")])
    out = LLMReasoner(model, LLMConfig(retries=3)).generate(NEEDS, SPANS, [])
    assert out.fallback and out.value == offline_answer()
    assert model.calls == out.llm_calls == 1  # no retry, no method probe
    assert out.circuit == out.fallback_reason and out.circuit.startswith(reason)
    assert "the LLM circuit opens" in out.notes[0] and out.notes[-1] == FELL_BACK


def test_a_named_method_the_server_rejects_opens_the_circuit():
    error = HTTPStatusError(500, "tools param requires --jinja flag")
    model = Scripted(script=[error])
    llm = LLMReasoner(model, LLMConfig(structured_output_method="function_calling"))
    out = llm.generate(NEEDS, SPANS, [])
    assert model.calls == 1 and out.fallback
    assert out.circuit.startswith(
        "the server does not support llm.structured_output_method=function_calling"
    )
    assert "set it to auto" in out.circuit


def test_auto_opens_the_circuit_only_when_no_method_is_supported():
    unsupported = HTTPStatusError(400, "response_format is not supported by this server")
    model = Scripted(script=[unsupported] * 4)
    llm = LLMReasoner(model, LLMConfig())
    out = llm.generate(NEEDS, SPANS, [])
    assert model.calls == out.llm_calls == 4  # every method, once
    assert out.circuit.startswith("the server supports no structured output method")
    # A later step (another run) learns it without a call.
    again = llm.generate(NEEDS, SPANS, [])
    assert model.calls == 4 and again.circuit.startswith("the server supports no structured")


def test_a_passing_server_error_is_retried_not_a_circuit():
    model = Scripted(script=[HTTPStatusError(500, "fake internal error")] * 2)
    out = LLMReasoner(model, LLMConfig(retries=1)).generate(NEEDS, SPANS, [])
    assert out.fallback and model.calls == 2 and out.circuit == ""


# --- a step given the run's budget -------------------------------------------------------------


def test_a_step_makes_no_call_once_the_runs_circuit_is_open():
    model = Scripted(script=[tool("AnswerOut", answer="Tallmoor [1]")])
    budget = LLMBudget(circuit="cannot connect to the LLM server (refused)")
    out = LLMReasoner(model, LLMConfig()).generate(NEEDS, SPANS, [], budget=budget)
    assert model.calls == 0 and out.llm_calls == 0 and out.value == offline_answer()
    assert out.fallback_reason == f"{CIRCUIT_OPEN}: cannot connect to the LLM server (refused)"
    assert out.circuit == ""  # it did not open it


def test_a_step_makes_no_call_once_the_runs_calls_are_spent():
    model = Scripted(script=[tool("AnswerOut", answer="Tallmoor [1]")])
    out = LLMReasoner(model, LLMConfig()).generate(NEEDS, SPANS, [], budget=LLMBudget(0))
    assert model.calls == 0 and out.fallback and out.fallback_reason == MAX_CALLS_SPENT


def test_the_runs_calls_left_stop_retries_and_probes():
    model = Scripted(script=[tool("AnswerOut", answer="uncited")] * 3)
    out = LLMReasoner(model, LLMConfig(retries=2)).generate(
        NEEDS, SPANS, [], budget=LLMBudget(calls_left=1)
    )
    assert model.calls == out.llm_calls == 1 and out.fallback
    assert out.notes[1] == f"attempt 2 not made: {MAX_CALLS_SPENT} (the run's calls are made)"
    assert (
        out.fallback_reason
        == f"the answer cites no passage: write [n] after each claim ({MAX_CALLS_SPENT})"
    )


# --- through the graph: per run, in the state and the log ------------------------------------

READING = GRAPH_READING
GOOD_RUN = [
    tool("NeedsReading", **READING),
    tool("Extraction", **NO_FACTS),
    tool("Assessment", sufficient=True, gaps=[], supporting=[1]),
    tool("AnswerOut", answer="Port Ellis [1]"),  # markers, no citations list
]


def calls_of(values) -> int:
    return sum(int(e.get("llm_calls", 0)) for e in values["seal_log"])


def test_a_refused_connection_opens_the_circuit_for_the_rest_of_the_run(tiny_index):
    model = Scripted(script=[REFUSED, *GOOD_RUN])
    graph = build_graph(tiny_index, llm=model)
    values = graph.invoke({"question": GRAPH_QUESTION})
    offline = build_graph(tiny_index).invoke({"question": GRAPH_QUESTION})
    assert values["answer"] == offline["answer"]
    assert model.calls == calls_of(values) == 1  # one failed request, then none
    circuit = llm_circuit(values["seal_log"])
    assert circuit is not None and circuit["step"] == "needs"
    assert circuit["reason"].startswith("cannot connect to the LLM server")
    fallbacks = llm_fallbacks(values["seal_log"])
    assert fallbacks[0] == {"step": "needs", "reason": circuit["reason"], "loop": 0}
    assert {f["step"] for f in fallbacks} >= {"needs", "extract", "assess", "generate"}
    for f in fallbacks[1:]:
        assert f["reason"] == f"{CIRCUIT_OPEN}: {circuit['reason']}"
    assert circuit_warning(circuit).startswith("sealgraph: warning: LLM circuit opened at needs")
    # The fallback line does not repeat the reason its own line gives.
    assert "extract: LLM circuit open;" in fallback_warning(fallbacks)


def test_the_circuit_and_the_call_account_are_kept_per_run(tiny_index):
    # One compiled graph (one reasoner) serves both runs: the first run's dead
    # endpoint does not close the LLM to the second.
    model = Scripted(script=[REFUSED, *GOOD_RUN])
    graph = build_graph(tiny_index, llm=model, checkpointer=InMemorySaver())
    first = {"configurable": {"thread_id": "first"}}
    second = {"configurable": {"thread_id": "second"}}
    graph.invoke({"question": GRAPH_QUESTION}, first)
    values = graph.invoke({"question": GRAPH_QUESTION}, second)
    one, two = graph.get_state(first).values, graph.get_state(second).values
    assert one["llm_circuit"].startswith("cannot connect") and one["llm_calls"] == 1
    assert two.get("llm_circuit", "") == "" and two["llm_calls"] == 4
    assert llm_circuit(values["seal_log"]) is None and not llm_fallbacks(values["seal_log"])
    assert values["answer"] == "Port Ellis [1]"
    methods = {e["data"].get("method") for e in values["seal_log"] if e["kind"] == "llm_call"}
    assert methods == {"function_calling"}  # logged with each step's calls


def test_max_calls_caps_the_run(tiny_index):
    model = Scripted(script=list(GOOD_RUN))
    graph = build_graph(tiny_index, llm=model, config={"llm": {"max_calls": 2}})
    values = graph.invoke({"question": GRAPH_QUESTION})
    assert model.calls == calls_of(values) == 2
    fallbacks = llm_fallbacks(values["seal_log"])
    assert fallbacks and {f["reason"] for f in fallbacks} == {MAX_CALLS_SPENT}
    assert fallbacks[-1]["step"] == "generate"
    assert llm_circuit(values["seal_log"]) is None


def test_max_calls_can_be_set_per_run(tiny_index):
    model = Scripted(script=list(GOOD_RUN))
    graph = build_graph(tiny_index, llm=model)
    values = graph.invoke({"question": GRAPH_QUESTION}, context={"config": {"llm.max_calls": 1}})
    assert model.calls == 1
    assert {f["reason"] for f in llm_fallbacks(values["seal_log"])} == {MAX_CALLS_SPENT}
