#!/usr/bin/env bash
# Check sealgraph's local embedder on one CUDA GPU (the "dense where it can run" part).
#
# Usage, on a machine with one CUDA GPU, torch with CUDA preinstalled, nothing fetched:
#   cd /path/to/sealgraph && pip install -e '.[local]' && bash benchmarks/gpu_embedding.sh
# Options (environment): N_GPU (default 20000 texts), N_CPU (500), WORDS (200 words a text),
#   PYTHON (python), SKIP_CLI=1 (skip the `sealgraph index --device cuda` build),
#   DEVICE (cuda; cuda:N, or cpu for a dry run of the script on a machine without a GPU).
#
# It prints, for ~20k synthetic 200-word texts:
#   1. chunks/s of LocalEmbedder(device="cuda") (fp32, the default batch size 256), after a
#      warm-up, in blocks of 256 texts as a build sends them;
#   2. chunks/s of LocalEmbedder(device="cpu") on the first N_CPU texts;
#   3. the max abs difference (and the lowest cosine) between the CUDA and the CPU vectors of
#      those N_CPU texts: fp32 on both, so it should be float noise (< 1e-4);
#   4. the same on CUDA with --precision fp16 (faster, not the default; differs more);
#   5. `sealgraph index corpus.jsonl --device cuda` end to end (chunking, BM25, vectors, the
#      manifest): wall time and chunks/s, and that `--device cuda` on the CLI works.
# Installs nothing. About 1-3 minutes on an H100 with 16 cores (the CPU part dominates).
set -euo pipefail
PY="${PYTHON:-python}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
export N_GPU="${N_GPU:-20000}" N_CPU="${N_CPU:-500}" WORDS="${WORDS:-200}" DEVICE="${DEVICE:-cuda}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export GPU_CHECK_WORK="$WORK"

"$PY" - <<'PY'
import os
import time

import numpy as np
import torch

from sealgraph.index._device import resolve_device
from sealgraph.index.embedders import LocalEmbedder

n_gpu, n_cpu, words = (int(os.environ[k]) for k in ("N_GPU", "N_CPU", "WORDS"))
work, device = os.environ["GPU_CHECK_WORK"], os.environ["DEVICE"]
cuda = device.startswith("cuda")
assert torch.cuda.is_available() or not cuda, "torch sees no CUDA GPU: this check needs one"
name = torch.cuda.get_device_name(0) if cuda else "no GPU (dry run)"
print(f"torch {torch.__version__}, {name}, {torch.get_num_threads()} CPU threads; "
      f"auto resolves to {resolve_device('auto')}")

# Deterministic synthetic texts: pseudo-words from a fixed vocabulary, sentences of 8-20 words.
rng = np.random.default_rng(0)
letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
vocab = ["".join(rng.choice(letters, size=rng.integers(3, 10))) for _ in range(5000)]
zipf = 1.0 / np.arange(1, len(vocab) + 1)
zipf /= zipf.sum()


def text(i: int) -> str:
    picked = rng.choice(len(vocab), size=words, p=zipf)
    out, start = [], 0
    while start < words:
        stop = min(words, start + int(rng.integers(8, 21)))
        sentence = " ".join(vocab[j] for j in picked[start:stop])
        out.append(sentence[0].upper() + sentence[1:] + ".")
        start = stop
    return f"Document {i}. " + " ".join(out)


texts = [text(i) for i in range(n_gpu)]
with open(os.path.join(work, "corpus.jsonl"), "w", encoding="utf-8") as handle:
    import json

    for i, t in enumerate(texts):
        handle.write(json.dumps({"id": f"d{i}", "title": f"Document {i}", "text": t}) + "\n")


def timed(embedder: LocalEmbedder, batch: list[str]) -> tuple[np.ndarray, float]:
    embedder.embed_documents(batch[:64])  # warm-up: model load, CUDA context, kernels
    if embedder.resolved_device().startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    blocks = [embedder.embed_documents(batch[i : i + 256]) for i in range(0, len(batch), 256)]
    elapsed = time.perf_counter() - start  # the vectors are on the host: the GPU is done
    return np.concatenate(blocks), elapsed


gpu = LocalEmbedder(device=device)
vg, tg = timed(gpu, texts)
print(f"{device} fp32: {len(texts):,} texts in {tg:.1f} s = {len(texts) / tg:,.0f} chunks/s "
      f"(batch {gpu.batch_size or (256 if cuda else 64)})")
cpu = LocalEmbedder(device="cpu")
vc, tc = timed(cpu, texts[:n_cpu])
print(f"cpu  fp32: {n_cpu:,} texts in {tc:.1f} s = {n_cpu / tc:,.1f} chunks/s (batch 64); "
      f"{device} is {(len(texts) / tg) / (n_cpu / tc):,.1f}x")
diff = float(np.abs(vg[:n_cpu] - vc).max())
cos = float((vg[:n_cpu] * vc).sum(axis=1).min())
print(f"{device} vs cpu, same {n_cpu} texts: max abs difference {diff:.2e}, "
      f"lowest cosine {cos:.7f}")
if cuda:
    half = LocalEmbedder(device=device, precision="fp16")
    vh, th = timed(half, texts)
    print(f"cuda fp16: {len(texts) / th:,.0f} chunks/s; vs cuda fp32: max abs difference "
          f"{float(np.abs(vh - vg).max()):.2e}, lowest cosine "
          f"{float((vh * vg).sum(axis=1).min()):.5f}")
assert diff < 1e-4, f"CUDA and CPU vectors differ by {diff}: more than float noise"
PY

if [ "${SKIP_CLI:-0}" != "1" ]; then
  start=$(date +%s.%N)
  "$PY" -m sealgraph index "$WORK/corpus.jsonl" --index "$WORK/idx" --embedder local \
    --device "$DEVICE" 2>"$WORK/index.log" || { cat "$WORK/index.log"; exit 1; }
  end=$(date +%s.%N)
  "$PY" - "$WORK/idx" "$start" "$end" "$DEVICE" <<'PY'
import json
import sys

manifest = json.load(open(f"{sys.argv[1]}/manifest.json"))
chunks, seconds = manifest["counts"]["chunks"], float(sys.argv[3]) - float(sys.argv[2])
print(f"sealgraph index --device {sys.argv[4]}: {chunks:,} chunks in {seconds:.1f} s end to end "
      f"= {chunks / seconds:,.0f} chunks/s (process start, chunking, BM25, vectors included); "
      f"embedder {manifest['embedder']}")
PY
fi
echo "gpu_check: done"
