#!/usr/bin/env bash
# Every number of docs/benchmarks.md. Usage: bash benchmarks/run_all.sh [DATA_DIR] [OUT_DIR]
# INDEX_HOTPOT / INDEX_2WIKI / INDEX_MUSIQUE may point at prebuilt indexes; otherwise each
# run builds (once) and reuses the content-addressed index in the user cache dir.
set -euo pipefail
DATA=${1:-../shared/data}
OUT=${2:-bench-out}
mkdir -p "$OUT"
M=flat-bm25,flat-dense,flat-hybrid,expand,adaptive-k,seal-append,seal
HP="$DATA/hotpotqa_dev.jsonl"; TW="$DATA/2wikimultihopqa_dev.jsonl"; MU="$DATA/musique_dev.jsonl"
idx() { if [ -n "${!1:-}" ]; then echo "--index ${!1}"; fi; }

sealgraph eval --questions "$HP" --k 3 --methods $M --budget 400 $(idx INDEX_HOTPOT) --out "$OUT/hotpot.json" --records "$OUT/hotpot.records.jsonl" --no-progress
sealgraph eval --questions "$TW" --k 5 --methods $M --budget 400 $(idx INDEX_2WIKI) --out "$OUT/2wiki.json" --records "$OUT/2wiki.records.jsonl" --no-progress
sealgraph eval --questions "$MU" --k 5 --methods $M --budget 400 $(idx INDEX_MUSIQUE) --out "$OUT/musique.json" --records "$OUT/musique.records.jsonl" --no-progress
bash "$(dirname "$0")/run_ablations.sh" "$DATA" "$OUT"
