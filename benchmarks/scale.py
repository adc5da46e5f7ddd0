"""Benchmark: how sealgraph scales on one machine, from 10^4 to 10^6 chunks.

For each ``--chunks N`` the script generates (or reuses) a synthetic corpus of
Markdown documents made from the real text of ``--data`` (the HotpotQA,
2WikiMultiHopQA and MuSiQue paragraphs, the out-of-domain corpora and the FastAPI
docs), then measures, for each ``--variants`` (``lexical``: ``--embedder none``;
``static``: ``--embedder minilm-static``, dense static vectors), every step in a
subprocess of its own so that its peak RSS (``ru_maxrss`` from ``os.wait4``) is
the step's own:

1. ``build``: ``sealgraph index DOCS --index IDX --embedder E`` (a fresh index):
   wall seconds and peak RSS;
2. ``index MB``: the size of the index directory right after the build;
3. ``open``: ``load_index`` in a fresh process (page cache warm, right after the
   build): seconds and RSS after open; with vectors, the p50 of 20 dense searches
   (top 50, stored vectors as queries, the vectors' pages then in the page cache) and
   the RSS after them (mapped pages count); the same process then counts the unique
   chunk texts and the vocabulary (distinct folded words, ``sealgraph.text.lexicon.words``)
   over ``index.iter_chunks()``, keeping only 8-byte digests and the word set (with
   ``--tables-count``, it also times counting the reasoner's corpus tables from the
   chunks, ``tables_count_s`` in the JSON: what a reader of an index without counts
   would do);
4. ``cold CLI ask``: ``sealgraph ask Q --index IDX --json`` right after the build:
   wall seconds of the whole command, imports included. It is the first run over
   the new index: the corpus counts are read from the index, the gazetteer is built;
5. ``API``: one process loads the index, builds the graph once
   (``sealgraph.build_graph``) and asks ``--questions`` generated questions
   (``What is the reference code of <title>?``, who founded it, when, where):
   ``first API ask`` is the first question (gazetteer built), ``warm p50/p95`` the
   per-question latency of the others;
   ``hits`` (JSON) is the share of answers that hold the expected value;
6. ``add-100``: ``sealgraph index NEW100 --index IDX`` with 100 new documents.

A step that fails or runs past ``--step-timeout`` prints its error and the table
cell says ``failed``. One Markdown table row per size and variant goes to stdout,
every number to ``--out`` (JSON). MB are MiB (2^20 bytes); logs of every step are
under ``WORK/logs``.

The corpus: about 7.5 chunks per document at 256-token chunks, 6 sections each
(``# <Name> <Kind>`` then ``## <Name> <aspect>`` sections), real sentences of the
pool (about 25,000) drawn at random and interleaved with generated facts. Every
document has a unique invented name (a bijection of its number onto 4 syllables)
and reference code, and every section a code of its own (the reference code and a
letter); names of people and places come from invented pools that grow with the
square root of the document number. So the vocabulary grows with the corpus:
about 8 new words per document (about 1 per chunk) plus the Heaps-like pools (23k
words at 2k chunks, 48k at 10k, 158k at 100k). Each section's heading holds the
document's unique name and its last sentence the section's code, so every chunk
text is unique (the first chunk of a section holds its heading, the last its
closing sentence, and a section is short enough for two chunks); the open step
checks it. Document ``i`` depends only on ``--seed`` and ``i``, so the corpus of N
chunks is a prefix of a larger one; it is streamed to ``WORK/corpus-N-sSEED/docs``
(1,000 files a folder; constant memory) and kept for the next run of that size and
seed (``meta.json`` marks it complete). It holds text of ``--data``: keep ``WORK``
out of version control (``bench-out/`` is ignored).

Usage::

    export TIKTOKEN_CACHE_DIR=/work/shared/tiktoken_cache HF_HUB_OFFLINE=1
    python benchmarks/scale.py --chunks 10000 --out bench-out/scale/10k.json
    python benchmarks/scale.py --chunks 100000 1000000 --variants lexical
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Run from a checkout without installing: put the repository root on the path.
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GENERATOR_VERSION = 2
CHUNKS_PER_DOC = 7.5  # measured: about 7.5 chunks per document at 256-token chunks
VARIANTS = {"lexical": "none", "static": "minilm-static"}
DEFAULT_DATA = ROOT.parent / "shared" / "data"  # ../shared/data, as the other scripts
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"][:64]
_NAME_SPACE = 64**4
_KINDS = ["Archive", "Trust", "Holdings", "Foundation", "Council", "Institute", "Works", "Society"]
_ASPECTS = ["history", "operations", "governance", "finances", "records", "people", "sites"]
_ASPECTS += ["outlook", "partners", "disputes", "research", "services"]
_ROLES = ["director", "treasurer", "archivist", "chair", "counsel", "auditor", "secretary"]
_FIRST = ["Anna", "Boris", "Clara", "Daniel", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas"]
_FIRST += ["Kenji", "Lena", "Marco", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tara"]
_SENTENCE_END = re.compile(r"[.!?][\"')\]]?$")


# -- the corpus -------------------------------------------------------------------


def sentence_pool(data: Path) -> list[str]:
    """Real English sentences of 40 to 300 characters from the files under ``data``, sorted."""
    from sealgraph.text.chunking import split_sentences

    pool: set[str] = set()

    def add(text: str) -> None:
        for a, b in split_sentences(text):
            s = " ".join(text[a:b].split())
            ok = 40 <= len(s) <= 300 and s[0].isupper() and _SENTENCE_END.search(s)
            if ok and not any(c in s for c in "#|`*[]<>"):
                pool.add(s)

    for path in sorted(data.glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                for paragraph in json.loads(line)["paragraphs"]:
                    add(" ".join(s.strip() for s in paragraph["sentences"]))
    files = glob.glob(str(data / "ood/*/corpus/*"))
    files += glob.glob(str(data / "realdocs/*/corpus/**/*.md"), recursive=True)
    for name in sorted(files):
        text = Path(name).read_text(encoding="utf-8", errors="replace")
        add(re.sub(r"```.*?```", " ", text, flags=re.S))
    if len(pool) < 1000:
        raise SystemExit(f"too few sentences under {data} ({len(pool)}): give --data")
    return sorted(pool)


def invented(number: int, syllables: int) -> str:
    """A capitalised made-up word: ``number`` written in base 64 with one syllable per digit."""
    parts = []
    for _ in range(syllables):
        number, digit = divmod(number, 64)
        parts.append(_SYLLABLES[digit])
    return "".join(parts).capitalize()


def document(i: int, seed: int, pool: list[str]) -> tuple[str, str, dict[str, str]]:
    """Return ``(title, markdown, facts)`` of document ``i``: a function of ``seed`` and ``i`` only.

    ``facts`` holds what the generated questions ask: ``code``, ``founder``,
    ``year`` and ``city`` of the document's organisation.
    """
    rng = random.Random(f"sealgraph-scale:{seed}:{i}")
    # An odd multiplier is a bijection of [0, 64^4): unique names for 16.7M documents.
    entity = invented((i * 2654435761 + seed * 7919) % _NAME_SPACE, 4)
    title = f"{entity} {rng.choice(_KINDS)}"
    code = f"{rng.choice('BCDFGHKMNPRSTVXZ')}{rng.choice('ABCDEFGHKLMNPRSTVWXYZ')}{i:06d}"
    names = 64 + int(64 * math.sqrt(i + 1))  # pools that grow with the corpus (Heaps' law)

    def person() -> str:  # surnames and places: bijections of [0, 64^3), apart
        return f"{rng.choice(_FIRST)} {invented(rng.randrange(names) * 40503 % 64**3, 3)}"

    def city() -> str:
        return invented((rng.randrange(names) * 40503 + 131072) % 64**3, 3)

    facts = {"code": code, "founder": person(), "year": str(rng.randint(1820, 2015))}
    facts["city"] = city()
    lines = [f"# {title}", ""]
    for k, aspect in enumerate(rng.sample(_ASPECTS, 6), start=1):
        lines += [f"## {entity} {aspect}", ""]
        parts = []
        if k == 1:
            parts.append(
                f"{title} was founded in {facts['year']} by {facts['founder']} in "
                f"{facts['city']}. The reference code of {title} is {code}."
            )
        # About a fifth of the sections fill two chunks, the others one.
        target = rng.randint(1150, 1450) if rng.random() < 0.22 else rng.randint(420, 900)
        size = sum(map(len, parts))
        while size < target:
            if len(parts) % 3 == 2:
                year = rng.randint(1900, 2024)
                parts.append(
                    rng.choice(
                        [
                            f"In {year}, {person()} of {city()} reviewed the {aspect} records "
                            f"of {title}.",
                            f"{title} lists {person()} as its {rng.choice(_ROLES)} from {year}.",
                            f"The {aspect} office of {title} moved to {city()} in {year}.",
                        ]
                    )
                )
            else:
                parts.append(rng.choice(pool))
            size += len(parts[-1]) + 1
        parts.append(f"This section of the {title} file is filed under {code}{'ABCDEF'[k - 1]}.")
        lines += [" ".join(parts), ""]
    return title, "\n".join(lines), facts


def generate(folder: Path, n_docs: int, seed: int, data: Path) -> dict[str, Any]:
    """Write the corpus of ``n_docs`` documents and 100 more (``new100``) under ``folder``.

    Streams one document at a time (1,000 per subfolder); ``meta.json`` is written
    last, so a folder without it is an interrupted generation.
    """
    started = time.perf_counter()
    pool = sentence_pool(data)
    shutil.rmtree(folder, ignore_errors=True)
    written = 0
    for i in range(n_docs + 100):
        name = f"{i // 1000:04d}/{i:07d}.md" if i < n_docs else f"new100/n{i:07d}.md"
        path = folder / ("docs" if i < n_docs else "") / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = document(i, seed, pool)[1]
        path.write_text(text, encoding="utf-8")
        written += len(text.encode("utf-8"))
    meta = {"version": GENERATOR_VERSION, "documents": n_docs, "seed": seed, "bytes": written}
    meta.update(pool_sentences=len(pool), seconds=round(time.perf_counter() - started, 2))
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return meta


def questions(n_docs: int, seed: int, count: int, data: Path, out: Path) -> dict[str, Any]:
    """Write ``count`` questions about documents spread over the corpus, with expected values."""
    pool = sentence_pool(data)
    rng = random.Random(f"sealgraph-scale-questions:{seed}")
    asked = []
    templates = [
        ("What is the reference code of {title}?", "code"),
        ("Who founded {title}?", "founder"),
        ("In what year was {title} founded?", "year"),
        ("In which city was {title} founded?", "city"),
    ]
    for n in range(count):
        title, _, facts = document(rng.randrange(n_docs), seed, pool)
        template, key = templates[n % len(templates)]
        asked.append({"question": template.format(title=title), "expected": facts[key]})
    out.write_text(json.dumps(asked, indent=1), encoding="utf-8")
    return {"questions": len(asked)}


# -- the steps, each in a child process ---------------------------------------------


def _rss_mb() -> float:
    """Resident memory of this process now, in MiB (Linux), else its peak."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_open(index_dir: str, count_tables: str = "1") -> dict[str, Any]:
    """Open the index; count unique chunk texts and distinct folded words, time the tables."""
    import hashlib

    started = time.perf_counter()
    from sealgraph.index import load_index

    imported = time.perf_counter()
    index = load_index(index_dir)
    result = {"import_s": imported - started, "open_s": time.perf_counter() - imported}
    result["open_rss_mb"] = _rss_mb()
    result.update(_dense_timing(index))
    from sealgraph.text.lexicon import words

    digests: set[bytes] = set()
    vocabulary: set[str] = set()
    for chunk in index.iter_chunks():
        digests.add(hashlib.blake2b(chunk.text.encode("utf-8"), digest_size=8).digest())
        vocabulary.update(words(chunk.text))
    result.update(chunks=index.n_chunks, documents=index.n_docs, unique_texts=len(digests))
    result["vocabulary"] = len(vocabulary)
    del digests, vocabulary
    if count_tables != "1":
        return result
    # What the first question over a new index pays on top: counting the corpus tables
    # (internal API: a failure here only loses these numbers).
    try:
        from sealgraph.ledger.knowledge import corpus_tables
        from sealgraph.text.lexicon import lexicon_of, use_lexicon

        started = time.perf_counter()
        with use_lexicon(lexicon_of(index)):
            tables = corpus_tables(list(index.iter_chunks()))
        result["tables_count_s"] = time.perf_counter() - started
        result["tables_terms"] = len(tables["term_df"])
        result["tables_names"] = len(tables["name_df"])
    except Exception as exc:
        result["tables_error"] = f"{type(exc).__name__}: {exc}"
    return result


def _dense_timing(index: Any, n_queries: int = 20) -> dict[str, Any]:
    """Time dense search with stored vectors as queries (no embedder needed): p50 ms, RSS after.

    Internal API (the index's dense part): a failure here only loses these numbers.
    """
    dense = getattr(index, "_dense", None)
    if dense is None:
        return {}
    import numpy as np

    rows = np.random.default_rng(3).choice(dense.n_vectors, size=n_queries, replace=False)
    queries = np.asarray(dense.vectors[np.sort(rows)], dtype=np.float32)
    seconds = []
    for query in queries:
        start = time.perf_counter()
        dense.search(query, 50)
        seconds.append(time.perf_counter() - start)
    start = time.perf_counter()
    dense.search_many(queries[:6], 50)
    batch_ms = 1000 * (time.perf_counter() - start) / 6
    return {
        "dense_first_ms": 1000 * seconds[0],
        "dense_p50_ms": 1000 * _percentile(sorted(seconds[1:]), 50),
        "dense_batch6_ms": batch_ms,
        "dense_kind": "inverted file" if dense.ann is not None else "exact",
        "rss_after_dense_mb": _rss_mb(),
    }


def child_api(index_dir: str, questions_file: str) -> dict[str, Any]:
    """Load the index, build the graph once and time each question."""
    started = time.perf_counter()
    import sealgraph

    asked = json.loads(Path(questions_file).read_text(encoding="utf-8"))
    index = sealgraph.load_index(index_dir)
    graph = sealgraph.build_graph(index)
    result: dict[str, Any] = {"setup_s": time.perf_counter() - started}
    result["tables_cached"] = (Path(index_dir) / "derived" / "reasoner-tables.json").exists()
    seconds, hits = [], 0
    for item in asked:
        start = time.perf_counter()
        answer = str(graph.invoke({"question": item["question"]}).get("answer") or "")
        seconds.append(time.perf_counter() - start)
        hits += item["expected"].lower() in answer.lower()
    warm = sorted(seconds[1:]) or seconds
    result.update(first_ask_s=seconds[0], warm_n=len(warm), hits=hits / len(asked))
    result["warm_p50_ms"] = 1000 * _percentile(warm, 50)
    result["warm_p95_ms"] = 1000 * _percentile(warm, 95)
    result["warm_mean_ms"] = 1000 * sum(warm) / len(warm)
    result["rss_mb"] = _rss_mb()
    return result


def child_prepare(embedder: str) -> dict[str, Any]:
    """Load the embedder once (the static table is distilled and cached on first use)."""
    from sealgraph.index.embedders import resolve_embedder

    started = time.perf_counter()
    model = resolve_embedder(embedder)
    if model is not None:
        model.embed_query("warm up")
    return {"seconds": time.perf_counter() - started}


def _percentile(sorted_values: list[float], q: float) -> float:
    """The ``q``-th percentile (linear interpolation) of sorted values."""
    pos = (len(sorted_values) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


# -- running the steps ---------------------------------------------------------------


class Runner:
    """Runs each step as a child process, with a timeout, logging to ``logs``."""

    def __init__(self, logs: Path, timeout: float) -> None:
        self.logs = logs
        self.timeout = timeout
        self.reaped: set[int] = set()
        logs.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
        )

    def run(self, name: str, argv: list[str]) -> dict[str, Any]:
        """Run ``argv``; return wall seconds, peak RSS, the last stdout line, or ``error``.

        The child's ``ru_maxrss`` comes from ``os.wait4`` on its own pid, so it is that
        process's peak (this parent is small, so little is inherited at fork time).
        """
        out_path, err_path = self.logs / f"{name}.out", self.logs / f"{name}.err"
        print(f"  {name}: {' '.join(argv[:6])}{' ...' if len(argv) > 6 else ''}", file=sys.stderr)
        with out_path.open("wb") as out, err_path.open("wb") as err:
            started = time.perf_counter()
            proc = subprocess.Popen(
                argv, stdout=out, stderr=err, env=self.env, start_new_session=True
            )
            try:
                status, usage = self._wait(proc.pid, started + self.timeout)
            finally:  # interrupted here, or timed out: the step's processes go too
                if proc.pid not in self.reaped:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    os.wait4(proc.pid, 0)
                    proc.returncode = -9
            wall = time.perf_counter() - started
        if status is None:
            return self._failed(name, f"timed out after {self.timeout:g} s", err_path)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            return self._failed(name, f"exit status {proc.returncode}", err_path)
        result = {"wall_s": wall, "peak_rss_mb": usage.ru_maxrss / 1024}
        lines = out_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        result["stdout"] = lines[-1] if lines else ""
        return result

    def _wait(self, pid: int, deadline: float) -> tuple[int | None, Any]:
        """Wait for ``pid`` until ``deadline``; ``(None, None)`` when it is still running."""
        while time.perf_counter() < deadline:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                self.reaped.add(pid)
                return status, usage
            time.sleep(0.01)
        return None, None

    def _failed(self, name: str, why: str, err_path: Path) -> dict[str, Any]:
        tail = err_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-8:]
        message = f"{why}: " + " | ".join(tail)
        print(f"  {name} FAILED ({message})", file=sys.stderr)
        return {"error": message}

    def child(self, name: str, *args: str) -> dict[str, Any]:
        """Run one of this script's ``--child`` functions; merge its JSON into the result."""
        result = self.run(name, [sys.executable, __file__, "--child", *args])
        if "error" not in result:
            try:
                result.update(json.loads(result.pop("stdout")))
            except ValueError as exc:
                result["error"] = f"no JSON from the child: {exc}"
        return result


def corpus_for(args: argparse.Namespace, runner: Runner, n_chunks: int) -> dict[str, Any]:
    """Reuse or generate the corpus of about ``n_chunks`` chunks; return its ``meta.json``.

    A failed generation returns the step's result (with ``error``) instead.
    """
    folder = args.work / f"corpus-{n_chunks}-s{args.seed}"
    n_docs = max(1, math.ceil(n_chunks / CHUNKS_PER_DOC))
    meta_file = folder / "meta.json"
    if meta_file.exists():
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if meta.get("version") == GENERATOR_VERSION and meta.get("documents") == n_docs:
            meta["reused"] = True
            return meta
    print(f"generating {n_docs} documents in {folder}", file=sys.stderr)
    result = runner.child(
        f"{n_chunks}-generate", "generate", str(folder), str(n_docs), str(args.seed), str(args.data)
    )
    if "error" in result:
        return result
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    meta.update(reused=False, peak_rss_mb=result["peak_rss_mb"])
    return meta


def measure(
    args: argparse.Namespace, runner: Runner, n_chunks: int, variant: str
) -> dict[str, Any]:
    """Run every step for one size and variant; return the results by step."""
    folder = args.work / f"corpus-{n_chunks}-s{args.seed}"
    index_dir = args.work / f"index-{n_chunks}-s{args.seed}-{variant}"
    tag = f"{n_chunks}-{variant}"
    embedder = VARIANTS[variant]
    db = str(args.work / "runs.sqlite")
    sealgraph = [sys.executable, "-m", "sealgraph"]
    shutil.rmtree(index_dir, ignore_errors=True)
    steps: dict[str, Any] = {}
    build = [*sealgraph, "index", str(folder / "docs"), "--index", str(index_dir)]
    steps["build"] = runner.run(f"{tag}-build", [*build, "--embedder", embedder])
    if "error" in steps["build"]:
        return steps
    files = [p for p in index_dir.rglob("*") if p.is_file()]
    steps["index"] = {"mb": sum(p.stat().st_size for p in files) / 2**20, "files": len(files)}
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        counts = json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))["counts"]
        steps["index"].update(chunks=counts["chunks"], docs=counts["documents"])
    count_tables = "1" if args.tables_count else "0"
    steps["open"] = runner.child(f"{tag}-open", "open", str(index_dir), count_tables)
    # The questions are made in a child too: this process never imports sealgraph, so
    # it stays small and its children inherit next to nothing at fork time.
    qfile = args.work / "logs" / f"{tag}-questions.json"
    n_docs, count = math.ceil(n_chunks / CHUNKS_PER_DOC), args.questions + 1
    made = runner.child(
        f"{tag}-questions", "questions", *map(str, (n_docs, args.seed, count, args.data, qfile))
    )
    if "error" in made:
        steps["questions"] = made
        return steps
    asked = json.loads(qfile.read_text(encoding="utf-8"))
    qfile.write_text(json.dumps(asked[1:], indent=1), encoding="utf-8")
    cached = (index_dir / "derived" / "reasoner-tables.json").exists()
    ask = [*sealgraph, "ask", asked[0]["question"], "--index", str(index_dir), "--db", db]
    steps["cold_ask"] = runner.run(f"{tag}-cold-ask", [*ask, "--json"])
    steps["cold_ask"]["tables_cached"] = cached
    tables = index_dir / "derived" / "reasoner-tables.json"
    steps["cold_ask"]["tables_file_mb"] = tables.stat().st_size / 2**20 if tables.exists() else None
    if "stdout" in steps["cold_ask"]:
        with contextlib.suppress(ValueError, AttributeError):
            answer = str(json.loads(steps["cold_ask"].pop("stdout")).get("answer") or "")
            steps["cold_ask"]["hit"] = asked[0]["expected"].lower() in answer.lower()
    steps["api"] = runner.child(f"{tag}-api", "api", str(index_dir), str(qfile))
    add = [*sealgraph, "index", str(folder / "new100"), "--index", str(index_dir)]
    steps["add100"] = runner.run(f"{tag}-add100", [*add, "--embedder", embedder])
    for step in steps.values():
        step.pop("stdout", None)
    return steps


# -- the report ------------------------------------------------------------------------

COLUMNS = [
    ("variant", None, None, "{}"),
    ("chunks", "open", "chunks", "{:,}"),
    ("unique texts", "open", "unique_texts", "{:,}"),
    ("vocabulary", "open", "vocabulary", "{:,}"),
    ("build s", "build", "wall_s", "{:.1f}"),
    ("build peak RSS MB", "build", "peak_rss_mb", "{:,.0f}"),
    ("index MB", "index", "mb", "{:,.1f}"),
    ("open s", "open", "open_s", "{:.2f}"),
    ("open RSS MB", "open", "open_rss_mb", "{:,.0f}"),
    ("dense p50 ms", "open", "dense_p50_ms", "{:.0f}"),
    ("cold CLI ask s", "cold_ask", "wall_s", "{:.2f}"),
    ("first API ask s", "api", "first_ask_s", "{:.2f}"),
    ("warm p50 ms", "api", "warm_p50_ms", "{:.0f}"),
    ("warm p95 ms", "api", "warm_p95_ms", "{:.0f}"),
    ("add-100 s", "add100", "wall_s", "{:.1f}"),
]


def table_header() -> str:
    """The Markdown table's header and rule lines."""
    names = [name for name, *_ in COLUMNS]
    return "| " + " | ".join(names) + " |\n|" + "|".join("---" for _ in names) + "|"


def table_row(variant: str, steps: dict[str, Any]) -> str:
    """One Markdown table row; ``failed`` where a step failed, ``-`` where it did not run."""
    cells = []
    for _, step, key, fmt in COLUMNS:
        if step is None:
            cells.append(variant)
            continue
        result = steps.get(step)
        if result is None:
            cells.append("failed" if "error" in steps.get("build", {}) else "-")
        elif "error" in result or result.get(key) is None:
            cells.append("failed")
        else:
            cells.append(fmt.format(result[key]))
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments; run the children's functions or the whole benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[10000], metavar="N")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--work", type=Path, default=ROOT / "bench-out" / "scale")
    parser.add_argument("--out", type=Path, help="JSON with every number (WORK/results.json)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--questions", type=int, default=50, help="warm API questions")
    parser.add_argument("--step-timeout", type=float, default=4 * 3600.0, metavar="SECONDS")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the real-text sources")
    parser.add_argument(
        "--tables-count",
        action=argparse.BooleanOptionalAction,
        default=False,
        help=(
            "also time counting the reasoner's corpus tables from the chunks in the open step "
            "(what a reader of an index without counts does; minutes at 10^6)"
        ),
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        name, *rest = args.child
        if name == "generate":
            result = generate(Path(rest[0]), int(rest[1]), int(rest[2]), Path(rest[3]))
        elif name == "questions":
            n_docs, seed, count = map(int, rest[:3])
            result = questions(n_docs, seed, count, Path(rest[3]), Path(rest[4]))
        else:
            result = {"open": child_open, "api": child_api, "prepare": child_prepare}[name](*rest)
        print(json.dumps(result))
        return 0
    args.work = args.work.resolve()
    args.out = args.out or args.work / "results.json"
    runner = Runner(args.work / "logs", args.step_timeout)
    report: dict[str, Any] = {"argv": sys.argv[1:], "python": sys.version.split()[0]}
    report.update(cpus=os.cpu_count(), data=str(args.data), sizes={})
    with contextlib.suppress(OSError, ValueError, IndexError):
        meminfo = Path("/proc/meminfo").read_text().split("\n")[0].split()  # MemTotal: N kB
        report["memory_gb"] = int(meminfo[1]) / 2**20
    if "static" in args.variants:  # distilled once; not part of any build's time
        report["static_prepare"] = runner.child("static-prepare", "prepare", VARIANTS["static"])
    rows = []
    for n_chunks in args.chunks:
        meta = corpus_for(args, runner, n_chunks)
        report["sizes"][str(n_chunks)] = entry = {"corpus": meta, "variants": {}}
        for variant in args.variants:
            print(f"{n_chunks} chunks, {variant}", file=sys.stderr)
            steps = {"build": meta} if "error" in meta else measure(args, runner, n_chunks, variant)
            entry["variants"][variant] = steps
            rows.append(table_row(variant, steps))
            print(table_header() + "\n" + rows[-1], file=sys.stderr)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(table_header())
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
