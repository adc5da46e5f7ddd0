"""LLM mode against OpenAI-compatible servers that differ: what goes over the wire.

The fake server (``tests/support/_openai_server.py``) on 127.0.0.1 plays servers as they were seen in
the field: one that answers ``response_format: json_schema`` and ``tools`` with HTTP
500 but accepts ``json_object`` (llama-cpp-python's server, llama.cpp's without
``--jinja``), one that answers every method, one that rejects the key, and no server
at all. Each test counts the requests and reads their JSON bodies: the method
``auto`` falls through to and then uses directly, the token bound of each step,
the run's call budget, and the circuit a refused connection opens (through
``sealgraph ask --llm --json`` as a user runs it).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from support.cli import run_cli
from support.fakes import FakeOpenAI, HTTPError, write_tiny_docs

from sealgraph import build_graph
from sealgraph.cli.ask_cmd import llm_circuit, llm_fallbacks
from sealgraph.config import LLMConfig
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.reasoning.llm import (
    CIRCUIT_OPEN,
    MAX_CALLS_SPENT,
    LLMReasoner,
    NeedsReading,
    schema_hint,
)

QUESTION = "Who designed the Lumen Lamp?"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("llm-servers")
    return build_index(write_tiny_docs(root / "docs"), root / "idx", embedder="none", warn=print)


@pytest.fixture(autouse=True)
def _no_thread_left_behind():
    before = set(threading.enumerate())
    yield
    left = [t for t in threading.enumerate() if t not in before and t.name == "fake-openai"]
    assert not left, left


# What a well-behaved model would reply at each step, for the tiny corpus.
REPLIES: dict[str, dict[str, Any]] = {
    "needs": {
        "answer_type": "person",
        "hops": 1,
        "structure": "single",
        "entities": ["Lumen Lamp"],
        "options": [],
        "answer_modifiers": [],
        "compared_attribute": "",
    },
    "extract": {"entities": [], "relations": [], "qualifiers": []},
    "assess": {"sufficient": True, "gaps": [], "supporting": [1]},
    "plan": {"queries": []},
    "generate": {"answer": "Ada Brightwater designed it [1]."},  # [n] only, no list
}
# Each step's system message starts its own way (sealgraph/prompts/*.md).
OPENINGS = {
    "You read one question": "needs",
    "You extract facts": "extract",
    "You are the sufficiency gate": "assess",
    "You write search queries": "plan",
    "Answer the question using only": "generate",
}


def step_of(body: dict[str, Any]) -> str:
    system = body["messages"][0]
    assert system["role"] == "system", body["messages"]
    return next(step for opening, step in OPENINGS.items() if system["content"].startswith(opening))


def method_of(body: dict[str, Any]) -> str:
    if body.get("tools"):
        return "function_calling"
    kind = (body.get("response_format") or {}).get("type")
    return {"json_schema": "json_schema", "json_object": "json_mode"}.get(kind, "plain")


def tool_call(body: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    name = body["tool_choice"]["function"]["name"]
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": ""}}
    call["function"]["arguments"] = json.dumps(args)
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def llama_cpp_like(body: dict[str, Any]) -> dict[str, Any] | HTTPError:
    """A server that supports json_object only (errors as llama.cpp's servers word them)."""
    method = method_of(body)
    if method == "json_schema":
        return HTTPError(
            500, 'response_format type must be one of "text" or "json_object", but got: json_schema'
        )
    if method == "function_calling":
        return HTTPError(500, "tools param requires --jinja flag")
    return {"role": "assistant", "content": json.dumps(REPLIES[step_of(body)])}


def capable(body: dict[str, Any]) -> dict[str, Any]:
    """A server (and model) that answers every method well."""
    reply = REPLIES[step_of(body)]
    if method_of(body) == "function_calling":
        return tool_call(body, reply)
    return {"role": "assistant", "content": json.dumps(reply)}


def chat_model(server: FakeOpenAI, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(base_url=server.url, api_key="test-key", model="tiny-gguf", **kwargs)


# --- auto: fall through, remember, use directly ----------------------------------------------


def test_auto_falls_through_to_json_mode_and_then_uses_it_directly():
    gazetteer = Gazetteer([("lamp", "Lumen Lamp")])
    with FakeOpenAI("reply", respond=llama_cpp_like) as server:
        llm = LLMReasoner(chat_model(server))
        first = llm.needs(QUESTION, gazetteer)
        assert server.requests == 3
        second = llm.needs("Who made the Lumen Lamp?", gazetteer)
        assert server.requests == 4
        bodies = list(server.bodies)
    assert [method_of(b) for b in bodies] == [
        "json_schema",  # ChatOpenAI's own method: HTTP 500 "must be one of text or json_object"
        "function_calling",  # HTTP 500 "tools param requires --jinja flag"
        "json_mode",  # works: remembered
        "json_mode",  # the next step goes straight to it
    ]
    assert not first.fallback and not second.fallback
    assert (first.method, second.method) == ("json_mode", "json_mode")
    assert llm.structured_output_method() == "json_mode"
    assert "the server does not support json_schema" in first.notes[0]
    assert "the server does not support function_calling" in first.notes[1]
    assert "json_mode works for model 'tiny-gguf' at http://127.0.0.1" in first.notes[2]
    assert second.notes == ()
    # A JSON-mode request says JSON and carries the compact schema in its system message.
    system = bodies[2]["messages"][0]["content"]
    assert "JSON" in system and schema_hint(NeedsReading) in system


def test_a_whole_run_against_a_json_object_only_server(index):
    with FakeOpenAI("reply", respond=llama_cpp_like) as server:
        graph = build_graph(index=index, llm=chat_model(server))
        values = graph.invoke({"question": QUESTION})
        bodies = list(server.bodies)
    llm_steps = [e for e in values["seal_log"] if e["kind"] == "llm_call"]
    assert not llm_fallbacks(values["seal_log"])
    # Two probes in the first step only; every later step makes one json_object request.
    assert len(bodies) == len(llm_steps) + 2
    assert [method_of(b) for b in bodies[3:]] == ["json_mode"] * (len(bodies) - 3)
    assert {e["data"]["method"] for e in llm_steps} == {"json_mode"}
    # The answer cites with [1] in its text only: accepted, read as a citation.
    assert values["answer"] == "Ada Brightwater designed it [1]."
    assert [c["n"] for c in values["citations"]] == [1]


# --- bounded cost -----------------------------------------------------------------------------


def test_max_tokens_is_sent_with_every_step(index):
    with FakeOpenAI("reply", respond=capable) as server:
        graph = build_graph(
            index=index,
            llm=chat_model(server),
            config={"llm": {"max_tokens": {"generate": 100}}},
        )
        graph.invoke({"question": QUESTION})
        bodies = list(server.bodies)
    sent = {step_of(b): b.get("max_tokens") for b in bodies}
    assert sent == {"needs": 256, "extract": 768, "assess": 384, "generate": 100}
    # As max_tokens, the field every OpenAI-compatible server reads (ChatOpenAI would
    # send max_completion_tokens, which llama-cpp-python's server ignores).
    assert all("max_completion_tokens" not in b for b in bodies)


def test_max_completion_tokens_when_asked():
    gazetteer = Gazetteer([("lamp", "Lumen Lamp")])
    with FakeOpenAI("reply", respond=capable) as server:
        config = LLMConfig(max_tokens_param="max_completion_tokens")
        LLMReasoner(chat_model(server), config).needs(QUESTION, gazetteer)
        (body,) = server.bodies
    assert body["max_completion_tokens"] == 256 and "max_tokens" not in body


def test_max_calls_caps_the_requests_of_a_run(index):
    with FakeOpenAI("reply", respond=capable) as server:
        graph = build_graph(index=index, llm=chat_model(server), config={"llm": {"max_calls": 2}})
        values = graph.invoke({"question": QUESTION})
        assert server.requests == 2
    fallbacks = llm_fallbacks(values["seal_log"])
    assert fallbacks and {f["reason"] for f in fallbacks} == {MAX_CALLS_SPENT}


# --- permanent failures: the circuit ------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_connection_opens_the_circuit_in_ask_json(index, tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    start = time.monotonic()
    result = run_cli(
        "ask",
        QUESTION,
        "--index",
        str(index.path),
        "--db",
        str(tmp_path / "runs.sqlite"),
        "--llm",
        "--set",
        f"llm.base_url={url}",
        "--json",
        env={
            "SEALGRAPH_DATA_DIR": str(tmp_path / "data"),
            "SEALGRAPH_CACHE_DIR": str(tmp_path / "cache"),
        },
        timeout=60,
    )
    took = time.monotonic() - start
    assert result.code == 3 and "Traceback" not in result.err, result.err  # fell back
    out = json.loads(result.out)
    circuit = out["llm_circuit"]
    assert circuit["step"] == "needs"
    assert circuit["reason"].startswith("cannot connect to the LLM server")
    assert "Connection refused" in circuit["reason"]
    fallbacks = out["llm_fallbacks"]
    assert fallbacks[0]["reason"] == circuit["reason"]
    assert fallbacks[1:] and all(
        f["reason"] == f"{CIRCUIT_OPEN}: {circuit['reason']}" for f in fallbacks[1:]
    )
    # Said on stderr too, --json or not.
    assert "sealgraph: warning: LLM circuit opened at needs: cannot connect" in result.err
    print(f"refused connection: ask --llm took {took:.1f} s")
    assert took < 30


def test_a_refused_connection_makes_one_attempt_in_the_run(index):
    url = f"http://127.0.0.1:{free_port()}/v1"
    model = ChatOpenAI(base_url=url, api_key="x", model="tiny-gguf", timeout=5)
    values = build_graph(index=index, llm=model).invoke({"question": QUESTION})
    calls = sum(int(e.get("llm_calls", 0)) for e in values["seal_log"])
    assert calls == 1
    assert llm_circuit(values["seal_log"])["step"] == "needs"


def test_a_rejected_key_opens_the_circuit_after_one_request(index):
    def unauthorized(body: dict[str, Any]) -> HTTPError:
        return HTTPError(401, "Incorrect API key provided", "invalid_request_error")

    with FakeOpenAI("reply", respond=unauthorized) as server:
        values = build_graph(index=index, llm=chat_model(server)).invoke({"question": QUESTION})
        assert server.requests == 1
    circuit = llm_circuit(values["seal_log"])
    assert circuit["reason"].startswith("the API key was rejected")


def test_a_named_method_the_server_rejects_opens_the_circuit(index):
    with FakeOpenAI("reply", respond=llama_cpp_like) as server:
        graph = build_graph(
            index=index,
            llm=chat_model(server),
            config={"llm": {"structured_output_method": "json_schema"}},
        )
        values = graph.invoke({"question": QUESTION})
        assert server.requests == 1
    circuit = llm_circuit(values["seal_log"])
    assert "does not support llm.structured_output_method=json_schema" in circuit["reason"]


def llama_cpp_python_like(body: dict[str, Any]) -> dict[str, Any] | HTTPError:
    """llama-cpp-python's server: json_schema fails its request validation (HTTP 500,
    pydantic's literal_error), function calling with a named tool works."""
    method = method_of(body)
    if method == "json_schema":
        return HTTPError(
            500,
            "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', "
            "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}",
        )
    return capable(body)


def test_auto_reads_llama_cpp_pythons_validation_error_as_unsupported():
    gazetteer = Gazetteer([("lamp", "Lumen Lamp")])
    with FakeOpenAI("reply", respond=llama_cpp_python_like) as server:
        llm = LLMReasoner(chat_model(server))
        first = llm.needs(QUESTION, gazetteer)
        llm.needs("Who made the Lumen Lamp?", gazetteer)
        bodies = list(server.bodies)
    # Not retried as a passing failure: one probe, then function calling, remembered.
    assert [method_of(b) for b in bodies] == ["json_schema", "function_calling", "function_calling"]
    assert not first.fallback and first.method == "function_calling"
