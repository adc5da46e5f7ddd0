"""Compare the eval records of two runs: evidence, context and answer, question by question.

Usage::

    python benchmarks/compare_records.py BEFORE_DIR AFTER_DIR [SET ...]

Each directory holds ``SET.records.jsonl`` files written by ``sealgraph eval --records``
(``benchmarks/records_check.sh`` writes them); SET defaults to hotpotqa, musique and
finance. Records are matched by (method, question id); for each set it prints how many
were compared and how many differ, with the first differences. Exit status 1 when any
record differs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FIELDS = ("evidence", "evidence_ids", "retrieved", "context", "answer")


def load(path: Path) -> dict[tuple, dict]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            qid = record.get("id") or record.get("question_id") or record.get("question")
            key = (record.get("method"), qid)
            out[key] = record
    return out


def fields(record: dict) -> dict:
    return {k: record[k] for k in FIELDS if k in record}


def main(argv: list[str]) -> int:
    before, after = Path(argv[0]), Path(argv[1])
    differ = 0
    for name in argv[2:] or ["hotpotqa", "musique", "finance"]:
        a, b = load(before / f"{name}.records.jsonl"), load(after / f"{name}.records.jsonl")
        common = sorted(set(a) & set(b), key=str)
        diffs = [k for k in common if fields(a[k]) != fields(b[k])]
        print(
            f"{name}: {len(common)} records compared ({len(a)} before, {len(b)} after), "
            f"{len(diffs)} differ"
        )
        for key in diffs[:5]:
            fa, fb = fields(a[key]), fields(b[key])
            for field in fa:
                if fa[field] != fb.get(field):
                    print(
                        f"   {key} {field}\n     before: {str(fa[field])[:200]}"
                        f"\n     after:  {str(fb.get(field))[:200]}"
                    )
        differ += len(diffs)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
