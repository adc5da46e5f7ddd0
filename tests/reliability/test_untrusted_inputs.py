"""Untrusted inputs, round 2: an index, a served graph and a document folder are data.

Each test is one case of the hostile-input review (docs/reliability.md): nothing a
manifest, a run's config or a corpus folder names is imported or read beyond what
the user named; what reaches the terminal is shown, never obeyed; a full disk is a
clear error; text is read the same whatever its Unicode normal form.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.cli import assert_clear_error, run_cli, small_tmpfs, snapshot
from support.documents import write_pages
from support.fakes import write_tiny_docs

from sealgraph.config import SealConfig
from sealgraph.errors import ConfigError, InputError, TokenizerError
from sealgraph.index import build_index, load_index
from sealgraph.ingest import load_documents
from sealgraph.terminal import SafeTextStream, printable

EVIL_MODULE = """
from pathlib import Path
Path({marker!r}).write_text("imported")
X = None
"""


def _evil_module(folder: Path, name: str) -> Path:
    """Write a module that leaves a marker file when imported; return the marker path."""
    marker = folder / f"{name}.imported"
    (folder / f"{name}.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    return marker


@pytest.fixture
def tiny_index(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    return build_index(docs, tmp_path / "idx", embedder="none", warn=lambda _: None).path


# --- an index manifest cannot name a module to import ---------------------------------------


def _name_lexicon_in_manifest(index_dir: Path, spec: str) -> None:
    manifest = json.loads((index_dir / "manifest.json").read_text())
    manifest["lexicon"] = spec
    (index_dir / "manifest.json").write_text(json.dumps(manifest))


def test_a_manifest_naming_a_lexicon_module_imports_nothing(tiny_index, tmp_path, monkeypatch):
    marker = _evil_module(tmp_path, "evil_lex_manifest")
    monkeypatch.syspath_prepend(str(tmp_path))
    _name_lexicon_in_manifest(tiny_index, "evil_lex_manifest:X")
    with pytest.raises(ConfigError, match="imports only when you name it"):
        load_index(tiny_index)
    assert not marker.exists()
    # The CLI, run from the folder holding the module (on sys.path as the cwd).
    result = run_cli(
        "ask",
        "Who designed the Lumen Lamp?",
        "--index",
        str(tiny_index),
        "--db",
        str(tmp_path / "runs.sqlite"),
        cwd=tmp_path,
    )
    assert_clear_error(result, "evil_lex_manifest:X", "--lexicon")
    assert not marker.exists()
    # Adding documents to such an index imports nothing either.
    result = run_cli("index", str(tmp_path / "docs"), "--index", str(tiny_index), cwd=tmp_path)
    assert_clear_error(result, "evil_lex_manifest:X")
    assert not marker.exists()


def test_a_lexicon_the_user_names_opens_an_index_built_with_it(tmp_path):
    # The trusted ways still work: --lexicon on the command line, or the variable.
    (tmp_path / "my_lexicon_mod.py").write_text(
        "import dataclasses\nfrom sealgraph.text.lexicon.english import ENGLISH\n"
        "MINE = dataclasses.replace(ENGLISH, name='mine')\n"
    )
    docs = write_tiny_docs(tmp_path / "docs")
    env = {"PYTHONPATH": str(tmp_path)}
    built = run_cli(
        "index",
        str(docs),
        "--index",
        str(tmp_path / "idx"),
        "--embedder",
        "none",
        "--lexicon",
        "my_lexicon_mod:MINE",
        cwd=tmp_path,
        env=env,
    )
    assert built.code == 0, built.err
    db = str(tmp_path / "runs.sqlite")
    refused = run_cli(
        "ask",
        "Who designed the Lumen Lamp?",
        "--index",
        str(tmp_path / "idx"),
        "--db",
        db,
        cwd=tmp_path,
        env=env,
    )
    assert_clear_error(refused, "my_lexicon_mod:MINE")
    named = run_cli(
        "ask",
        "Who designed the Lumen Lamp?",
        "--index",
        str(tmp_path / "idx"),
        "--db",
        db,
        "--lexicon",
        "my_lexicon_mod:MINE",
        cwd=tmp_path,
        env=env,
    )
    assert named.code == 0, named.err
    assert "Ada Brightwater" in named.out
    from_env = run_cli(
        "ask",
        "Who designed the Lumen Lamp?",
        "--index",
        str(tmp_path / "idx"),
        "--db",
        db,
        cwd=tmp_path,
        env={**env, "SEALGRAPH_LEXICON": "my_lexicon_mod:MINE"},
    )
    assert from_env.code == 0, from_env.err


# --- a served client or a run's config cannot name a module to import -------------------------


def test_config_from_data_imports_no_lexicon_module(tmp_path, monkeypatch):
    marker = _evil_module(tmp_path, "evil_lex_config")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match="imports only when you name it"):
        SealConfig.from_dict({"lexicon": "evil_lex_config:X"}, trusted=False)
    with pytest.raises(ConfigError, match="imports only when you name it"):
        SealConfig().override({"lexicon": "evil_lex_config:X"}, trusted=False)
    assert not marker.exists()


def test_a_run_config_cannot_import_a_module(tiny_index, tmp_path, monkeypatch):
    from sealgraph import build_graph
    from sealgraph.graph.context import SealContext

    marker = _evil_module(tmp_path, "evil_lex_run")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = build_graph(tiny_index)
    with pytest.raises(ConfigError):
        graph.invoke(
            {"question": "Who designed the Lumen Lamp?"},
            context={"config": {"lexicon": "evil_lex_run:X"}},
        )
    with pytest.raises(ConfigError):
        graph.invoke(
            {"question": "Who designed the Lumen Lamp?"},
            context=SealContext(config={"lexicon": "evil_lex_run:X"}),
        )
    assert not marker.exists()


# --- strict config values --------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, value",
    [
        ("k", "true"),
        ("k", "3.5"),
        ("utility.novelty", "inf"),
        ("utility.novelty", "Infinity"),
        ("utility.novelty", "NaN"),
        ("pack.fill", "1"),
        ("tokenizer_model", "bogus-enc"),
    ],
)
def test_config_values_are_validated_strictly(key, value):
    with pytest.raises(ConfigError, match=key.split(".")[-1]):
        SealConfig().override({key: value})


def test_an_unknown_encoding_is_refused_not_recorded_as_another(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    with pytest.raises(TokenizerError, match="unknown tokenizer 'bogus-enc'"):
        build_index(docs, tmp_path / "idx", embedder="none", encoding="bogus-enc")
    assert not (tmp_path / "idx").exists()
    result = run_cli(
        "index",
        str(docs),
        "--index",
        str(tmp_path / "idx2"),
        "--embedder",
        "none",
        "--encoding",
        "bogus-enc",
    )
    assert_clear_error(result, "bogus-enc")
    assert not (tmp_path / "idx2").exists()


# --- a corpus is what is under the given paths: special files --------------------------------


def test_a_fifo_named_as_input_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    result = run_cli(
        "index", str(fifo), "--index", str(tmp_path / "idx"), "--embedder", "none", timeout=60
    )
    assert_clear_error(result, "fifo.txt", "FIFO")
    assert not (tmp_path / "idx").exists()


def test_a_device_named_as_input_is_refused(tmp_path):
    result = run_cli(
        "index", "/dev/zero", "--index", str(tmp_path / "idx"), "--embedder", "none", timeout=60
    )
    assert_clear_error(result, "/dev/zero", "device")
    assert "MemoryError" not in result.err


def test_special_files_inside_a_folder_are_skipped_with_a_warning(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    os.mkfifo(docs / "pipe.md")
    (docs / "zero.md").symlink_to("/dev/zero")
    warnings: list[str] = []
    documents = load_documents(docs, warn=warnings.append)  # returns: nothing blocked
    assert "pipe.md" not in {d.doc_id for d in documents}
    assert any("pipe.md" in w and "FIFO" in w for w in warnings), warnings
    # /dev/zero is outside the folder: skipped as a link out of it.
    assert any("zero.md" in w for w in warnings), warnings
    with pytest.raises(InputError, match="not a regular file"):
        load_documents(docs / "pipe.md")


# --- terminal escapes and forged lines -------------------------------------------------------


def test_printable_escapes_control_characters():
    assert printable("a\x1b[2Jb") == "a\\u001b[2Jb"
    assert printable("title\x1b]0;owned\x07") == "title\\u001b]0;owned\\u0007"
    assert printable("x\u202eexe.md") == "x\\u202eexe.md"
    assert printable("line\nnext\ttab") == "line\nnext\ttab"
    assert printable("line\nnext", one_line=True) == "line\\nnext"
    # JSON stays JSON.
    text = json.dumps({"a": "\x85\u2028"}, ensure_ascii=False)
    assert json.loads(printable(text)) == {"a": "\x85\u2028"}


def test_a_safe_stream_escapes_what_it_writes(capsys):
    stream = SafeTextStream(sys.stdout)
    stream.write("ok\x1b[31mred\n")
    stream.write_control("\r")
    assert capsys.readouterr().out == "ok\\u001b[31mred\n\r"


def test_file_names_titles_and_text_cannot_control_the_terminal(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    forged = "evil\nsealgraph: error: fake line.md"
    (docs / forged).write_bytes(b"\x00binary")  # skipped with a warning naming it
    (docs / "esc\x1b[2J.md").write_text(
        "# Title \x1b]0;owned\x07 of the page\n\nThe Lumen Lamp was designed by "
        "Ada\x1b[2J Brightwater in 2011.\n"
    )
    result = run_cli("index", str(docs), "--index", str(tmp_path / "idx"), "--embedder", "none")
    assert result.code == 0, result.err
    assert "\x1b" not in result.err and "\x1b" not in result.out
    error_lines = [line for line in result.err.splitlines() if line.startswith("sealgraph: error")]
    assert error_lines == []  # the file name's newline cannot forge an error line
    assert "evil\\nsealgraph: error: fake line.md" in result.err
    answer = run_cli(
        "ask",
        "Who designed the Lumen Lamp?",
        "--index",
        str(tmp_path / "idx"),
        "--db",
        str(tmp_path / "runs.sqlite"),
    )
    assert answer.code == 0, answer.err
    assert "\x1b" not in answer.out and "\x07" not in answer.out and "\x1b" not in answer.err
    assert "\\u001b" in answer.out  # shown, not obeyed
    as_json = run_cli(
        "ask",
        "Who designed the Lumen Lamp?",
        "--index",
        str(tmp_path / "idx"),
        "--db",
        str(tmp_path / "runs.sqlite"),
        "--json",
    )
    assert as_json.code == 0, as_json.err
    json.loads(as_json.out)  # still one valid JSON document


def test_an_error_naming_a_file_is_one_line(tmp_path):
    bad = tmp_path / "bad\nsealgraph: error: forged.jsonl"
    bad.write_text("{not json\n")
    result = run_cli("index", str(bad), "--index", str(tmp_path / "idx"), "--embedder", "none")
    assert_clear_error(result)
    assert len([line for line in result.err.splitlines() if line.strip()]) == 1, result.err


# --- a user's file inside derived/ is never deleted ----------------------------------------


def test_a_users_file_in_derived_is_not_deleted_by_a_build(tiny_index, tmp_path):
    from sealgraph.index.derived import write_derived

    index = load_index(tiny_index)
    assert write_derived(index, "tables.json", {"n": 1})  # sealgraph's own derived file
    mine = tiny_index / "derived" / "notes.json"
    mine.write_text('{"mine": true}')
    before = snapshot(tiny_index)
    extra = tmp_path / "extra.md"
    extra.write_text("# Extra\n\nAn extra page about lamps.\n")
    result = run_cli("index", str(extra), "--index", str(tiny_index))
    assert_clear_error(result, "derived/notes.json")
    assert snapshot(tiny_index) == before
    mine.unlink()
    result = run_cli("index", str(extra), "--index", str(tiny_index))
    assert result.code == 0, result.err  # its own derived file does not block a build


def test_derived_files_are_recognised_by_their_content(tmp_path):
    from sealgraph.index.derived import is_derived_file

    own = tmp_path / "stats.json"
    own.write_text('{"data": 1, "format": "sealgraph-derived", "index": "' + "a" * 64 + '"}')
    assert is_derived_file(own)
    for name, text in [("stats2.json", '{"data": 1}'), ("notes.txt", own.read_text())]:
        (tmp_path / name).write_text(text)
        assert not is_derived_file(tmp_path / name)


# --- the served-graph subprocess check (module imported at most by the user's code) -----------


def test_a_module_path_in_sealgraph_lexicon_is_the_users_choice(tmp_path):
    # $SEALGRAPH_LEXICON names a path the user trusts: get_lexicon imports it then.
    code = textwrap.dedent(
        """
        import dataclasses, sys
        from sealgraph.text.lexicon import get_lexicon
        print(get_lexicon("my_env_lexicon:MINE").name)
        """
    )
    (tmp_path / "my_env_lexicon.py").write_text(
        "import dataclasses\nfrom sealgraph.text.lexicon.english import ENGLISH\n"
        "MINE = dataclasses.replace(ENGLISH, name='from-env')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "SEALGRAPH_LEXICON": "my_env_lexicon:MINE"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "from-env"


# --- a full disk is a clear error; nothing is lost ---------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs (needs root and mount rights: skipped elsewhere)."""
    with small_tmpfs(tmp_path / "disk", "2m") as mount:
        yield mount


def test_a_full_disk_during_a_build_or_an_add_is_a_clear_error(small_disk, tmp_path):
    small = write_pages(tmp_path / "small", 3, 5)
    index_dir = small_disk / "idx"
    built = run_cli("index", str(small), "--index", str(index_dir), "--embedder", "none")
    assert built.code == 0, built.err
    before = snapshot(index_dir)
    big = write_pages(tmp_path / "big", 40, 400)  # ~1.3 MB of text: its index cannot fit
    result = run_cli("index", str(big), "--index", str(index_dir), "--embedder", "none")
    assert_clear_error(result, "no space left", str(small_disk), "MB")
    assert snapshot(index_dir) == before  # the old index is intact ...
    assert sorted(p.name for p in small_disk.iterdir()) == ["idx"]  # no leftovers
    answer = run_cli(
        "ask",
        "Where was item 1-2 shipped?",
        "--index",
        str(index_dir),
        "--db",
        str(tmp_path / "runs.sqlite"),
    )
    assert answer.code == 0, answer.err  # ... and still answers
    fresh = run_cli("index", str(big), "--index", str(small_disk / "new"), "--embedder", "none")
    assert_clear_error(fresh, "no space left")
    assert not (small_disk / "new").exists()


def test_a_short_write_is_reported_as_a_full_disk(tmp_path, monkeypatch):
    # Where no small disk can be mounted: the errors libraries raise on a full disk.
    import sqlite3

    import sealgraph.index.folder._build as build

    docs = write_tiny_docs(tmp_path / "docs")
    for error in (
        OSError("1048576 requested and 4096 written"),  # numpy, no errno
        sqlite3.OperationalError("database or disk is full"),
        OSError(28, "No space left on device"),
    ):

        def fail(*_args, error=error, **_kwargs):
            raise error

        monkeypatch.setattr(build.DocstoreWriter, "add", fail)
        with pytest.raises(build.DiskFullError, match=r"no space left in .* it needs"):
            build_index(docs, tmp_path / "idx", embedder="none")
        assert not (tmp_path / "idx").exists()
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".idx.building")]


# --- text is read the same whatever its Unicode form -------------------------------------------

LAB_PAGE = (
    "# {lab}\n\nThe {lab} studies coral reefs. It is run by {head}, who founded it in 2009.\n"
)


def _lab_docs(folder: Path, form: str) -> Path:
    import unicodedata

    folder.mkdir(parents=True, exist_ok=True)
    page = LAB_PAGE.format(lab="Sérgio Lab", head="José Araújo")
    (folder / "lab.md").write_text(unicodedata.normalize(form, page))
    (folder / "other.md").write_text(
        "# Harbour Lab\n\nThe Harbour Lab studies tides. It is run by Mara Quint.\n"
    )
    return folder


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_document_in_nfd_reads_as_its_nfc_copy(tmp_path, form):
    from sealgraph import build_graph

    index = build_index(_lab_docs(tmp_path / form, form), tmp_path / f"idx-{form}", embedder="none")
    lab = next(d for d in load_documents(tmp_path / form) if d.doc_id == "lab.md")
    assert "José Araújo" in lab.text and "Sérgio Lab" in lab.title
    graph = build_graph(index)
    for question in ("Who runs the Sérgio Lab?", "Who runs the Se\u0301rgio Lab?"):
        result = graph.invoke({"question": question})
        assert "José Araújo" in result["answer"], result["answer"]
        assert result["citations"][0]["chunk_id"].startswith("lab.md")


def test_invisible_characters_do_not_split_names(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Ros\u00adalind\n\nRos\u200balind Frank\u2060lin studied DNA.\n")
    (docs / "b.jsonl").write_text(
        json.dumps({"id": "b", "title": "N\u200bote", "text": "A\u00adB"})
    )
    by_id = {d.doc_id: d for d in load_documents(docs)}
    assert by_id["a.md"].text == "# Rosalind\n\nRosalind Franklin studied DNA.\n"
    assert by_id["a.md"].title == "Rosalind"
    assert (by_id["b"].title, by_id["b"].text) == ("Note", "AB")


def test_gold_spans_in_raw_files_map_onto_the_normalised_text():
    import unicodedata

    from sealgraph.eval.corpus_questions import normalise_source

    raw = "\ufeffIntro\r\n" + unicodedata.normalize("NFD", "José Araújo") + "\u00ad runs it.\r\n"
    source = normalise_source(raw)
    assert source.text == "Intro\nJosé Araújo runs it.\n"
    start = raw.index("Jose")
    end = raw.index("runs") + len("runs")
    mapped = source.text[source.to_normalised(start) : source.to_normalised(end, end=True)]
    assert mapped == "José Araújo runs"


# --- a served client orders bounded work ----------------------------------------------------


def test_a_run_config_is_an_allow_list_with_caps(tiny_index):
    from sealgraph import build_graph
    from sealgraph.config import SealConfig, apply_run_overrides
    from sealgraph.graph.context import SealContext

    base = SealConfig(llm={"max_calls": 10, "deadline_s": 30.0})
    assert apply_run_overrides(base, {"k": 5, "retrieval": {"pool": 50}}).retrieval.pool == 50
    assert apply_run_overrides(base, {"llm.max_calls": 3}).llm.max_calls == 3
    assert apply_run_overrides(base, {"utility.novelty": 0.0}) == base  # what it has already
    refused = [
        {"utility.novelty": 0.5},  # not a run's to change
        {"llm": {"base_url": "http://attacker.invalid/v1"}},  # the client and key stay fixed
        {"llm.api_key_env": "AWS_SECRET_ACCESS_KEY"},
        {"k": 10_000},
        {"k": True},
        {"max_loops": 1e9},
        {"micro_query_k": 1_000_000},
        {"budget": float("inf")},
        {"llm.max_calls": 11},  # never more than the graph was built with
        {"llm.deadline_s": 31},
        {"pack": {"section_priors": {"x": 1.0}}},
    ]
    for overrides in refused:
        with pytest.raises(ConfigError, match="a run"):
            apply_run_overrides(base, overrides)
    graph = build_graph(tiny_index)
    result = graph.invoke(
        {"question": "Who designed the Lumen Lamp?"}, context={"config": {"k": 2}}
    )
    assert len(result["evidence"]) == 2
    with pytest.raises(ConfigError, match="a run"):
        graph.invoke({"question": "x?"}, context={"config": {"llm.base_url": "http://x.invalid"}})
    # A value out of bounds is refused where the context is made, before the graph runs.
    with pytest.raises(ConfigError, match="a run's k must be a number from 1 to 50"):
        SealContext(config={"k": 500})


# --- a run database is data: it cannot choose where an LLM run sends the key -----------------


def test_a_run_database_cannot_choose_the_llm_endpoint(tiny_index, tmp_path, monkeypatch):
    from sealgraph.runs.checkpointers import open_checkpointer
    from sealgraph.runs.threads import graph_for_thread, run_config

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    db = tmp_path / "runs.sqlite"
    recorded = {"llm.base_url": "http://attacker.invalid/v1", "llm.api_key_env": "HOME", "k": 2}
    with open_checkpointer(db) as saver:
        # What a stranger's database records: an LLM run against their endpoint.
        from sealgraph.runs.threads import build_run_graph

        graph = build_run_graph(tiny_index, overrides={"k": 2}, checkpointer=saver)
        config = run_config("t1", index=tiny_index, llm=True, overrides=recorded)
        graph.update_state(config, {"question": "Who designed the Lumen Lamp?"})
    with open_checkpointer(db) as saver, pytest.raises(InputError) as refused:
        graph_for_thread(saver, "t1")
    assert "llm.base_url=http://attacker.invalid/v1" in str(refused.value)
    assert "llm.api_key_env=HOME" in str(refused.value)
    result = run_cli("resume", "t1", "--db", str(db))
    assert_clear_error(result, "does not send your API key")
    # Given again by the user, the same endpoint is theirs to use.
    given = {"llm.base_url": "http://attacker.invalid/v1", "llm.api_key_env": "HOME"}
    with open_checkpointer(db) as saver:
        graph, origin = graph_for_thread(saver, "t1", extra_overrides=given)
    assert origin.llm
