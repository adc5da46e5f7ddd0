"""``sealgraph ask --llm`` against a real OpenAI-compatible server (marker ``llm_server``).

Skipped unless ``SEALGRAPH_LLM_SERVER_URL`` names the server's ``/v1`` base URL, e.g.
llama-cpp-python's ``python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf
--host 127.0.0.1 --port 8080`` (``benchmarks/llm_local_server.sh`` starts one and runs more).
No model is shipped or started here: building llama.cpp takes about 30 minutes on 2 cores,
too long for every CI run, which keeps the fake-server tests of ``tests/reliability``.

Optional: ``SEALGRAPH_LLM_SERVER_MODEL`` (default: the first model ``/v1/models`` lists) and
``SEALGRAPH_LLM_SERVER_SECONDS`` (the run's time bound, default 60).

A protocol check, not a quality check: a small model may fail every step (each then falls
back to the offline reasoner); what is asserted is the JSON contract, that the circuit of a
reachable server stays closed, that every reply stays within its step's ``max_tokens``, and
the time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

from sealgraph.config import StepTokens

URL = os.environ.get("SEALGRAPH_LLM_SERVER_URL", "").rstrip("/")
QUESTION = "Who designed the Lumen Lamp?"
STEPS = {"needs", "extract", "assess", "plan", "support", "generate"}
METHODS = {"json_schema", "function_calling", "json_mode", "plain"}

pytestmark = [
    pytest.mark.llm_server,
    pytest.mark.skipif(not URL, reason="SEALGRAPH_LLM_SERVER_URL is not set (no LLM server)"),
]


def server_model() -> str:
    model = os.environ.get("SEALGRAPH_LLM_SERVER_MODEL")
    if model:
        return model
    with urllib.request.urlopen(f"{URL}/models", timeout=10) as reply:
        return json.load(reply)["data"][0]["id"]


def run_sealgraph(*args: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sealgraph", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def test_ask_llm_against_a_real_server(tiny_index, tmp_path):
    bound_s = float(os.environ.get("SEALGRAPH_LLM_SERVER_SECONDS", "60"))
    env = {
        **os.environ,
        "SEALGRAPH_DATA_DIR": str(tmp_path / "data"),
        "SEALGRAPH_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("SEALGRAPH_INDEX", None)
    db = str(tmp_path / "runs.sqlite")
    start = time.monotonic()
    result = run_sealgraph(
        "ask",
        QUESTION,
        "--index",
        str(tiny_index.path),
        "--db",
        db,
        "--llm",
        "--set",
        f"llm.base_url={URL}",
        "--set",
        f"llm.model={server_model()}",
        "--json",
        env=env,
        timeout=bound_s + 120,
    )
    took = time.monotonic() - start
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    out = json.loads(result.stdout)

    # The JSON contract.
    assert isinstance(out["answer"], str) and out["answer"].strip()
    assert isinstance(out["llm_fallbacks"], list)
    for fallback in out["llm_fallbacks"]:
        assert {"step", "reason", "loop"} <= set(fallback), fallback
        assert fallback["step"] in STEPS and str(fallback["reason"]).strip(), fallback
    assert "llm_circuit" in out
    # A reachable server that answers some structured-output method never opens the circuit.
    assert out["llm_circuit"] is None, out["llm_circuit"]

    # The trace: calls were made, each step's method is known and its replies stayed bounded.
    trace = run_sealgraph("trace", out["thread_id"], "--db", db, "--json", env=env, timeout=60)
    assert trace.returncode == 0, trace.stderr[-2000:]
    events = json.loads(trace.stdout)
    calls = [e for e in events if e["kind"] == "llm_call"]
    assert calls, "no LLM call was made"
    bounds = StepTokens()
    for event in calls:
        data = event["data"]
        assert data.get("method") in METHODS | {None}, data
        bound = getattr(bounds, data["step"], None)
        if bound is not None:  # completion tokens are 0 when the server reports no usage
            assert data["completion_tokens"] <= event["llm_calls"] * bound, event
    total_calls = sum(int(e.get("llm_calls", 0)) for e in events)
    assert total_calls <= 60  # llm.max_calls' default

    print(
        f"ask --llm: {took:.1f} s, {total_calls} LLM calls, "
        f"methods {sorted({e['data'].get('method') or '-' for e in calls})}, "
        f"fallbacks {[(f['step'], f['reason'][:80]) for f in out['llm_fallbacks']]}"
    )
    assert took <= bound_s, f"ask --llm took {took:.1f} s (bound {bound_s:.0f} s)"
