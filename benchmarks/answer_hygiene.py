"""Count answers that carry internal notes or document markup, from eval records.

A person reads the answer: it must hold no internal note ("Not found in the context"),
no HTML or Markdown comment, tag, entity or heading anchor. Text inside inline or fenced
code is code, not markup, and is not counted.

Usage:
    python benchmarks/answer_hygiene.py RECORDS.jsonl [--method seal]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

MARKUP = re.compile(
    r"Not found in the context|<!--|-->(?!>)|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"
    r"|&[a-zA-Z]+;|&#\d+;|\{\s*[#.][\w-]+\s*\}"
)
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--method", default=None, help="only this method's records")
    args = parser.parse_args()
    n = bad = 0
    for line in args.records.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if args.method and record["method"] != args.method:
            continue
        n += 1
        prose = CODE.sub("", record.get("answer") or "")
        found = MARKUP.search(prose)
        if found:
            bad += 1
            around = prose[max(0, found.start() - 50) : found.end() + 30]
            print(f"{record['id']} {record['method']}: {found.group(0)!r} in …{around}…")
    print(f"{bad} of {n} answers carry internal notes or markup")


if __name__ == "__main__":
    main()
