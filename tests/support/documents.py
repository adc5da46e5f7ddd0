"""Documents of binary formats written for tests (PDF pages with a text layer)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["deep_folder", "remove_deep_folder", "write_pages", "write_pdf"]


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


def deep_folder(root: Path, depth: int) -> Path:
    """Write ``root/top.md`` and, ``depth`` folders ``d`` down, ``bottom.md``; return ``root``.

    Made with relative steps (``dir_fd``): each call's path stays short however deep.
    Remove it with :func:`remove_deep_folder` (``shutil.rmtree``, and so pytest's own
    clean-up of old temporary folders, recurses and fails on it).
    """
    root.mkdir()
    (root / "top.md").write_text("# Top\n\nThe top page names the Orbit project.\n")
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        leaf = os.open("bottom.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, b"# Bottom\n\nThe Orbit project is led by Ada Brightwater.\n")
        os.close(leaf)
    finally:
        os.close(fd)
    return root


def remove_deep_folder(root: Path) -> None:
    """Remove the chain of ``d`` folders under ``root``, without recursion.

    Each step moves the level below up one and removes one level.
    """
    while (root / "d").is_dir():
        for entry in (root / "d").iterdir():
            if entry.name != "d":
                entry.unlink()
        if (root / "d" / "d").is_dir():
            (root / "d" / "d").rename(root / "next")
        (root / "d").rmdir()
        if (root / "next").is_dir():
            (root / "next").rename(root / "d")
