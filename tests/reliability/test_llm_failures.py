"""Every way an OpenAI-compatible endpoint fails ends in an answer, in bounded time.

A fake server (``tests/support/_openai_server.py``) plays the endpoint in one failure mode per test:
a body that is not JSON, HTTP 500, a schema-invalid tool call, schema-invalid JSON
content, no answer at all, an answer trickled a byte at a time, and a 50 MB reply.
Each test asserts that the LLM steps fall back to the offline reasoner (logged, and
listed in ``ask --json``'s ``llm_fallbacks``), that the run still completes with the
offline answer and no traceback, and that it takes bounded time. Some modes go
through the CLI as a user runs it; the others through
``build_graph(index=..., llm=ChatOpenAI(base_url=...))``.

Time bounds are asserted as a generous multiple of the run's ``llm.deadline_s`` plus
a start-up allowance (:func:`assert_bounded`), never as a tight wall time: other jobs
share the machine's cores. What pins the behaviour down is the fallback reasons and
the request counts.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from support.cli import run_cli
from support.fakes import FILL, FakeOpenAI, write_tiny_docs

from sealgraph import build_graph
from sealgraph.cli.ask_cmd import EXIT_LLM_FELL_BACK, llm_fallbacks
from sealgraph.config import LLMConfig
from sealgraph.reasoning.llm import LLMReasoner, chat_model_from_config
from sealgraph.reasoning.llm._http import REPLY_CEILING_BYTES, is_guarded, reply_byte_bound

QUESTION = "Who designed the Lumen Lamp?"
LLM_STEPS = {"needs", "extract", "assess", "plan", "generate"}
CLI_STARTUP_S = 30.0
"""Allowance for the CLI's own start-up (interpreter, imports, index) on loaded cores."""
GRAPH_STARTUP_S = 5.0
"""Allowance for an in-process run's work besides its LLM time."""
SOCKET_BUFFERS = 16 * 1024 * 1024
"""Bytes a server can push into the kernel's socket buffers that the client never read."""


def assert_bounded(took: float, deadline_s: float, startup_s: float) -> None:
    """A run bounded by ``llm.deadline_s`` ends within 6 × the deadline plus its start-up."""
    assert took < 6 * deadline_s + startup_s, (took, deadline_s)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("llm-failures")
    return build_index(write_tiny_docs(root / "docs"), root / "idx", embedder="none", warn=print)


@pytest.fixture(scope="module")
def offline_answer(index) -> str:
    """What the offline reasoner answers: every fallen-back run must answer the same."""
    return build_graph(index).invoke({"question": QUESTION})["answer"]


@pytest.fixture(autouse=True)
def _no_thread_left_behind():
    before = set(threading.enumerate())
    yield
    left = [t for t in threading.enumerate() if t not in before and t.name == "fake-openai"]
    assert not left, left


def ask_cli(index, tmp_path, server: FakeOpenAI, *extra: str):
    """Run ``sealgraph ask --llm`` against ``server``; return (result, wall seconds)."""
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
        f"llm.base_url={server.url}",
        *extra,
        env={
            "SEALGRAPH_DATA_DIR": str(tmp_path / "data"),
            "SEALGRAPH_CACHE_DIR": str(tmp_path / "cache"),
        },
        timeout=180,
    )
    return result, time.monotonic() - start


def ask_graph(index, server: FakeOpenAI, **llm_settings):
    """Answer through ``build_graph`` with a user-built ChatOpenAI; return (values, fallbacks)."""
    # Built as a user would, SDK retries left at their default: the reasoner turns
    # them off, which the request counts below check.
    model = ChatOpenAI(base_url=server.url, api_key="test-key", model="fake-model", timeout=5)
    graph = build_graph(index=index, llm=model, config={"llm": llm_settings})
    values = graph.invoke({"question": QUESTION})
    return values, llm_fallbacks(values["seal_log"])


def assert_every_llm_step_fell_back(fallbacks, fragment: str) -> None:
    assert fallbacks, "no fallback reported"
    assert {f["step"] for f in fallbacks} <= LLM_STEPS
    assert {"needs", "extract", "assess", "generate"} <= {f["step"] for f in fallbacks}
    for f in fallbacks:
        assert fragment in f["reason"], f


def assert_completed(result, offline_answer: str) -> dict:
    # Answered, but by the offline reasoner: the exit status says so (scripts can tell).
    assert result.code == EXIT_LLM_FELL_BACK, result.err
    assert "Traceback" not in result.err, result.err
    out = json.loads(result.out)
    assert out["answer"] == offline_answer
    return out


# --- through the CLI --------------------------------------------------------------------


def test_a_body_that_is_not_json_falls_back(index, tmp_path, offline_answer):
    with FakeOpenAI("garbage") as server:
        result, took = ask_cli(index, tmp_path, server, "--json")
    out = assert_completed(result, offline_answer)
    assert_every_llm_step_fell_back(out["llm_fallbacks"], "JSONDecodeError")
    # One retry per step, then the fallback: two requests per step, no more.
    assert server.requests == 2 * len(out["llm_fallbacks"])
    assert "LLM fallback" in result.err  # the progress lines flag them too
    assert took < 45


def test_an_endpoint_that_never_answers_is_bounded_by_the_run_deadline(
    index, tmp_path, offline_answer
):
    with FakeOpenAI("hang") as server:
        result, took = ask_cli(
            index,
            tmp_path,
            server,
            "--json",
            "--set",
            "llm.timeout_s=1",
            "--set",
            "llm.deadline_s=4",
        )
    out = assert_completed(result, offline_answer)
    fallbacks = out["llm_fallbacks"]
    # Needs and extract each spend their 2 s step bound (1 s × 2 attempts); then the
    # run's 4 s are spent and every later step falls back without a call.
    assert [f["step"] for f in fallbacks[:2]] == ["needs", "extract"]
    assert all("timed out" in f["reason"].lower() for f in fallbacks[:2]), fallbacks
    assert fallbacks[2:] and all(f["reason"] == "run deadline spent" for f in fallbacks[2:])
    assert fallbacks[-1]["step"] == "generate"
    assert server.requests == 4
    # The wait was shown while it lasted, with its bound: one line per call.
    waits = [line for line in result.err.splitlines() if "waiting for the LLM" in line]
    assert waits[0] == (
        "sealgraph: waiting for the LLM (needs, call 1): up to 2 s, "
        "then the offline reasoner answers this step"
    ), result.err
    assert len(waits) == server.requests, result.err
    # The LLM part is bounded by llm.deadline_s; the rest is the CLI's own start-up.
    print(f"never-answering endpoint: ask --llm took {took:.1f} s")
    assert_bounded(took, 4, CLI_STARTUP_S)


def test_an_endpoint_that_trickles_its_body_is_cut_by_the_run_deadline(
    index, tmp_path, offline_answer
):
    # HTTP 200, then one byte every 0.2 s: each read gets a byte well within
    # timeout_s, so only a wall-clock bound ends the attempt (before, the run went
    # on past 300 s with llm.timeout_s=5 and llm.deadline_s=10).
    with FakeOpenAI("trickle", hang_s=300) as server:
        result, took = ask_cli(
            index,
            tmp_path,
            server,
            "--json",
            "--set",
            "llm.timeout_s=1",
            "--set",
            "llm.deadline_s=3",
        )
    out = assert_completed(result, offline_answer)
    fallbacks = out["llm_fallbacks"]
    # Needs is cut at its 2 s step bound, extract at the 1 s the run has left; no
    # retry starts in a spent step, and the later steps make no call.
    assert [f["step"] for f in fallbacks[:2]] == ["needs", "extract"]
    for f in fallbacks[:2]:
        assert f["reason"].startswith("timed out: the attempt's wall-clock bound"), f
    assert fallbacks[2:] and all(f["reason"] == "run deadline spent" for f in fallbacks[2:])
    assert server.requests == 2
    print(f"trickling endpoint: ask --llm took {took:.1f} s")
    assert_bounded(took, 3, CLI_STARTUP_S)


def _oversized_answer(body: dict) -> dict:
    """A valid answer 50 MB long for the generate step; nothing usable for the others."""
    if "AnswerOut" not in json.dumps(body):
        return {"role": "assistant", "content": "no JSON here"}
    answer = {"answer": f"Ada Brightwater {FILL} [1]", "citations": [1]}
    return {"role": "assistant", "content": json.dumps(answer)}


def _db_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())


@pytest.mark.parametrize("announced", [False, True], ids=["unannounced", "content-length"])
def test_a_reply_larger_than_its_step_bound_is_cut_and_rejected(
    index, tmp_path, offline_answer, announced
):
    # A 50 MB answer whose usage says 1 token: before, it was the run's answer
    # (and its checkpoint 210 MB), even with llm.max_tokens.generate=50.
    with FakeOpenAI("oversize", respond=_oversized_answer, oversize_length=announced) as server:
        result, _ = ask_cli(
            index,
            tmp_path,
            server,
            "--json",
            "--set",
            "llm.max_tokens.generate=50",
            "--set",
            "llm.structured_output_method=json_mode",
        )
    out = assert_completed(result, offline_answer)
    generate = [f for f in out["llm_fallbacks"] if f["step"] == "generate"]
    assert len(generate) == 1, out["llm_fallbacks"]
    reason = generate[0]["reason"]
    assert reason.startswith("reply too large: "), reason
    assert "llm.max_tokens.generate=50" in reason
    # Not retried (the server ignores the token bound), and never read whole: what
    # the server got rid of is the byte bound plus the kernel's socket buffers.
    assert sum("AnswerOut" in json.dumps(b) for b in server.bodies) == 1
    assert server.bytes_sent < reply_byte_bound(50) + SOCKET_BUFFERS < server.oversize_bytes
    assert _db_bytes(tmp_path / "runs.sqlite") < 5_000_000


def test_a_step_without_max_tokens_still_has_a_ceiling(index, offline_answer):
    with FakeOpenAI("oversize", respond=_oversized_answer, oversize_length=False) as server:
        values, fallbacks = ask_graph(
            index,
            server,
            max_tokens={"generate": None},
            structured_output_method="json_mode",
        )
    assert values["answer"] == offline_answer
    reason = next(f["reason"] for f in fallbacks if f["step"] == "generate")
    assert reason.startswith(f"reply too large: over {REPLY_CEILING_BYTES:,} bytes"), reason
    assert "llm.max_tokens.generate not set" in reason
    assert server.bytes_sent < REPLY_CEILING_BYTES + SOCKET_BUFFERS < server.oversize_bytes


def test_the_reply_byte_bound_formula():
    assert reply_byte_bound(50) == 64 * 1024 + 50 * 1024
    assert reply_byte_bound(512) == 64 * 1024 + 512 * 1024
    assert reply_byte_bound(None) == REPLY_CEILING_BYTES == 8 * 1024 * 1024
    assert reply_byte_bound(1_000_000) == REPLY_CEILING_BYTES


def test_text_output_warns_once_on_stderr_when_steps_fell_back(index, tmp_path, offline_answer):
    with FakeOpenAI("http_500") as server:
        result, _ = ask_cli(index, tmp_path, server)
    assert result.code == EXIT_LLM_FELL_BACK and "Traceback" not in result.err, result.err
    assert result.out.splitlines()[0] == offline_answer
    warnings = [line for line in result.err.splitlines() if "warning" in line]
    assert len(warnings) == 1, result.err
    assert warnings[0].startswith("sealgraph: warning: ")
    assert "LLM steps fell back to the offline reasoner (needs: " in warnings[0]
    assert "500" in warnings[0]


# --- through build_graph ----------------------------------------------------------------


def test_http_500_falls_back(index, offline_answer):
    with FakeOpenAI("http_500") as server:
        start = time.monotonic()
        values, fallbacks = ask_graph(index, server)
        took = time.monotonic() - start
    assert values["answer"] == offline_answer
    assert_every_llm_step_fell_back(fallbacks, "500")
    # The OpenAI SDK's own retries (2 by default) are off: ours are the only ones.
    assert server.requests == 2 * len(fallbacks)
    kinds = [e["kind"] for e in values["seal_log"]]
    assert kinds.count("llm_fallback") == len(fallbacks)
    assert kinds.count("llm_note") >= 2 * len(fallbacks)  # each failed attempt, logged
    assert took < 30


def test_a_schema_invalid_tool_call_falls_back(index, offline_answer):
    with FakeOpenAI("invalid_tool_call") as server:
        values, fallbacks = ask_graph(index, server)
    # Before, {"totally": "wrong", "sufficient": "maybe"} read as an empty extraction
    # and changed the answer; now it is a failure, and the offline reasoner answers.
    assert values["answer"] == offline_answer
    assert_every_llm_step_fell_back(fallbacks, "does not match its schema")
    notes = [e["message"] for e in values["seal_log"] if e["kind"] == "llm_note"]
    assert any('reply: {"totally": "wrong", "sufficient": "maybe"}' in n for n in notes)
    assert server.requests == 2 * len(fallbacks)


def test_schema_invalid_json_content_falls_back(index, offline_answer):
    with FakeOpenAI("invalid_json") as server:
        values, fallbacks = ask_graph(index, server, structured_output_method="json_mode")
    assert values["answer"] == offline_answer
    assert_every_llm_step_fell_back(fallbacks, "does not match its schema")
    assert all(b.get("response_format") == {"type": "json_object"} for b in server.bodies)
    assert server.requests == 2 * len(fallbacks)


def test_the_run_deadline_is_kept_per_run_in_the_graph_state(index, offline_answer):
    with FakeOpenAI("hang") as server:
        model = ChatOpenAI(base_url=server.url, api_key="test-key", model="fake-model")
        graph = build_graph(
            index=index,
            llm=model,
            config={"llm": {"timeout_s": 0.5, "deadline_s": 1.5}},
            checkpointer=InMemorySaver(),
        )
        for run in (1, 2):
            config = {"configurable": {"thread_id": f"run-{run}"}}
            values = graph.invoke({"question": QUESTION}, config)
            assert values["answer"] == offline_answer
            spent = graph.get_state(config).values["llm_seconds"]
            assert 1.4 <= spent < 2.5, spent
            # Needs: 2 attempts (its 1 s bound); extract: 1 attempt (0.5 s left); then
            # nothing. The second run has its own account, not what the first one left.
            assert server.requests == 3 * run
            reasons = [f["reason"] for f in llm_fallbacks(values["seal_log"])]
            assert reasons[2:] and set(reasons[2:]) == {"run deadline spent"}


def test_an_http_attempt_never_outlasts_what_is_left_of_the_run(index, offline_answer):
    # A 10 s HTTP timeout, but only 1 s of LLM time for the run: the one attempt made
    # is cut at 1 s (a per-request timeout), not at 10 s.
    with FakeOpenAI("hang") as server:
        start = time.monotonic()
        values, fallbacks = ask_graph(index, server, timeout_s=10, deadline_s=1)
        took = time.monotonic() - start
    assert values["answer"] == offline_answer
    assert server.requests == 1
    assert fallbacks[0]["step"] == "needs"
    assert "timed out" in fallbacks[0]["reason"].lower()
    assert {f["reason"] for f in fallbacks[1:]} == {"run deadline spent"}
    assert_bounded(took, 1, GRAPH_STARTUP_S)


@pytest.mark.parametrize("call", ["invoke", "ainvoke"])
@pytest.mark.parametrize("part", ["body", "headers"])
def test_a_trickled_answer_is_cut_at_the_deadline_sync_and_async(index, offline_answer, part, call):
    # The headers trickled one byte at a time are cut as well as the body: every
    # socket read of the attempt ends by its deadline, in invoke and ainvoke alike.
    with FakeOpenAI("trickle", hang_s=300, trickle_headers=part == "headers") as server:
        model = ChatOpenAI(base_url=server.url, api_key="test-key", model="fake-model")
        graph = build_graph(
            index=index, llm=model, config={"llm": {"timeout_s": 1, "deadline_s": 2}}
        )
        start = time.monotonic()
        if call == "invoke":
            values = graph.invoke({"question": QUESTION})
        else:
            values = asyncio.run(graph.ainvoke({"question": QUESTION}))
        took = time.monotonic() - start
    assert values["answer"] == offline_answer
    fallbacks = llm_fallbacks(values["seal_log"])
    assert fallbacks[0]["step"] == "needs"
    assert fallbacks[0]["reason"].startswith("timed out: the attempt's wall-clock bound")
    assert {f["reason"] for f in fallbacks[1:]} == {"run deadline spent"}
    assert server.requests == 1
    assert_bounded(took, 2, GRAPH_STARTUP_S)


def test_every_chat_model_gets_guarded_http_clients():
    import openai

    # Made by sealgraph, made by the user without clients, and with the user's own
    # clients (guarded in place; requests outside an attempt pass through as before).
    own = chat_model_from_config(LLMConfig(base_url="http://127.0.0.1:9/v1"))
    bare = ChatOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", model="m")
    clients = (openai.DefaultHttpxClient(), openai.DefaultAsyncHttpxClient())
    given = ChatOpenAI(
        base_url="http://127.0.0.1:9/v1",
        api_key="x",
        model="m",
        http_client=clients[0],
        http_async_client=clients[1],
    )
    for model in (own, bare, given):
        used = LLMReasoner(model).model
        assert is_guarded(used.http_client) and is_guarded(used.http_async_client)
        assert used.root_client._client is used.http_client
    assert LLMReasoner(given).model.http_client is clients[0]


def _answer_with_escapes(body: dict) -> dict:
    """A valid cited answer for the generate step holding terminal escapes."""
    if "AnswerOut" not in json.dumps(body):
        return {"role": "assistant", "content": "no JSON here"}
    answer = {"answer": "Ada\x1b[2J Brightwater\x1b]0;owned\x07 [1]", "citations": [1]}
    return {"role": "assistant", "content": json.dumps(answer)}


def test_an_llm_answer_cannot_control_the_terminal(index, tmp_path):
    with FakeOpenAI("reply", respond=_answer_with_escapes) as server:
        for extra in ((), ("--json",)):
            result, _ = ask_cli(
                index, tmp_path, server, *extra, "--set", "llm.structured_output_method=json_mode"
            )
            assert result.code in (0, EXIT_LLM_FELL_BACK), result.err
            assert "\x1b" not in result.out and "\x07" not in result.out, result.out
            assert "\x1b" not in result.err
            assert "Ada\\u001b[2J Brightwater" in result.out  # shown, not obeyed
            if extra:
                assert json.loads(result.out)["answer"].startswith("Ada\x1b[2J")
