"""``sealgraph ask``/``resume``/``demo``: output contract and one-line user errors (in-process)."""

import json
import sqlite3

import pytest

from sealgraph.cli import main
from sealgraph.cli.ask_cmd import fallback_warning, llm_fallbacks
from sealgraph.graph.events import make_event

QUESTION = "In which province is the town where Northwind Studio was founded?"
CITED_QUESTION = "Who designed the Lumen Lamp?"
JSON_KEYS = {
    "answer",
    "short_answer",
    "declined",
    "missing",
    "answerability",
    "citations",
    "evidence",
    "context",
    "context_tokens",
    "loops",
    "gaps",
    "thread_id",
    "llm_fallbacks",
    "llm_circuit",
}


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SEALGRAPH_TEST_SLOW_NODE", raising=False)


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "runs.sqlite")


def assert_one_line_error(capsys, code, *needles):
    captured = capsys.readouterr()
    assert code != 0
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("sealgraph: error: ")
    assert "Traceback" not in captured.err
    for needle in needles:
        assert needle in lines[0]
    return captured


def test_ask_json_prints_exactly_one_object_with_the_contract_keys(tiny_index, db, capsys):
    code = main(
        ["ask", CITED_QUESTION, "--index", str(tiny_index.path), "--k", "2", "--db", db, "--json"]
    )
    captured = capsys.readouterr()
    assert code == 0
    out = json.loads(captured.out)  # the whole of stdout is one JSON object
    assert set(out) == JSON_KEYS
    assert out["answer"]
    assert out["declined"] is False and 0.0 <= out["answerability"] <= 1.0
    assert isinstance(out["missing"], str) and isinstance(out["short_answer"], str)
    assert out["llm_fallbacks"] == []  # offline: nothing can fall back
    assert out["llm_circuit"] is None  # nor open the LLM circuit
    assert len(out["evidence"]) == 2
    assert out["context_tokens"] > 0
    assert out["citations"], "this question's answer cites the packed evidence"
    evidence_ids = {e["chunk_id"] for e in out["evidence"]}
    for c in out["citations"]:
        assert set(c) == {"n", "chunk_id", "title", "text"}
        assert isinstance(c["n"], int)
        assert c["chunk_id"] in evidence_ids
    # a generated thread id is announced on stderr, with one progress line per node
    assert f"thread: {out['thread_id']}" in captured.err.splitlines()
    progress = [line for line in captured.err.splitlines() if line.startswith("[")]
    nodes = [line.split("] ", 1)[1].split(":", 1)[0] for line in progress]
    assert nodes[:3] == ["search", "extract", "assess"]
    assert nodes[-2:] == ["pack", "generate"]


def test_ask_text_output_has_answer_citations_and_trace(tiny_index, db, capsys):
    index = str(tiny_index.path)
    args = ["ask", CITED_QUESTION, "--index", index, "--k", "2", "--db", db]
    assert main([*args, "--thread", "t-json", "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert main([*args, "--thread", "t-text"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err  # offline: no fallback to warn about
    out = captured.out
    lines = out.splitlines()
    assert lines[0] == expected["answer"]
    assert lines[2] == "Citations:"
    for c in expected["citations"]:
        assert f"  [{c['n']}] {c['title']} ({c['chunk_id']})" in lines
    trace = out.split("\nTrace (", 1)[1].splitlines()[1:]
    assert trace[0].startswith("  [1] search: initial top-2:")
    assert trace[-1].startswith("  [") and "] generate: " in trace[-1]


def test_ask_flags_become_run_config_overrides(tiny_index, db, capsys):
    args = [
        "ask",
        QUESTION,
        "--index",
        str(tiny_index.path),
        "--db",
        db,
        "--json",
        "--thread",
        "t1",
    ]
    code = main([*args, "--k", "1", "--max-loops", "0", "--budget", "300", "--set", "epsilon=0.5"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert len(out["evidence"]) == 1
    assert out["loops"] == 0
    assert out["context_tokens"] <= 300
    with sqlite3.connect(db) as conn:
        assert (
            conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 't1'").fetchone()[0]
            > 0
        )


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_empty_question_is_a_one_line_error(tiny_index, db, capsys, question):
    code = main(["ask", question, "--index", str(tiny_index.path), "--db", db])
    assert_one_line_error(capsys, code, "question is empty")


def test_missing_index_is_a_one_line_error(tmp_path, db, capsys):
    code = main(["ask", QUESTION, "--index", str(tmp_path / "nowhere"), "--db", db])
    assert_one_line_error(capsys, code, "no sealgraph index")


def test_corrupt_index_is_a_one_line_error(tmp_path, db, capsys):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json", encoding="utf-8")
    code = main(["ask", QUESTION, "--index", str(broken), "--db", db])
    assert_one_line_error(capsys, code, str(broken))


@pytest.mark.parametrize(
    ("pair", "needle"),
    [("nonsense=1", "unknown config key 'nonsense'"), ("k=0", "k"), ("novalue", "key=value")],
)
def test_bad_set_is_a_one_line_error_before_anything_runs(tiny_index, db, capsys, pair, needle):
    code = main(["ask", QUESTION, "--index", str(tiny_index.path), "--db", db, "--set", pair])
    assert_one_line_error(capsys, code, needle)
    with sqlite3.connect(db) as conn:  # nothing was checkpointed
        tables = conn.execute(
            "SELECT name FROM sqlite_master WHERE name = 'checkpoints'"
        ).fetchall()
        assert not tables or conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == 0


def test_bad_thread_id_is_a_one_line_error(tiny_index, db, capsys):
    code = main(["ask", QUESTION, "--index", str(tiny_index.path), "--db", db, "--thread", "a b"])
    assert_one_line_error(capsys, code, "invalid thread id")


def test_reusing_a_thread_id_is_refused(tiny_index, db, capsys):
    args = [
        "ask",
        QUESTION,
        "--index",
        str(tiny_index.path),
        "--db",
        db,
        "--thread",
        "same",
        "--json",
    ]
    assert main(args) == 0
    first = capsys.readouterr().out
    code = main(args)
    assert_one_line_error(capsys, code, "already exists", "sealgraph resume same")
    # the first run is intact and re-printable
    assert main(["resume", "same", "--db", db, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == json.loads(first)
    assert "already finished" in captured.err


def test_default_db_is_in_the_user_data_dir(tiny_index, tmp_path, capsys):
    code = main(["ask", QUESTION, "--index", str(tiny_index.path), "--json", "--thread", "d"])
    assert code == 0
    capsys.readouterr()
    assert (tmp_path / "data" / "runs.sqlite").is_file()
    assert main(["resume", "d", "--json"]) == 0


def test_resume_of_unknown_thread_or_missing_db_is_a_one_line_error(
    tiny_index, db, tmp_path, capsys
):
    code = main(["resume", "ghost", "--db", str(tmp_path / "missing.sqlite")])
    assert_one_line_error(capsys, code, "no checkpoint database")
    main(
        ["ask", QUESTION, "--index", str(tiny_index.path), "--db", db, "--thread", "real", "--json"]
    )
    capsys.readouterr()
    code = main(["resume", "ghost", "--db", db])
    assert_one_line_error(capsys, code, "unknown thread 'ghost'")


def test_demo_answers_every_example_question_and_scores_itself(tmp_path, capsys):
    from sealgraph.examples import load_questions
    from sealgraph.examples.demo import answer_matches

    index_dir = tmp_path / "demo-index"
    code = main(["demo", "--index", str(index_dir), "--embedder", "none", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    questions = load_questions()
    assert [q["id"] for q in out["questions"]] == [q["id"] for q in questions]
    for record, question in zip(out["questions"], questions, strict=True):
        assert record["answer"]
        assert record["expected"] == question["answer"]
        assert record["matches"] == answer_matches(record, question["answer"])
        assert record["trace"][0].startswith("[1] search: ")
        assert record["trace"][-1].split("] ", 1)[1].startswith("generate: ")
    matched = sum(r["matches"] for r in out["questions"])
    assert (out["matched"], out["total"]) == (matched, len(questions))
    assert out["summary"] == f"{matched}/{len(questions)} answers match the expected answer"
    stamp = (index_dir / "manifest.json").stat().st_mtime_ns
    # the second run reuses the cached index and prints the text form
    assert main(["demo", "--index", str(index_dir), "--embedder", "none"]) == 0
    text = capsys.readouterr().out
    assert (index_dir / "manifest.json").stat().st_mtime_ns == stamp
    *blocks, summary = text.strip().split("\n\n")
    assert summary == out["summary"]
    assert len(blocks) == len(questions)
    first = blocks[0].splitlines()
    assert first[0] == f"Q {questions[0]['id']}: {questions[0]['question']}"
    assert first[1].startswith("A: ")
    assert first[2].startswith(f"   expected: {questions[0]['answer']} (")
    steps = first.index("   steps:")
    assert all(line.startswith("   [") and ": " in line for line in first[3:steps])  # citations
    assert first[steps + 1].startswith("     [1] search: ")
    assert first[-1].startswith("     [") and "] generate: " in first[-1]


def test_an_answer_matches_by_its_short_answer_when_it_has_one():
    from sealgraph.examples.demo import answer_matches

    right = {
        "answer": "Dana Whitcombe — led by Dana Whitcombe. [1]",
        "short_answer": "Dana Whitcombe",
    }
    assert answer_matches(right, "Dana Whitcombe")
    # A wrong name first and the right one quoted after it is not a match.
    wrong = {
        "answer": "Ines Carvalho — led by Dana Whitcombe. [1]",
        "short_answer": "Ines Carvalho",
    }
    assert not answer_matches(wrong, "Dana Whitcombe")
    assert answer_matches({"answer": "It is led by Dana Whitcombe. [1]"}, "Dana Whitcombe")
    assert not answer_matches({"answer": "Dana Whitcombe", "declined": True}, "Dana Whitcombe")


def test_ask_answers_a_file_of_questions_in_one_process(tiny_index, db, tmp_path, capsys):
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        json.dumps({"id": "lamp", "question": CITED_QUESTION})
        + "\n\n"
        + json.dumps({"id": "bad", "question": ""})
        + "\n"
        + json.dumps({"question": QUESTION})
        + "\n"
    )
    code = main(["ask", "--questions", str(questions), "--index", str(tiny_index.path),
                 "--db", db, "--json"])  # fmt: skip
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert code == 1  # one line was not a question; the others were answered
    assert [line["id"] for line in lines] == ["lamp", "bad", "line 4"]
    assert lines[1] == {"id": "bad", "error": "bad: the question is empty"}
    for line in (lines[0], lines[2]):
        assert line["answer"] and line["thread_id"] and set(line) >= JSON_KEYS
    assert lines[0]["question"] == CITED_QUESTION
    assert lines[0]["thread_id"] != lines[2]["thread_id"]
    assert "sealgraph: error: bad: the question is empty" in captured.err
    # Each question is its own checkpointed run.
    assert main(["trace", lines[2]["thread_id"], "--db", db]) == 0
    assert QUESTION in capsys.readouterr().out


def test_ask_reads_plain_questions_from_standard_input(tiny_index, db, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(f"{CITED_QUESTION}\n{QUESTION}\n"))
    code = main(["ask", "--questions", "-", "--index", str(tiny_index.path), "--db", db])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith(f"Q line 1: {CITED_QUESTION}\n")
    assert f"\nQ line 2: {QUESTION}\n" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ([], "give one QUESTION or --questions FILE"),
        (["Who?", "--questions", "-"], "give one QUESTION or --questions FILE"),
        (["--questions", "-", "--thread", "t1"], "--thread is for one question"),
        (["--questions", "no-such-file.txt"], "--questions no-such-file.txt: cannot read it"),
    ],
)
def test_bad_question_sources_are_one_line_errors(tiny_index, db, capsys, argv, needle):
    code = main(["ask", *argv, "--index", str(tiny_index.path), "--db", db])
    assert_one_line_error(capsys, code, needle)


def test_demo_index_is_current_only_for_the_same_files_and_embedder():
    from sealgraph.examples.demo import index_is_current

    corpus = {"a.md": "1" * 64, "b.md": "2" * 64}
    manifest = {
        "sources": [
            {"path": "/somewhere/else/a.md", "sha256": "1" * 64},
            {"path": "/somewhere/else/b.md", "sha256": "2" * 64},
        ],
        "embedder": None,
    }
    assert index_is_current(manifest, corpus, "none")
    assert not index_is_current(manifest, {**corpus, "b.md": "3" * 64}, "none")  # a file changed
    assert not index_is_current(manifest, {**corpus, "c.md": "4" * 64}, "none")  # a file was added
    assert not index_is_current(manifest, {"a.md": "1" * 64}, "none")  # a file was removed
    assert not index_is_current(manifest, corpus, "local")  # another embedder was asked for
    dense = {**manifest, "embedder": {"name": "sentence-transformers/all-MiniLM-L6-v2"}}
    assert index_is_current(dense, corpus, "local")
    assert not index_is_current(dense, corpus, "none")


def test_demo_never_overwrites_another_index_or_a_non_empty_folder(tiny_index, tmp_path, capsys):
    import shutil

    theirs = tmp_path / "their-index"
    shutil.copytree(tiny_index.path, theirs)
    before = sorted(p.name for p in theirs.iterdir())
    code = main(["demo", "--index", str(theirs), "--embedder", "none"])
    assert_one_line_error(capsys, code, "holds an index of other documents")
    assert sorted(p.name for p in theirs.iterdir()) == before
    clutter = tmp_path / "clutter"
    clutter.mkdir()
    (clutter / "notes.txt").write_text("mine", encoding="utf-8")
    code = main(["demo", "--index", str(clutter), "--embedder", "none"])
    assert_one_line_error(capsys, code, "not empty and holds no index")
    assert (clutter / "notes.txt").read_text(encoding="utf-8") == "mine"


def _fallback(step, reason, loop=0):
    return make_event(
        step, "llm_fallback", f"{step}: fell back", {"step": step, "reason": reason}, loop=loop
    )


def test_llm_fallbacks_lists_one_entry_per_step_that_fell_back():
    events = [
        make_event("search", "retrieved", "top-3"),
        make_event("extract", "llm_note", "extract: attempt 1 failed: boom", {"step": "extract"}),
        _fallback("extract", "OpenAITimeoutError: Request timed out."),
        _fallback("plan", "run deadline spent", loop=1),
    ]
    assert llm_fallbacks(events) == [
        {"step": "extract", "reason": "OpenAITimeoutError: Request timed out.", "loop": 0},
        {"step": "plan", "reason": "run deadline spent", "loop": 1},
    ]
    assert llm_fallbacks([make_event("search", "retrieved", "top-3")]) == []


def test_fallback_warning_is_one_line_naming_each_step_and_its_last_reason():
    fallbacks = llm_fallbacks(
        [
            _fallback("extract", "JSONDecodeError: Expecting value"),
            _fallback("assess", "x" * 300),
            _fallback("extract", "run deadline spent", loop=1),
        ]
    )
    line = fallback_warning(fallbacks)
    assert "\n" not in line
    assert line.startswith(
        "sealgraph: warning: 3 LLM steps fell back to the offline reasoner (extract: run deadline"
    )
    assert "assess: xxx" in line and len(line) < 250
    assert fallback_warning(fallbacks[:1]).startswith("sealgraph: warning: 1 LLM step fell back")
    assert fallback_warning([]) == ""


def test_ask_json_declines_below_the_answerability_threshold(tiny_index, db, capsys):
    # "Zorblat" is in no document: the best passages hold too little of the question.
    question = "Who designed the Zorblat Lumen Lamp?"
    base = ["ask", question, "--index", str(tiny_index.path), "--k", "2", "--db", db, "--json"]
    assert main(base) == 0
    unseen = json.loads(capsys.readouterr().out)
    assert unseen["declined"] is True  # it names what no document holds
    assert unseen["missing"] == "the documents never mention 'Zorblat'"
    args = [*base, "--set", "decline_unseen_names=false"]
    assert main(args) == 0
    answered = json.loads(capsys.readouterr().out)
    assert answered["declined"] is False  # the default threshold (0) never declines
    assert 0.0 < answered["answerability"] < 1.0
    assert main([*args, "--set", "min_answerability=0.99"]) == 0
    declined = json.loads(capsys.readouterr().out)
    assert declined["declined"] is True
    assert declined["answerability"] == answered["answerability"]
    assert declined["answer"].startswith("Insufficient evidence")
    assert "zorblat" in declined["missing"]
    assert "zorblat" not in declined["answer"].lower()  # what is missing stays out of the text
