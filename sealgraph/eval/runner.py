"""Run the evaluation: every method over every question, plus optional sweeps.

:func:`run_eval` is what ``sealgraph eval`` calls. It validates every argument
before any work, loads the questions and the corpus, opens (or builds) the
index once, runs each method with the same ``k`` and budget, and writes the
report, the per-question records and the plot atomically, only once the whole
run has succeeded.

Two question formats are evaluated: multi-hop QA JSONL, whose paragraphs are
the corpus (:mod:`sealgraph.eval.dataset`), and questions about a corpus folder
with gold documents and character spans (:mod:`sealgraph.eval.corpus_questions`).

:func:`evaluate_method` is the part that knows nothing of files: one method,
one config, a list of questions, an index.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from sealgraph.config import SealConfig
from sealgraph.eval import metrics
from sealgraph.eval._inputs import (
    AnyQuestion,
    check_llm_mode,
    check_outputs,
    check_selection,
    eval_inputs,
    open_questions,
    run_config,
    sweep_grids,
    warn_unused_llm_overrides,
)
from sealgraph.eval.corpus_questions import CorpusQuestion
from sealgraph.eval.dataset import EvalQuestion
from sealgraph.eval.index_cache import OpenedIndex
from sealgraph.eval.llm_stats import llm_summary
from sealgraph.eval.methods import (
    Method,
    MethodOutput,
    Pipeline,
    default_pipeline,
    parse_methods,
    require_dense,
)
from sealgraph.eval.progress import ProgressBar
from sealgraph.eval.report import eval_outputs, write_outputs
from sealgraph.terminal import one_line
from sealgraph.text.tokens import encoding_for_model, get_encoding

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.index.protocol import SearchIndex

__all__ = [
    "AnyQuestion",
    "EvalResult",
    "MethodRun",
    "evaluate_method",
    "make_record",
    "peak_rss_mb",
    "run_eval",
    "score_output",
]


@dataclass(frozen=True, slots=True)
class MethodRun:
    """The result of one method under one config over all questions."""

    metrics: dict[str, Any]
    """Aggregated metrics, as stored under ``report["methods"][name]``."""
    records: list[dict[str, Any]]
    """One record per question, as written to ``records.jsonl``."""
    pages: tuple[str, ...] = ()
    """Per record, the HTML of its run for ``eval --html`` (empty unless asked for)."""


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
    questions: Sequence[AnyQuestion],
    index: SearchIndex,
    config: SealConfig,
    pipeline: Pipeline,
    *,
    on_question: Callable[[], None] | None = None,
    pages: bool = False,
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
        pages: Also render each question's run as HTML (:attr:`MethodRun.pages`), as
            soon as it is scored: only the page is kept, never the run's state.

    """
    runner = method.build(index, config, pipeline)
    if questions and not method.llm:  # an LLM method is not warmed up: no call is wasted
        runner(questions[0].question)  # warm-up, not timed
    encoding = get_encoding(encoding_for_model(config.tokenizer_model))
    scores: list[metrics.QuestionScores] = []
    records: list[dict[str, Any]] = []
    llm_events: list[tuple[Mapping[str, Any], ...]] = []
    rendered: list[str] = []
    config_dict = config.to_dict() if pages else {}
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
        llm_events.append(output.llm_events)
        if pages:
            from sealgraph.eval.page import method_run_section

            rendered.append(method_run_section(records[-1], output, config_dict))
        if on_question is not None:
            on_question()
    aggregated = metrics.aggregate_scores(scores)
    aggregated["latency_ms_p50"] = round(aggregated["latency_ms_p50"], 3)
    aggregated["latency_ms_p95"] = round(aggregated["latency_ms_p95"], 3)
    aggregated["peak_rss_mb"] = round(peak_rss_mb(), 1)
    if method.llm:
        aggregated["llm"] = llm_summary(llm_events, [s.latency_ms / 1000 for s in scores])
    return MethodRun(metrics=aggregated, records=records, pages=tuple(rendered))


def score_output(
    question: AnyQuestion, output: MethodOutput, *, latency_ms: float, budget_exceeded: bool
) -> metrics.QuestionScores:
    """Measure one method output against a question's gold labels.

    Gold documents are the supporting titles of a multi-hop question (compared
    with the evidence titles) and the gold doc ids of a corpus question (compared
    with the evidence doc ids). A declined answer scores 0 on EM, F1 and
    containment.
    """
    gold = _gold_of(question, output)
    reference = gold.reference
    evidence_text = "\n".join(chunk.text for chunk in output.evidence)
    answered = reference is not None and not output.declined
    # EM and F1 score the short span when the answer step marked one: the answer text
    # also carries its cited sentences, which containment reads instead.
    scored = output.short_answer or output.answer
    span_evidence = span_context = None
    if gold.answerable and gold.spans:
        span_evidence = metrics.span_char_recall(
            gold.spans, [(c.doc_id, c.start, c.end) for c in output.evidence]
        )
        span_context = metrics.span_char_recall(gold.spans, output.packed)
    return metrics.QuestionScores(
        recall=metrics.title_recall(gold.documents, gold.evidence_documents),
        all_gold=metrics.all_gold(gold.documents, gold.evidence_documents),
        precision=metrics.title_precision(gold.documents, gold.evidence_documents),
        evidence_size=len(output.evidence),
        evidence_tokens=sum(chunk.n_tokens for chunk in output.evidence),
        context_tokens=output.context_tokens,
        sp_sentences=len(gold.sentences),
        sp_in_context=metrics.sentences_present(gold.sentences, output.context),
        sp_in_evidence=metrics.sentences_present(gold.sentences, evidence_text),
        overlap=metrics.mean_pairwise_overlap(
            [str(citation.get("text", "")) for citation in output.citations]
        ),
        exact_match=answered and metrics.answer_exact_match(scored, reference or ""),
        f1=metrics.answer_f1(scored, reference or "") if answered else 0.0,
        latency_ms=latency_ms,
        loops=output.loops,
        llm_calls=output.llm_calls,
        budget_violation=budget_exceeded,
        answerable=gold.answerable,
        scores_documents=gold.answerable
        and (bool(gold.documents) or isinstance(question, EvalQuestion)),
        has_reference=reference is not None,
        declined=output.declined,
        contained=answered and metrics.answer_contained(output.answer, reference or ""),
        span_recall_evidence=span_evidence,
        span_recall_context=span_context,
    )


class _Gold(NamedTuple):
    """What a question's output is scored against, and the evidence in the same terms."""

    documents: tuple[str, ...]
    evidence_documents: list[str]
    answerable: bool
    reference: str | None
    sentences: tuple[str, ...]
    spans: list[tuple[str, int, int]]


def _gold_of(question: AnyQuestion, output: MethodOutput) -> _Gold:
    # Corpus questions compare doc ids and have gold spans; multi-hop ones compare titles
    # and have gold sentences.
    if isinstance(question, CorpusQuestion):
        answerable = question.answerable
        return _Gold(
            documents=question.gold_documents,
            evidence_documents=[chunk.doc_id for chunk in output.evidence],
            answerable=answerable,
            reference=question.answer if answerable else None,
            sentences=(),
            spans=[(s.document, s.start, s.end) for s in question.gold_spans],
        )
    return _Gold(
        documents=question.gold_titles,
        evidence_documents=[chunk.title for chunk in output.evidence],
        answerable=True,
        reference=question.answer,
        sentences=question.gold_sentences,
        spans=[],
    )


def make_record(
    question: AnyQuestion, method: str, output: MethodOutput, scores: metrics.QuestionScores
) -> dict[str, Any]:
    """Return the ``records.jsonl`` line of one (question, method).

    Values that do not apply to the question (span recall without gold spans,
    answer scores without a reference answer) are null.
    """
    answered = scores.answerable and scores.has_reference
    record: dict[str, Any] = {
        "id": question.qid,
        "method": method,
        "evidence": [
            {"title": chunk.title, "chunk_id": chunk.chunk_id} for chunk in output.evidence
        ],
        "context": output.context,
        "context_tokens": output.context_tokens,
        "answer": output.answer,
        "short_answer": output.short_answer,
        "declined": output.declined,
        "missing": output.missing,
        "answerability": output.answerability,
        "latency_ms": round(scores.latency_ms, 3),
        "loops": output.loops,
        "llm_calls": output.llm_calls,
        "question": question.question,
        "gold_answer": question.answer,
    }
    if isinstance(question, CorpusQuestion):
        record["evidence"] = [
            {"doc_id": c.doc_id, "chunk_id": c.chunk_id, "start": c.start, "end": c.end}
            for c in output.evidence
        ]
        record["packed"] = [
            {"doc_id": doc_id, "start": start, "end": end} for doc_id, start, end in output.packed
        ]
        record["type"] = question.type
        record["answerable"] = question.answerable
        record["gold_documents"] = list(question.gold_documents)
        record["gold_spans"] = [
            {"document": s.document, "start": s.start, "end": s.end} for s in question.gold_spans
        ]
    else:
        record["gold_titles"] = list(question.gold_titles)
    record["scores"] = {
        "recall": scores.recall if scores.scores_documents else None,
        "all_gold": scores.all_gold if scores.scores_documents else None,
        "precision": scores.precision if scores.scores_documents else None,
        "span_recall_evidence": scores.span_recall_evidence,
        "span_recall_context": scores.span_recall_context,
        "declined": scores.declined,
        "answer_em": scores.exact_match if answered else None,
        "answer_f1": scores.f1 if answered else None,
        "answer_containment": scores.contained if answered else None,
        "sp_in_context": scores.sp_in_context,
        "sp_sentences": scores.sp_sentences,
        "budget_violation": scores.budget_violation,
    }
    return record


def run_eval(
    questions: str | Path,
    *,
    k: int | None = None,
    methods: str | Sequence[str],
    pools: Sequence[str | Path] = (),
    corpus: str | Path | None = None,
    split: str | None = None,
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
    llm: bool = False,
    html: str | Path | None = None,
) -> EvalResult:
    """Evaluate ``methods`` on the questions of a QA JSONL file or about a corpus folder.

    The format of ``questions`` is told from its first line: multi-hop QA JSONL
    (``paragraphs``: they are the corpus, with ``pools``) or corpus questions
    (``gold_documents``/``gold_spans``: the corpus is the folder ``corpus``, or the
    index in ``index_dir`` when no folder is given).

    Args:
        questions: The questions file.
        k: Evidence-set size shared by every method.
        methods: Method names (comma-separated string or list); see
            :data:`sealgraph.eval.methods.METHODS`.
        pools: More QA JSONL files whose paragraphs join the corpus (multi-hop QA only).
        corpus: Folder of the documents corpus questions are about.
        split: Evaluate only half ``"a"`` or ``"b"`` (see :mod:`sealgraph.eval.split`).
        limit: Evaluate only the first ``limit`` questions (of the half, with ``split``).
        budget: Token budget of the packed context (default: the config's).
        max_loops: Loop budget of the graph methods (default: the config's).
        index_dir: Where to load or build the index (default: the content-addressed cache);
            for corpus questions without ``corpus``, an index built from their folder.
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
        llm: Run every graph method given in LLM mode (``seal`` as ``seal+llm``): the
            LLM reasoner built from the config's ``llm.*``, as ``sealgraph ask --llm``.
        html: Write the page of the evaluation here: the methods' table and, per
            question, each method's run (a graph method's whole repair, a flat
            method's evidence); see :mod:`sealgraph.eval.page`.

    Raises:
        SealgraphError: Any bad input, before anything is written.

    """
    chosen = parse_methods(methods, llm=llm)
    check_llm_mode(chosen, llm=llm)
    config = run_config(k=k, budget=budget, max_loops=max_loops, overrides=overrides)
    warn_unused_llm_overrides(chosen, overrides)
    sweeps = sweep_grids(config, sweep_k=sweep_k, sweep_loops=sweep_loops)
    paths = {"out": out, "records_out": records_out, "plot": plot, "html": html}
    inputs = eval_inputs(questions, pools=pools, corpus=corpus, index_dir=index_dir)
    check_outputs(eval_outputs({}, [], **paths), inputs, has_sweeps=bool(sweeps))
    check_selection(split, limit)
    questions_path = Path(questions)
    loaded = open_questions(
        questions_path,
        corpus=corpus,
        index_dir=index_dir,
        pools=pools,
        embedder=embedder,
        config=config,
        split=split,
        limit=limit,
    )
    index = loaded.opened.index
    if progress:
        _announce_index(loaded.opened)
    for method in chosen:
        require_dense(method, index)  # fail before any method runs
    pipeline = pipeline or default_pipeline()
    _warm_up(pipeline, index, loaded.questions, progress=progress)

    run = _MethodRuns(loaded.questions, index, pipeline, progress=progress)
    main_runs = {method.name: run(method, config, pages=html is not None) for method in chosen}
    _warn_open_circuits(main_runs, len(loaded.questions))
    report: dict[str, Any] = {
        "format": loaded.mode,
        "questions_file": str(questions_path),
        "pool_files": [str(p) for p in pools],
        "corpus_dir": str(corpus) if corpus is not None else None,
        "split": split,
        "n_questions": len(loaded.questions),
        "corpus_size": loaded.corpus_size,
        "k": config.k,
        "budget": config.budget,
        "max_loops": config.max_loops,
        "methods": {name: result.metrics for name, result in main_runs.items()},
    }
    if sweeps:
        report["sweeps"] = _sweep_metrics(run, chosen, sweeps)
    report["index"] = _index_summary(loaded.opened)
    report["config"] = config.to_dict()

    records = [record for result in main_runs.values() for record in result.records]
    page = None
    if html is not None:
        from sealgraph.eval.page import render_eval_page

        sections = [section for result in main_runs.values() for section in result.pages]
        page = render_eval_page(report, records, sections)
    write_outputs(report, records, inputs=inputs, page=page, **paths)
    return EvalResult(report=report, records=records)


def _announce_index(opened: OpenedIndex) -> None:
    verb = "loaded" if opened.reused else "built"
    print(
        one_line(
            f"index {verb}: {opened.path} ({opened.index.n_docs} documents, "
            f"{opened.index.n_chunks} chunks)"
        ),
        file=sys.stderr,
    )


def _warm_up(
    pipeline: Pipeline, index: SearchIndex, questions: Sequence[AnyQuestion], *, progress: bool
) -> None:
    # The pipeline's own warm-up (not timed as part of any method).
    if pipeline.warm_up is None:
        return
    started = time.perf_counter()
    pipeline.warm_up(index, [q.question for q in questions])
    if progress:
        print(f"index warmed in {time.perf_counter() - started:.1f}s", file=sys.stderr)


class _MethodRuns:
    """Runs a method under a config once, with a progress bar, and remembers the result.

    Methods without a loop give the same result at every loop budget: a sweep
    over loops reuses their run instead of running them again.
    """

    def __init__(
        self,
        questions: Sequence[AnyQuestion],
        index: SearchIndex,
        pipeline: Pipeline,
        *,
        progress: bool,
    ) -> None:
        self._questions = questions
        self._index = index
        self._pipeline = pipeline
        self._progress = progress
        self._runs: dict[tuple[str, int, int | None], MethodRun] = {}

    def __call__(self, method: Method, run_config: SealConfig, *, pages: bool = False) -> MethodRun:
        key = (method.name, run_config.k, run_config.max_loops if method.uses_loops else None)
        if key not in self._runs or (pages and not self._runs[key].pages):
            label = f"{method.name} k={run_config.k}"
            if method.uses_loops:
                label += f" L={run_config.max_loops}"
            with ProgressBar(len(self._questions), label, enabled=self._progress) as bar:
                self._runs[key] = evaluate_method(
                    method,
                    self._questions,
                    self._index,
                    run_config,
                    self._pipeline,
                    on_question=bar.advance,
                    pages=pages,
                )
        return self._runs[key]


def _sweep_metrics(
    run: Callable[[Method, SealConfig], MethodRun],
    chosen: Sequence[Method],
    sweeps: Mapping[str, Mapping[int, SealConfig]],
) -> dict[str, dict[str, dict[str, Any]]]:
    # report["sweeps"][sweep name][value][method name] = the method's metrics.
    return {
        name: {
            str(value): {m.name: run(m, value_config).metrics for m in chosen}
            for value, value_config in grid.items()
        }
        for name, grid in sweeps.items()
    }


def _index_summary(opened: OpenedIndex) -> dict[str, Any]:
    return {
        "path": str(opened.path),
        "embedder": opened.index.embedder_name,
        "n_docs": opened.index.n_docs,
        "n_chunks": opened.index.n_chunks,
        "has_dense": bool(opened.index.has_dense),
    }


def _warn_open_circuits(runs: Mapping[str, MethodRun], n_questions: int) -> None:
    # The circuit is per question (per graph run): say once when it opened in any.
    opened = {
        name: result.metrics["llm"]["questions_with_open_circuit"]
        for name, result in runs.items()
        if result.metrics.get("llm", {}).get("questions_with_open_circuit")
    }
    if opened:
        detail = ", ".join(f"{name} in {n} of {n_questions}" for name, n in opened.items())
        print(
            f"sealgraph: warning: the LLM circuit opened in some questions ({detail}); their remaining "
            "LLM steps used the offline reasoner (see the LLM table and report.json)",
            file=sys.stderr,
        )
