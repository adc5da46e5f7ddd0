"""PDF, HTML, DOCX, XLSX and CSV loaders, missing extras, and a mixed folder end to end.

Every fixture is written here: PDFs with pypdf (a page content stream drawing
text in Helvetica), DOCX with python-docx, XLSX with openpyxl.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from pathlib import Path

import pytest
from support.documents import write_pdf

from sealgraph.errors import IngestError
from sealgraph.ingest import load_corpus, load_documents
from sealgraph.text.chunking import chunk_document
from sealgraph.text.tokens import token_counter


@pytest.fixture(scope="module")
def counter():
    return token_counter("o200k_base")


# --- fixture writers ---------------------------------------------------------------------------


def write_docx(path: Path, *, core_title: str | None = None) -> Path:
    import docx

    document = docx.Document()
    if core_title is not None:
        document.core_properties.title = core_title
    document.add_paragraph("Field Guide to Harbour Lights", style="Title")
    document.add_paragraph("An internal handbook.")
    document.add_heading("Maintenance", level=1)
    document.add_paragraph("Lamps are cleaned every spring by the Kestrel crew.")
    document.add_paragraph("Check the lens.", style="List Bullet")
    document.add_heading("Spare parts", level=2)
    table = document.add_table(rows=3, cols=2)
    for row, values in zip(
        table.rows, [("Part", "Stock"), ("Lens", "4"), ("Bulb", "12")], strict=True
    ):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_paragraph("# not a heading")
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)
    return path


def write_xlsx(path: Path, n_rows: int = 30) -> Path:
    import openpyxl

    workbook = openpyxl.Workbook()
    revenue = workbook.active
    revenue.title = "Revenue"
    revenue.append(["Quarterly revenue (EUR)"])  # a caption above the table
    revenue.append([])
    revenue.append(["Region", "Quarter", "Revenue", "Note"])
    for i in range(n_rows):
        note = "Record quarter. Driven by Lisbon." if i == 3 else None
        revenue.append([f"Region {i}", f"Q{i % 4 + 1}", 1000.0 + i * 12.5, note])
    staff = workbook.create_sheet("Staff")
    staff.append(["# of reports", "Name", "Joined"])
    staff.append([3, "Ada Brightwater", dt.date(2006, 4, 1)])
    staff.append([0, "Tomas Greyhill", dt.datetime(1998, 1, 5, 0, 0)])
    workbook.create_sheet("Empty")
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook.save(path)
    return path


HTML_PAGE = """<!DOCTYPE html>
<html lang="en"><head><title>Lighthouse guide | Harbour Docs</title>
<style>body { color: red }</style><script>var tracking = 1;</script></head>
<body>
<header><a href="/">Harbour Docs</a> <a href="/blog">Blog</a></header>
<nav><ul><li><a href="/a">Sidebar link one</a></li></ul></nav>
<main>
  <h1>Lighthouse guide <a class="headerlink" href="#top">¶</a></h1>
  <p>The Port Ellis lighthouse was built in 1871.
     It is <b>34 metres</b> tall.</p>
  <div class="toc">On this page: History, Visiting</div>
  <h2 id="history">History</h2>
  <p>The lamp was electrified in 1921.<br>Keepers left in 1989.</p>
  <ul><li>First keeper: Ines Varga</li><li>Last keeper: Joao Pinto</li></ul>
  <h2>Visiting</h2>
  <table><tr><th>Day</th><th>Hours</th></tr>
         <tr><td>Saturday</td><td>10-16</td></tr></table>
  <pre><code># open the gate
unlock --gate north</code></pre>
  <p hidden>Hidden text.</p>
</main>
<aside>Related: ferries</aside>
<footer>Copyright Harbour Docs. Edit this page.</footer>
</body></html>
"""


# --- PDF ---------------------------------------------------------------------------------------


def test_pdf_pages_become_sections_and_the_pdf_title_the_title(tmp_path, counter):
    path = write_pdf(
        tmp_path / "report.pdf",
        [
            ["Annual report of the harbour authority.", "# of ships: 40", "~~~"],
            [],  # a page with no text layer
            ["The lighthouse budget rose by 4 percent."],
        ],
        title="Harbour Annual Report 2024",
    )
    doc = load_documents(path)[0]
    assert doc.doc_id == "report.pdf" and doc.metadata["format"] == "pdf"
    assert doc.title == "Harbour Annual Report 2024"
    assert doc.metadata["pages"] == 3
    assert doc.text.startswith("# Page 1\n\nAnnual report of the harbour authority.\n")
    assert "\\# of ships: 40\n\\~~~" in doc.text  # escaped: no section, no code fence
    assert "# Page 2" not in doc.text
    chunks = chunk_document(doc, counter)
    assert [c.section for c in chunks] == [("Page 1",), ("Page 3",)]
    assert "lighthouse budget" in chunks[1].text


def test_pdf_without_a_title_is_named_by_its_file_and_a_scanned_pdf_is_skipped(tmp_path):
    write_pdf(tmp_path / "notes.pdf", [["Some notes."]], title="Microsoft Word - notes.docx")
    write_pdf(tmp_path / "scan.pdf", [[], []])
    warnings: list[str] = []
    docs = load_documents(tmp_path, warn=warnings.append)
    assert [(d.doc_id, d.title) for d in docs] == [("notes.pdf", "notes")]
    assert len(warnings) == 1 and "scan.pdf" in warnings[0] and "OCR" in warnings[0]


def test_damaged_pdf_is_skipped_in_a_folder_and_an_error_when_named(tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7\nthis is not really a pdf\n")
    (tmp_path / "ok.md").write_text("# Ok\n")
    warnings: list[str] = []
    docs = load_documents(tmp_path, warn=warnings.append)
    assert [d.doc_id for d in docs] == ["ok.md"]
    assert len(warnings) == 1 and "broken.pdf" in warnings[0]
    with pytest.raises(IngestError, match=r"cannot read .*broken\.pdf: not a readable PDF"):
        load_documents(bad)


# --- HTML --------------------------------------------------------------------------------------


def test_html_main_content_with_headings_as_sections(tmp_path, counter):
    path = tmp_path / "guide.html"
    path.write_text(HTML_PAGE)
    doc = load_documents(path)[0]
    assert doc.title == "Lighthouse guide" and doc.metadata["format"] == "html"
    text = doc.text
    for chrome in ("Harbour Docs", "Sidebar link", "tracking", "color", "On this page"):
        assert chrome not in text
    for gone in ("ferries", "Copyright", "Hidden text", "¶"):
        assert gone not in text
    assert text.startswith(
        "# Lighthouse guide\n\nThe Port Ellis lighthouse was built in 1871. It is 34 metres tall."
    )
    assert "The lamp was electrified in 1921.\nKeepers left in 1989." in text
    assert "- First keeper: Ines Varga\n\n- Last keeper: Joao Pinto" in text
    assert "Day: Saturday; Hours: 10-16" in text
    assert "```\n# open the gate\nunlock --gate north\n```" in text
    sections = [c.section for c in chunk_document(doc, counter, max_tokens=20)]
    assert ("Lighthouse guide", "History") in sections
    assert ("Lighthouse guide", "Visiting") in sections
    assert all("open the gate" not in " ".join(s) for s in sections)


def test_html_without_main_uses_body_and_title_tag_and_declared_charset(tmp_path):
    page = (
        '<html><head><meta charset="windows-1252"><title>Caf\xe9 menu</title></head>'
        "<body><nav>Menu</nav><p>Caf\xe9 au lait costs 3 euros.</p></body></html>"
    ).encode("cp1252")
    (tmp_path / "menu.htm").write_bytes(page)
    warnings: list[str] = []
    (doc,) = load_documents(tmp_path, warn=warnings.append)
    assert doc.title == "Café menu"
    assert doc.text == "Café au lait costs 3 euros.\n"
    assert warnings == []


def test_html_nested_thousands_deep_does_not_crash(tmp_path):
    page = "<html><body>" + "<div>" * 5000 + "Deep text." + "</div>" * 5000 + "</body></html>"
    (tmp_path / "deep.html").write_text(page)
    (doc,) = load_documents(tmp_path)
    assert doc.text == "Deep text.\n"


# --- DOCX --------------------------------------------------------------------------------------


def test_docx_headings_become_sections_and_tables_rows(tmp_path, counter):
    doc = load_documents(write_docx(tmp_path / "guide.docx"))[0]
    assert doc.metadata["format"] == "docx"
    assert doc.title == "Field Guide to Harbour Lights"  # the Title paragraph
    assert doc.text == (
        "# Field Guide to Harbour Lights\n\n"
        "An internal handbook.\n\n"
        "# Maintenance\n\n"
        "Lamps are cleaned every spring by the Kestrel crew.\n\n"
        "- Check the lens.\n\n"
        "## Spare parts\n\n"
        "Part: Lens; Stock: 4\nPart: Bulb; Stock: 12\n\n"
        "\\# not a heading\n"
    )
    sections = {c.section for c in chunk_document(doc, counter, max_tokens=16)}
    assert ("Maintenance", "Spare parts") in sections


def test_docx_title_property_wins(tmp_path):
    doc = load_documents(write_docx(tmp_path / "guide.docx", core_title="Lights handbook"))[0]
    assert doc.title == "Lights handbook"


# --- XLSX and CSV ------------------------------------------------------------------------------


def test_xlsx_sheets_are_sections_rows_stay_whole_and_repeat_the_header(tmp_path, counter):
    doc = load_documents(write_xlsx(tmp_path / "finance.xlsx"))[0]
    assert doc.metadata["format"] == "xlsx"
    assert doc.metadata["sheets"] == ["Revenue", "Staff"]  # the empty sheet is left out
    assert doc.title == "finance"
    assert doc.text.startswith(
        "# Sheet: Revenue\n\nQuarterly revenue (EUR)\n"
        "Region: Region 0; Quarter: Q1; Revenue: 1000\n"
        "Region: Region 1; Quarter: Q2; Revenue: 1012.5\n"
    )
    assert (
        "Region: Region 3; Quarter: Q4; Revenue: 1037.5; Note: Record quarter. Driven by Lisbon.\n"
    ) in doc.text
    assert doc.text.endswith(
        "# Sheet: Staff\n\n"
        # escaped: a line starting "# of" would otherwise be a heading
        "\\# of reports: 3; Name: Ada Brightwater; Joined: 2006-04-01\n"
        "\\# of reports: 0; Name: Tomas Greyhill; Joined: 1998-01-05\n"
    )
    chunks = chunk_document(doc, counter, max_tokens=60)
    revenue = [c for c in chunks if c.section == ("Sheet: Revenue",)]
    assert len(revenue) > 3  # small chunks: the sheet is cut several times ...
    rows = [line for c in revenue for line in c.text.splitlines()]
    for chunk in revenue:
        assert chunk.text.endswith("\n")  # ... only between rows
        for line in chunk.text.splitlines():
            if line and not line.startswith(("#", "Quarterly")):
                assert line.startswith("Region: Region ") and "Revenue: " in line
    assert sum(1 for line in rows if line.startswith("Region: ")) == 30
    assert [c.section for c in chunks if c.section != ("Sheet: Revenue",)] == [("Sheet: Staff",)]


def test_xlsx_with_a_wrong_declared_extent_is_read_whole(tmp_path):
    import zipfile

    source = write_xlsx(tmp_path / "src.xlsx", n_rows=5)
    target = tmp_path / "declared.xlsx"
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                data = re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1"', data)
            new.writestr(item, data)
    doc = load_documents(target)[0]
    assert "Region: Region 4; Quarter: Q1; Revenue: 1050" in doc.text


def test_csv_rows_with_sniffed_delimiter_and_quoted_newlines(tmp_path, counter):
    path = tmp_path / "ships.csv"
    path.write_text(
        'name;tonnage;remark\n"Kestrel";1200;"Refitted in 2019.\nNew engine."\nWren;800;\n'
    )
    (tmp_path / "crew.tsv").write_text("name\trole\nIna\tcaptain\n")
    docs = {d.doc_id: d for d in load_documents(tmp_path)}
    ships = docs["ships.csv"]
    assert ships.metadata == {"format": "csv", "split": "lines"}
    assert ships.text == (
        "name: Kestrel; tonnage: 1200; remark: Refitted in 2019. New engine.\n"
        "name: Wren; tonnage: 800\n"
    )
    assert docs["crew.tsv"].text == "name: Ina; role: captain\n"
    chunks = chunk_document(ships, counter, max_tokens=25)
    assert [c.text for c in chunks] == ships.text.splitlines(keepends=True)
    assert all(c.section == () for c in chunks)


# --- missing extras and damaged archives -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "module", "extra"),
    [
        ("report.pdf", "pypdf", "pdf"),
        ("guide.docx", "docx", "office"),
        ("finance.xlsx", "openpyxl", "office"),
        ("page.html", "bs4", "html"),
    ],
)
def test_missing_library_names_the_extra(tmp_path, monkeypatch, name, module, extra):
    path = tmp_path / name
    path.write_bytes(b"<p>x</p>" if name.endswith(".html") else b"PK\x03\x04 placeholder")
    monkeypatch.setitem(sys.modules, module, None)  # "import module" now fails
    expected = f"reading {name} needs the {extra} extra: pip install 'sealgraph[{extra}]'"
    with pytest.raises(IngestError) as caught:
        load_documents(path)
    assert str(caught.value) == expected


def test_missing_extra_in_a_folder_warns_once_and_loads_the_rest(tmp_path, monkeypatch):
    for i in range(3):
        write_pdf(tmp_path / f"r{i}.pdf", [["Text."]])
    (tmp_path / "ok.md").write_text("# Ok\n")
    monkeypatch.setitem(sys.modules, "pypdf", None)
    warnings: list[str] = []
    corpus = load_corpus(tmp_path, warn=warnings.append)
    assert [d.doc_id for d in corpus.documents] == ["ok.md"]
    assert [Path(s.path).name for s in corpus.sources] == ["ok.md"]
    assert len(warnings) == 2
    assert "r0.pdf" in warnings[0] and "sealgraph[pdf]" in warnings[0]
    assert "3 .pdf files" in warnings[1] and "sealgraph[pdf]" in warnings[1]


@pytest.mark.parametrize("name", ["bad.docx", "bad.xlsx"])
def test_office_file_that_is_not_a_zip_is_skipped_with_a_warning(tmp_path, name):
    (tmp_path / name).write_bytes(b"plain text pretending")
    (tmp_path / "ok.txt").write_text("fine")
    warnings: list[str] = []
    docs = load_documents(tmp_path, warn=warnings.append)
    assert [d.doc_id for d in docs] == ["ok.txt"]
    assert len(warnings) == 1 and name in warnings[0] and "zip" in warnings[0]


# --- a mixed folder, end to end ----------------------------------------------------------------


def write_mixed_folder(root: Path) -> Path:
    write_pdf(
        root / "reports" / "annual.pdf",
        [["Harbour annual report."], ["The Kestrel ferry carried 91,000 passengers."]],
        title="Annual report",
    )
    (root / "web").mkdir(parents=True)
    (root / "web" / "guide.html").write_text(HTML_PAGE)
    write_docx(root / "handbook.docx")
    write_xlsx(root / "finance.xlsx")
    (root / "notes").mkdir()
    (root / "notes" / "index.md").write_text(
        "---\ntitle: Harbour notes\n---\n# Notes\n\nThe breakwater was rebuilt in 2002.\n"
    )
    (root / "ships.csv").write_text("name,tonnage\nKestrel,1200\nWren,800\n")
    return root


def test_mixed_folder_indexes_and_retrieves(tmp_path, hash_embedder):
    from sealgraph.index import build_index

    docs_dir = write_mixed_folder(tmp_path / "docs")
    warnings: list[str] = []
    index = build_index(docs_dir, tmp_path / "idx", embedder=hash_embedder, warn=warnings.append)
    assert warnings == []
    titles = dict(index.titles())
    assert titles == {
        "finance.xlsx": "finance",
        "handbook.docx": "Field Guide to Harbour Lights",
        "notes/index.md": "Harbour notes",
        "reports/annual.pdf": "Annual report",
        "ships.csv": "ships",
        "web/guide.html": "Lighthouse guide",
    }
    by_doc = {doc_id: index.doc_chunks(doc_id) for doc_id in titles}
    assert {c.section for c in by_doc["reports/annual.pdf"]} == {("Page 1",), ("Page 2",)}
    assert {c.section for c in by_doc["finance.xlsx"]} == {("Sheet: Revenue",), ("Sheet: Staff",)}
    assert all("title:" not in c.text for c in by_doc["notes/index.md"])

    top = index.search_lexical("Kestrel ferry passengers", k=1)[0]
    chunk = index.get_chunk(top.chunk_id)
    assert chunk.doc_id == "reports/annual.pdf" and chunk.section == ("Page 2",)
    top = index.search_lexical("Ada Brightwater reports joined", k=1)[0]
    chunk = index.get_chunk(top.chunk_id)
    assert chunk.doc_id == "finance.xlsx" and chunk.section == ("Sheet: Staff",)
    assert "\\# of reports: 3; Name: Ada Brightwater" in chunk.text
    hits = index.search_hybrid("When was the lamp electrified?", k=3)
    assert any(index.get_chunk(h.chunk_id).doc_id == "web/guide.html" for h in hits)
