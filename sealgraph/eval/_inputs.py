"""The inputs of :func:`sealgraph.eval.runner.run_eval`: its checks, its config, its questions.

``run_eval`` calls the checks here (``check_*``, :func:`run_config`,
:func:`sweep_grids`) before any work, so that a bad flag fails before an index
is built or a file is written; then :func:`open_questions` tells the question
format, loads the questions and opens the index every method shares.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sealgraph.config import SealConfig
from sealgraph.errors import ConfigError, InputError
from sealgraph.eval.corpus_questions import (
    CorpusQuestion,
    CorpusSources,
    check_index_matches,
    detect_format,
    load_corpus_questions,
)
from sealgraph.eval.dataset import EvalQuestion, load_questions
from sealgraph.eval.index_cache import DEFAULT_MAX_CHUNK_TOKENS, OpenedIndex, open_index
from sealgraph.eval.methods import Method
from sealgraph.eval.split import check_split, select_split
from sealgraph.index import is_index_address
from sealgraph.ingest import load_documents
from sealgraph.outputs import Inputs, Output
from sealgraph.outputs import check_outputs as check_paths
from sealgraph.text.tokens import encoding_for_model

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.types import Document

AnyQuestion = EvalQuestion | CorpusQuestion
"""A multi-hop QA question or a question about a corpus folder."""

MIN_BUDGET = 16
"""Smallest budget that can hold one rendered evidence item (``SealConfig.budget``'s bound)."""


@dataclass(frozen=True, slots=True)
class OpenedQuestions:
    """The questions of a run and the index they are asked of."""

    mode: str
    """``"corpus"`` or ``"multihop"`` (the report's ``format``)."""
    questions: list[AnyQuestion]
    """The questions to evaluate (after ``split`` and ``limit``)."""
    opened: OpenedIndex
    """The index every method shares."""
    corpus_size: int
    """Documents in the corpus."""


def check_llm_mode(chosen: Sequence[Method], *, llm: bool) -> None:
    """Refuse ``--llm`` when no chosen method has an LLM mode."""
    if llm and not any(method.llm for method in chosen):
        raise InputError(
            "--llm puts the graph methods (seal, seal-append) in LLM mode: give one in --methods"
        )


def warn_unused_llm_overrides(
    chosen: Sequence[Method], overrides: Mapping[str, Any] | None
) -> None:
    """Warn on stderr when ``llm.*`` overrides are given but no method runs in LLM mode."""
    llm_keys = sorted(key for key in overrides or {} if key == "llm" or key.startswith("llm."))
    if llm_keys and not any(method.llm for method in chosen):
        print(
            f"sealgraph: warning: --set {', '.join(llm_keys)} has no effect without --llm (or a "
            "NAME+llm method such as seal+llm): every method runs offline",
            file=sys.stderr,
        )


def run_config(
    *,
    k: int | None,
    budget: int | None,
    max_loops: int | None,
    overrides: Mapping[str, Any] | None,
) -> SealConfig:
    """Return the config of the main run: the overrides, then ``k``, ``budget``, ``max_loops``.

    None keeps the config's own (``k``: the one default of every entry point).
    """
    if k is not None and k < 1:
        raise InputError(f"--k must be at least 1, got {k}")
    if budget is not None and budget < MIN_BUDGET:
        raise InputError(
            f"--budget {budget} is too small: no evidence item fits in fewer than "
            f"{MIN_BUDGET} tokens"
        )
    if max_loops is not None and max_loops < 0:
        raise InputError(f"--max-loops must be at least 0, got {max_loops}")
    config = SealConfig().override(overrides)
    explicit = {"k": k, "budget": budget, "max_loops": max_loops}
    return config.override({key: value for key, value in explicit.items() if value is not None})


def sweep_grids(
    config: SealConfig, *, sweep_k: Sequence[int], sweep_loops: Sequence[int]
) -> dict[str, dict[int, SealConfig]]:
    """Return the config of every sweep value by sweep name (``k``, ``loops``), given ones only."""
    grids = {
        "k": _sweep_configs(config, "k", sweep_k, flag="--sweep-k"),
        "loops": _sweep_configs(config, "max_loops", sweep_loops, flag="--sweep-loops"),
    }
    return {name: grid for name, grid in grids.items() if grid}


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


def eval_inputs(
    questions: str | Path,
    *,
    pools: Sequence[str | Path] = (),
    corpus: str | Path | None = None,
    index_dir: str | Path | None = None,
) -> Inputs:
    """Return what an evaluation reads: no output of it may land there."""
    index = index_dir if index_dir is not None and not is_index_address(str(index_dir)) else None
    return Inputs.of(
        files=[(questions, "the questions file (--questions)")]
        + [(pool, "a pool file (--pool)") for pool in pools],
        folders=[(corpus, "the corpus folder (--corpus)"), (index, "the index folder (--index)")],
    )


def check_outputs(
    outputs: Sequence[Output],
    inputs: Inputs,
    *,
    has_sweeps: bool,
) -> None:
    """Refuse output paths that cannot be written, and a plot without sweeps or matplotlib."""
    check_paths(outputs, inputs)
    plot = next((o.path for o in outputs if o.flag == "--plot"), None)
    if plot is not None:
        if not has_sweeps:
            raise InputError("--plot draws the sweeps: give --sweep-k and/or --sweep-loops")
        if importlib.util.find_spec("matplotlib") is None:
            raise InputError(
                "--plot needs matplotlib, which is not installed: pip install 'sealgraph[plot]'"
            )
        _check_plot_format(Path(plot))


def _check_plot_format(plot: Path) -> None:
    from matplotlib.figure import Figure

    kinds = Figure().canvas.get_supported_filetypes()
    kind = plot.suffix.lstrip(".").lower()
    if kind not in kinds:
        raise InputError(
            f"--plot {plot}: matplotlib cannot write {kind or 'a file without an extension'}; "
            f"name a file ending in one of {', '.join('.' + k for k in sorted(kinds))}"
        )


def check_selection(split: str | None, limit: int | None) -> None:
    """Refuse an unknown ``split`` and a ``limit`` below 1."""
    check_split(split)
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")


def open_questions(
    questions_path: Path,
    *,
    corpus: str | Path | None,
    index_dir: str | Path | None,
    pools: Sequence[str | Path],
    embedder: str,
    config: SealConfig,
    split: str | None,
    limit: int | None,
) -> OpenedQuestions:
    """Load the questions (of ``split``, up to ``limit``) and open the index of their corpus.

    Multi-hop QA questions bring their corpus (their paragraphs and those of
    ``pools``); corpus questions are about the folder ``corpus`` or the index in
    ``index_dir``.
    """
    mode = _question_mode(questions_path, corpus=corpus, index_dir=index_dir, pools=pools)
    encoding = encoding_for_model(config.tokenizer_model)
    eval_questions: Sequence[AnyQuestion]
    if mode == "corpus":
        eval_questions, opened, corpus_size = _open_corpus(
            questions_path,
            corpus,
            index_dir,
            embedder=embedder,
            encoding=encoding,
            lexicon=config.lexicon,
        )
    else:
        eval_questions = list(load_questions(questions_path))
        documents = load_documents([questions_path, *(Path(p) for p in pools)])
        opened = _open_documents(
            documents, index_dir, embedder=embedder, encoding=encoding, lexicon=config.lexicon
        )
        corpus_size = len(documents)
    picked = _pick(eval_questions, split, limit, questions_path)
    return OpenedQuestions(mode=mode, questions=picked, opened=opened, corpus_size=corpus_size)


def _question_mode(
    path: Path,
    *,
    corpus: str | Path | None,
    index_dir: str | Path | None,
    pools: Sequence[str | Path],
) -> str:
    # "corpus" or "multihop"; refuses the flag combinations that make no sense.
    found = detect_format(path)
    if corpus is None and found != "corpus":
        return "multihop"
    if found == "multihop":
        raise InputError(
            f"{path} is multi-hop QA JSONL, whose paragraphs are the corpus: drop --corpus "
            "(--corpus is for questions with gold_documents and gold_spans)"
        )
    if pools:
        raise InputError(
            "--pool adds the paragraphs of multi-hop QA files to the corpus; with questions "
            "about a corpus folder, put every document in that folder instead"
        )
    if corpus is None and index_dir is None:
        raise InputError(
            f"{path} holds questions about a corpus folder (gold_documents, gold_spans): "
            "give --corpus DIR, or --index DIR of an index built from that folder"
        )
    return "corpus"


def _open_documents(
    documents: list[Document],
    index_dir: str | Path | None,
    *,
    embedder: str,
    encoding: str,
    lexicon: str = "english",
    folder: Path | None = None,
) -> OpenedIndex:
    # Every eval index is chunked alike, so cached indexes of one corpus are shared.
    return open_index(
        documents,
        index_dir,
        embedder=embedder,
        max_chunk_tokens=DEFAULT_MAX_CHUNK_TOKENS,
        encoding=encoding,
        lexicon=lexicon,
        folder=folder,
    )


def _open_corpus(
    path: Path,
    corpus: str | Path | None,
    index_dir: str | Path | None,
    *,
    embedder: str,
    encoding: str,
    lexicon: str = "english",
) -> tuple[list[CorpusQuestion], OpenedIndex, int]:
    # The corpus questions and the index of their folder (built, cached or given).
    from sealgraph.index import load_index

    if corpus is not None:
        folder = Path(corpus)
        if not folder.is_dir():
            what = "is not a folder" if folder.exists() else "does not exist"
            raise InputError(f"--corpus {folder} {what}")
        documents = load_documents(folder)
        sources = CorpusSources.from_documents(documents, f"the corpus folder {folder}")
        questions = load_corpus_questions(path, sources)
        opened = _open_documents(
            documents,
            index_dir,
            embedder=embedder,
            encoding=encoding,
            lexicon=lexicon,
            folder=folder,
        )
        corpus_size = len(documents)
    else:
        assert index_dir is not None  # _question_mode refused it
        if is_index_address(index_dir):  # a Qdrant collection: load_index says if none
            index = load_index(str(index_dir))
            sources = CorpusSources.from_index(index)
            questions = load_corpus_questions(path, sources)
            opened = OpenedIndex(index=index, path=str(index_dir), reused=True)
            check_index_matches(questions, opened.index, sources, path)
            return questions, opened, index.n_docs
        index_path = Path(index_dir)
        if not (index_path.is_dir() and any(index_path.iterdir())):
            raise InputError(
                f"--index {index_path} holds no index; give --corpus DIR to build one there"
            )
        index = load_index(index_path)
        sources = CorpusSources.from_index(index)
        questions = load_corpus_questions(path, sources)
        opened = OpenedIndex(index=index, path=index_path, reused=True)
        corpus_size = index.n_docs
    check_index_matches(questions, opened.index, sources, path)
    return questions, opened, corpus_size


def _pick(
    questions: Sequence[AnyQuestion], split: str | None, limit: int | None, path: Path
) -> list[AnyQuestion]:
    picked = select_split(questions, split, lambda q: q.qid)
    if not picked:
        raise InputError(f"no question of {path} is in split {split}")
    return picked[:limit] if limit is not None else picked
