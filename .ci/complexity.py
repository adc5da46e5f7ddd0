"""Complexity gate: no function or method above a cyclomatic complexity (radon's measure).

Usage: python .ci/complexity.py [--max N] [--show M] PATH...
Exit 1 and list the offenders when any function is above --max (default 25);
--show M also lists every function above M without failing on them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from radon.complexity import cc_visit


def blocks(path: Path):
    """Yield (complexity, 'file:line name') of every function and method in one file."""
    for block in cc_visit(path.read_text(encoding="utf-8")):
        items = [block, *getattr(block, "methods", [])]
        for item in items:
            name = f"{item.classname}.{item.name}" if getattr(item, "classname", None) else item.name
            yield item.complexity, f"{path}:{item.lineno} {name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--max", type=int, default=25)
    parser.add_argument("--show", type=int, default=None)
    args = parser.parse_args(argv)
    files = [f for p in args.paths for f in ([p] if p.is_file() else sorted(p.rglob("*.py")))]
    found = sorted({b for f in files for b in blocks(f)}, reverse=True)
    over = [(c, where) for c, where in found if c > args.max]
    for c, where in found:
        if c > args.max or (args.show is not None and c > args.show):
            print(f"{c:4d}  {where}")
    if over:
        print(f"{len(over)} function(s) above complexity {args.max}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
