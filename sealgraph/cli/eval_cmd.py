"""``sealgraph eval``: compare retrieval methods on multi-hop QA JSONL or on a corpus folder."""

from __future__ import annotations

import argparse

from sealgraph.cli._env import INDEX_ENV, add_lexicon_argument, env_index
from sealgraph.errors import InputError

_DESCRIPTION = """\
Evaluate retrieval methods on a set of questions, all with the same index, k and
token budget. Two formats, told apart by the first line of --questions:

  multi-hop QA JSONL (question, answer, paragraphs, supporting_facts): the corpus
    is the union of the paragraphs of --questions and every --pool file.
  questions about a corpus folder (id, question, answer or null, type,
    gold_documents, gold_spans with character offsets): give the folder with
    --corpus DIR, or only --index DIR of an index built from it (default:
    $SEALGRAPH_INDEX, used only for such questions without --corpus).

The index is cached by content (in $SEALGRAPH_CACHE_DIR or the user cache dir)
unless --index is given. --split a|b keeps one half of the questions (by a hash
of their id), to tune on one half and check on the other. Prints a table of the
main metrics and writes report.json (and records.jsonl, the --plot image and the --html
page) only when the whole run succeeded."""

_METHODS_HELP = """\
methods:
  flat-bm25     top-k of BM25, no loop
  flat-dense    top-k of dense retrieval, no loop (needs an index with embeddings)
  flat-hybrid   top-k of hybrid (RRF) retrieval, no loop
  expand        CRAG/Self-RAG-style: each loop rewrites the query (pseudo-
                relevance feedback) and adds its top-k new results
  adaptive-k    hybrid pool of max(3k, 10) cut at the largest score gap
  seal-append   ablation: the SEAL graph with replacement off (appends)
  seal          the SEAL graph: fixed-k replacement of evidence
  NAME+llm      a graph method (seal+llm, seal-append+llm) with the LLM reasoner
                configured by --set llm.* (as `sealgraph ask --llm`); --llm turns
                every graph method given into its +llm mode. Offline and LLM rows
                sit in one report: --methods seal,seal+llm. LLM methods get an
                extra table (and report.json a "llm" entry): LLM calls, prompt and
                completion tokens, fallbacks by step and reason, questions whose
                LLM circuit opened, seconds per question."""


DEFAULT_METHODS = "flat-bm25,flat-hybrid,seal"
"""What ``eval`` compares when ``--methods`` is not given: SEAL against both flat baselines."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``eval`` subcommand."""
    parser = subparsers.add_parser(
        "eval",
        help="evaluate methods on multi-hop QA JSONL or questions about a corpus folder",
        description=_DESCRIPTION,
        epilog=_METHODS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--questions", required=True, metavar="Q.jsonl", help="questions to evaluate"
    )
    parser.add_argument(
        "--corpus",
        metavar="DIR",
        help="folder of the documents the questions are about (gold_documents are "
        "paths relative to it)",
    )
    parser.add_argument(
        "--pool",
        action="extend",
        nargs="+",
        default=[],
        metavar="P.jsonl",
        help="more QA JSONL files whose paragraphs join the corpus (repeatable)",
    )
    parser.add_argument(
        "--split",
        choices=("a", "b"),
        help="evaluate one half of the questions: a or b, by the SHA-256 of their id",
    )
    parser.add_argument(
        "--limit", type=int, metavar="N", help="evaluate the first N questions (of the half)"
    )
    parser.add_argument(
        "--k",
        type=int,
        metavar="K",
        help="evidence-set size (default: the config's k, 5, as for ask and build_graph)",
    )
    parser.add_argument(
        "--methods",
        default=DEFAULT_METHODS,
        metavar="M1,M2",
        help=f"comma-separated methods to compare (listed below; default: {DEFAULT_METHODS})",
    )
    parser.add_argument(
        "--llm",
        action="store_true",
        help="run the graph methods given with the LLM reasoner (seal as seal+llm), "
        "configured with --set llm.* as for `sealgraph ask --llm`",
    )
    parser.add_argument(
        "--budget",
        type=int,
        metavar="TOKENS",
        help="context token budget (default: the config's budget)",
    )
    parser.add_argument(
        "--max-loops",
        type=int,
        metavar="L",
        help="loop budget of the graph methods (default: the config's max_loops)",
    )
    parser.add_argument(
        "--index",
        metavar="DIR",
        help=f"load or build the index in DIR (default: the cache; ${INDEX_ENV} for "
        "questions about a corpus given without --corpus)",
    )
    parser.add_argument(
        "--embedder",
        default="auto",
        metavar="SPEC",
        help="embedder used when the index is built (auto, none, ...; default auto)",
    )
    add_lexicon_argument(parser)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        dest="overrides",
        metavar="KEY=VALUE",
        help="config override, e.g. utility.novelty=0.2 or llm.base_url=URL (llm.* "
        "only with --llm or NAME+llm methods; repeatable)",
    )
    parser.add_argument("--out", required=True, metavar="report.json", help="report to write")
    parser.add_argument("--records", metavar="records.jsonl", help="per-question records to write")
    parser.add_argument("--sweep-k", metavar="1,3,5", help="also run every method at these k")
    parser.add_argument(
        "--sweep-loops", metavar="0,1,3,5", help="also run every method at these loop budgets"
    )
    parser.add_argument("--plot", metavar="FILE.png", help="plot metrics versus the sweeps")
    parser.add_argument(
        "--html",
        metavar="FILE.html",
        help="write one self-contained page: the methods' table and, per question, each "
        "method's run (SEAL's whole repair, a flat method's evidence)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="do not show the progress bar on stderr"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the evaluation, print the table and return the exit code."""
    from sealgraph.config import parse_set_args
    from sealgraph.eval.llm_stats import format_llm_table
    from sealgraph.eval.report import format_table, table_columns
    from sealgraph.eval.runner import run_eval

    result = run_eval(
        args.questions,
        k=args.k,
        methods=args.methods,
        pools=args.pool,
        corpus=args.corpus,
        split=args.split,
        limit=args.limit,
        budget=args.budget,
        max_loops=args.max_loops,
        index_dir=eval_index_arg(args),
        embedder=args.embedder,
        overrides=parse_set_args(args.overrides),
        sweep_k=parse_int_list("--sweep-k", args.sweep_k),
        sweep_loops=parse_int_list("--sweep-loops", args.sweep_loops),
        out=args.out,
        records_out=args.records,
        plot=args.plot,
        html=args.html,
        progress=not args.no_progress,
        llm=args.llm,
    )
    report = result.report
    half = f" (split {report['split']})" if report.get("split") else ""
    print(
        f"{report['n_questions']} questions{half}, corpus {report['corpus_size']} documents, "
        f"k={report['k']}, budget={report['budget']}, max_loops={report['max_loops']}"
    )
    print(format_table(report["methods"], table_columns(report["format"])))
    llm_table = format_llm_table(report["methods"])
    if llm_table:
        print()
        print(llm_table)
    return 0


def eval_index_arg(args: argparse.Namespace) -> str | None:
    """Return ``--index``, else ``$SEALGRAPH_INDEX`` for corpus questions without ``--corpus``.

    Everywhere else the variable is ignored: a multi-hop QA set or a ``--corpus``
    folder builds its own index (cached by content), which must never be written
    into, or checked against, the index the variable names.
    """
    if args.index is not None or args.corpus is not None:
        return args.index
    value = env_index()
    if value is None:
        return None
    from sealgraph.eval.corpus_questions import detect_format

    return value if detect_format(args.questions) == "corpus" else None


def parse_int_list(flag: str, text: str | None) -> list[int]:
    """Parse ``"1,3,5"`` into ``[1, 3, 5]`` (None or blank gives ``[]``).

    Raises:
        InputError: An entry is not an integer.

    """
    if text is None or not text.strip():
        return []
    values = []
    for part in text.split(","):
        try:
            values.append(int(part.strip()))
        except ValueError:
            raise InputError(f"{flag} expects comma-separated integers, got {text!r}") from None
    return values
