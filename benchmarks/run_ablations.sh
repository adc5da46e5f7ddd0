#!/usr/bin/env bash
# Ablations recorded in docs/benchmarks.md. Usage: bash benchmarks/run_ablations.sh DATA_DIR OUT_DIR
# Indexes are built once per dataset and cached by content (or pass INDEX_<NAME> dirs).
set -euo pipefail
DATA=${1:-../shared/data}
OUT=${2:-bench-out}
mkdir -p "$OUT"
HP="$DATA/hotpotqa_dev.jsonl"; TW="$DATA/2wikimultihopqa_dev.jsonl"; MU="$DATA/musique_dev.jsonl"
idx() { if [ -n "${!1:-}" ]; then echo "--index ${!1}"; fi; }

# Loop budget L = 0, 1, 3, 5 (seal and its replacement-off ablation), with plots.
sealgraph eval --questions "$HP" --k 3 --methods seal-append,seal --budget 400 $(idx INDEX_HOTPOT) \
  --sweep-loops 0,1,3,5 --plot "$OUT/hotpot-loops.png" --out "$OUT/hotpot-loops.json" --no-progress
sealgraph eval --questions "$TW" --k 5 --methods seal-append,seal --budget 400 $(idx INDEX_2WIKI) \
  --sweep-loops 0,1,3,5 --out "$OUT/2wiki-loops.json" --no-progress

# Each utility weight zeroed.
for w in gap_coverage corroboration novelty redundancy; do
  sealgraph eval --questions "$HP" --k 3 --methods seal --budget 400 $(idx INDEX_HOTPOT) \
    --set "utility.$w=0" --out "$OUT/hotpot-no-$w.json" --no-progress
  sealgraph eval --questions "$TW" --k 5 --methods seal --budget 400 $(idx INDEX_2WIKI) \
    --set "utility.$w=0" --out "$OUT/2wiki-no-$w.json" --no-progress
done

# Budget violations at 200 and 800 tokens (400 is in the main runs).
for b in 200 800; do
  sealgraph eval --questions "$HP" --k 3 --methods flat-bm25,flat-dense,flat-hybrid,expand,adaptive-k,seal --budget $b $(idx INDEX_HOTPOT) --out "$OUT/hotpot-b$b.json" --no-progress
  sealgraph eval --questions "$TW" --k 5 --methods flat-bm25,flat-dense,flat-hybrid,expand,adaptive-k,seal --budget $b $(idx INDEX_2WIKI) --out "$OUT/2wiki-b$b.json" --no-progress
  sealgraph eval --questions "$MU" --k 5 --methods flat-bm25,flat-dense,flat-hybrid,expand,adaptive-k,seal --budget $b $(idx INDEX_MUSIQUE) --out "$OUT/musique-b$b.json" --no-progress
done

# Packing strategies (the default is the best trade-off of these).
for s in bubble segments window auto; do
  sealgraph eval --questions "$HP" --k 3 --methods seal --budget 400 $(idx INDEX_HOTPOT) \
    --set "pack.strategy=$s" --out "$OUT/hotpot-pack-$s.json" --no-progress
done
