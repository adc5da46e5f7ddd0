"""Benchmark: lexical-only indexing of one huge single-line text file.

For each size (default 2, 10 and 50 MB) and each variant the script writes one
``.txt`` file holding a single line of deterministic filler words into a temporary
directory, then builds an index of it with ``build_index(..., embedder="none")`` in
a fresh subprocess and prints:

* size in MB (10^6 characters; the filler is ASCII, so also bytes), build seconds
  and MB/s;
* peak RSS of the build process (``ru_maxrss``), in MB. Linux carries ``ru_maxrss``
  over ``fork`` and ``exec``, so the texts are generated in a process of their own
  and the parent that starts the builds never holds one;
* the number of chunks, and the seconds ``chunk_document`` alone takes on the same
  text (measured after the build, in the same process).

Variants:

* ``sentences``: words with a full stop and a capitalised word every 12 words or so,
  so the sentence splitter finds many candidate boundaries on one line;
* ``no-punct``: the same words with no sentence punctuation at all: a single
  "sentence" that the chunker has to cut into pieces of at most max_tokens tokens.

Usage::

    export TIKTOKEN_CACHE_DIR=/work/shared/tiktoken_cache
    python benchmarks/bench_large_text.py                 # 2, 10, 50 MB, both variants
    python benchmarks/bench_large_text.py --sizes 1 4 --variants no-punct
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run from a checkout without installing: put the repository root on the path.
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

VARIANTS = ("sentences", "no-punct")
_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "river",
    "stone",
    "castle",
    "market",
    "quiet",
    "north",
    "seven",
    "lantern",
    "paris",
    "engine",
    "orchard",
    "harbour",
    "copper",
    "signal",
    "meadow",
    "winter",
    "garden",
    "silver",
    "bridge",
    "falcon",
    "valley",
    "ledger",
    "thunder",
    "cinder",
    "maple",
    "orbit",
]


def filler(n_chars: int, variant: str, seed: int = 0) -> str:
    """Return exactly ``n_chars`` characters of one-line filler (no newline).

    Args:
        n_chars: Length of the text.
        variant: ``sentences`` (a full stop about every 12 words) or ``no-punct``.
        seed: Seed of the word choice; equal arguments give equal texts.

    """
    rng = random.Random(seed)
    words = rng.choices(_WORDS, k=n_chars // 5 + 16)
    if variant == "sentences":
        for i in range(12, len(words), 12):
            # A full stop, then a capitalised word: a sentence boundary.
            words[i - 1] += "."
            words[i] = words[i].capitalize()
    elif variant != "no-punct":
        raise ValueError(f"unknown variant {variant!r}")
    parts: list[str] = []
    size = 0
    for word in words:
        parts.append(word)
        size += len(word) + 1
        if size >= n_chars:
            break
    return " ".join(parts)[:n_chars]


def run_one(text_file: Path, index_dir: Path) -> dict[str, float]:
    """Build the index of ``text_file`` (in this process) and measure it."""
    from sealgraph.index import build_index
    from sealgraph.text.chunking import chunk_document
    from sealgraph.text.tokens import token_counter
    from sealgraph.types import Document

    token_counter()  # load the encoding before the clock starts
    start = time.perf_counter()
    index = build_index(str(text_file), str(index_dir), embedder="none", progress=lambda *_: None)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    n_chunks = index.n_chunks
    del index
    text = text_file.read_text(encoding="utf-8")
    doc = Document("d", "d", text, metadata={"format": "text"})
    start = time.perf_counter()
    chunks = chunk_document(doc, token_counter(), 256)
    chunk_seconds = time.perf_counter() - start
    assert len(chunks) == n_chunks
    return {
        "seconds": seconds,
        "peak_rss_mb": peak_mb,
        "chunks": n_chunks,
        "chunk_s": chunk_seconds,
    }


def main(argv: list[str] | None = None) -> int:
    """Generate the texts, time one build per text in a subprocess, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[2, 10, 50], help="MB each")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per build")
    parser.add_argument(
        "--one", nargs=2, metavar=("TEXT_FILE", "INDEX_DIR"), help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--generate", nargs=3, metavar=("N_CHARS", "VARIANT", "TEXT_FILE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(Path(args.one[0]), Path(args.one[1]))))
        return 0
    if args.generate:
        n_chars, variant, text_file = args.generate
        Path(text_file).write_text(filler(int(n_chars), variant), encoding="utf-8")
        return 0

    print(
        f"{'variant':<10} {'MB':>6} {'seconds':>8} {'MB/s':>6} {'peak RSS MB':>11} "
        f"{'chunks':>7} {'chunking s':>10}"
    )
    with tempfile.TemporaryDirectory(prefix="sealgraph-bench-large-") as tmp:
        for variant in args.variants:
            for size in args.sizes:
                n_chars = int(size * 1_000_000)
                corpus = Path(tmp) / f"{variant}-{size:g}"
                corpus.mkdir()
                text_file = corpus / "big.txt"
                generate = [sys.executable, __file__, "--generate", str(n_chars), variant]
                subprocess.run([*generate, str(text_file)], check=True)
                cmd = [sys.executable, __file__, "--one", str(text_file), str(corpus / "index")]
                try:
                    proc = subprocess.run(
                        cmd, capture_output=True, text=True, timeout=args.timeout, check=True
                    )
                except subprocess.TimeoutExpired:
                    print(f"{variant:<10} {size:>6g} {'>' + format(args.timeout, 'g'):>8}  timeout")
                    continue
                except subprocess.CalledProcessError as exc:
                    print(f"{variant:<10} {size:>6g} failed:\n{exc.stderr}", file=sys.stderr)
                    return 1
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                mb = n_chars / 1e6
                print(
                    f"{variant:<10} {mb:>6g} {r['seconds']:>8.1f} {mb / r['seconds']:>6.2f} "
                    f"{r['peak_rss_mb']:>11.0f} {r['chunks']:>7} {r['chunk_s']:>10.1f}",
                    flush=True,
                )
                text_file.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
