"""``sealgraph eval --corpus``: questions about a folder of documents (embedder "none")."""

import json
import uuid
from pathlib import Path

import pytest
from support.documents import write_pdf

from sealgraph.cli import main
from sealgraph.eval.split import split_of

# An invented corpus: a privacy policy with CRLF line ends, an agreement in a
# subfolder and a company report in Markdown.
POLICY = (
    "Harbor Notes Privacy Policy\r\n"
    "\r\n"
    "Harbor Notes stores your notes on our servers in Iceland.\r\n"
    "We never sell your personal information to advertisers.\r\n"
    "Location data is collected only when you attach a place to a note, and it is "
    "never shared with advertisers.\r\n"
    "You can delete your account at any time from the settings page.\r\n"
)
AGREEMENT = """Mutual Confidentiality Agreement between Brightwell Labs and Osterby Freight.

The Receiving Party shall return or destroy all Confidential Information within thirty days \
of a written request.
The obligations of this Agreement survive its termination for a period of five years.
Nothing in this Agreement grants the Receiving Party any licence to the Confidential Information.
"""
REPORT = """# Kestrel Foods annual report 2021

In January 2021 Kestrel Foods opened a second bakery in Tallow Bridge.
In March 2021 Kestrel Foods appointed Mara Ilves as chief executive officer.
Revenue grew by twelve percent over the year, driven by the new bakery.
"""
FILES = {
    "harbor_policy.txt": POLICY.encode("utf-8"),
    "contracts/brightwell_osterby.txt": AGREEMENT.encode("utf-8"),
    "kestrel_foods.md": REPORT.encode("utf-8"),
}


def span(document: str, phrase: str) -> dict:
    raw = FILES[document].decode("utf-8")
    start = raw.index(phrase)
    return {"document": document, "start": start, "end": start + len(phrase)}


LOCATION = (
    "Location data is collected only when you attach a place to a note, and it is "
    "never shared with advertisers.\r\n"
)
QUESTIONS = [
    {
        "id": "policy-location",
        "question": "Does Harbor Notes share location data with advertisers?",
        "answer": None,
        "type": "policy",
        "gold_documents": ["harbor_policy.txt"],
        "gold_spans": [span("harbor_policy.txt", LOCATION)],
    },
    {
        "id": "nda-survival",
        "question": "Do the obligations of the Brightwell Labs agreement survive termination?",
        "answer": None,
        "type": "contract",
        "gold_documents": ["contracts/brightwell_osterby.txt"],
        "gold_spans": [
            span(
                "contracts/brightwell_osterby.txt",
                "The obligations of this Agreement survive its termination",
            )
        ],
    },
    {
        "id": "kestrel-ceo",
        "question": "Who did Kestrel Foods appoint as chief executive officer in March 2021?",
        "answer": "Mara Ilves",
        "type": "Factual Question",
        "gold_documents": ["kestrel_foods.md"],
        "gold_spans": [
            span(
                "kestrel_foods.md",
                "In March 2021 Kestrel Foods appointed Mara Ilves as chief executive officer.",
            )
        ],
    },
    {
        "id": "kestrel-risk",
        "question": "Which risk management measure did Kestrel Foods update in May 2023?",
        "answer": "Unable to answer",
        "type": "Irrelevant Unsolvable Question",
        "gold_documents": ["kestrel_foods.md"],
        "gold_spans": [],
    },
]
METHODS = "flat-bm25,flat-hybrid,seal"
CORPUS_KEYS = {
    "recall",
    "all_gold",
    "span_recall_evidence",
    "span_recall_context",
    "declined_answerable",
    "declined_unanswerable",
    "answer_containment",
    "answer_f1",
    "latency_ms_p50",
    "latency_ms_p95",
    "n_answerable",
    "n_unanswerable",
    "n_with_spans",
    "n_with_reference",
}
NOT_DETERMINISTIC = {"latency_ms_p50", "latency_ms_p95", "peak_rss_mb"}


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    corpus = tmp_path / "corpus"
    for name, content in FILES.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_bytes(content)
    questions = write_jsonl(tmp_path / "questions.jsonl", QUESTIONS)
    return tmp_path, corpus, questions


def run_eval(questions, out, *extra):
    argv = ["eval", "--questions", str(questions), "--k", "2", "--budget", "300"]
    argv += ["--embedder", "none", "--out", str(out), "--no-progress", *extra]
    return main([str(a) for a in argv])


def deterministic_part(report):
    return {
        name: {key: value for key, value in metrics.items() if key not in NOT_DETERMINISTIC}
        for name, metrics in report["methods"].items()
    }


def normalised(document: str) -> str:
    return FILES[document].decode("utf-8").replace("\r\n", "\n")


def test_eval_on_a_corpus_folder_writes_report_and_records(data, capsys):
    tmp, corpus, questions = data
    out, records = tmp / "report.json", tmp / "records.jsonl"
    code = run_eval(questions, out, "--corpus", corpus, "--methods", METHODS, "--records", records)
    assert code == 0
    report = json.loads(out.read_text())
    assert report["format"] == "corpus"
    assert report["corpus_dir"] == str(corpus)
    assert report["split"] is None
    assert (report["n_questions"], report["corpus_size"]) == (4, 3)
    assert list(report["methods"]) == METHODS.split(",")
    for name, metrics in report["methods"].items():
        assert set(metrics) >= CORPUS_KEYS, name
        assert (metrics["n_answerable"], metrics["n_unanswerable"]) == (3, 1)
        assert (metrics["n_with_spans"], metrics["n_with_reference"]) == (3, 1)
        for key in ("recall", "all_gold", "span_recall_evidence", "span_recall_context"):
            assert 0.0 <= metrics[key] <= 1.0, (name, key)
        assert metrics["declined_unanswerable"] in (0.0, 1.0)
        assert metrics["answer_containment"] in (0.0, 1.0)
        assert metrics["span_recall_context"] <= metrics["span_recall_evidence"] + 1e-9
        assert metrics["budget_violations"] == 0
    # Three small documents and k=2: BM25 finds the gold document of most questions.
    assert report["methods"]["flat-bm25"]["recall"] >= 2 / 3

    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert {(r["id"], r["method"]) for r in lines} == {
        (q["id"], m) for q in QUESTIONS for m in METHODS.split(",")
    }
    for record in lines:
        assert {"declined", "latency_ms", "packed", "gold_documents", "gold_spans"} <= set(record)
        assert {
            "span_recall_evidence",
            "span_recall_context",
            "declined",
            "answer_containment",
            "answer_f1",
        } <= set(record["scores"])
        # Packed ranges are where the context's text lies in the documents.
        for packed in record["packed"]:
            text = normalised(packed["doc_id"])[packed["start"] : packed["end"]]
            assert text.strip() and text.strip() in record["context"]
        for item in record["evidence"]:
            assert set(item) == {"doc_id", "chunk_id", "start", "end"}
    policy = next(r for r in lines if r["id"] == "policy-location")
    # Gold offsets of the CRLF file are mapped onto its LF text.
    [gold] = policy["gold_spans"]
    assert normalised("harbor_policy.txt")[gold["start"] : gold["end"]] == LOCATION.replace(
        "\r\n", "\n"
    )
    unanswerable = next(r for r in lines if r["id"] == "kestrel-risk")
    assert unanswerable["answerable"] is False
    assert unanswerable["scores"]["answer_f1"] is None

    table = capsys.readouterr().out
    for header in ("doc_rec", "span_ev", "span_ctx", "decl_ans", "decl_unans", "contain", "p95_ms"):
        assert header in table


def test_split_halves_partition_the_questions(data):
    tmp, corpus, questions = data
    halves = {split_of(q["id"]) for q in QUESTIONS}
    assert halves == {"a", "b"}, "the fixture needs questions in both halves"
    seen = {}
    for half in ("a", "b"):
        out, records = tmp / f"{half}.json", tmp / f"{half}.jsonl"
        args = ("--corpus", corpus, "--methods", "flat-bm25", "--split", half, "--records", records)
        assert run_eval(questions, out, *args) == 0
        report = json.loads(out.read_text())
        assert report["split"] == half
        seen[half] = {json.loads(line)["id"] for line in records.read_text().splitlines()}
        assert report["n_questions"] == len(seen[half])
        assert all(split_of(qid) == half for qid in seen[half])
    assert seen["a"] | seen["b"] == {q["id"] for q in QUESTIONS}
    assert not seen["a"] & seen["b"]


def test_an_index_built_from_the_folder_stands_in_for_it(data, capsys):
    tmp, corpus, questions = data
    index_dir = tmp / "idx"
    assert main(["index", str(corpus), "--index", str(index_dir), "--embedder", "none"]) == 0
    with_folder, with_index = tmp / "folder.json", tmp / "index.json"
    capsys.readouterr()
    # eval --corpus finds the index `sealgraph index` built of that folder with the same
    # settings, and says so, instead of building one of its own.
    assert run_eval(questions, with_folder, "--corpus", corpus, "--methods", METHODS) == 0
    assert f"using the index at {index_dir.resolve()}" in capsys.readouterr().err
    assert not (tmp / "cache" / "eval-index").exists()
    assert run_eval(questions, with_index, "--index", index_dir, "--methods", METHODS) == 0
    a, b = json.loads(with_folder.read_text()), json.loads(with_index.read_text())
    assert b["index"]["path"] == str(index_dir)
    assert b["corpus_dir"] is None
    assert deterministic_part(a) == deterministic_part(b)
    # A file changed since: that index no longer holds the folder, so eval builds its own
    # (once: the same folder again reuses the cached one, and the numbers repeat).
    (corpus / "kestrel_foods.md").write_text(REPORT + "\nA third bakery opened in 2022.\n")
    changed, again = tmp / "changed.json", tmp / "again.json"
    assert run_eval(questions, changed, "--corpus", corpus, "--methods", METHODS) == 0
    assert "using the index at" not in capsys.readouterr().err
    assert run_eval(questions, again, "--corpus", corpus, "--methods", METHODS) == 0
    assert deterministic_part(json.loads(again.read_text())) == deterministic_part(
        json.loads(changed.read_text())
    )
    cached = [p for p in (tmp / "cache" / "eval-index").iterdir() if not p.name.startswith(".")]
    assert len(cached) == 1


MULTIHOP = {
    "id": "m1",
    "question": "Where?",
    "answer": "here",
    "paragraphs": [{"title": "T", "sentences": ["Here it is."]}],
    "supporting_facts": [["T", 0]],
}


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ({"corpus": "nowhere"}, "--corpus"),
        ({"corpus": "questions.jsonl"}, "is not a folder"),
        (
            {"questions": [QUESTIONS[0], {**QUESTIONS[1], "gold_documents": ["nope.txt"]}]},
            "questions.jsonl:2: gold document 'nope.txt' is not a document of the corpus folder",
        ),
        (
            {
                "questions": [
                    {
                        **QUESTIONS[0],
                        "gold_spans": [{**span("harbor_policy.txt", "We"), "end": 10**6}],
                    }
                ]
            },
            "questions.jsonl:1: gold span 0",
        ),
        ({"questions": [QUESTIONS[0], "{not json"]}, "questions.jsonl:2: invalid JSON"),
        ({"corpus": None}, "give --corpus DIR"),
        ({"questions": [MULTIHOP]}, "multi-hop QA JSONL"),
        ({"extra": ["--pool", "questions.jsonl"]}, "--pool"),
        ({"corpus": None, "extra": ["--index", "empty-index"]}, "holds no index"),
        ({"questions": [QUESTIONS[0]], "extra": ["--split", "other"]}, "is in split"),
        ({"extra": ["--limit", "0"]}, "--limit"),
    ],
)
def test_bad_input_is_a_one_line_error_and_writes_nothing(data, capsys, setup, message):
    tmp, _, questions = data
    (tmp / "empty-index").mkdir()
    if "questions" in setup:
        questions.write_text(
            "".join(
                (r if isinstance(r, str) else json.dumps(r)) + "\n" for r in setup["questions"]
            ),
            encoding="utf-8",
        )
    corpus_arg = setup.get("corpus", "corpus")
    extra = []
    if corpus_arg is not None:
        extra += ["--corpus", tmp / corpus_arg]
    for arg in setup.get("extra", []):
        if arg == "other":  # the half the only question is not in
            arg = "a" if split_of(QUESTIONS[0]["id"]) == "b" else "b"
        elif arg in ("questions.jsonl", "empty-index"):
            arg = tmp / arg
        extra.append(arg)
    out, records = tmp / "report.json", tmp / "records.jsonl"
    code = run_eval(questions, out, "--methods", "flat-bm25", "--records", records, *extra)
    err = capsys.readouterr().err
    assert code != 0
    errors = [line for line in err.splitlines() if line.startswith("sealgraph: error:")]
    assert len(errors) == 1, err
    assert message in errors[0]
    assert "Traceback" not in err
    assert not out.exists()
    assert not records.exists()
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith(".")) == []


def test_an_index_of_another_corpus_is_refused(data, capsys):
    tmp, _, questions = data
    other = tmp / "other"
    other.mkdir()
    (other / "unrelated.txt").write_text("Nothing about any question here.", encoding="utf-8")
    index_dir = tmp / "other-idx"
    assert main(["index", str(other), "--index", str(index_dir), "--embedder", "none"]) == 0
    capsys.readouterr()
    out = tmp / "report.json"
    assert run_eval(questions, out, "--index", index_dir, "--methods", "flat-bm25") != 0
    err = capsys.readouterr().err
    assert "gold document 'harbor_policy.txt' is not a document of the index" in err
    assert not out.exists()


def test_gold_spans_in_raw_file_offsets_of_a_page_with_front_matter(tmp_path, monkeypatch):
    # The index holds the page without its front matter; the gold span counts
    # characters of the raw file, front matter included.
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    page = (
        "---\r\ntitle: Tidewater Ferries\r\ntags: [transport, islands]\r\n---\r\n"
        "# Tidewater Ferries\r\n\r\nThe Tidewater ferry to Skarn Island leaves every 40 "
        "minutes.\r\nTickets are sold on board.\r\n"
    )
    other = "# Harbour Cafe\n\nThe Harbour Cafe opens at 7 in the morning.\n"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "ferries.md").write_bytes(page.encode("utf-8"))
    (corpus / "cafe.md").write_text(other, encoding="utf-8")
    phrase = "The Tidewater ferry to Skarn Island leaves every 40 minutes."
    start = page.index(phrase)
    question = {
        "id": "ferry",
        "question": "How often does the Tidewater ferry to Skarn Island leave?",
        "answer": "every 40 minutes",
        "type": "single",
        "gold_documents": ["ferries.md"],
        "gold_spans": [{"document": "ferries.md", "start": start, "end": start + len(phrase)}],
    }
    questions = write_jsonl(tmp_path / "q.jsonl", [question])
    out = tmp_path / "report.json"
    assert run_eval(questions, out, "--corpus", corpus, "--methods", "flat-bm25") == 0
    flat = json.loads(out.read_text(encoding="utf-8"))["methods"]["flat-bm25"]
    assert flat["span_recall_evidence"] == 1.0


OTHER_PAGE = "# Harbour Cafe\n\nThe Harbour Cafe opens at 7 in the morning.\n"
FERRY = "The Tidewater ferry to Skarn Island leaves every 40 minutes."
HTML_PAGE = (
    "<html><head><title>Tidewater Ferries</title><style>p {color: red}</style></head><body>\n"
    '<h1 id="ferries">Tidewater Ferries</h1>\n'
    "<!-- The Tidewater ferry to Skarn Island: check the timetable -->\n"
    "<p>The <em>Tidewater</em> ferry to Skarn Island leaves every 40&nbsp;minutes.</p>\n"
    "<p>Tickets are sold on board.</p></body></html>\n"
)
MD_FERRY = (
    'The <abbr title="Tidewater Ferry Company">Tidewater</abbr> ferry to Skarn Island leaves '
    "every 40&nbsp;minutes."
)
MD_PAGE = "# Tidewater Ferries\n\n<!-- timetable owner: ops -->\n" + MD_FERRY + "\n"
MDX_PAGE = (
    "---\ntitle: Tidewater Ferries\n---\n"
    "import { Callout } from '../components'\n\n"
    "# Tidewater Ferries\n\n"
    '<Callout type="info">\n'
    "The Tidewater ferry to Skarn Island leaves every 40 minutes.\n"
    "</Callout>\n\nTickets are sold on board.\n"
)


def eval_one_span(tmp_path, monkeypatch, name, content, span):
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    if content is not None:
        (corpus / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    (corpus / "cafe.md").write_text(OTHER_PAGE, encoding="utf-8")
    question = {
        "id": "ferry",
        "question": "How often does the Tidewater ferry to Skarn Island leave?",
        "answer": "every 40 minutes",
        "type": "single",
        "gold_documents": [name],
        "gold_spans": [{"document": name, **span}],
    }
    questions = write_jsonl(tmp_path / "q.jsonl", [question])
    out = tmp_path / "report.json"
    code = run_eval(questions, out, "--corpus", corpus, "--methods", "flat-bm25")
    return code, out


def raw_span(page: str, phrase: str) -> dict:
    start = page.index(phrase)
    return {"start": start, "end": start + len(phrase)}


@pytest.mark.parametrize(
    ("name", "page", "phrase"),
    [
        (
            "ferries.html",
            HTML_PAGE,
            "The <em>Tidewater</em> ferry to Skarn Island leaves every 40&nbsp;minutes.",
        ),
        ("ferries.mdx", MDX_PAGE, FERRY),
        ("ferries.md", MD_PAGE, MD_FERRY),
        ("ferries.rst", "Tidewater Ferries\n=================\n\n" + FERRY + "\n", FERRY),
    ],
)
def test_gold_spans_in_raw_offsets_of_pages_whose_text_is_extracted(
    tmp_path, monkeypatch, name, page, phrase
):
    # The index holds what the loader extracted (no tags, comments, imports or
    # components, entities decoded); the span counts characters of the raw file.
    pytest.importorskip("bs4")
    code, out = eval_one_span(tmp_path, monkeypatch, name, page, raw_span(page, phrase))
    assert code == 0
    flat = json.loads(out.read_text(encoding="utf-8"))["methods"]["flat-bm25"]
    assert flat["span_recall_evidence"] == 1.0


def test_a_span_holding_only_markup_is_not_scored(tmp_path, monkeypatch):
    pytest.importorskip("bs4")
    comment = "<!-- The Tidewater ferry to Skarn Island: check the timetable -->"
    code, out = eval_one_span(
        tmp_path, monkeypatch, "ferries.html", HTML_PAGE, raw_span(HTML_PAGE, comment)
    )
    assert code == 0
    flat = json.loads(out.read_text(encoding="utf-8"))["methods"]["flat-bm25"]
    # Empty in the indexed text: no character to find, so the question has no span to score.
    assert flat["span_recall_evidence"] is None


def test_gold_spans_on_a_pdf_count_in_the_text_of_the_page_they_name(tmp_path, monkeypatch):
    pytest.importorskip("pypdf")
    pdf = write_pdf(
        tmp_path / "ferries.pdf",
        [["Tidewater Ferries timetable."], ["Tickets are sold on board.", FERRY]],
        title="Tidewater Ferries",
    )
    from sealgraph.ingest.loaders.pdf import pdf_page_texts

    page_text = pdf_page_texts(pdf.read_bytes())[2]
    span = {"page": 2, **raw_span(page_text, "ferry to Skarn Island leaves")}
    code, out = eval_one_span(tmp_path, monkeypatch, "ferries.pdf", pdf.read_bytes(), span)
    assert code == 0
    flat = json.loads(out.read_text(encoding="utf-8"))["methods"]["flat-bm25"]
    assert flat["span_recall_evidence"] == 1.0


@pytest.mark.parametrize(
    ("span", "message"),
    [
        ({"start": 0, "end": 5}, 'names its page ("page": 1 for the first)'),
        ({"page": 7, "start": 0, "end": 5}, "page 7 of 'ferries.pdf' has no text"),
        ({"page": 1, "start": 0, "end": 10_000}, "out of range: the page has"),
    ],
)
def test_bad_spans_on_a_pdf_are_one_line_errors(tmp_path, monkeypatch, capsys, span, message):
    pytest.importorskip("pypdf")
    pdf = write_pdf(tmp_path / "ferries.pdf", [[FERRY]], title="Tidewater Ferries")
    code, out = eval_one_span(tmp_path, monkeypatch, "ferries.pdf", pdf.read_bytes(), span)
    err = capsys.readouterr().err
    assert code != 0 and message in err and "Traceback" not in err
    assert not out.exists()


def test_spans_on_a_word_file_are_refused_with_the_reason(tmp_path, monkeypatch, capsys):
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_paragraph(FERRY)
    document.save(str(tmp_path / "ferries.docx"))
    data = (tmp_path / "ferries.docx").read_bytes()
    code, out = eval_one_span(tmp_path, monkeypatch, "ferries.docx", data, {"start": 0, "end": 4})
    err = capsys.readouterr().err
    assert code != 0 and "zipped XML" in err and "Traceback" not in err
    assert not out.exists()


def test_eval_over_a_qdrant_index_scores_as_over_the_folder_index(data):
    pytest.importorskip("qdrant_client")
    tmp, corpus, questions = data
    folder_out, qdrant_out = tmp / "folder.json", tmp / "qdrant.json"
    methods = ("--methods", "flat-bm25,seal")
    assert (
        run_eval(questions, folder_out, "--corpus", corpus, "--index", tmp / "idx", *methods) == 0
    )
    address = f"qdrant+memory://eval-{uuid.uuid4().hex[:12]}"
    assert run_eval(questions, qdrant_out, "--corpus", corpus, "--index", address, *methods) == 0
    # Built by the run above, loaded by this one (one process: local mode is in memory).
    assert (
        run_eval(questions, tmp / "again.json", "--corpus", corpus, "--index", address, *methods)
        == 0
    )
    folder, qdrant = (json.loads(p.read_text()) for p in (folder_out, qdrant_out))
    assert qdrant["index"]["path"] == address
    assert deterministic_part(qdrant) == deterministic_part(folder)
    again = json.loads((tmp / "again.json").read_text())
    assert deterministic_part(again) == deterministic_part(folder)
