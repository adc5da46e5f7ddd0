from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from sealgraph.errors import IngestError, InputError
from sealgraph.ingest import load_corpus, load_documents, load_qa_records, qa_doc_id


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def qa_line(paragraphs, question="Q?", answer="A", **extra) -> str:
    record = {
        "id": "x",
        "question": question,
        "answer": answer,
        "paragraphs": [{"title": t, "sentences": s} for t, s in paragraphs],
        "supporting_facts": [[paragraphs[0][0], 0]],
        **extra,
    }
    return json.dumps(record)


def test_directory_walk_is_sorted_and_ids_are_relative_paths(tiny_docs_dir):
    docs = load_documents(tiny_docs_dir)
    assert [d.doc_id for d in docs] == [
        "ada_brightwater.txt",
        "handbook.md",
        "northwind_studio.md",
        "port_ellis.md",
        "products/lumen_lamp.md",
    ]
    by_id = {d.doc_id: d for d in docs}
    assert by_id["products/lumen_lamp.md"].title == "Lumen Lamp"  # first H1
    assert by_id["ada_brightwater.txt"].title == "ada_brightwater"  # file stem
    assert by_id["handbook.md"].metadata["format"] == "markdown"
    assert by_id["ada_brightwater.txt"].metadata["format"] == "text"


def test_markdown_title_falls_back_to_stem_and_ignores_deeper_headings(tmp_path):
    write(tmp_path / "notes.md", "## Only a subheading\n\nText.\n")
    (doc,) = load_documents(tmp_path)
    assert doc.title == "notes"


def test_text_is_kept_exactly_except_line_endings(tmp_path):
    write(tmp_path / "a.md", b"# T\r\n\r\n  Body  text\r\n")
    (doc,) = load_documents(tmp_path)
    assert doc.text == "# T\n\n  Body  text\n"


def test_unknown_suffix_skipped_in_directory_but_read_when_named(tmp_path):
    write(tmp_path / "keep.md", "# Keep\n")
    write(tmp_path / "data.log", "a,b\n1,2\n")
    write(tmp_path / ".hidden.md", "# Hidden\n")
    assert [d.doc_id for d in load_documents(tmp_path)] == ["keep.md"]
    (doc,) = load_documents(tmp_path / "data.log")
    assert doc.doc_id == "data.log" and doc.text == "a,b\n1,2\n"
    assert doc.metadata["format"] == "text"


def test_binary_file_skipped_with_warning(tmp_path):
    write(tmp_path / "ok.txt", "fine")
    write(tmp_path / "blob.txt", b"abc\x00def")
    warnings: list[str] = []
    docs = load_documents(tmp_path, warn=warnings.append)
    assert [d.doc_id for d in docs] == ["ok.txt"]
    assert len(warnings) == 1 and "blob.txt" in warnings[0] and "binary" in warnings[0]


def test_non_utf8_replaced_with_warning(tmp_path):
    write(tmp_path / "latin.txt", "café".encode("latin-1"))
    warnings: list[str] = []
    (doc,) = load_documents(tmp_path, warn=warnings.append)
    assert doc.text == "caf\ufffd"
    assert len(warnings) == 1 and "latin.txt" in warnings[0]


def test_missing_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file or directory"):
        load_documents(tmp_path / "nope")


@pytest.mark.parametrize("setup", ["empty", "only_skipped"])
def test_no_documents_is_an_input_error(tmp_path, setup):
    if setup == "only_skipped":
        write(tmp_path / "x.log", "a")
        write(tmp_path / "y.txt", b"\x00\x01")
    with pytest.raises(InputError, match="no documents found"):
        load_documents(tmp_path, warn=lambda _: None)


def test_duplicate_markdown_ids_from_two_roots(tmp_path):
    write(tmp_path / "a" / "README.md", "# A\n")
    write(tmp_path / "b" / "README.md", "# B\n")
    with pytest.raises(IngestError, match=r"duplicate document id 'README\.md'"):
        load_documents([tmp_path / "a" / "README.md", tmp_path / "b" / "README.md"])


def test_same_file_named_twice_is_read_once(tiny_docs_dir):
    docs = load_documents([tiny_docs_dir, tiny_docs_dir / "handbook.md"])
    assert len(docs) == 5


def test_qa_jsonl_paragraphs_become_documents_with_spans(tmp_path):
    sents = ["Tidewater were a band.", " Harbourlight is their album.", " It came out in 1994."]
    write(tmp_path / "qa.jsonl", qa_line([("Tidewater", sents), ("Other", ["Other text."])]) + "\n")
    docs = load_documents(tmp_path / "qa.jsonl")
    assert [d.title for d in docs] == ["Tidewater", "Other"]
    blur = docs[0]
    assert blur.text == "".join(sents)
    spans = blur.metadata["sentence_spans"]
    assert [blur.text[a:b] for a, b in spans] == sents
    expected = "p-" + hashlib.sha1(f"Tidewater\x00{blur.text}".encode()).hexdigest()[:16]
    assert blur.doc_id == expected == qa_doc_id("Tidewater", blur.text)
    assert blur.source.endswith("qa.jsonl:1")


def test_qa_paragraphs_deduplicated_across_files_and_blank_lines_ignored(tmp_path):
    shared = ("Shared", ["Same text."])
    write(tmp_path / "a.jsonl", qa_line([shared, ("A", ["a."])]) + "\n\n")
    write(tmp_path / "b.jsonl", "\n" + qa_line([("B", ["b."]), shared]) + "\n")
    # Same title, different text: a different document.
    write(tmp_path / "c.jsonl", qa_line([("Shared", ["Other text."])]) + "\n")
    corpus = load_corpus(tmp_path)
    assert [d.title for d in corpus.documents] == ["Shared", "A", "B", "Shared"]
    assert [s.n_documents for s in corpus.sources] == [2, 1, 1]


def test_generic_jsonl_with_and_without_ids(tmp_path):
    lines = [
        json.dumps({"id": "doc-1", "title": "One", "text": "First.", "lang": "en"}),
        json.dumps({"title": "Two", "text": "Second."}),
    ]
    write(tmp_path / "sub" / "g.jsonl", "\n".join(lines) + "\n")
    docs = load_documents(tmp_path)
    assert [d.doc_id for d in docs] == ["doc-1", "sub/g.jsonl:2"]
    assert docs[0].metadata["lang"] == "en"
    assert docs[1].title == "Two"


def test_generic_jsonl_duplicate_ids(tmp_path):
    line = json.dumps({"id": "same", "title": "T", "text": "x"})
    write(tmp_path / "g.jsonl", f"{line}\n{line}\n")
    with pytest.raises(IngestError, match=r"g\.jsonl:2: duplicate document id 'same'"):
        load_documents(tmp_path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        ('{"foo": 1}', "unrecognised JSONL record"),
        ('["a", "b"]', "unrecognised JSONL record"),
        ('{"paragraphs": [{"title": "T", "sentences": "oops"}]}', "paragraph 0"),
        ('{"id": "a", "text": 5}', '"text" must be a string'),
    ],
)
def test_malformed_jsonl_line_names_file_and_line(tmp_path, line, message):
    good = json.dumps({"id": "ok", "title": "T", "text": "fine"})
    write(tmp_path / "bad.jsonl", f"{good}\n\n{line}\n")
    with pytest.raises(IngestError, match=message) as info:
        load_documents(tmp_path)
    assert f"{tmp_path / 'bad.jsonl'}:3" in str(info.value)


def test_load_qa_records_validates_schema(tmp_path):
    path = write(tmp_path / "qa.jsonl", qa_line([("T", ["s."])]) + "\n\n")
    records = load_qa_records(path)
    assert len(records) == 1 and records[0]["question"] == "Q?"

    write(tmp_path / "gen.jsonl", json.dumps({"id": "a", "text": "x"}) + "\n")
    with pytest.raises(IngestError, match=r"gen\.jsonl:1: not a multi-hop QA record"):
        load_qa_records(tmp_path / "gen.jsonl")

    write(tmp_path / "facts.jsonl", qa_line([("T", ["s."])], supporting_facts=[["T"]]) + "\n")
    with pytest.raises(IngestError, match="supporting_facts"):
        load_qa_records(tmp_path / "facts.jsonl")

    with pytest.raises(InputError):
        load_qa_records(tmp_path / "missing.jsonl")


def test_sources_record_file_hashes(tiny_docs_dir):
    corpus = load_corpus(tiny_docs_dir)
    handbook = next(s for s in corpus.sources if s.path.endswith("/handbook.md"))
    digest = hashlib.sha256((tiny_docs_dir / "handbook.md").read_bytes()).hexdigest()
    assert handbook.sha256 == digest and handbook.n_documents == 1


def test_unreadable_file_named_explicitly_is_an_error(tmp_path, monkeypatch):
    path = write(tmp_path / "note.md", "# Note\n\nText.\n")

    def denied(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(InputError, match=r"cannot read .*note\.md: Permission denied"):
        load_documents(path)


def test_json_nesting_limit_is_exact(tmp_path):
    from sealgraph.ingest import MAX_JSON_DEPTH

    def line(depth: int) -> str:
        # The record object itself is one level.
        nested = "[" * (depth - 1) + "]" * (depth - 1)
        return json.dumps({"id": "a", "text": "x"})[:-1] + f', "extra": {nested}}}'

    write(tmp_path / "ok.jsonl", line(MAX_JSON_DEPTH) + "\n")
    assert len(load_documents(tmp_path / "ok.jsonl")) == 1
    write(tmp_path / "deep.jsonl", line(MAX_JSON_DEPTH + 1) + "\n")
    with pytest.raises(IngestError, match=r"deep\.jsonl:1: JSON nested too deeply"):
        load_documents(tmp_path / "deep.jsonl")


def test_symlinked_file_and_folder_are_read_once(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "real" / "a.md", "# A\n\nAlpha.\n")
    (docs / "z_link.md").symlink_to(docs / "real" / "a.md")
    (docs / "broken.md").symlink_to(docs / "missing.md")
    warnings: list[str] = []
    ids = [d.doc_id for d in load_documents(docs, warn=warnings.append)]
    assert ids == ["real/a.md"]
    assert warnings == [f"skipped broken symlink {docs / 'broken.md'}"]
