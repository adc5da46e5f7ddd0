"""``sealgraph replay``: fork a run at a checkpoint with changed config; the original stays intact."""

import json
import sqlite3

import pytest

from sealgraph.cli import main
from sealgraph.runs.replay import diff_evidence

QUESTION = "In which province is the town where Northwind Studio was founded?"


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("SEALGRAPH_TEST_SLOW_NODE", raising=False)


@pytest.fixture
def run(tiny_index, tmp_path, capsys):
    """A finished run (k=2) in a fresh database: (db, original JSON output)."""
    db = str(tmp_path / "runs.sqlite")
    code = main(
        [
            "ask",
            QUESTION,
            "--index",
            str(tiny_index.path),
            "--db",
            db,
            "--thread",
            "r",
            "--json",
            "--k",
            "2",
        ]
    )
    assert code == 0
    return db, json.loads(capsys.readouterr().out)


def all_checkpoints(db):
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints ORDER BY checkpoint_id"
        ).fetchall()


def replay(db, capsys, *args):
    code = main(["replay", "r", "--db", db, "--json", *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out), captured.err


def test_diff_evidence_reports_added_removed_and_kept_in_order():
    before = [{"chunk_id": "a#0", "title": "A"}, {"chunk_id": "b#0", "title": "B"}]
    after = [{"chunk_id": "c#0", "title": "C"}, {"chunk_id": "a#0", "title": "A"}]
    diff = diff_evidence(before, after, answer_before="x", answer_after="y")
    assert [(c.chunk_id, c.title) for c in diff.added] == [("c#0", "C")]
    assert [(c.chunk_id, c.title) for c in diff.removed] == [("b#0", "B")]
    assert diff.kept == ("a#0",)
    assert diff.changed
    same = diff_evidence(before, list(reversed(before)), answer_before="x", answer_after="x")
    assert not same.changed
    assert same.to_dict()["added"] == [] and same.to_dict()["removed"] == []


def test_replay_with_smaller_k_forks_and_reports_the_evidence_difference(run, capsys):
    db, original = run
    before = all_checkpoints(db)
    out, err = replay(db, capsys, "--from", "0", "--set", "k=1")
    # the fork re-ran every node from the search, streaming progress to stderr
    assert err.splitlines()[0].startswith("[") and "search: initial top-1" in err
    assert out["overrides"] == {"k": 1}
    assert out["evidence_before"] == [e["chunk_id"] for e in original["evidence"]]
    assert len(out["evidence_after"]) == 1
    assert out["answer_before"] == original["answer"]
    removed = {c["chunk_id"] for c in out["removed"]}
    added = {c["chunk_id"] for c in out["added"]}
    assert removed == set(out["evidence_before"]) - set(out["evidence_after"])
    assert added == set(out["evidence_after"]) - set(out["evidence_before"])
    assert removed, "k=1 must drop a passage of the k=2 run"
    assert all(c["title"] for c in out["removed"])
    # the original checkpoints are untouched; the fork only added new ones
    after = all_checkpoints(db)
    assert set(before) < set(after)
    fork_rows = [row for row in after if row not in before]
    assert all(row[0] not in {b[0] for b in before} for row in fork_rows)


def test_trace_still_shows_the_original_and_the_fork_on_request(run, capsys):
    db, original = run
    out, _ = replay(db, capsys, "--from", "0", "--set", "k=1")
    assert main(["trace", "r", "--db", db, "--json"]) == 0
    events = json.loads(capsys.readouterr().out)
    assert events[-1]["message"] == original["answer"]
    assert main(["trace", "r", "--db", db]) == 0
    text = capsys.readouterr().out
    assert text.startswith("thread r: run, finished")
    assert out["fork_end_id"] in text  # listed under "other branches"
    assert main(["trace", "r", "--db", db, "--checkpoint", out["fork_end_id"]]) == 0
    fork_text = capsys.readouterr().out
    assert fork_text.startswith("thread r: replay forked at step 0, finished")
    assert 'config overrides: {"k": 1}' in fork_text
    assert f"final answer: {out['answer_after']}" in fork_text


def test_replays_always_fork_the_original_run(run, capsys):
    db, original = run
    replay(db, capsys, "--from", "0", "--set", "k=1")
    second, _ = replay(db, capsys, "--from", "0", "--set", "max_loops=0")
    assert second["overrides"] == {"k": 2, "max_loops": 0}  # the run's k, not the first fork's
    assert second["evidence_before"] == [e["chunk_id"] for e in original["evidence"]]
    assert second["loops_after"] == 0
    # resume of the thread shows the original run, not a fork
    assert main(["resume", "r", "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == original["answer"]


def test_replay_text_output_names_changes_and_answers(run, capsys):
    db, original = run
    assert main(["replay", "r", "--db", db, "--from", "0", "--set", "k=1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith('replayed thread r from step 0 with config {"k": 1}')
    assert "\n  - " in text
    assert f"answer before: {original['answer']}" in text
    assert "trace the fork with: sealgraph trace r --checkpoint " in text


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--from", "99"], "step 99 is out of range"),
        (["--from", "-1"], "cannot fork the input checkpoint"),
        (["--from", "0", "--set", "bogus=1"], "unknown config key 'bogus'"),
        (["--from", "0", "--set", "k=0"], "k"),
    ],
)
def test_bad_replays_are_clear_errors_and_write_nothing(run, capsys, args, needle):
    db, _ = run
    before = all_checkpoints(db)
    code = main(["replay", "r", "--db", db, *args])
    captured = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in captured.err
    assert needle in captured.err.strip().splitlines()[-1]
    assert all_checkpoints(db) == before


def test_replay_of_unknown_thread_is_a_clear_error(run, capsys):
    db, _ = run
    code = main(["replay", "ghost", "--db", db, "--from", "0"])
    assert code != 0
    assert "unknown thread 'ghost'" in capsys.readouterr().err


def test_a_setting_that_acts_before_the_fork_is_named_in_a_warning(run, capsys):
    db, _ = run
    out, err = replay(db, capsys, "--from", "3", "--set", "k=1", "--set", "budget=300")
    assert out["warnings"] == [
        "k acts at search, which ran before step 3: the fork keeps what search did "
        "(replay --from 0 to run it again with k)"
    ]
    assert f"sealgraph: warning: {out['warnings'][0]}" in err
    # From the search on, every setting can act: no warning.
    out, err = replay(db, capsys, "--from", "0", "--set", "k=1")
    assert out["warnings"] == [] and "warning" not in err


def test_unreached_settings_name_the_nodes_a_fork_does_not_run():
    from sealgraph.runs.replay import unreached_settings

    later = frozenset({"generate"})
    lines = unreached_settings(
        {"budget": 300, "min_answerability": 0.2, "llm.model": "m"}, later, 7
    )
    assert lines == [
        "budget acts only at pack, which ran before step 7: the fork cannot change with it "
        "(replay --from 0 to run it again)"
    ]
    assert unreached_settings({"budget": 300}, frozenset({"pack", "generate"}), 6) == []
