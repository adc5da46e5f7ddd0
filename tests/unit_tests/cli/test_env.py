"""``$SEALGRAPH_INDEX`` as the default ``--index`` of the CLI commands (explicit flag wins)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sealgraph.cli import build_parser, main
from sealgraph.cli._env import INDEX_ENV, env_index
from sealgraph.cli.eval_cmd import eval_index_arg

QUESTION = "Who designed the Lumen Lamp?"


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(INDEX_ENV, raising=False)


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "runs.sqlite")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_variable_is_read_stripped_and_expanded(monkeypatch, tmp_path):
    assert env_index() is None
    monkeypatch.setenv(INDEX_ENV, "   ")
    assert env_index() is None
    monkeypatch.setenv(INDEX_ENV, f" {tmp_path / 'idx'} ")
    assert env_index() == str(tmp_path / "idx")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(INDEX_ENV, "~/idx")
    assert env_index() == str(tmp_path / "idx")


# -- index --------------------------------------------------------------------------


def test_index_builds_into_the_variable_and_says_so(monkeypatch, tiny_docs_dir, tmp_path, capsys):
    target = tmp_path / "env-idx"
    monkeypatch.setenv(INDEX_ENV, str(target))
    code, out, err = run(capsys, "index", str(tiny_docs_dir), "--embedder", "none")
    assert code == 0, err
    assert f"into {target}" in out
    assert f"using --index {target} (from ${INDEX_ENV})" in err
    assert (target / "manifest.json").is_file()


def test_an_explicit_index_wins(monkeypatch, tiny_docs_dir, tmp_path, capsys):
    monkeypatch.setenv(INDEX_ENV, str(tmp_path / "env-idx"))
    code, _, err = run(
        capsys, "index", str(tiny_docs_dir), "--index", str(tmp_path / "flag"), "--embedder", "none"
    )
    assert code == 0 and err == ""
    assert (tmp_path / "flag" / "manifest.json").is_file()
    assert not (tmp_path / "env-idx").exists()


def test_without_flag_or_variable_index_is_required(tiny_docs_dir, monkeypatch, capsys):
    monkeypatch.setenv(INDEX_ENV, "  ")  # blank counts as unset
    for argv in (["index", str(tiny_docs_dir)], ["ask", QUESTION]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "the following arguments are required: --index" in capsys.readouterr().err


def test_the_variable_never_clobbers_a_folder_that_is_not_an_index(
    monkeypatch, tiny_docs_dir, tmp_path, capsys
):
    foreign = tmp_path / "my-app"
    foreign.mkdir()
    (foreign / "manifest.json").write_text('{"name": "my web app"}')
    (foreign / "main.py").write_text("print('hi')\n")
    before = {p.name: p.read_bytes() for p in foreign.iterdir()}
    monkeypatch.setenv(INDEX_ENV, str(foreign))
    code, out, err = run(capsys, "index", str(tiny_docs_dir), "--embedder", "none")
    assert code != 0 and out == ""
    assert "sealgraph: error:" in err and "Traceback" not in err
    assert {p.name: p.read_bytes() for p in foreign.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".my-app")) == []


# -- ask, resume, replay ----------------------------------------------------------


def test_ask_reads_the_variable(monkeypatch, tiny_index, db, capsys):
    monkeypatch.setenv(INDEX_ENV, str(tiny_index.path))
    code, out, err = run(capsys, "ask", QUESTION, "--db", db, "--json")
    assert code == 0, err
    assert "Ada Brightwater" in json.loads(out)["answer"]


def test_ask_flag_wins_over_a_bad_variable(monkeypatch, tiny_index, tmp_path, db, capsys):
    monkeypatch.setenv(INDEX_ENV, str(tmp_path / "missing"))
    code, out, err = run(
        capsys, "ask", QUESTION, "--index", str(tiny_index.path), "--db", db, "--json"
    )
    assert code == 0, err
    assert json.loads(out)["answer"]


def test_ask_names_a_missing_index_from_the_variable(monkeypatch, tmp_path, db, capsys):
    monkeypatch.setenv(INDEX_ENV, str(tmp_path / "missing"))
    code, out, err = run(capsys, "ask", QUESTION, "--db", db)
    assert code != 0 and out == ""
    assert err.startswith("sealgraph: error:") and "missing" in err


def test_resume_and_replay_keep_the_runs_own_index(monkeypatch, tiny_index, tmp_path, db, capsys):
    code, _, err = run(
        capsys, "ask", QUESTION, "--index", str(tiny_index.path), "--db", db, "--thread", "t1"
    )
    assert code == 0, err
    monkeypatch.setenv(INDEX_ENV, str(tmp_path / "elsewhere"))  # not an index: must not be used
    code, out, err = run(capsys, "resume", "t1", "--db", db, "--json")
    assert code == 0, err
    assert "Ada Brightwater" in json.loads(out)["answer"]
    code, out, err = run(capsys, "replay", "t1", "--db", db, "--from", "0", "--set", "k=2")
    assert code == 0, err


def test_resume_of_a_run_without_a_recorded_index_uses_the_variable(
    monkeypatch, tiny_index, tmp_path, db, capsys
):
    from sealgraph import build_graph
    from sealgraph.runs.checkpointers import open_checkpointer

    with open_checkpointer(db) as checkpointer:
        graph = build_graph(tiny_index, checkpointer=checkpointer)
        config = {"configurable": {"thread_id": "py-1"}}
        graph.invoke({"question": QUESTION}, config, interrupt_before=["pack"])
    code, _, err = run(capsys, "resume", "py-1", "--db", db)
    assert code != 0 and "does not record its index" in err
    monkeypatch.setenv(INDEX_ENV, str(tiny_index.path))
    code, out, err = run(capsys, "resume", "py-1", "--db", db, "--json")
    assert code == 0, err
    assert "Ada Brightwater" in json.loads(out)["answer"]


# -- demo, eval, help -------------------------------------------------------------


def test_demo_ignores_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(INDEX_ENV, str(tmp_path / "mine"))
    assert build_parser().parse_args(["demo"]).index is None


def _eval_args(questions: Path, *extra: str):
    argv = ["eval", "--questions", str(questions), "--k", "2", "--methods", "seal"]
    return build_parser().parse_args([*argv, "--out", "r.json", *extra])


def test_eval_uses_the_variable_only_for_corpus_questions_without_corpus(monkeypatch, tmp_path):
    corpus_q = tmp_path / "corpus.jsonl"
    corpus_q.write_text(
        json.dumps({"id": "q1", "question": "?", "gold_documents": ["a.md"], "gold_spans": []})
        + "\n"
    )
    multihop_q = tmp_path / "hotpot.jsonl"
    multihop_q.write_text(json.dumps({"question": "?", "answer": "a", "paragraphs": []}) + "\n")
    assert eval_index_arg(_eval_args(corpus_q)) is None  # unset
    monkeypatch.setenv(INDEX_ENV, str(tmp_path / "mine"))
    assert eval_index_arg(_eval_args(corpus_q)) == str(tmp_path / "mine")
    assert eval_index_arg(_eval_args(corpus_q, "--corpus", str(tmp_path))) is None
    assert eval_index_arg(_eval_args(multihop_q)) is None
    assert eval_index_arg(_eval_args(multihop_q, "--index", "flag")) == "flag"


@pytest.mark.parametrize("command", ["index", "ask", "resume", "replay", "eval", "demo"])
def test_help_mentions_the_variable(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert INDEX_ENV in capsys.readouterr().out
