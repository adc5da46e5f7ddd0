"""``sealgraph eval --llm`` against the fake OpenAI-compatible server on 127.0.0.1.

Offline and LLM rows in one report, with the LLM table: calls, tokens (the fake
server reports usage), fallbacks by step and reason, open circuits; and ``--set
llm.*`` without an LLM method warns instead of being silently ignored.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from support.fakes import FakeOpenAI

from sealgraph.cli import main
from sealgraph.errors import InputError
from sealgraph.eval.methods import parse_methods
from sealgraph.eval.runner import run_eval

QUESTIONS = [
    {
        "id": "q1",
        "question": "In which country is the town where the painter Orla Vesk was born?",
        "answer": "Estmark",
        "paragraphs": [
            {
                "title": "Orla Vesk",
                "sentences": ["Orla Vesk is a painter.", " She was born in Tarrow Bay."],
            },
            {"title": "Tarrow Bay", "sentences": ["Tarrow Bay is a fishing town in Estmark."]},
        ],
        "supporting_facts": [["Orla Vesk", 1], ["Tarrow Bay", 0]],
    },
    {
        "id": "q2",
        "question": "What is the Kessel Bridge built of?",
        "answer": "oak timber",
        "paragraphs": [
            {"title": "Kessel Bridge", "sentences": ["The Kessel Bridge is built of oak timber."]},
            {"title": "Marrow Viaduct", "sentences": ["The Marrow Viaduct is made of red brick."]},
        ],
        "supporting_facts": [["Kessel Bridge", 0]],
    },
]

REPLIES: dict[str, dict[str, Any]] = {
    "needs": {
        "answer_type": "other",
        "hops": 1,
        "structure": "single",
        "entities": [],
        "options": [],
        "answer_modifiers": [],
        "compared_attribute": "",
    },
    "extract": {"entities": [], "relations": [], "qualifiers": []},
    "assess": {"sufficient": True, "gaps": [], "supporting": [1]},
    "plan": {"queries": []},
    "generate": {"answer": "See [1]."},
}
OPENINGS = {
    "You read one question": "needs",
    "You extract facts": "extract",
    "You are the sufficiency gate": "assess",
    "You write search queries": "plan",
    "Answer the question using only": "generate",
}


def step_of(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    return next(step for opening, step in OPENINGS.items() if system.startswith(opening))


def responder(junk_step: str | None = None):
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        step = step_of(body)
        if step == junk_step:
            return {"role": "assistant", "content": "sorry, no JSON today"}
        return {"role": "assistant", "content": json.dumps(REPLIES[step])}

    return respond


@pytest.fixture
def questions(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return path


def run_eval_cli(questions: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "eval",
            "--questions",
            str(questions),
            "--k",
            "2",
            "--embedder",
            "none",
            "--max-loops",
            "1",
            "--out",
            str(out),
            "--no-progress",
            *extra,
        ]
    )


def llm_settings(url: str) -> list[str]:
    # json_mode: the fake server answers it; no probing of the other methods.
    return [
        "--set",
        f"llm.base_url={url}",
        "--set",
        "llm.structured_output_method=json_mode",
        "--set",
        "llm.retries=0",
    ]


def test_eval_llm_reports_calls_tokens_and_fallbacks_by_step(questions, tmp_path, capsys):
    out = tmp_path / "report.json"
    with FakeOpenAI("reply", respond=responder(junk_step="generate")) as server:
        code = run_eval_cli(questions, out, "--methods", "seal,seal+llm", *llm_settings(server.url))
        requests = server.requests
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert list(report["methods"]) == ["seal", "seal+llm"]
    assert "llm" not in report["methods"]["seal"]
    stats = report["methods"]["seal+llm"]["llm"]
    assert stats["calls"] > 0 and stats["calls"] == requests  # no warm-up call either
    # The fake server reports 1 prompt and 1 completion token per reply.
    assert stats["prompt_tokens"] == stats["calls"] == stats["completion_tokens"]
    generate = stats["fallbacks_by_step"]["generate"]
    assert sum(generate.values()) == len(QUESTIONS)  # once per question's generate step
    assert all("unparsable reply" in reason for reason in generate)
    assert set(stats["fallbacks_by_step"]) == {"generate"}
    assert stats["questions_with_open_circuit"] == 0
    assert stats["seconds_per_question"] > 0
    printed = capsys.readouterr()
    assert "llm_calls" in printed.out and "prompt_tok" in printed.out
    assert "seal+llm: generate fell back 2x: unparsable reply" in printed.out
    assert "warning" not in printed.err


def test_eval_llm_flag_puts_the_graph_methods_in_llm_mode(questions, tmp_path, capsys):
    out = tmp_path / "report.json"
    with FakeOpenAI("reply", respond=responder()) as server:
        code = run_eval_cli(
            questions, out, "--methods", "flat-bm25,seal", "--llm", *llm_settings(server.url)
        )
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert list(report["methods"]) == ["flat-bm25", "seal+llm"]
    stats = report["methods"]["seal+llm"]["llm"]
    assert stats["calls"] > 0 and stats["fallbacks"] == 0
    assert "llm" not in report["methods"]["flat-bm25"]


def test_an_open_circuit_is_counted_and_warned_once(questions, tmp_path, capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = tmp_path / "report.json"
    code = run_eval_cli(
        questions, out, "--methods", "seal", "--llm", *llm_settings(f"http://127.0.0.1:{port}/v1")
    )
    assert code == 0
    stats = json.loads(out.read_text(encoding="utf-8"))["methods"]["seal+llm"]["llm"]
    assert stats["questions_with_open_circuit"] == len(QUESTIONS)
    assert stats["circuit_openings"] == len(QUESTIONS)
    err = capsys.readouterr().err
    assert err.count("LLM circuit opened in some questions (seal+llm in 2 of 2)") == 1


def test_llm_settings_without_llm_warn(questions, tmp_path, capsys):
    out = tmp_path / "report.json"
    code = run_eval_cli(questions, out, "--methods", "flat-bm25", "--set", "llm.model=x")
    assert code == 0
    err = capsys.readouterr().err
    assert "sealgraph: warning: --set llm.model has no effect without --llm" in err
    assert "llm" not in json.loads(out.read_text(encoding="utf-8"))["methods"]["flat-bm25"]


def test_llm_mode_is_for_graph_methods_only():
    assert [m.name for m in parse_methods("seal,seal+llm,seal-append", llm=True)] == [
        "seal+llm",
        "seal-append+llm",
    ]
    assert [m.llm for m in parse_methods("seal,seal+llm")] == [False, True]
    with pytest.raises(InputError, match="makes no LLM call"):
        parse_methods("flat-bm25+llm")
    with pytest.raises(InputError, match="--llm puts the graph methods"):
        run_eval("missing.jsonl", k=2, methods="flat-bm25", llm=True)  # refused before any work
