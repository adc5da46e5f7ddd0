"""Documents of binary formats written for tests (PDF pages with a text layer)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_pages", "write_pdf"]


def write_pdf(path: Path, pages: list[list[str]], title: str | None = None) -> Path:
    """Write a PDF whose pages draw the given lines of text (an empty page draws none)."""
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
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        page.replace_contents(stream)
    if title is not None:
        writer.add_metadata({"/Title": title})
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def write_pages(folder: Path, n_files: int, paragraphs: int) -> Path:
    """Write ``n_files`` Markdown pages of ``paragraphs`` shipping facts each (sizes for disks)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n_files):
        body = "\n\n".join(
            f"Paragraph {j} of page {i} says that item {i}-{j} was shipped to depot {j % 17}."
            for j in range(paragraphs)
        )
        (folder / f"page{i:03d}.md").write_text(f"# Page {i}\n\n{body}\n")
    return folder
