#!/usr/bin/env bash
# The main tables of docs/benchmarks.md: Wikipedia (HotpotQA, 2Wiki, MuSiQue) and out-of-domain
# (legal-privacy, legal-nda, finance-dragonball) sets, flat-bm25 / flat-hybrid / seal, each on
# half a, half b (--split, by SHA-256 of the question id) and the whole file.
# Usage: bash benchmarks/run_main_tables.sh [DATA_DIR] [OUT_DIR]
#   OOD_INDEX_DIR   folder of prebuilt OOD indexes named after the set (default OUT_DIR/index);
#                   a missing one is built with `sealgraph index SET/corpus --index DIR`
#   SETS            subset of: hotpotqa 2wiki musique legal-privacy legal-nda finance-dragonball
#   EXTRA           more eval arguments, e.g. EXTRA="--limit 5" for a smoke test
# The Wikipedia indexes are built once into the content-addressed eval cache
# ($SEALGRAPH_CACHE_DIR or the user cache dir). Runs are sequential (latency is measured).
# Writes OUT_DIR/SET.HALF.json / .records.jsonl / .txt and prints the Markdown tables
# (benchmarks/main_tables.py), also saved to OUT_DIR/tables.md.
set -euo pipefail
DATA=${1:-../shared/data}
OUT=${2:-bench-out/main}
OOD_INDEX_DIR=${OOD_INDEX_DIR:-$OUT/index}
SETS=${SETS:-hotpotqa 2wiki musique legal-privacy legal-nda finance-dragonball}
M=flat-bm25,flat-hybrid,seal
mkdir -p "$OUT" "$OOD_INDEX_DIR"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

run() {  # run NAME HALF ARGS...: one eval of one half (a, b) or the whole file (all)
  local name=$1 half=$2; shift 2
  local split=()
  [ "$half" != all ] && split=(--split "$half")
  local started; started=$(now)
  echo "+ sealgraph eval $* ${split[*]} --methods $M --out $OUT/$name.$half.json" >&2
  # shellcheck disable=SC2086
  sealgraph eval "$@" "${split[@]}" ${EXTRA:-} --methods "$M" --out "$OUT/$name.$half.json" \
    --records "$OUT/$name.$half.records.jsonl" --no-progress > "$OUT/$name.$half.txt"
  echo "$name.$half: $(since "$started")s" | tee -a "$OUT/times.txt" >&2
}

for set in $SETS; do
  case $set in
    hotpotqa) args=(--questions "$DATA/hotpotqa_dev.jsonl" --k 3 --budget 400) ;;
    2wiki) args=(--questions "$DATA/2wikimultihopqa_dev.jsonl" --k 5 --budget 400) ;;
    musique) args=(--questions "$DATA/musique_dev.jsonl" --k 5 --budget 400) ;;
    *)
      dir="$DATA/ood/$set"
      index="$OOD_INDEX_DIR/$set"
      if [ ! -f "$index/manifest.json" ]; then
        started=$(now)
        sealgraph index "$dir/corpus" --index "$index" >/dev/null
        echo "$set: index built in $(since "$started")s" | tee -a "$OUT/times.txt" >&2
      fi
      args=(--corpus "$dir/corpus" --questions "$dir/questions.jsonl" --index "$index" --k 5 --budget 800)
      ;;
  esac
  for half in a b all; do
    run "$set" "$half" "${args[@]}"
  done
done

python "$(dirname "$0")/main_tables.py" "$OUT" | tee "$OUT/tables.md"
