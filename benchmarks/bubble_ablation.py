"""Ablation of the context bubble (arXiv 2601.10681) on the packaged example corpus.

The paper compares flat top-k retrieval with its context bubble and ablates the
bubble's two ingredients: structure (structural priors π(section) and per-section
budgets ρ_s) and diversity (the lexical redundancy gate δ and MMR). This script
reproduces that ablation on the Corvane wiki shipped in :mod:`sealgraph.examples`.

For every example question the lexical index (built into a temporary directory,
``embedder="none"``) returns the top ``--n`` chunks (flat retrieval: no SEAL loop)
and they are packed under ``--budget`` tokens (o200k_base) in five configurations:

=================  ===========================================================
flat top-k         candidates in rank order, whole, rendered with
                   :func:`sealgraph.packing.render_block`; stop at the first
                   one that no longer fits (no selection logic at all)
+ structure        ``bubble``; priors (lead, position, title) and section
                   budgets on; redundancy gate and MMR off
                   (``delta=1.0``, ``mmr_lambda=1.0``)
+ diversity        ``bubble``; gate and MMR on (defaults); priors off
                   (``lead_prior = position_prior = title_prior = 0``,
                   ``section_priors={}``), section budgets off
                   (``default_section_share=1.0``, ``section_budgets={}``)
full bubble        ``bubble`` with every default
auto (default)     the default strategy ``auto`` (segments grown as windows,
                   then the bubble), with ``index.neighbors`` to grow spans
=================  ===========================================================

Approximations, because PackConfig has no on/off switches:

* ``delta`` must be ≤ 1, so "gate off" still drops a span whose content-word set
  equals one already selected (Jaccard 1.0). No candidate pair here reaches it.
* PackConfig has no π(section) entries by default (``section_priors`` is empty), so
  the structural prior of the default configs is the lead/position/title prior.
* ``answerability_boost``, ``bridge_boost``, the length penalty θ and ``per_doc_cap``
  stay at their defaults in every bubble config: they belong to neither ingredient.

Every configuration gets the same inputs: the chunks in rank order, their BM25
scores as ``relevance``, no focus terms, the answer type inferred from the question.

Metrics, averaged over questions:

* ``tokens``: tokens of the rendered context (real count of the whole string);
* ``spans``: packed spans;
* ``sections``: distinct (document title, section label) pairs among the spans;
* ``overlap``: mean pairwise lexical overlap (Jaccard of content words,
  :func:`sealgraph.eval.metrics.mean_pairwise_overlap`) of the packed span texts;
  a context with fewer than two spans scores 0;
* ``sp recall``: share of the question's ``supporting_sentences`` found verbatim
  (whitespace-normalised) in the context; ``sp in cand.`` is the same share over the
  unpacked candidates, the ceiling any packing can reach.

Usage::

    export TIKTOKEN_CACHE_DIR=/work/shared/tiktoken_cache
    python benchmarks/bubble_ablation.py [--n 8] [--budget 800]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run from a checkout without installing: put the repository root on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sealgraph.eval.metrics import mean_pairwise_overlap
from sealgraph.examples import corpus_files, load_questions
from sealgraph.index import Index, build_index
from sealgraph.packing import PackConfig, pack, render_block, render_context
from sealgraph.packing.scoring import section_label
from sealgraph.text.tokens import TokenCounter, token_counter
from sealgraph.types import Chunk, Hit

ENCODING = "o200k_base"
"""Tokenizer that counts the budget."""

STRUCTURE_ONLY = PackConfig(strategy="bubble", delta=1.0, mmr_lambda=1.0)
"""Priors and section budgets on; redundancy gate and MMR off."""
DIVERSITY_ONLY = PackConfig(
    strategy="bubble",
    lead_prior=0.0,
    position_prior=0.0,
    title_prior=0.0,
    section_priors={},
    section_budgets={},
    default_section_share=1.0,
)
"""Redundancy gate and MMR on; priors and section budgets off."""


@dataclass(frozen=True, slots=True)
class Packed:
    """What one configuration put in the context of one question."""

    context: str
    """The rendered context."""
    tokens: int
    """Its token count."""
    spans: tuple[tuple[str, str, str], ...]
    """(document title, section label, span text) of every packed span."""


Packer = Callable[[str, Sequence[Chunk], Sequence[Hit]], Packed]
"""``packer(question, chunks, hits) -> Packed``."""


def flat_top_k(budget: int, counter: TokenCounter) -> Packer:
    """Whole chunks in rank order until the next one does not fit."""

    def run(question: str, chunks: Sequence[Chunk], hits: Sequence[Hit]) -> Packed:
        blocks: list[str] = []
        spans: list[tuple[str, str, str]] = []
        context, tokens = "", 0
        for chunk in chunks:
            label = section_label(chunk.section, chunk.title)
            block = render_block(len(blocks) + 1, chunk.title or chunk.doc_id, label, chunk.text)
            candidate = render_context([*blocks, block])
            n = counter.count(candidate)
            if n > budget:
                break
            blocks.append(block)
            spans.append((chunk.title, label, chunk.text.strip()))
            context, tokens = candidate, n
        return Packed(context, tokens, tuple(spans))

    return run


def with_pack(config: PackConfig, budget: int, counter: TokenCounter, index: Index) -> Packer:
    """Pack with :func:`sealgraph.packing.pack` under ``config``."""

    def run(question: str, chunks: Sequence[Chunk], hits: Sequence[Hit]) -> Packed:
        result = pack(
            question,
            chunks,
            budget=budget,
            counter=counter,
            config=config,
            relevance=[h.score for h in hits],
            neighbors=index.neighbors,
        )
        spans = tuple((s.title, s.section, s.text.strip()) for s in result.spans)
        return Packed(result.context, result.tokens, spans)

    return run


def squash(text: str) -> str:
    """Collapse whitespace, so a sentence wrapped over lines still matches."""
    return " ".join(text.split())


def sentence_recall(sentences: Sequence[str], text: str) -> float:
    """Share of ``sentences`` found verbatim (whitespace-normalised) in ``text``."""
    if not sentences:
        return 1.0
    haystack = squash(text)
    return sum(squash(s) in haystack for s in sentences) / len(sentences)


def run(n: int, budget: int) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Build the example index, pack every question in every configuration, aggregate."""
    counter = token_counter(ENCODING)
    questions = load_questions()
    with tempfile.TemporaryDirectory(prefix="sealgraph-bubble-ablation-") as tmp:
        index = build_index(
            corpus_files(), Path(tmp) / "index", embedder="none", progress=lambda *_: None
        )
        packers: list[tuple[str, Packer]] = [
            ("flat top-k", flat_top_k(budget, counter)),
            ("+ structure", with_pack(STRUCTURE_ONLY, budget, counter, index)),
            ("+ diversity", with_pack(DIVERSITY_ONLY, budget, counter, index)),
            ("full bubble", with_pack(PackConfig(strategy="bubble"), budget, counter, index)),
            ("auto (default)", with_pack(PackConfig(), budget, counter, index)),
        ]
        per_config: dict[str, dict[str, list[float]]] = {
            name: {"tokens": [], "spans": [], "sections": [], "overlap": [], "recall": []}
            for name, _ in packers
        }
        candidate_recall = []
        for record in questions:
            hits = index.search_hybrid(record["question"], n)
            chunks = index.get_chunks([h.chunk_id for h in hits])
            support = record["supporting_sentences"]
            candidate_recall.append(sentence_recall(support, " ".join(c.text for c in chunks)))
            for name, packer in packers:
                packed = packer(record["question"], chunks, hits)
                if packed.tokens > budget or counter.count(packed.context) != packed.tokens:
                    raise AssertionError(f"{name}: {record['id']} breaks the token budget")
                stats = per_config[name]
                stats["tokens"].append(packed.tokens)
                stats["spans"].append(len(packed.spans))
                stats["sections"].append(len({(t, s) for t, s, _ in packed.spans}))
                stats["overlap"].append(mean_pairwise_overlap([x for _, _, x in packed.spans]))
                stats["recall"].append(sentence_recall(support, packed.context))
    rows = [
        {"config": name, **{k: statistics.fmean(v) for k, v in stats.items()}}
        for name, stats in per_config.items()
    ]
    meta = {"questions": len(questions), "candidate_recall": statistics.fmean(candidate_recall)}
    return rows, meta


def markdown_table(rows: Sequence[dict[str, Any]], candidate_recall: float) -> str:
    """Render the aggregated rows as a Markdown table."""
    lines = [
        "| configuration | tokens | spans | sections | overlap | sp recall | sp in cand. |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['config']} | {r['tokens']:.1f} | {r['spans']:.2f} | {r['sections']:.2f} "
            f"| {r['overlap']:.3f} | {r['recall']:.3f} | {candidate_recall:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the ablation and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8, help="candidate chunks per question")
    parser.add_argument("--budget", type=int, default=800, help="token budget of the context")
    args = parser.parse_args(argv)
    if args.n < 1 or args.budget < 0:
        parser.error("--n must be >= 1 and --budget >= 0")
    rows, meta = run(args.n, args.budget)
    print(
        f"Example corpus, {meta['questions']} questions, top-{args.n} lexical candidates, "
        f"budget {args.budget} ({ENCODING})\n"
    )
    print(markdown_table(rows, meta["candidate_recall"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
