from __future__ import annotations

import json

import pytest

from sealgraph.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_prints_a_one_line_summary(tmp_path, tiny_docs_dir, capsys):
    code, out, err = run(
        capsys, "index", str(tiny_docs_dir), "--index", str(tmp_path / "idx"), "--embedder", "none"
    )
    assert code == 0
    assert out.count("\n") == 1
    assert "indexed 5 documents, 10 chunks" in out and "lexical only" in out
    assert "(5 added, 0 updated, 0 unchanged)" in out
    assert err == ""
    assert (tmp_path / "idx" / "manifest.json").is_file()


def test_max_chunk_tokens_flag(tmp_path, tiny_docs_dir, capsys):
    code, _, _ = run(
        capsys,
        "index",
        str(tiny_docs_dir / "handbook.md"),
        "--index",
        str(tmp_path / "idx"),
        "--embedder",
        "none",
        "--max-chunk-tokens",
        "12",
    )
    assert code == 0
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["chunker"]["max_tokens"] == 12
    assert manifest["counts"]["chunks"] > 5


def test_warnings_go_to_stderr(tmp_path, tiny_docs_dir, capsys):
    (tiny_docs_dir / "blob.txt").write_bytes(b"\x00\x01\x02")
    code, out, err = run(
        capsys, "index", str(tiny_docs_dir), "--index", str(tmp_path / "idx"), "--embedder", "none"
    )
    assert code == 0 and "indexed 5 documents" in out
    assert "warning: skipped binary file" in err and "blob.txt" in err


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing", "no such file or directory"),
        ("bad_jsonl", "bad.jsonl:2: invalid JSON"),
        ("empty_dir", "no documents found"),
    ],
)
def test_bad_input_is_one_clean_error_line(tmp_path, capsys, case, message):
    path = tmp_path / case
    if case == "bad_jsonl":
        path = tmp_path / "bad.jsonl"
        path.write_text('{"id": "a", "title": "t", "text": "ok"}\n{oops\n')
    elif case == "empty_dir":
        path.mkdir()
    # --embedder none: without the [local] extra, "auto" adds a warning line of its own.
    args = ("index", str(path), "--index", str(tmp_path / "idx"), "--embedder", "none")
    code, out, err = run(capsys, *args)
    assert code != 0 and out == ""
    assert err.startswith("sealgraph: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_embedder_mismatch_suggests_force(tmp_path, tiny_docs_dir, capsys, monkeypatch):
    import sealgraph.index.embedders as embedders

    idx = str(tmp_path / "idx")
    assert run(capsys, "index", str(tiny_docs_dir), "--index", idx, "--embedder", "none")[0] == 0
    # Pretend a different embedder is requested: an OpenAI model (never called here).
    code, _, err = run(
        capsys,
        "index",
        str(tiny_docs_dir),
        "--index",
        idx,
        "--embedder",
        "openai:text-embedding-3-small",
    )
    assert code != 0 and "--force" in err and "Traceback" not in err
    monkeypatch.setattr(embedders, "local_embedder_available", lambda: False)
    code, _, err = run(capsys, "index", str(tiny_docs_dir), "--index", idx, "--embedder", "local")
    assert code != 0 and "sealgraph[local]" in err


def test_unknown_embedder_spec(tmp_path, tiny_docs_dir, capsys):
    code, _, err = run(
        capsys, "index", str(tiny_docs_dir), "--index", str(tmp_path / "i"), "--embedder", "magic"
    )
    assert code != 0 and "unknown embedder 'magic'" in err


def test_index_adds_to_an_existing_index_and_replace_flag_replaces(tmp_path, tiny_docs_dir, capsys):
    idx = str(tmp_path / "idx")
    assert run(capsys, "index", str(tiny_docs_dir), "--index", idx, "--embedder", "none")[0] == 0
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nA note.\n")
    code, out, _ = run(capsys, "index", str(note), "--index", idx)
    assert (
        code == 0
        and "indexed 6 documents" in out
        and "(1 added, 0 updated, 0 unchanged, 5 kept)" in out
    )
    code, out, _ = run(capsys, "index", str(note), "--index", idx, "--replace")
    assert (
        code == 0
        and "indexed 1 documents" in out
        and "(0 added, 1 updated, 0 unchanged, 5 removed)" in out
    )


def test_verify_checks_every_byte_and_names_a_damaged_file(tmp_path, tiny_docs_dir, capsys):
    index = tmp_path / "idx"
    assert main(["index", str(tiny_docs_dir), "--index", str(index), "--embedder", "none"]) == 0
    capsys.readouterr()
    assert main(["index", "--verify", "--index", str(index)]) == 0
    assert "is intact" in capsys.readouterr().out
    # A flipped byte keeps the file's size; in the middle of a large file it keeps its
    # quick digest too (the ends), which opening checks. --verify reads every byte.
    postings = next((index / "lexical").glob("seg-*/rows.npy"))
    data = bytearray(postings.read_bytes())
    middle = len(data) // 2
    data[middle] ^= 0xFF
    postings.write_bytes(bytes(data))
    assert main(["index", "--verify", "--index", str(index)]) != 0
    err = capsys.readouterr().err
    assert "rows.npy" in err and "Traceback" not in err


def test_verify_takes_no_paths(tmp_path, tiny_docs_dir, capsys):
    assert main(["index", str(tiny_docs_dir), "--verify", "--index", str(tmp_path / "i")]) != 0
    assert "--verify checks an index" in capsys.readouterr().err
