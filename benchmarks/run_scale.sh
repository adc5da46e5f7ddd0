#!/usr/bin/env bash
# The scale benchmark (issue "Scale on one machine"): build, open, ask and add to synthetic
# corpora of about N chunks, one size per run of benchmarks/scale.py (see its docstring).
# Usage: bash benchmarks/run_scale.sh [N ...]        (default: 10000 100000 1000000)
#   WORK      work folder: corpora, indexes, logs, results (default bench-out/scale)
#   VARIANTS  lexical and/or static (default: both)
#   EXTRA     more scale.py arguments, e.g. EXTRA="--step-timeout 7200 --no-tables-count"
# Writes WORK/scale-N.json (every number) and WORK/scale-N.md (the table row), and prints
# the rows. Runs are sequential and niced (latency is measured); 10^6 chunks needs about
# 1 GB of corpus on disk and several GB of memory.
set -euo pipefail
cd "$(dirname "$0")/.."
export TIKTOKEN_CACHE_DIR=${TIKTOKEN_CACHE_DIR:-../shared/tiktoken_cache}
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1}
WORK=${WORK:-bench-out/scale}
VARIANTS=${VARIANTS:-lexical static}
PYTHON=${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python)}
[ $# -gt 0 ] || set -- 10000 100000 1000000
mkdir -p "$WORK"
for n in "$@"; do
  # shellcheck disable=SC2086  # VARIANTS and EXTRA are word lists
  nice -n 10 "$PYTHON" benchmarks/scale.py --chunks "$n" --variants $VARIANTS --work "$WORK" \
    --out "$WORK/scale-$n.json" ${EXTRA:-} | tee "$WORK/scale-$n.md"
done
