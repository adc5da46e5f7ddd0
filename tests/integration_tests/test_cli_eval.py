"""The ``sealgraph eval`` contract on a tiny hand-written QA set (embedder "none")."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sealgraph.cli import main
from sealgraph.errors import SealgraphError
from sealgraph.eval.methods import METHODS
from sealgraph.eval.report import write_outputs

# Four invented questions in the shared multi-hop QA schema. Q4 repeats the
# "Estmark" paragraph of Q1 (deduplicated in the corpus) and has a supporting
# fact past the end of its paragraph (skipped, as in the public data).
QUESTIONS = [
    {
        "id": "q1",
        "dataset": "handmade",
        "type": "bridge",
        "level": None,
        "question": "In which country is the town where the painter Orla Vesk was born?",
        "answer": "Estmark",
        "paragraphs": [
            {
                "title": "Orla Vesk",
                "sentences": [
                    "Orla Vesk is a landscape painter known for her winter harbour scenes.",
                    " She was born in Tarrow Bay in 1961.",
                ],
            },
            {
                "title": "Tarrow Bay",
                "sentences": [
                    "Tarrow Bay is a fishing town on the northern coast of Estmark.",
                    " Its harbour freezes most winters.",
                ],
            },
            {
                "title": "Estmark",
                "sentences": ["Estmark is a small coastal country.", " Its capital is Lindholt."],
            },
            {
                "title": "Harbour painting",
                "sentences": [
                    "Harbour painting is a genre of marine art.",
                    " It became popular in the nineteenth century.",
                ],
            },
        ],
        "supporting_facts": [["Orla Vesk", 1], ["Tarrow Bay", 0]],
    },
    {
        "id": "q2",
        "dataset": "handmade",
        "type": "comparison",
        "level": None,
        "question": "Are the Kessel Bridge and the Marrow Viaduct made of the same material?",
        "answer": "no",
        "paragraphs": [
            {
                "title": "Kessel Bridge",
                "sentences": [
                    "The Kessel Bridge is a footbridge over the river Dune.",
                    " It is built entirely of oak timber.",
                ],
            },
            {
                "title": "Marrow Viaduct",
                "sentences": [
                    "The Marrow Viaduct carries the Fenn railway across a deep valley.",
                    " It is made of red brick.",
                ],
            },
            {
                "title": "River Dune",
                "sentences": ["The river Dune flows through the town of Kessel."],
            },
        ],
        "supporting_facts": [["Kessel Bridge", 1], ["Marrow Viaduct", 1]],
    },
    {
        "id": "q3",
        "dataset": "handmade",
        "type": "bridge",
        "level": None,
        "question": "Who founded the company that makes the Quill 7 typewriter?",
        "answer": "Ansel Brandt",
        "paragraphs": [
            {
                "title": "Quill 7",
                "sentences": [
                    "The Quill 7 is a portable typewriter.",
                    " It is manufactured by Harrowgate Machines.",
                ],
            },
            {
                "title": "Harrowgate Machines",
                "sentences": [
                    "Harrowgate Machines is an office equipment maker.",
                    " The company was founded by Ansel Brandt in 1921.",
                ],
            },
            {"title": "Ansel Brandt", "sentences": ["Ansel Brandt was an engineer and inventor."]},
        ],
        "supporting_facts": [["Quill 7", 1], ["Harrowgate Machines", 1]],
    },
    {
        "id": "q4",
        "dataset": "handmade",
        "type": "bridge",
        "level": None,
        "question": "What instrument does the lead singer of The Lantern Choir play?",
        "answer": "cello",
        "paragraphs": [
            {
                "title": "The Lantern Choir",
                "sentences": [
                    "The Lantern Choir is a folk band whose lead singer is Mira Castellan."
                ],
            },
            {
                "title": "Mira Castellan",
                "sentences": [
                    "Mira Castellan is a singer and songwriter.",
                    " She also plays the cello.",
                ],
            },
            {"title": "Lantern", "sentences": ["A lantern is a portable light source."]},
            {
                "title": "Estmark",
                "sentences": ["Estmark is a small coastal country.", " Its capital is Lindholt."],
            },
        ],
        "supporting_facts": [
            ["The Lantern Choir", 0],
            ["Mira Castellan", 1],
            ["Mira Castellan", 9],
        ],
    },
]

POOL = [
    {
        "id": "pool1",
        "question": "Where is Lindholt?",
        "answer": "Estmark",
        "paragraphs": [
            {"title": "Lindholt", "sentences": ["Lindholt is the capital city of Estmark."]},
            {"title": "Oak", "sentences": ["Oak timber is a hard and durable wood."]},
        ],
        "supporting_facts": [["Lindholt", 0]],
    }
]

N_DOCUMENTS = 13 + 2  # distinct (title, text) paragraphs of QUESTIONS, plus the pool's
ALL_CHEAP_METHODS = "flat-bm25,flat-hybrid,adaptive-k,expand,seal"
METHOD_KEYS = {
    "recall",
    "all_gold",
    "precision",
    "evidence_size_mean",
    "evidence_tokens_mean",
    "context_tokens_mean",
    "sp_sentence_recall",
    "sp_sentence_recall_evidence",
    "overlap_mean",
    "answer_em",
    "answer_f1",
    "latency_ms_p50",
    "latency_ms_p95",
    "loops_mean",
    "llm_calls_mean",
    "peak_rss_mb",
    "budget_violations",
}
REPO_ROOT = Path(__file__).resolve().parents[2]
NOT_DETERMINISTIC = {"latency_ms_p50", "latency_ms_p95", "peak_rss_mb"}


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    questions = write_jsonl(tmp_path / "questions.jsonl", QUESTIONS)
    pool = write_jsonl(tmp_path / "pool.jsonl", POOL)
    return tmp_path, questions, pool


def run_cli(questions, out, *extra):
    argv = [
        "eval",
        "--questions",
        str(questions),
        "--k",
        "2",
        "--embedder",
        "none",
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]
    return main(argv)


def index_entries(folder: Path) -> list[Path]:
    # Indexes in a cache folder; hidden entries (build locks) are not indexes.
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def deterministic_part(report):
    return {
        name: {key: value for key, value in metrics.items() if key not in NOT_DETERMINISTIC}
        for name, metrics in report["methods"].items()
    }


def test_eval_writes_report_and_records(data, capsys):
    tmp, questions, pool = data
    out, records = tmp / "report.json", tmp / "records.jsonl"
    code = run_cli(
        questions,
        out,
        "--pool",
        str(pool),
        "--methods",
        ALL_CHEAP_METHODS,
        "--budget",
        "200",
        "--max-loops",
        "2",
        "--records",
        str(records),
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert report["questions_file"] == str(questions)
    assert report["n_questions"] == 4
    assert report["corpus_size"] == N_DOCUMENTS
    assert (report["k"], report["budget"], report["max_loops"]) == (2, 200, 2)
    assert list(report["methods"]) == ALL_CHEAP_METHODS.split(",")
    for name, metrics in report["methods"].items():
        assert set(metrics) >= METHOD_KEYS, name
        assert 0.0 <= metrics["recall"] <= 1.0
        assert 0.0 <= metrics["precision"] <= 1.0
        assert metrics["budget_violations"] == 0
        assert metrics["context_tokens_mean"] <= 200
    flat = report["methods"]["flat-bm25"]
    assert flat["evidence_size_mean"] == 2.0
    assert flat["loops_mean"] == 0.0
    # k=2 and two gold titles per question: BM25 finds at least one of them.
    assert flat["recall"] > 0.0

    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert len(lines) == 4 * 5
    assert {(r["id"], r["method"]) for r in lines} == {
        (q["id"], m) for q in QUESTIONS for m in ALL_CHEAP_METHODS.split(",")
    }
    for record in lines:
        assert {
            "id",
            "method",
            "evidence",
            "context",
            "context_tokens",
            "answer",
            "latency_ms",
        } <= set(record)
        assert {"gold_titles", "gold_answer"} <= set(record)
        for item in record["evidence"]:
            assert set(item) == {"title", "chunk_id"}
    first = next(r for r in lines if r["id"] == "q1" and r["method"] == "flat-bm25")
    assert first["gold_titles"] == ["Orla Vesk", "Tarrow Bay"]
    assert first["gold_answer"] == "Estmark"

    table = capsys.readouterr().out
    for name in ALL_CHEAP_METHODS.split(","):
        assert name in table
    assert "recall" in table


def test_eval_is_deterministic_and_reuses_the_cached_index(data, capsys):
    tmp, questions, _ = data
    first, second = tmp / "a.json", tmp / "b.json"
    args = ("--methods", "flat-bm25,seal", "--limit", "3")
    assert run_cli(questions, first, *args) == 0
    cache_entries = index_entries(tmp / "cache" / "eval-index")
    assert len(cache_entries) == 1
    assert run_cli(questions, second, *args) == 0
    assert index_entries(tmp / "cache" / "eval-index") == cache_entries
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    assert a["n_questions"] == 3
    assert deterministic_part(a) == deterministic_part(b)


def test_eval_is_deterministic_across_processes(data):
    # A fresh interpreter has a new string-hash seed: anything that iterates a set
    # of strings into a decision or a float sum shows up here, not in-process.
    tmp, questions, pool = data
    reports = []
    for seed in ("1", "2"):
        out = tmp / f"seed{seed}.json"
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "sealgraph",
                "eval",
                "--questions",
                str(questions),
                "--pool",
                str(pool),
                "--k",
                "2",
                "--methods",
                ALL_CHEAP_METHODS,
                "--embedder",
                "none",
                "--out",
                str(out),
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            check=False,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed, "SEALGRAPH_CACHE_DIR": str(tmp / "cache")},
        )
        assert completed.returncode == 0, completed.stderr
        reports.append(json.loads(out.read_text()))
    assert deterministic_part(reports[0]) == deterministic_part(reports[1])


def test_eval_uses_and_builds_an_explicit_index_dir(data):
    tmp, questions, _ = data
    index_dir = tmp / "my-index"
    args = ("--methods", "flat-bm25", "--index", str(index_dir))
    assert run_cli(questions, tmp / "a.json", *args) == 0
    assert index_dir.is_dir()
    assert not (tmp / "cache").exists()
    assert run_cli(questions, tmp / "b.json", *args) == 0
    report = json.loads((tmp / "b.json").read_text())
    assert report["index"]["path"] == str(index_dir)


def test_eval_sweeps_and_plot(data):
    tmp, questions, _ = data
    out, plot = tmp / "report.json", tmp / "sweeps.png"
    code = run_cli(
        questions,
        out,
        "--methods",
        "flat-bm25,seal",
        "--limit",
        "2",
        "--sweep-k",
        "1,3",
        "--sweep-loops",
        "0,1",
        "--plot",
        str(plot),
    )
    assert code == 0
    sweeps = json.loads(out.read_text())["sweeps"]
    assert set(sweeps) == {"k", "loops"}
    assert set(sweeps["k"]) == {"1", "3"}
    assert set(sweeps["loops"]) == {"0", "1"}
    for grid in sweeps.values():
        for per_method in grid.values():
            assert set(per_method) == {"flat-bm25", "seal"}
            assert set(per_method["seal"]) >= METHOD_KEYS
    assert sweeps["k"]["1"]["flat-bm25"]["evidence_size_mean"] == 1.0
    assert sweeps["k"]["3"]["flat-bm25"]["evidence_size_mean"] == 3.0
    assert sweeps["loops"]["0"]["seal"]["loops_mean"] == 0.0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


BAD_QA_LINE = '{"id": "x", "question": "Where?", "paragraphs": [{"title": 3, "sentences": []}]}'


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"questions": "missing.jsonl"}, "missing.jsonl"),
        ({"questions_text": ""}, "no question"),
        ({"questions_text": "not json\n"}, "questions.jsonl:1"),
        (
            {"questions_text": json.dumps(QUESTIONS[0]) + "\n" + BAD_QA_LINE + "\n"},
            "questions.jsonl:2",
        ),
        ({"methods": "flat-bm25,bm99"}, "valid methods: flat-bm25, flat-dense"),
        ({"methods": "flat-dense"}, "dense"),
        ({"k": "0"}, "--k"),
        ({"extra": ["--budget", "8"]}, "--budget"),
        ({"extra": ["--set", "utility.nonsense=1"]}, "utility.nonsense"),
        ({"extra": ["--set", "novalue"]}, "key=value"),
        ({"extra": ["--sweep-k", "1,x"]}, "--sweep-k"),
        ({"extra": ["--pool", "nowhere.jsonl"]}, "nowhere.jsonl"),
        ({"extra": ["--plot", "p.png"]}, "sweep"),
    ],
)
def test_bad_input_is_a_one_line_error_and_writes_nothing(data, capsys, change, message):
    tmp, questions, _ = data
    if "questions_text" in change:
        questions.write_text(change["questions_text"], encoding="utf-8")
    if "questions" in change:
        questions = tmp / change["questions"]
    out, records = tmp / "report.json", tmp / "records.jsonl"
    argv = [
        "eval",
        "--questions",
        str(questions),
        "--k",
        change.get("k", "2"),
        "--methods",
        change.get("methods", "flat-bm25"),
        "--embedder",
        "none",
        "--out",
        str(out),
        "--records",
        str(records),
        "--no-progress",
        *(str(tmp / a) if a.endswith((".jsonl", ".png")) else a for a in change.get("extra", [])),
    ]
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0
    errors = [line for line in err.splitlines() if line.startswith("sealgraph: error:")]
    assert len(errors) == 1, err
    assert message in errors[0]
    assert "Traceback" not in err
    assert not out.exists()
    assert not records.exists()
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith(".")) == []


def test_cli_process_exit_code_and_help(data):
    tmp, questions, _ = data
    helped = subprocess.run(
        [sys.executable, "-m", "sealgraph", "eval", "--help"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    assert helped.returncode == 0
    for flag in (
        "--questions",
        "--pool",
        "--limit",
        "--k",
        "--methods",
        "--budget",
        "--max-loops",
        "--index",
        "--set",
        "--out",
        "--records",
        "--sweep-k",
        "--sweep-loops",
        "--plot",
    ):
        assert flag in helped.stdout
    for name in METHODS:
        assert name in helped.stdout
    failed = subprocess.run(
        [
            sys.executable,
            "-m",
            "sealgraph",
            "eval",
            "--questions",
            str(questions),
            "--k",
            "1",
            "--methods",
            "nope",
            "--out",
            str(tmp / "r.json"),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    assert failed.returncode == 2
    assert "unknown method 'nope'" in failed.stderr
    assert not (tmp / "r.json").exists()


def test_outputs_are_all_or_nothing_when_a_late_writer_fails(tmp_path):
    # The plot is written last; when it fails the staged report and records are
    # discarded, and no temporary file is left behind.
    report = {"methods": {}, "sweeps": {}}
    out, records, plot = tmp_path / "r.json", tmp_path / "r.jsonl", tmp_path / "p.png"
    with pytest.raises(SealgraphError, match="nothing to plot"):
        write_outputs(report, [{"id": "q"}], out=out, records_out=records, plot=plot)
    assert list(tmp_path.iterdir()) == []
    write_outputs(report, [{"id": "q"}], out=out, records_out=records)
    assert json.loads(out.read_text()) == report
    assert records.read_text() == '{"id": "q"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.jsonl"]


def test_eval_defaults_are_k5_and_seal_against_both_flat_baselines(data, capsys):
    tmp, questions, pool = data
    out = tmp / "report.json"
    argv = ["eval", "--questions", str(questions), "--pool", str(pool), "--embedder", "none"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["k"] == 5
    assert list(report["methods"]) == ["flat-bm25", "flat-hybrid", "seal"]
