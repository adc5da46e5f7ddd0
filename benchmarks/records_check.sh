#!/usr/bin/env bash
# Eval records of a checkout on the first questions of three dev sets, for
# benchmarks/compare_records.py (same evidence, context and answer before and after a change).
# Usage: bash benchmarks/records_check.sh OUT_DIR [SRC]   (SRC: another checkout, e.g. a
#   `git worktree` of the commit before; default this one). Default embedder (local);
#   N questions per set (default 40 HotpotQA, 20 MuSiQue, 40 finance-dragonball).
set -euo pipefail
OUT=$(realpath -m "$1")
SRC=$(realpath "${2:-$(dirname "$0")/..}")
DATA=${DATA:-$(realpath "$(dirname "$0")/../../shared/data")}
PY=${PYTHON:-$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python}
export PYTHONPATH=$SRC TIKTOKEN_CACHE_DIR=${TIKTOKEN_CACHE_DIR:-$DATA/../tiktoken_cache}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 SEALGRAPH_CACHE_DIR=${SEALGRAPH_CACHE_DIR:-$OUT/cache}
mkdir -p "$OUT"
M=flat-bm25,flat-hybrid,seal
run() { (cd "$SRC" && "$PY" -m sealgraph eval "$@" --methods $M --no-progress > /dev/null); }
run --questions "$DATA/hotpotqa_dev.jsonl" --k 3 --budget 400 --limit "${N_HOTPOT:-40}" \
  --out "$OUT/hotpotqa.json" --records "$OUT/hotpotqa.records.jsonl"
run --questions "$DATA/musique_dev.jsonl" --k 5 --budget 400 --limit "${N_MUSIQUE:-20}" \
  --out "$OUT/musique.json" --records "$OUT/musique.records.jsonl"
run --corpus "$DATA/ood/finance-dragonball/corpus" --questions "$DATA/ood/finance-dragonball/questions.jsonl" \
  --k 5 --limit "${N_FINANCE:-40}" --out "$OUT/finance.json" --records "$OUT/finance.records.jsonl"
echo "records in $OUT"
