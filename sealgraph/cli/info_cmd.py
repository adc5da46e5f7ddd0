"""``sealgraph info``: what an index holds (documents, chunks, embedder, format, size, dates)."""

from __future__ import annotations

import argparse
import json

from sealgraph.cli._env import add_index_argument, index_arg
from sealgraph.terminal import one_line


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``info`` subcommand."""
    parser = subparsers.add_parser(
        "info",
        help="say what an index holds",
        description="Say what the index in --index DIR (or at a Qdrant address) holds: "
        "documents, chunks, embedder and dimensions, lexical settings, format, size on disk, "
        "when it was built and last changed. Reads only; the embedding model is not loaded.",
    )
    add_index_argument(parser, "index directory")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the summary of one index."""
    from sealgraph.index.info import index_info

    info = index_info(index_arg(args))
    if args.json:
        print(json.dumps(info.to_dict(), ensure_ascii=False))
        return 0
    vectors = (
        f"{info.embedder} ({info.dimensions} dimensions)"
        if info.embedder
        else "none (lexical only)"
    )
    lexical = ", ".join(f"{k} {v}" for k, v in info.lexical.items())
    chunking = ", ".join(f"{k} {v}" for k, v in info.chunking.items() if v is not None)
    rows = [
        ("index", info.location),
        ("backend", info.backend),
        ("format", f"{info.format}, written by sealgraph {info.written_by}"),
        ("documents", f"{info.documents:,}"),
        ("chunks", f"{info.chunks:,}"),
        ("embedder", vectors),
        ("lexicon", info.lexicon),
        ("lexical", lexical),
        ("chunking", chunking),
        ("size", _size(info.size_bytes)),
        ("built", info.built or "unknown"),
        ("changed", info.changed or "unknown"),
    ]
    for name, value in rows:
        print(f"{name + ':':11}{one_line(value)}")
    return 0


def _size(size: int | None) -> str:
    if size is None:
        return "held by the server"
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return str(size)
