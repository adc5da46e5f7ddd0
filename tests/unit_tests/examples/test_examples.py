import importlib
import json
import re
import sys
import zipfile
from importlib.resources import files
from pathlib import Path

import pytest

import sealgraph.examples as examples
from sealgraph.errors import IngestError
from sealgraph.examples import (
    QUESTION_FIELDS,
    QUESTION_TYPES,
    corpus_dir,
    corpus_files,
    load_questions,
    package_data_dir,
    questions_path,
)
from sealgraph.text.names import normalize_name, words

# Where a supporting sentence may start: the start of a line, after a bullet
# marker, or after the end of the previous sentence.
_SENTENCE_START = re.compile(r"(?:^|\n|- |[.!?:] )$")


@pytest.fixture(scope="module")
def documents() -> dict[str, str]:
    """Title (level-1 heading) -> full Markdown text."""
    out: dict[str, str] = {}
    for path in corpus_files():
        text = path.read_text(encoding="utf-8")
        out[_title(text)] = text
    return out


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    return load_questions()


def _title(text: str) -> str:
    first = text.lstrip().splitlines()[0]
    assert first.startswith("# "), f"document does not start with a level-1 heading: {first!r}"
    return first[2:].strip()


def _anchors(title: str, documents: dict[str, str]) -> list[str]:
    """The title plus the acronym its own document declares, as in "Payments Platform Team (PPT)"."""
    found = re.findall(re.escape(title) + r" \(([A-Z]{2,})\)", documents[title])
    return [title, *sorted(set(found))]


def _mentions(text: str, anchors: list[str]) -> bool:
    return any(re.search(r"\b" + re.escape(anchor) + r"\b", text) for anchor in anchors)


def test_corpus_loads_from_package_resources():
    root = files("sealgraph.examples")
    assert corpus_dir() == Path(str(root.joinpath("corpus")))
    assert corpus_dir().is_dir()
    assert questions_path() == Path(str(root.joinpath("questions.jsonl")))
    assert questions_path().is_file()
    paths = corpus_files()
    assert 10 <= len(paths) <= 14
    assert [p.name for p in paths] == sorted(p.name for p in paths)
    assert all(p.suffix == ".md" and p.parent == corpus_dir() for p in paths)


def test_every_document_has_one_title_sections_and_a_sane_length(documents):
    for title, text in documents.items():
        lines = text.splitlines()
        level1 = [line for line in lines if line.startswith("# ")]
        level2 = [line for line in lines if line.startswith("## ")]
        assert level1 == [f"# {title}"], title
        assert len(level2) >= 2, title
        assert 150 <= len(words(text)) <= 600, (title, len(words(text)))


def test_titles_are_unique():
    titles = [_title(p.read_text(encoding="utf-8")) for p in corpus_files()]
    assert len(set(titles)) == len(titles)


def test_every_document_mentions_another_document(documents):
    for title, text in documents.items():
        others = [t for t in documents if t != title]
        assert any(_mentions(text, _anchors(other, documents)) for other in others), title


def test_section_headings_never_shadow_another_documents_name(documents):
    # Entity linkers index headings as names too: a glossary section called "PPT"
    # would pull every mention of PPT away from the team's own page.
    names = {
        normalize_name(anchor): title
        for title in documents
        for anchor in _anchors(title, documents)
    }
    for title, text in documents.items():
        for line in text.splitlines():
            if line.startswith("##"):
                heading = normalize_name(line.lstrip("#"))
                assert names.get(heading, title) == title, (title, line)


def test_questions_have_the_expected_fields(questions):
    assert len(questions) >= 8
    assert len({q["id"] for q in questions}) == len(questions)
    for q in questions:
        assert set(q) == set(QUESTION_FIELDS), q["id"]
        assert q["type"] in QUESTION_TYPES, q["id"]
        assert q["question"].endswith("?"), q["id"]
        assert q["answer"].strip() == q["answer"] != "", q["id"]
        assert q["supporting_titles"] and q["supporting_sentences"], q["id"]
        assert len(set(q["supporting_titles"])) == len(q["supporting_titles"]), q["id"]
    assert {q["type"] for q in questions} == set(QUESTION_TYPES)


def test_supporting_titles_are_document_titles(questions, documents):
    for q in questions:
        for title in q["supporting_titles"]:
            assert title in documents, (q["id"], title)


def test_supporting_sentences_occur_verbatim_in_supporting_documents(questions, documents):
    for q in questions:
        texts = [documents[t] for t in q["supporting_titles"]]
        for sentence in q["supporting_sentences"]:
            hosts = [text for text in texts if sentence in text]
            assert hosts, (q["id"], sentence)
            # Whole sentences only, so a sentence splitter cuts the same span.
            assert sentence[0].isupper() and sentence.endswith("."), (q["id"], sentence)
            before = hosts[0][: hosts[0].index(sentence)]
            assert _SENTENCE_START.search(before[-2:] if before else ""), (q["id"], sentence)
        # No padding: every supporting document states at least one needed fact.
        for title, text in zip(q["supporting_titles"], texts, strict=True):
            assert any(s in text for s in q["supporting_sentences"]), (q["id"], title)


def test_answers_occur_verbatim_in_a_supporting_document(questions, documents):
    for q in questions:
        if q["type"] == "yes/no":
            assert q["answer"] in {"yes", "no"}, q["id"]
            continue
        texts = [documents[t] for t in q["supporting_titles"]]
        assert any(q["answer"] in text for text in texts), q["id"]


def test_yes_no_questions_have_both_answers(questions):
    answers = {q["answer"] for q in questions if q["type"] == "yes/no"}
    assert answers == {"yes", "no"}


def test_at_least_six_questions_need_two_or_more_documents(questions):
    assert sum(len(q["supporting_titles"]) >= 2 for q in questions) >= 6
    assert any(len(q["supporting_titles"]) >= 3 for q in questions)


def test_bridge_questions_anchor_the_first_hop_and_link_the_next(questions, documents):
    for q in (q for q in questions if q["type"] == "bridge"):
        first, *rest = q["supporting_titles"]
        assert _mentions(q["question"], _anchors(first, documents)), q["id"]
        for hop, title in enumerate(rest, start=1):
            earlier = [documents[t] for t in q["supporting_titles"][:hop]]
            assert any(_mentions(text, _anchors(title, documents)) for text in earlier), (
                q["id"],
                title,
            )


def test_comparison_and_yes_no_questions_name_every_entity(questions, documents):
    for q in (q for q in questions if q["type"] != "bridge"):
        for title in q["supporting_titles"]:
            assert _mentions(q["question"], _anchors(title, documents)), (q["id"], title)


def test_anchors_see_declared_acronyms(documents):
    # Guards the helper the reachability tests rely on.
    assert _anchors("Payments Platform Team", documents) == ["Payments Platform Team", "PPT"]
    assert not _mentions("the PPTX file", ["PPT"])


def test_load_questions_reports_malformed_lines(tmp_path, monkeypatch):
    bad = tmp_path / "questions.jsonl"
    monkeypatch.setattr(examples, "questions_path", lambda: bad)

    bad.write_text('{"id": "x", "question": "Q?"}\n', encoding="utf-8")
    with pytest.raises(IngestError, match=r":1: missing keys answer, type"):
        load_questions()

    bad.write_text("\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r":2: expected a JSON object"):
        load_questions()

    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r":1: not valid JSON"):
        load_questions()

    record = dict.fromkeys(QUESTION_FIELDS, "v")
    bad.write_text(json.dumps(record) + "\n\n", encoding="utf-8")
    assert load_questions() == [record]


def test_package_data_dir_copies_resources_of_an_archived_package(tmp_path, monkeypatch):
    package = "sealgraph_zipped_examples_fixture"
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"{package}/__init__.py", "")
        zf.writestr(f"{package}/corpus/a.md", "# Alpha\n\nText.\n")
        zf.writestr(f"{package}/questions.jsonl", "{}\n")
    monkeypatch.syspath_prepend(str(archive))
    try:
        importlib.import_module(package)
        assert not isinstance(files(package), Path)  # really served from the archive
        extracted = package_data_dir(package)
        assert (extracted / "corpus" / "a.md").read_text() == "# Alpha\n\nText.\n"
        assert (extracted / "questions.jsonl").read_text() == "{}\n"
        assert package_data_dir(package) == extracted  # copied once per process
    finally:
        sys.modules.pop(package, None)


# --- the demo's offline answers -------------------------------------------------------------

_PUNCT = re.compile(r"[^\w\s]")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def _norm(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (as answer metrics do)."""
    return " ".join(_ARTICLES.sub(" ", _PUNCT.sub(" ", text.casefold())).split())


def _answers_expected(answer: str, expected: str) -> bool:
    """Whether the answer holds the expected one: a yes/no answer must open with it
    (a sentence may say "no" anywhere), any other expected answer must occur in it."""
    got = _norm(answer)
    if expected in ("yes", "no"):
        return got.split()[:1] == [expected]
    return f" {_norm(expected)} " in f" {got} "


def test_answers_expected_normalises():
    assert _answers_expected("Dana Whitcombe — Dana Whitcombe has led PPT. [2]", "Dana Whitcombe")
    assert _answers_expected("No — Ledgerline is owned by PPT. [6]", "no")
    assert not _answers_expected("Yes — it keeps no database. [1]", "no")
    assert not _answers_expected("SET [1]", "Lisbon Office")


@pytest.fixture(scope="module")
def demo_answers(tmp_path_factory) -> list[tuple[dict, str]]:
    """Every example question answered as ``sealgraph demo --embedder none`` answers it.

    The index is built with :func:`ensure_demo_index` and lexical retrieval only
    (``embedder="none"``), and the graph with :func:`build_run_graph`, the two calls
    of ``sealgraph demo``. The default ``sealgraph demo`` (``--embedder auto``) adds
    dense retrieval when the local embedding model is installed; this test runs the
    lexical index so that it needs no model and gives the same evidence everywhere.
    """
    from sealgraph.examples.demo import ensure_demo_index
    from sealgraph.runs.threads import build_run_graph

    index_dir = ensure_demo_index(tmp_path_factory.mktemp("demo") / "index", embedder="none")
    graph = build_run_graph(index_dir)
    return [(q, graph.invoke({"question": q["question"]})["answer"]) for q in load_questions()]


def test_demo_offline_answers_hold_the_expected_answers(demo_answers):
    misses = [
        f"{q['id']}: expected {q['answer']!r}, got {answer!r}"
        for q, answer in demo_answers
        if not _answers_expected(answer, q["answer"])
    ]
    right = len(demo_answers) - len(misses)
    # The target is 13 of 15; today 12 are right (q07, q09, q13 miss: the
    # second hop's chunk is never swapped in, see docs/benchmarks.md). This guards
    # the level reached; raise it with the controller.
    assert right >= 13, f"{right}/{len(demo_answers)} right; misses:\n" + "\n".join(misses)


def test_demo_answers_cite_the_packed_context(demo_answers):
    for q, answer in demo_answers:
        assert answer.strip(), q["id"]
        if not answer.startswith("Insufficient evidence"):
            assert re.search(r"\[\d+\]", answer), (q["id"], answer)
