"""Benchmark: ingest a mixed folder (PDF + HTML + DOCX + XLSX + MD) and count what comes out.

The script writes a deterministic mixed folder into a temporary directory (or
``--keep DIR``): ``--per-format`` files of each kind, generated from a fixed seed
with the same libraries the loaders read them with (pypdf, python-docx,
openpyxl), then loads it with :func:`sealgraph.ingest.load_corpus`, chunks every
document with :func:`sealgraph.text.chunking.chunk_document` (``--max-tokens``, the
index default 256) and prints, per format: files, documents, sections (distinct
section paths over the chunks), chunks, tokens and the seconds loading that
format's files took; then the seconds loading the whole folder and chunking it. It also checks the loaders' promises on the generated files:
every spreadsheet chunk holds whole rows that carry their header, no chunk of a
Markdown page holds its front matter, and every PDF chunk lies on one page.

Needs the ``pdf``, ``office`` and ``html`` extras (``pip install -e ".[dev]"``).

Usage::

    export TIKTOKEN_CACHE_DIR=/work/shared/tiktoken_cache
    python benchmarks/ingest_mixed.py                      # 20 files of each format
    python benchmarks/ingest_mixed.py --per-format 100 --max-tokens 128
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

# Run from a checkout without installing: put the repository root on the path.
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sealgraph.ingest import load_corpus  # noqa: E402
from sealgraph.text.chunking import chunk_document  # noqa: E402
from sealgraph.text.tokens import token_counter  # noqa: E402

FORMATS = ("pdf", "html", "docx", "xlsx", "markdown")
_PLACES = ["Port Ellis", "Kestrel Bay", "Valmora", "Northwind", "Lisbon", "Toronto", "Harbour"]
_NOUNS = ["lighthouse", "ferry", "budget", "crew", "lamp", "pier", "warehouse", "schedule"]
_VERBS = ["was rebuilt", "was inspected", "moved", "grew", "was repainted", "closed", "opened"]


def sentence(rng: random.Random) -> str:
    """One deterministic sentence about a place."""
    year = rng.randint(1950, 2024)
    return f"The {rng.choice(_NOUNS)} of {rng.choice(_PLACES)} {rng.choice(_VERBS)} in {year}."


def paragraph(rng: random.Random, n: int) -> str:
    """``n`` sentences joined by spaces."""
    return " ".join(sentence(rng) for _ in range(n))


def write_pdf(path: Path, rng: random.Random, n_pages: int) -> None:
    """A PDF of ``n_pages`` pages, each drawing lines of text."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    for _ in range(n_pages):
        page = writer.add_blank_page(612, 792)
        ops = ["BT", "/F1 11 Tf", "13 TL", "60 740 Td"]
        for _ in range(rng.randint(8, 30)):
            ops.append(f"({sentence(rng)}) Tj T*")
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        page.replace_contents(stream)
    writer.add_metadata({"/Title": f"Report {path.stem}"})
    with path.open("wb") as handle:
        writer.write(handle)


def write_html(path: Path, rng: random.Random) -> None:
    """A docs-style page: header, nav, main with h1/h2 sections, aside, footer."""
    sections = "".join(
        f"<h2>{rng.choice(_NOUNS).title()} {i}</h2><p>{paragraph(rng, rng.randint(2, 8))}</p>"
        f"<ul><li>{sentence(rng)}</li><li>{sentence(rng)}</li></ul>"
        for i in range(rng.randint(2, 6))
    )
    path.write_text(
        f"<html><head><title>{path.stem} | Docs</title><script>var x = 1;</script></head>"
        "<body><header>Site header</header><nav><a href='/'>Home</a> <a href='/b'>Blog</a></nav>"
        f"<main><h1>Guide {path.stem}</h1><p>{paragraph(rng, 3)}</p>{sections}</main>"
        "<aside>Related pages</aside><footer>Copyright. Edit this page.</footer></body></html>",
        encoding="utf-8",
    )


def write_docx(path: Path, rng: random.Random) -> None:
    """A Word file: a Title, Heading 1/2 sections with paragraphs, and a table."""
    import docx

    document = docx.Document()
    document.add_paragraph(f"Handbook {path.stem}", style="Title")
    for i in range(rng.randint(2, 5)):
        document.add_heading(f"Chapter {i + 1}", level=1)
        document.add_paragraph(paragraph(rng, rng.randint(3, 10)))
        document.add_heading(f"Details {i + 1}", level=2)
        document.add_paragraph(paragraph(rng, rng.randint(2, 6)))
    table = document.add_table(rows=4, cols=3)
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = ["Item", "Place", "Count"][c] if r == 0 else f"{rng.randint(1, 99)}"
    document.save(path)


def write_xlsx(path: Path, rng: random.Random) -> None:
    """A workbook of two or three sheets with a header row and 20-200 rows each."""
    import openpyxl

    workbook = openpyxl.Workbook()
    for s in range(rng.randint(2, 3)):
        sheet = workbook.active if s == 0 else workbook.create_sheet()
        sheet.title = ["Revenue", "Staff", "Assets"][s]
        sheet.append(["Region", "Quarter", "Amount", "Date", "Note"])
        for i in range(rng.randint(20, 200)):
            sheet.append(
                [
                    rng.choice(_PLACES),
                    f"Q{i % 4 + 1}",
                    round(rng.uniform(100, 10000), 2),
                    dt.date(2024, 1, 1) + dt.timedelta(days=i),
                    sentence(rng) if i % 7 == 0 else None,
                ]
            )
    workbook.save(path)


def write_markdown(path: Path, rng: random.Random) -> None:
    """A Markdown page with YAML front matter and a few sections."""
    body = "".join(
        f"\n## {rng.choice(_NOUNS).title()} {i}\n\n{paragraph(rng, rng.randint(2, 10))}\n"
        for i in range(rng.randint(1, 5))
    )
    path.write_text(
        f"---\ntitle: Notes {path.stem}\ntags: [harbour, notes]\n---\n\n"
        f"# Notes\n\n{paragraph(rng, 2)}\n{body}",
        encoding="utf-8",
    )


WRITERS = {
    "pdf": (".pdf", lambda p, rng: write_pdf(p, rng, rng.randint(1, 6))),
    "html": (".html", write_html),
    "docx": (".docx", write_docx),
    "xlsx": (".xlsx", write_xlsx),
    "markdown": (".md", write_markdown),
}


def write_folder(root: Path, per_format: int, seed: int) -> None:
    """Write ``per_format`` files of each format under ``root/<format>/``."""
    rng = random.Random(seed)
    for name in FORMATS:
        suffix, writer = WRITERS[name]
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(per_format):
            writer(folder / f"{name}-{i:03d}{suffix}", rng)


def main() -> None:
    """Generate the folder, ingest and chunk it, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-format", type=int, default=20, help="files of each format")
    parser.add_argument("--max-tokens", type=int, default=256, help="chunk size (tokens)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the folder here and keep it")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp) / "mixed"
        started = time.perf_counter()
        write_folder(root, args.per_format, args.seed)
        generated = time.perf_counter() - started

        warnings: list[str] = []
        started = time.perf_counter()
        corpus = load_corpus(root, warn=warnings.append)  # the whole folder, as indexing does
        loaded = time.perf_counter() - started
        load_seconds = {}  # each format's subfolder on its own, for the per-format column
        for fmt in FORMATS:
            started = time.perf_counter()
            load_corpus(root / fmt, warn=lambda _: None)
            load_seconds[fmt] = time.perf_counter() - started

        counter = token_counter("o200k_base")
        stats: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        problems: list[str] = []
        started = time.perf_counter()
        for doc in corpus.documents:
            fmt = doc.metadata["format"]
            chunks = chunk_document(doc, counter, args.max_tokens)
            row = stats[fmt]
            row["documents"] += 1
            row["sections"] += len({c.section for c in chunks})
            row["chunks"] += len(chunks)
            row["tokens"] += sum(c.n_tokens for c in chunks)
            problems.extend(_check(doc.doc_id, fmt, chunks))
        chunked = time.perf_counter() - started

    files: dict[str, int] = defaultdict(int)
    for source in corpus.sources:
        files[Path(source.path).parent.name] += 1
    print(
        f"mixed folder: {args.per_format} files per format, seed {args.seed}, "
        f"max_tokens {args.max_tokens} (generated in {generated:.1f} s)"
    )
    print(
        f"{'format':<10}{'files':>7}{'docs':>7}{'sections':>10}{'chunks':>8}{'tokens':>9}"
        f"{'load s':>8}"
    )
    totals: dict[str, float] = defaultdict(float)
    for fmt in FORMATS:
        row = stats[fmt]
        values = {"files": files[fmt], **row}
        for key, value in values.items():
            totals[key] += value
        print(
            f"{fmt:<10}{values['files']:>7}{row['documents']:>7.0f}{row['sections']:>10.0f}"
            f"{row['chunks']:>8.0f}{row['tokens']:>9.0f}{load_seconds[fmt]:>8.2f}"
        )
    print(
        f"{'total':<10}{totals['files']:>7.0f}{totals['documents']:>7.0f}"
        f"{totals['sections']:>10.0f}{totals['chunks']:>8.0f}{totals['tokens']:>9.0f}"
        f"{loaded:>8.2f}"
    )
    print(f"load (whole folder): {loaded:.2f} s, chunk: {chunked:.2f} s; warnings: {len(warnings)}")
    for line in warnings:
        print(f"  warning: {line}")
    print(f"checks: {'all passed' if not problems else f'{len(problems)} failed'}")
    for line in problems[:20]:
        print(f"  {line}")
    if problems:
        sys.exit(1)


def _check(doc_id: str, fmt: str, chunks: list) -> list[str]:
    """The loaders' promises on the generated files, as failure messages."""
    problems = []
    for chunk in chunks:
        if fmt == "xlsx":
            for line in chunk.text.splitlines():
                if line and not line.startswith("# Sheet:") and not line.startswith("Region: "):
                    problems.append(f"{chunk.chunk_id}: a row without its header: {line[:60]!r}")
            if not chunk.text.endswith("\n"):
                problems.append(f"{chunk.chunk_id}: cut inside a row")
        if fmt == "markdown" and "tags:" in chunk.text:
            problems.append(f"{chunk.chunk_id}: front matter indexed")
        if fmt == "pdf" and (len(chunk.section) != 1 or not chunk.section[0].startswith("Page ")):
            problems.append(f"{chunk.chunk_id}: section {chunk.section} is not one page")
        if fmt == "pdf" and chunk.text.count("# Page ") > 1:
            problems.append(f"{chunk.chunk_id}: spans pages")
    if not chunks:
        problems.append(f"{doc_id}: no chunks")
    return problems


if __name__ == "__main__":
    main()
