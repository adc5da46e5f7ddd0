"""Run the evaluation: every method over every question, plus optional sweeps.

:func:`run_eval` is what ``sealgraph eval`` calls. It validates every argument
before any work, loads the questions and the corpus, opens (or builds) the
index once, runs each method with the same ``k`` and budget, and writes the
report, the per-question records and the plot atomically, only once the whole
run has succeeded.

:func:`evaluate_method` is the part that knows nothing of files: one method,
one config, a list of questions, an index.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sealgraph.config import SealConfig
from sealgraph.errors import ConfigError, InputError
from sealgraph.eval import metrics
from sealgraph.eval.dataset import EvalQuestion, load_questions
from sealgraph.eval.index_cache import DEFAULT_MAX_CHUNK_TOKENS, open_index
from sealgraph.eval.methods import (
    Method,
    MethodOutput,
    Pipeline,
    default_pipeline,
    parse_methods,
    require_dense,
)
from sealgraph.eval.progress import ProgressBar
from sealgraph.eval.report import write_outputs
from sealgraph.ingest import load_documents
from sealgraph.tokens import encoding_for_model, get_encoding

__all__ = ["EvalResult", "MethodRun", "evaluate_method", "peak_rss_mb", "run_eval"]


@dataclass(frozen=True, slots=True)
class MethodRun:
    """The result of one method under one config over all questions."""

    metrics: dict[str, Any]
    """Aggregated metrics, as stored under ``report["methods"][name]``."""
    records: list[dict[str, Any]]
    """One record per question, as written to ``records.jsonl``."""


@dataclass(frozen=True, slots=True)
class EvalResult:
    """Everything one evaluation produced."""

    report: dict[str, Any]
    """The content of ``report.json``."""
    records: list[dict[str, Any]]
    """The lines of ``records.jsonl`` (main run only, not the sweeps)."""


def peak_rss_mb() -> float:
    """Return the peak resident memory of this process so far, in MiB."""
    try:
        import resource
    except ImportError:  # Windows
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def evaluate_method(
    method: Method,
    questions: Sequence[EvalQuestion],
    index: Any,
    config: SealConfig,
    pipeline: Pipeline,
    *,
    on_question: Callable[[], None] | None = None,
) -> MethodRun:
    """Run one method over ``questions`` and score it.

    The method is built once (a graph build is not timed). One untimed warm-up
    question runs first so that latencies are those of a warm index.

    Args:
        method: The method to run.
        questions: Questions to answer, in order.
        index: The loaded index every method shares.
        config: Config of the run (k, budget, loops, ...).
        pipeline: The sealgraph entry points the method runs through.
        on_question: Called after each timed question (progress reporting).

    """
    runner = method.build(index, config, pipeline)
    if questions:
        runner(questions[0].question)  # warm-up, not timed
    encoding = get_encoding(encoding_for_model(config.tokenizer_model))
    scores: list[metrics.QuestionScores] = []
    records: list[dict[str, Any]] = []
    for question in questions:
        started = time.perf_counter()
        output = runner(question.question)
        latency_ms = (time.perf_counter() - started) * 1000
        # Recount with the encoding directly rather than trusting the pipeline's count.
        recounted = len(encoding.encode(output.context, disallowed_special=()))
        question_scores = score_output(
            question, output, latency_ms=latency_ms, budget_exceeded=recounted > config.budget
        )
        scores.append(question_scores)
        records.append(make_record(question, method.name, output, question_scores))
        if on_question is not None:
            on_question()
    aggregated = metrics.aggregate_scores(scores)
    aggregated["latency_ms_p50"] = round(aggregated["latency_ms_p50"], 3)
    aggregated["latency_ms_p95"] = round(aggregated["latency_ms_p95"], 3)
    aggregated["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return MethodRun(metrics=aggregated, records=records)


def score_output(
    question: EvalQuestion, output: MethodOutput, *, latency_ms: float, budget_exceeded: bool
) -> metrics.QuestionScores:
    """Measure one method output against a question's gold labels."""
    evidence_titles = [chunk.title for chunk in output.evidence]
    evidence_text = "\n".join(chunk.text for chunk in output.evidence)
    return metrics.QuestionScores(
        recall=metrics.title_recall(question.gold_titles, evidence_titles),
        all_gold=metrics.all_gold(question.gold_titles, evidence_titles),
        precision=metrics.title_precision(question.gold_titles, evidence_titles),
        evidence_size=len(output.evidence),
        evidence_tokens=sum(chunk.n_tokens for chunk in output.evidence),
        context_tokens=output.context_tokens,
        sp_sentences=len(question.gold_sentences),
        sp_in_context=metrics.sentences_present(question.gold_sentences, output.context),
        sp_in_evidence=metrics.sentences_present(question.gold_sentences, evidence_text),
        overlap=metrics.mean_pairwise_overlap(
            [str(citation.get("text", "")) for citation in output.citations]
        ),
        exact_match=metrics.answer_exact_match(output.answer, question.answer),
        f1=metrics.answer_f1(output.answer, question.answer),
        latency_ms=latency_ms,
        loops=output.loops,
        llm_calls=output.llm_calls,
        budget_violation=budget_exceeded,
    )


def make_record(
    question: EvalQuestion, method: str, output: MethodOutput, scores: metrics.QuestionScores
) -> dict[str, Any]:
    """Return the ``records.jsonl`` line of one (question, method)."""
    return {
        "id": question.qid,
        "method": method,
        "evidence": [
            {"title": chunk.title, "chunk_id": chunk.chunk_id} for chunk in output.evidence
        ],
        "context": output.context,
        "context_tokens": output.context_tokens,
        "answer": output.answer,
        "latency_ms": round(scores.latency_ms, 3),
        "loops": output.loops,
        "llm_calls": output.llm_calls,
        "question": question.question,
        "gold_answer": question.answer,
        "gold_titles": list(question.gold_titles),
        "scores": {
            "recall": scores.recall,
            "all_gold": scores.all_gold,
            "precision": scores.precision,
            "answer_em": scores.exact_match,
            "answer_f1": scores.f1,
            "sp_in_context": scores.sp_in_context,
            "sp_sentences": scores.sp_sentences,
            "budget_violation": scores.budget_violation,
        },
    }


def run_eval(
    questions: str | Path,
    *,
    k: int,
    methods: str | Sequence[str],
    pools: Sequence[str | Path] = (),
    limit: int | None = None,
    budget: int | None = None,
    max_loops: int | None = None,
    index_dir: str | Path | None = None,
    embedder: str = "auto",
    overrides: Mapping[str, Any] | None = None,
    sweep_k: Sequence[int] = (),
    sweep_loops: Sequence[int] = (),
    out: str | Path | None = None,
    records_out: str | Path | None = None,
    plot: str | Path | None = None,
    progress: bool = True,
    pipeline: Pipeline | None = None,
) -> EvalResult:
    """Evaluate ``methods`` on the questions of a QA JSONL file.

    Args:
        questions: QA JSONL file whose questions are evaluated; its paragraphs join the corpus.
        k: Evidence-set size shared by every method.
        methods: Method names (comma-separated string or list); see
            :data:`sealgraph.eval.methods.METHODS`.
        pools: More QA JSONL files whose paragraphs join the corpus.
        limit: Evaluate only the first ``limit`` questions.
        budget: Token budget of the packed context (default: the config's).
        max_loops: Loop budget of the graph methods (default: the config's).
        index_dir: Where to load or build the index (default: the content-addressed cache).
        embedder: Embedder spec passed to ``build_index`` (``auto``, ``none``, ...).
        overrides: Dotted config overrides (``{"utility.novelty": 0.2}``) applied before
            ``k``, ``budget`` and ``max_loops``.
        sweep_k: Also run every method at each of these ``k``.
        sweep_loops: Also run every method at each of these loop budgets.
        out: Write ``report.json`` here.
        records_out: Write ``records.jsonl`` here.
        plot: Draw the sweeps into this image (needs matplotlib and a sweep).
        progress: Show a progress bar on stderr.
        pipeline: The sealgraph entry points (default: the real graph and pipeline).

    Raises:
        SealgraphError: Any bad input, before anything is written.

    """
    chosen = parse_methods(methods)
    config = _run_config(k=k, budget=budget, max_loops=max_loops, overrides=overrides)
    sweep_configs = {
        "k": _sweep_configs(config, "k", sweep_k, flag="--sweep-k"),
        "loops": _sweep_configs(config, "max_loops", sweep_loops, flag="--sweep-loops"),
    }
    sweep_configs = {name: grid for name, grid in sweep_configs.items() if grid}
    _check_output_paths(out, records_out, plot)
    if plot is not None:
        if not sweep_configs:
            raise InputError("--plot draws the sweeps: give --sweep-k and/or --sweep-loops")
        if importlib.util.find_spec("matplotlib") is None:
            raise InputError(
                "--plot needs matplotlib, which is not installed: pip install 'sealgraph[plot]'"
            )

    questions_path = Path(questions)
    eval_questions = load_questions(questions_path, limit)
    documents = load_documents([questions_path, *(Path(p) for p in pools)])
    opened = open_index(
        documents,
        index_dir,
        embedder=embedder,
        max_chunk_tokens=DEFAULT_MAX_CHUNK_TOKENS,
        encoding=encoding_for_model(config.tokenizer_model),
    )
    if progress:
        verb = "loaded" if opened.reused else "built"
        print(
            f"index {verb}: {opened.path} ({opened.index.n_docs} documents, "
            f"{opened.index.n_chunks} chunks)",
            file=sys.stderr,
        )
    for method in chosen:
        require_dense(method, opened.index)  # fail before any method runs
    pipeline = pipeline or default_pipeline()
    if pipeline.warm_up is not None:
        started = time.perf_counter()
        pipeline.warm_up(opened.index, [q.question for q in eval_questions])
        if progress:
            print(f"index warmed in {time.perf_counter() - started:.1f}s", file=sys.stderr)

    runs: dict[tuple[str, int, int | None], MethodRun] = {}

    def run(method: Method, run_config: SealConfig) -> MethodRun:
        # Methods without a loop give the same result at every loop budget: run them once.
        key = (method.name, run_config.k, run_config.max_loops if method.uses_loops else None)
        if key not in runs:
            label = f"{method.name} k={run_config.k}"
            if method.uses_loops:
                label += f" L={run_config.max_loops}"
            with ProgressBar(len(eval_questions), label, enabled=progress) as bar:
                runs[key] = evaluate_method(
                    method,
                    eval_questions,
                    opened.index,
                    run_config,
                    pipeline,
                    on_question=bar.advance,
                )
        return runs[key]

    main_runs = {method.name: run(method, config) for method in chosen}
    report: dict[str, Any] = {
        "questions_file": str(questions_path),
        "pool_files": [str(p) for p in pools],
        "n_questions": len(eval_questions),
        "corpus_size": len(documents),
        "k": config.k,
        "budget": config.budget,
        "max_loops": config.max_loops,
        "methods": {name: result.metrics for name, result in main_runs.items()},
    }
    if sweep_configs:
        report["sweeps"] = {
            name: {
                str(value): {m.name: run(m, value_config).metrics for m in chosen}
                for value, value_config in grid.items()
            }
            for name, grid in sweep_configs.items()
        }
    report["index"] = {
        "path": str(opened.path),
        "embedder": opened.index.embedder_name,
        "n_docs": opened.index.n_docs,
        "n_chunks": opened.index.n_chunks,
        "has_dense": bool(opened.index.has_dense),
    }
    report["config"] = config.to_dict()

    records = [record for result in main_runs.values() for record in result.records]
    write_outputs(report, records, out=out, records_out=records_out, plot=plot)
    return EvalResult(report=report, records=records)


def _run_config(
    *, k: int, budget: int | None, max_loops: int | None, overrides: Mapping[str, Any] | None
) -> SealConfig:
    if k < 1:
        raise InputError(f"--k must be at least 1, got {k}")
    if budget is not None and budget < _MIN_BUDGET:
        raise InputError(
            f"--budget {budget} is too small: no evidence item fits in fewer than "
            f"{_MIN_BUDGET} tokens"
        )
    if max_loops is not None and max_loops < 0:
        raise InputError(f"--max-loops must be at least 0, got {max_loops}")
    config = SealConfig().override(overrides)
    explicit = {"k": k, "budget": budget, "max_loops": max_loops}
    return config.override({key: value for key, value in explicit.items() if value is not None})


_MIN_BUDGET = 16
"""Smallest budget that can hold one rendered evidence item (``SealConfig.budget``'s bound)."""


def _sweep_configs(
    config: SealConfig, key: str, values: Sequence[int], *, flag: str
) -> dict[int, SealConfig]:
    grid = {}
    for value in sorted(set(values)):
        try:
            grid[value] = config.override({key: value})
        except ConfigError as exc:
            raise ConfigError(f"{flag} {value}: {exc}") from None
    return grid


def _check_output_paths(*paths: str | Path | None) -> None:
    for path in paths:
        if path is None:
            continue
        parent = Path(path).parent
        if not parent.is_dir():
            raise InputError(f"cannot write {path}: directory {parent} does not exist")
        if Path(path).is_dir():
            raise InputError(f"cannot write {path}: it is a directory")
