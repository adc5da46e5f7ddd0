"""Benchmark: what a stranger's folder and files cost before sealgraph says no (or yes).

Three measurements from the third hostile-input review (issue 31), each on inputs
the script writes into a temporary folder:

* ``walk``: ``load_documents`` of a folder nested ``--depth`` levels deep (one page at
  the top, one at the bottom): seconds, documents found;
* ``xlsx``: ``load_documents`` of a workbook of ``--rows`` rows of three values (past
  the default ``max_cells`` of 2,000,000 from 666,667 rows on): seconds to the
  refusal (or to the text);
* ``ignore``: one ignore pattern of many stars (``*a*a*a*a*a*a*a*a*b``) tested against
  a name of ``--name-chars`` letters ``a``, by sealgraph's matcher and, when it is
  installed (it is MPL-2.0 and not a dependency), by ``pathspec``'s gitignore
  patterns, in a subprocess cut off at ``--pathspec-timeout`` seconds.

Usage::

    python benchmarks/bench_hostile_inputs.py                  # all three, issue sizes
    python benchmarks/bench_hostile_inputs.py --only ignore --name-chars 40
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
STAR_PATTERN = "*a" * 8 + "*b"

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.documents import deep_folder, remove_deep_folder  # noqa: E402 - the tests' helpers


def workbook(path: Path, rows: int) -> Path:
    """Write a minimal workbook of one sheet: ``rows`` rows of three values."""
    row = '<row r="{0}"><c r="A{0}"><v>{0}</v></c><c r="B{0}"><v>1</v></c><c r="C{0}"><v>2</v></c></row>'
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr(
            "_rels/.rels",
            f'<Relationships xmlns="{_PKG}"><Relationship Id="rId1" '
            f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        )
        book.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{_NS}" xmlns:r="{_REL}"><sheets>'
            '<sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        book.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<Relationships xmlns="{_PKG}"><Relationship Id="rId1" '
            f'Type="{_REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        )
        with book.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            sheet.write(f'<worksheet xmlns="{_NS}"><sheetData>'.encode())
            for start in range(1, rows + 1, 10_000):
                stop = min(start + 10_000, rows + 1)
                sheet.write("".join(row.format(i) for i in range(start, stop)).encode())
            sheet.write(b"</sheetData></worksheet>")
    return path


def timed_load(path: Path) -> tuple[float, str]:
    from sealgraph.ingest import load_documents

    started = time.perf_counter()
    try:
        documents = load_documents(path, warn=lambda _: None)
        outcome = f"{len(documents)} documents"
    except Exception as exc:  # the refusal is the result being measured
        outcome = f"{type(exc).__name__}: {str(exc)[:90]}"
    return time.perf_counter() - started, outcome


def bench_walk(depth: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = deep_folder(Path(tmp) / "docs", depth)
        try:
            seconds, outcome = timed_load(root)
        finally:
            remove_deep_folder(root)
    print(f"walk    depth {depth:,}: {seconds:.2f} s, {outcome}")


def bench_xlsx(rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = workbook(Path(tmp) / "rows.xlsx", rows)
        size = path.stat().st_size / 1e6
        seconds, outcome = timed_load(path)
    print(f"xlsx    {rows:,} rows x 3 ({size:.1f} MB): {seconds:.2f} s, {outcome}")


_PATHSPEC = """
import sys, time, pathspec
spec = pathspec.PathSpec.from_lines("gitwildmatch", [sys.argv[1]])
started = time.perf_counter()
spec.match_file("a" * int(sys.argv[2]))
print(f"{time.perf_counter() - started:.3f}")
"""


def bench_ignore(name_chars: int, pathspec_timeout: float) -> None:
    from sealgraph.ingest.ignore import IgnoreRules

    rules = IgnoreRules([STAR_PATTERN])
    started = time.perf_counter()
    rules.ignored("a" * name_chars, is_dir=False)
    ours = time.perf_counter() - started
    print(f"ignore  {STAR_PATTERN} on {name_chars} letters: sealgraph {ours * 1e6:.0f} us", end="")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PATHSPEC, STAR_PATTERN, str(name_chars)],
            capture_output=True,
            text=True,
            timeout=pathspec_timeout,
            check=False,
        )
        theirs = f"{done.stdout.strip()} s" if done.returncode == 0 else "not installed"
    except subprocess.TimeoutExpired:
        theirs = f"over {pathspec_timeout:g} s (cut off)"
    print(f", pathspec {theirs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("walk", "xlsx", "ignore"), action="append")
    parser.add_argument("--depth", type=int, default=1200)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--name-chars", type=int, default=60)
    parser.add_argument("--pathspec-timeout", type=float, default=300.0)
    args = parser.parse_args()
    chosen = args.only or ["walk", "xlsx", "ignore"]
    if "walk" in chosen:
        bench_walk(args.depth)
    if "xlsx" in chosen:
        bench_xlsx(args.rows)
    if "ignore" in chosen:
        bench_ignore(args.name_chars, args.pathspec_timeout)


if __name__ == "__main__":
    main()
