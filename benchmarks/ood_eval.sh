#!/usr/bin/env bash
# Out-of-domain evaluation: methods on each corpus folder of DATA/ood, both halves (--split a, b).
# Usage: bash benchmarks/ood_eval.sh [DATA_DIR] [OUT_DIR]
#   EMBEDDER=auto|none   embedder of the indexes (default auto: the bundled all-MiniLM-L6-v2;
#                        none: lexical only, for quick runs; flat-hybrid is then BM25 alone)
#   SETS="legal-privacy finance-dragonball"   sets to run (default: every folder of DATA/ood)
#   METHODS, K, BUDGET   default flat-bm25,flat-hybrid,seal at k=5 and budget 800
# Each set is indexed once into OUT_DIR/index/SET-EMBEDDER (timed), then evaluated per half.
# Writes OUT_DIR/SET.HALF.json, .records.jsonl and .txt (the printed table), and prints a
# summary table of every run at the end (also in OUT_DIR/summary.md).
set -euo pipefail
DATA=${1:-../shared/data}
OUT=${2:-bench-out/ood}
EMBEDDER=${EMBEDDER:-auto}
METHODS=${METHODS:-flat-bm25,flat-hybrid,seal}
K=${K:-5}
BUDGET=${BUDGET:-800}
if [ -z "${SETS:-}" ]; then
  SETS=$(cd "$DATA/ood" && for d in */; do [ -f "$d/questions.jsonl" ] && echo "${d%/}"; done)
fi
mkdir -p "$OUT/index"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

for set in $SETS; do
  dir="$DATA/ood/$set"
  index="$OUT/index/$set-$EMBEDDER"
  started=$(now)
  if [ ! -d "$index" ]; then
    sealgraph index "$dir/corpus" --index "$index" --embedder "$EMBEDDER" >/dev/null
    echo "$set: index built in $(since "$started")s ($EMBEDDER)" | tee "$OUT/$set.index.txt"
  fi
  for half in a b; do
    name="$set.$half"
    started=$(now)
    sealgraph eval --corpus "$dir/corpus" --questions "$dir/questions.jsonl" --index "$index" \
      --split "$half" --k "$K" --budget "$BUDGET" --methods "$METHODS" \
      --out "$OUT/$name.json" --records "$OUT/$name.records.jsonl" --no-progress \
      | tee "$OUT/$name.txt"
    echo "$name: evaluated in $(since "$started")s" | tee -a "$OUT/$name.txt"
  done
done

python - "$OUT" $SETS <<'EOF' | tee "$OUT/summary.md"
import json, sys
from pathlib import Path

out, sets = Path(sys.argv[1]), sys.argv[2:]
cols = [
    ("recall", "doc recall"), ("all_gold", "all docs"), ("span_recall_evidence", "span rec (evidence)"),
    ("span_recall_context", "span rec (context)"), ("context_tokens_mean", "ctx tokens"),
    ("declined_answerable", "declined (answerable)"), ("declined_unanswerable", "declined (unanswerable)"),
    ("answer_containment", "containment"), ("answer_f1", "F1"), ("latency_ms_p50", "p50 ms"),
    ("latency_ms_p95", "p95 ms"),
]
print("| set | half | n | method | " + " | ".join(title for _, title in cols) + " |")
print("|" + " --- |" * (len(cols) + 4))
for name in sets:
    for half in "ab":
        path = out / f"{name}.{half}.json"
        if not path.exists():
            continue
        report = json.loads(path.read_text())
        for method, m in report["methods"].items():
            cells = []
            for key, _ in cols:
                v = m.get(key)
                cells.append("-" if v is None else f"{v:.0f}" if key == "context_tokens_mean"
                             else f"{v:.1f}" if key.startswith("latency") else f"{v:.3f}")
            print(f"| {name} | {half} | {report['n_questions']} | {method} | " + " | ".join(cells) + " |")
EOF
