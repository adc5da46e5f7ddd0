"""Hostile and unusual documents: the loaders stay within their limits and read real files.

Every fixture is made here, most by writing the zip or PDF bytes by hand: a
workbook whose rows each hold one cell in column XFD, zip bombs (a small file of
XML that unpacks to tens of megabytes), archives whose declared sizes lie, PDFs
holding an array longer than pypdf's default cap, and HTML hiding text with
inline CSS. Memory is measured in a child process (its peak RSS), which also runs
under an address-space limit so that a loader that does hold a bomb whole fails
there instead of exhausting the machine. No test asserts a time.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from support.cli import run_cli

from sealgraph.errors import IngestError
from sealgraph.ingest import load_documents
from sealgraph.ingest.loaders.base import LoaderLimits, LoadError, Source, render_rows
from sealgraph.ingest.loaders.office import load_docx, load_xlsx
from sealgraph.ingest.loaders.pdf import load_pdf
from sealgraph.ingest.loaders.webpage import load_html

MIB = 2**20

# --- helpers -----------------------------------------------------------------------------------

_CHILD = r"""
import json, resource, sys
limit, cpu = int(sys.argv[2]), int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
from pathlib import Path
from sealgraph.ingest.loaders import format_for
from sealgraph.ingest.loaders.base import LoadError, Source
path = Path(sys.argv[1])
try:
    loaded = format_for(path.suffix).load(Source(path, path.read_bytes(), print, bytes.decode))
    result = {"text": loaded.text[:4000], "chars": len(loaded.text), "error": None}
except LoadError as exc:
    result = {"text": "", "chars": 0, "error": str(exc)}
except MemoryError:
    result = {"text": "", "chars": 0, "error": "MemoryError"}
# VmHWM: this process's own peak (ru_maxrss may carry the parent's over from fork)
status = Path("/proc/self/status")
hwm = [l for l in status.read_text().splitlines() if l.startswith("VmHWM:")] if status.exists() else []
peak_kib = int(hwm[0].split()[1]) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result["peak_mib"] = peak_kib / 1024
print(json.dumps(result))
"""


def load_in_child(path: Path, *, address_space_mib: int = 2048, cpu_seconds: int = 300) -> dict:
    """Load ``path`` in a fresh interpreter under an address-space and a CPU-time limit.

    Returns what it loaded (the first 4,000 characters, the length, or the error)
    and its peak resident memory. A loader that runs past the limits is killed
    (the test fails on the child's exit status).
    """
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(address_space_mib * MIB), str(cpu_seconds)],
        capture_output=True,
        text=True,
        timeout=500,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def source(path: Path, data: bytes, **limits: int) -> Source:
    return Source(path, data, warn=print, decode=bytes.decode, limits=LoaderLimits(**limits))


_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"


def xlsx_bytes(rows_xml, shared_strings: list[str] | None = None) -> bytes:
    """A minimal workbook of one sheet "Data"; ``rows_xml`` yields the ``<row>`` elements."""
    content_types = (
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-'
        'package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        "</Types>"
    )
    rels = (
        f'<?xml version="1.0"?><Relationships xmlns="{_PKG_REL}"><Relationship Id="rId1" '
        f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
    )
    workbook = (
        f'<?xml version="1.0"?><workbook xmlns="{_NS}" xmlns:r="{_REL}"><sheets>'
        '<sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )
    book_rels = (
        f'<?xml version="1.0"?><Relationships xmlns="{_PKG_REL}">'
        f'<Relationship Id="rId1" Type="{_REL}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{_REL}/sharedStrings" Target="sharedStrings.xml"/>'
        "</Relationships>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", content_types)
        archive.writestr("_rels/.rels", rels)
        archive.writestr("xl/workbook.xml", workbook)
        archive.writestr("xl/_rels/workbook.xml.rels", book_rels)
        if shared_strings is not None:
            with archive.open("xl/sharedStrings.xml", "w") as part:
                part.write(f'<sst xmlns="{_NS}">'.encode())
                for text in shared_strings:
                    part.write(f"<si><t>{text}</t></si>".encode())
                part.write(b"</sst>")
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as part:
            part.write(f'<worksheet xmlns="{_NS}"><sheetData>'.encode())
            for row in rows_xml:
                part.write(row.encode())
            part.write(b"</sheetData></worksheet>")
    return out.getvalue()


def docx_bytes(body_chunks) -> bytes:
    """A Word file (python-docx's own template) whose body is the given XML, streamed."""
    import docx

    template = io.BytesIO()
    docx.Document().save(template)
    out = io.BytesIO()
    with zipfile.ZipFile(template) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename != "word/document.xml":
                new.writestr(item.filename, data)
                continue
            head, _, _ = data.partition(b"<w:body>")
            with new.open(item.filename, "w", force_zip64=True) as part:
                part.write(head + b"<w:body>")
                for chunk in body_chunks:
                    part.write(chunk)
                part.write(b"</w:body></w:document>")
    return out.getvalue()


def paragraphs(n: int) -> list[bytes]:
    return [f"<w:p><w:r><w:t>Paragraph {i}.</w:t></w:r></w:p>".encode() for i in range(n)]


def with_declared_size(data: bytes, member: str, declared: int) -> bytes:
    """Rewrite the size the zip's central directory declares for ``member``."""
    buffer = bytearray(data)
    name = member.encode()
    at = buffer.find(b"PK\x01\x02")
    while at != -1:
        name_length = struct.unpack_from("<H", buffer, at + 28)[0]
        if bytes(buffer[at + 46 : at + 46 + name_length]) == name:
            struct.pack_into("<I", buffer, at + 24, declared)  # uncompressed size
            return bytes(buffer)
        at = buffer.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"{member} not in the archive")


# --- spreadsheets ------------------------------------------------------------------------------


def test_xlsx_rows_of_one_cell_in_column_xfd_read_in_little_memory(tmp_path):
    # openpyxl's read-only rows are padded to the last column: 16,384 cells a row,
    # ~130 kB a row, 6.5 GB for these 50,000 rows before the fix (MemoryError here).
    rows = (f'<row r="{i}"><c r="XFD{i}"><v>{i}</v></c></row>' for i in range(1, 50_001))
    path = tmp_path / "wide.xlsx"
    path.write_bytes(xlsx_bytes(rows))
    result = load_in_child(path)
    assert result["error"] is None, result["error"]
    assert result["text"].startswith("# Sheet: Data\n\n1: 2\n1: 3\n")  # row 1 names the column
    assert result["chars"] == len("# Sheet: Data\n\n") + sum(
        len(f"1: {i}\n") for i in range(2, 50_001)
    )
    assert result["peak_mib"] < 400, result["peak_mib"]


def test_render_rows_reads_sparse_rows_as_their_dense_equivalent():
    dense = [["Title"], [], ["Region", None, "Revenue"], ["North", "", 10.0], [None, None, 3]]
    sparse = [{0: "Title"}, {}, {0: "Region", 2: "Revenue"}, {0: "North", 2: 10.0}, {2: 3}]
    assert render_rows(iter(sparse), column_name=str) == render_rows(dense, column_name=str)
    assert render_rows([{16383: "a", 0: "b"}, {16383: 1}], column_name=lambda i: f"c{i}") == [
        "a: 1"
    ]


def test_xlsx_over_a_cell_limit_is_refused_naming_it(tmp_path):
    rows = (
        f'<row r="{i}"><c r="A{i}"><v>{i}</v></c><c r="B{i}"><v>1</v></c></row>'
        for i in range(1, 101)
    )
    data = xlsx_bytes(rows)
    assert load_xlsx(source(tmp_path / "t.xlsx", data, max_cells=200)).text.count("\n") > 90
    with pytest.raises(LoadError, match=r"more than 150 cells \(the limit max_cells: raise"):
        load_xlsx(source(tmp_path / "t.xlsx", data, max_cells=150))


def test_xlsx_shared_string_table_bomb_is_refused_before_the_sheets(tmp_path):
    data = xlsx_bytes(iter(()), shared_strings=[f"s{i}" for i in range(5000)])
    with pytest.raises(LoadError, match=r"the limit max_cells"):
        load_xlsx(source(tmp_path / "t.xlsx", data, max_cells=1000))


def test_xlsx_one_shared_string_in_many_cells_stops_at_the_text_limit(tmp_path):
    # 100 kB of text written once, shown in 2,000 cells: 200 MB of document text.
    rows = (
        f'<row r="{i}"><c r="A{i}" t="s"><v>0</v></c><c r="B{i}"><v>{i}</v></c></row>'
        for i in range(1, 2001)
    )
    data = xlsx_bytes(rows, shared_strings=["x" * 100_000])
    with pytest.raises(LoadError, match=r"the limit max_text_chars"):
        load_xlsx(source(tmp_path / "t.xlsx", data, max_text_chars=5_000_000))


def test_xlsx_over_an_unpacked_bytes_limit_is_refused_naming_it(tmp_path):
    rows = (f'<row r="{i}"><c r="A{i}"><v>{i}</v></c></row>' for i in range(1, 20_001))
    data = xlsx_bytes(rows)  # ~0.6 MB of sheet XML in a ~60 kB file
    with pytest.raises(LoadError) as caught:
        load_xlsx(source(tmp_path / "t.xlsx", data, max_unpacked_bytes=MIB // 4))
    assert str(caught.value) == (
        "its parts unpack to more than 262,144 bytes (the limit max_unpacked_bytes: raise it "
        "to read the file, with --limit max_unpacked_bytes=N or "
        "LoaderLimits(max_unpacked_bytes=N))"
    )


# --- Word --------------------------------------------------------------------------------------


def test_docx_zip_bomb_is_refused_by_the_default_limits_in_little_memory(tmp_path):
    # 64 MiB of empty paragraphs (11 million elements) in a ~170 kB file: python-docx
    # would build ~2.5 GB of tree; the element count stops it before any tree is built.
    path = tmp_path / "bomb.docx"
    path.write_bytes(docx_bytes(b"<w:p/>" * (MIB // 6) for _ in range(64)))
    assert path.stat().st_size < 400_000
    result = load_in_child(path)
    assert result["error"] is not None and "the limit max_xml_elements" in result["error"]
    assert "--limit max_xml_elements=N" in result["error"]
    assert result["peak_mib"] < 500, result["peak_mib"]


def test_docx_over_small_limits_is_refused_naming_each(tmp_path):
    data = docx_bytes(paragraphs(20_000))  # ~1 MB of XML
    assert "Paragraph 19999." in load_docx(source(tmp_path / "d.docx", data)).text
    for limit, value in [
        ("max_unpacked_bytes", MIB // 2),
        ("max_xml_elements", 10_000),
        ("max_text_chars", 100_000),
    ]:
        with pytest.raises(LoadError, match=rf"the limit {limit}: raise it"):
            load_docx(source(tmp_path / "d.docx", data, **{limit: value}))


def test_docx_table_cells_count_against_the_cell_limit(tmp_path):
    row = b"<w:tr>" + b"<w:tc><w:p><w:r><w:t>v</w:t></w:r></w:p></w:tc>" * 10 + b"</w:tr>"
    data = docx_bytes([b"<w:tbl>" + row * 50 + b"</w:tbl>"])
    assert load_docx(source(tmp_path / "d.docx", data, max_cells=500)).text
    with pytest.raises(LoadError, match=r"more than 499 cells \(the limit max_cells"):
        load_docx(source(tmp_path / "d.docx", data, max_cells=499))


def test_docx_cell_spanning_a_billion_columns_costs_one_cell(tmp_path):
    # python-docx's row.cells lists a cell once per grid column it spans: a billion
    # steps (over two CPU minutes) for this one cell. 60 CPU seconds is 100 times
    # what reading it takes now; CPU time, not wall time, so a loaded machine passes.
    span = b'<w:tcPr><w:gridSpan w:val="1000000000"/></w:tcPr>'
    cell = b"<w:tc>" + span + b"<w:p><w:r><w:t>wide</w:t></w:r></w:p></w:tc>"
    plain = b"<w:tc><w:p><w:r><w:t>%s</w:t></w:r></w:p></w:tc>"
    table = b"<w:tbl><w:tr>" + plain % b"Name" + plain % b"Value" + b"</w:tr><w:tr>" + cell
    path = tmp_path / "wide.docx"
    path.write_bytes(docx_bytes([table + plain % b"x" + b"</w:tr></w:tbl>"]))
    result = load_in_child(path, cpu_seconds=60)
    assert result["error"] is None and result["text"] == "Name: wide; Value: x\n"


def test_zip_member_that_unpacks_past_its_declared_size_is_refused(tmp_path):
    # The central directory says 1 kB; the member really unpacks to ~1 MB.
    data = with_declared_size(docx_bytes(paragraphs(20_000)), "word/document.xml", 1000)
    with pytest.raises(LoadError, match="not a readable Word"):
        load_docx(source(tmp_path / "d.docx", data))


def test_zip_member_declaring_gigabytes_is_measured_by_what_it_unpacks_to(tmp_path):
    # A declared size is a claim: a member claiming 3.75 GiB that unpacks to a few
    # kB is read (the old check summed the claims and refused it).
    data = with_declared_size(docx_bytes(paragraphs(3)), "word/document.xml", 0xF000_0000)
    assert "Paragraph 2." in load_docx(source(tmp_path / "d.docx", data)).text
    rows = (f'<row r="{i}"><c r="A{i}"><v>{i}</v></c></row>' for i in range(1, 4))
    data = with_declared_size(xlsx_bytes(rows), "xl/worksheets/sheet1.xml", 0xF000_0000)
    assert load_xlsx(source(tmp_path / "t.xlsx", data)).text == "# Sheet: Data\n\n1: 2\n1: 3\n"


# --- PDF ---------------------------------------------------------------------------------------


def _pdf(objects: dict[int, bytes], *, object_stream: dict[int, bytes] | None = None) -> bytes:
    """Write a PDF: ``objects`` in the file body, ``object_stream`` packed in an /ObjStm.

    With an object stream the cross-reference is a stream too (as real files do).
    """
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number, body in objects.items():
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    packed = object_stream or {}
    stream_number = max([*objects, *packed]) + 1
    xref_number = stream_number + 1
    if packed:
        header = " ".join(f"{n} {o}" for n, o in _object_offsets(packed)).encode() + b"\n"
        body = zlib.compress(header + b"\n".join(packed.values()))
        offsets[stream_number] = len(out)
        out += (
            b"%d 0 obj\n<< /Type /ObjStm /N %d /First %d /Length %d /Filter /FlateDecode >>\n"
            % (
                stream_number,
                len(packed),
                len(header),
                len(body),
            )
        )
        out += b"stream\n" + body + b"\nendstream\nendobj\n"
    offsets[xref_number] = len(out)
    index = {n: i for i, n in enumerate(packed)}
    rows = []
    for number in range(xref_number + 1):
        if number in offsets:
            rows.append(struct.pack(">BIH", 1, offsets[number], 0))
        elif number in index:
            rows.append(struct.pack(">BIH", 2, stream_number, index[number]))
        else:
            rows.append(struct.pack(">BIH", 0, 0, 65535))
    xref = zlib.compress(b"".join(rows))
    out += (
        b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d "
        b"/Filter /FlateDecode >>\nstream\n" % (xref_number, xref_number + 1, len(xref))
    )
    out += xref + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % offsets[xref_number]
    return bytes(out)


def _object_offsets(packed: dict[int, bytes]):
    offset = 0
    for number, body in packed.items():
        yield number, offset
        offset += len(body) + 1


def _content(*ops: bytes) -> bytes:
    data = zlib.compress(b"BT /F1 12 Tf 14 TL 72 720 Td\n" + b"\n".join(ops) + b"\nET")
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"


_PAGE = (
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
    b"/Resources << /Font << /F1 4 0 R >> >> /Contents 7 0 R /StructParents 0 >>"
)
_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def tagged_pdf_with_array(n_elements: int, line: bytes) -> bytes:
    """A tagged PDF whose structure tree holds an array of ``n_elements`` references.

    The array sits in the same object stream as the catalog and the page tree, so
    pypdf parses it when it opens the file (as with the SEC filings that failed).
    """
    packed = {
        1: b"<< /Type /Catalog /Pages 2 0 R /StructTreeRoot 5 0 R /MarkInfo << /Marked true >> >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: _PAGE,
        4: _FONT,
        5: b"<< /Type /StructTreeRoot /ParentTree << /Nums [0 6 0 R] >> /K 8 0 R >>",
        6: b"[" + b" ".join([b"8 0 R"] * n_elements) + b"]",
        8: b"<< /Type /StructElem /S /P /P 5 0 R /Pg 3 0 R >>",
    }
    return _pdf({7: _content(b"(" + line + b") Tj")}, object_stream=packed)


def pdf_with_long_tj_array(n_elements: int, line: bytes) -> bytes:
    """A one-page PDF whose text is shown by one TJ array of ``n_elements`` (kerned letters)."""
    kerned = b" ".join(b"(%s) -%d" % (bytes([c]), i % 5) for i, c in enumerate(line))
    filler = b" -1" * (n_elements - 2 * len(line))
    packed = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: _PAGE.replace(b" /StructParents 0", b""),
        4: _FONT,
    }
    return _pdf({7: _content(b"[" + kerned + filler + b"] TJ")}, object_stream=packed)


@pytest.mark.parametrize(
    "make", [tagged_pdf_with_array, pdf_with_long_tj_array], ids=["structure", "content"]
)
def test_pdf_with_an_array_longer_than_pypdfs_default_cap_is_indexed(tmp_path, make):
    # pypdf refuses arrays of more than 100,000 elements: the whole file (structure)
    # or the page (content), which left these files out of the index.
    path = tmp_path / "filing.pdf"
    path.write_bytes(make(150_000, b"Revenue was 52.9 billion dollars."))
    warnings: list[str] = []
    (doc,) = load_documents(tmp_path, warn=warnings.append)
    assert warnings == []
    assert doc.text.startswith("# Page 1\n\nRevenue was 52.9 billion dollars.")


def test_pdf_array_past_our_limit_is_refused_naming_it(tmp_path):
    data = tagged_pdf_with_array(5_000, b"Some text.")
    assert "Some text." in load_pdf(source(tmp_path / "p.pdf", data)).text
    with pytest.raises(LoadError, match=r"more than 1,000 elements \(the limit max_pdf_array"):
        load_pdf(source(tmp_path / "p.pdf", data, max_pdf_array_elements=1_000))


def test_pdf_past_the_page_and_text_limits_is_refused_naming_them(tmp_path):
    kids = b" ".join([b"3 0 R"] * 3)  # three pages, one page object: a page-count bomb's trick
    data = _pdf(
        {
            1: b"<< /Type /Catalog /Pages 2 0 R >>",
            2: b"<< /Type /Pages /Kids [" + kids + b"] /Count 3 >>",
            3: _PAGE.replace(b" /StructParents 0", b""),
            4: _FONT,
            7: _content(b"(" + b"Lorem ipsum. " * 20 + b") Tj"),
        }
    )
    assert load_pdf(source(tmp_path / "p.pdf", data)).metadata == {"pages": 3}
    with pytest.raises(LoadError, match=r"more than 2 pages \(the limit max_pdf_pages"):
        load_pdf(source(tmp_path / "p.pdf", data, max_pdf_pages=2))
    with pytest.raises(LoadError, match=r"the limit max_text_chars"):
        load_pdf(source(tmp_path / "p.pdf", data, max_text_chars=600))


# --- HTML --------------------------------------------------------------------------------------

HIDDEN_FORMS = {
    "display-none": '<div style="display:none">SECRET</div>',
    "display-none-spaced-caps": '<div style="  DISPLAY : None ;">SECRET</div>',
    "display-none-important": '<div style="color: red; display: none !important">SECRET</div>',
    "display-none-comment": '<div style="display:/* hide */none">SECRET</div>',
    "display-important-wins": '<div style="display:none!important; display:block">SECRET</div>',
    "visibility-hidden": '<p style="visibility: hidden">SECRET <b>SECRET</b></p>',
    "visibility-collapse": '<p style="visibility:collapse">SECRET</p>',
    "font-size-0": '<span style="font-size:0">SECRET</span>',
    "font-size-0px": '<span style="font-size: 0px">SECRET</span>',
    "font-size-0em": '<span style="font-size:0em">SECRET</span>',
    "font-size-0pt": '<span style="font-size:0PT">SECRET</span>',
    "font-size-0.0rem": '<span style="font-size:0.0rem">SECRET</span>',
    "font-size-0-relative-child": '<p style="font-size:0">SECRET <i style="font-size:2em">SECRET</i></p>',
    "font-shorthand-0": '<span style="font: 0/0 a">SECRET</span>',
    "aria-hidden": '<span aria-hidden="true">SECRET</span>',
    "aria-hidden-spaced-caps": '<span aria-hidden=" TRUE ">SECRET</span>',
    "hidden-attribute": "<p hidden>SECRET</p>",
    "hidden-table-cell": (
        "<table><tr><th>Name</th><th>Pin</th></tr>"
        '<tr><td>Ann</td><td style="font-size:0">SECRET</td></tr></table>'
    ),
}


@pytest.mark.parametrize("hidden", HIDDEN_FORMS.values(), ids=HIDDEN_FORMS.keys())
def test_html_text_hidden_by_inline_css_or_aria_is_not_indexed(tmp_path, hidden):
    page = f"<html><body><main><h1>Guide</h1><p>Visible text.</p>{hidden}</main></body></html>"
    loaded = load_html(source(tmp_path / "p.html", page.encode()))
    assert "SECRET" not in loaded.text
    assert "Visible text." in loaded.text


SHOWN_FORMS = {
    "display-overridden": '<div style="display:none; display:block">SHOWN</div>',
    "visibility-visible-inside": '<p style="visibility:hidden">x <b style="visibility:visible">SHOWN</b></p>',
    "font-size-reset-inside": '<p style="font-size:0"><span style="font-size:14px">SHOWN</span></p>',
    "font-size-small": '<p style="font-size:0.5em">SHOWN</p>',
    "font-shorthand-sized": '<p style="font: italic bold 12px/30px Georgia, serif">SHOWN</p>',
    "broken-property-name": '<p style="dis/**/play:none">SHOWN</p>',
    "aria-hidden-false": '<p aria-hidden="false">SHOWN</p>',
}


@pytest.mark.parametrize("shown", SHOWN_FORMS.values(), ids=SHOWN_FORMS.keys())
def test_html_text_a_reader_sees_is_kept(tmp_path, shown):
    page = f"<html><body><main><p>Visible text.</p>{shown}</main></body></html>"
    assert "SHOWN" in load_html(source(tmp_path / "p.html", page.encode())).text


def test_a_refused_file_is_one_clear_line_naming_the_file(tmp_path):
    bomb = tmp_path / "bomb.docx"
    bomb.write_bytes(docx_bytes(b"<w:p/>" * (MIB // 6) for _ in range(32)))
    (tmp_path / "ok.md").write_text("# Ok\n")
    warnings: list[str] = []
    docs = load_documents(tmp_path, warn=warnings.append)
    assert [d.doc_id for d in docs] == ["ok.md"]
    assert len(warnings) == 1 and "bomb.docx" in warnings[0]
    assert "the limit max_xml_elements" in warnings[0] and "\n" not in warnings[0]
    with pytest.raises(IngestError, match=r"cannot read .*bomb\.docx: its XML holds more than"):
        load_documents(bomb)
    # The limits are the user's to set, in Python and on the command line.
    small = tmp_path / "small" / "small.docx"
    small.parent.mkdir()
    small.write_bytes(docx_bytes(paragraphs(50)))
    assert load_documents(small)
    with pytest.raises(IngestError, match="the limit max_xml_elements"):
        load_documents(small, limits=LoaderLimits(max_xml_elements=10))
    args = ("index", str(small), "--embedder", "none")
    tight = run_cli(*args, "--index", str(tmp_path / "a"), "--limit", "max_xml_elements=10")
    assert tight.code != 0 and "Traceback" not in tight.err
    assert "--limit max_xml_elements=N" in tight.err
    assert run_cli(*args, "--index", str(tmp_path / "b")).code == 0
    unknown = run_cli(*args, "--index", str(tmp_path / "c"), "--limit", "bogus=1")
    assert unknown.code != 0 and "unknown limit 'bogus'" in unknown.err


def test_xlsx_of_a_million_rows_over_the_cell_limit_is_refused_before_parsing(
    tmp_path, monkeypatch
):
    # 1,000,000 rows of 3 values: 3,000,000 cells against the default 2,000,000. The
    # values are counted in the raw XML first; the sheet is never parsed (it took
    # 44 s to reach the limit row by row).
    import sealgraph.ingest.loaders.office as office

    row = (
        '<row r="{0}"><c r="A{0}"><v>{0}</v></c><c r="B{0}"><v>1</v></c>'
        '<c r="C{0}" t="inlineStr"><is><t>x</t></is></c></row>'
    )
    batches = (  # 10,000 rows a write
        "".join(row.format(i) for i in range(start, start + 10_000))
        for start in range(1, 1_000_001, 10_000)
    )
    data = xlsx_bytes(batches)

    def never(*_args, **_kwargs):
        raise AssertionError("the sheet was parsed")

    monkeypatch.setattr(office._SheetReader, "rows", never)
    with pytest.raises(LoadError, match=r"more than 2,000,000 cells \(the limit max_cells"):
        load_xlsx(source(tmp_path / "t.xlsx", data))


def test_xlsx_values_are_counted_with_namespace_prefixes_and_empty_cells_free(tmp_path):
    prefixed = (f'<x:row r="{i}"><x:c r="A{i}"><x:v>{i}</x:v></x:c></x:row>' for i in range(50))
    data = xlsx_bytes(prefixed)
    with pytest.raises(LoadError, match=r"more than 40 cells"):
        load_xlsx(source(tmp_path / "t.xlsx", data, max_cells=40))
    # Styled cells without a value count nothing.
    empty = (f'<row r="{i}"><c r="A{i}" s="1"/><c r="B{i}"><v>{i}</v></c></row>' for i in range(50))
    assert load_xlsx(source(tmp_path / "t.xlsx", xlsx_bytes(empty), max_cells=50)).text
