"""``sealgraph index``: build or update an index from documents."""

from __future__ import annotations

import argparse
import time


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``index`` subcommand."""
    parser = subparsers.add_parser(
        "index",
        help="build or update an index from Markdown, text and JSONL files",
        description=(
            "Ingest documents (files or folders; .md, .markdown, .txt, .jsonl), chunk them on "
            "sentence boundaries and write a lexical + dense index. Re-indexing reuses the "
            "embeddings of unchanged chunks."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to index")
    parser.add_argument("--index", required=True, metavar="DIR", help="index directory")
    parser.add_argument(
        "--embedder",
        default="auto",
        metavar="SPEC",
        help="auto (local if installed), local, none, or openai:MODEL (default: auto)",
    )
    parser.add_argument(
        "--max-chunk-tokens",
        type=int,
        default=256,
        metavar="N",
        help="most tokens per chunk (default: 256)",
    )
    parser.add_argument(
        "--encoding",
        default="o200k_base",
        metavar="NAME",
        help="tiktoken encoding or model name that counts tokens (default: o200k_base)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an index that was built with a different embedder",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the index and print a one-line summary."""
    from sealgraph.index import build_index

    started = time.perf_counter()
    index = build_index(
        args.paths,
        args.index,
        embedder=args.embedder,
        max_chunk_tokens=args.max_chunk_tokens,
        encoding=args.encoding,
        force=args.force,
    )
    counts = index.manifest["counts"]
    if index.embedder_name:
        vectors = (
            f"embeddings: {counts['vectors_reused']} reused, {counts['vectors_new']} new "
            f"({index.embedder_name})"
        )
    else:
        vectors = "embedder: none (lexical only)"
    print(
        f"indexed {index.n_docs} documents, {index.n_chunks} chunks into {index.path}; "
        f"{vectors}; {time.perf_counter() - started:.1f} s"
    )
    return 0
