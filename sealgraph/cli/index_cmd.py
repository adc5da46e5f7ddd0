"""``sealgraph index``: build an index from documents, add documents to one or remove them."""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

from sealgraph.cli._env import INDEX_ENV, add_index_argument, add_lexicon_argument, index_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``index`` subcommand."""
    parser = subparsers.add_parser(
        "index",
        help="build an index from Markdown, text and JSONL files, or add files to one or remove them",
        description=(
            "Ingest documents (files or folders; .md, .markdown, .txt, .jsonl), chunk them on "
            "sentence boundaries and write a lexical + dense index. If the --index directory "
            "already holds an index, the documents are ADDED to it: a document whose id is "
            "already there (a file's path relative to the folder given, or its JSONL id) is "
            "updated, the others are kept; --replace makes the index hold exactly the given "
            "documents instead. Documents of files deleted from a folder you index again stay "
            "until you give --prune (or --remove them, or --replace). --remove PATH... removes "
            "the documents read from those files or folders (or with those ids) instead, "
            "without embedding anything. "
            "Unchanged chunks reuse their embeddings, and a killed build run again resumes "
            "embedding where it stopped. Off a terminal, progress is printed as lines on "
            "stderr. A directory that is not a sealgraph "
            "index (or holds other files besides one) is never touched. Without --index the "
            f"index is ${INDEX_ENV} (said on stderr). Without PATH, an existing index has "
            "its lexical (BM25) part rebuilt from its stored chunks, as this sealgraph "
            "tokenizes and stems: what an index built by an older version needs; nothing is "
            "chunked or embedded again."
        ),
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help=(
            "files or folders to index (none: refresh the lexical part of --index); with "
            "--remove, the files, folders or document ids to remove"
        ),
    )
    add_index_argument(parser, "index directory to build or add to", lexicon=False)
    parser.add_argument(
        "--embedder",
        default="auto",
        metavar="SPEC",
        help=(
            "auto, local, minilm-static (about 160x faster to build, lower recall; "
            "docs/embedding.md), none, or openai:MODEL (default: auto: the existing "
            "index's embedder, else local if installed)"
        ),
    )
    parser.add_argument(
        "--max-chunk-tokens",
        type=int,
        metavar="N",
        help="most tokens per chunk (default: the existing index's, else 256)",
    )
    parser.add_argument(
        "--encoding",
        metavar="NAME",
        help=(
            "tiktoken encoding or model name that counts tokens "
            "(default: the existing index's, else o200k_base)"
        ),
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="replace the index's documents by the given ones instead of adding them",
    )
    parser.add_argument(
        "--remove",
        action="store_true",
        help=(
            "remove from --index the documents read from PATH (a file, or the files in a "
            "folder; they need not exist any more) or with id PATH; nothing is embedded again"
        ),
    )
    parser.add_argument(
        "--prune",
        action="store_true",
        help=(
            "also remove the documents of files under PATH that are gone (deleted, or a JSONL "
            "file that no longer holds them); without it they stay, with a warning"
        ),
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help=(
            "allow an index built with a different embedder: it is rebuilt from the given "
            "files only (implies --replace)"
        ),
    )
    add_lexicon_argument(
        parser,
        help=(
            "language of the index: english, a name an installed package registers, or "
            "package.module:NAME of a sealgraph.text.lexicon.Lexicon, imported because you name "
            "it (default: the existing index's, else english; $SEALGRAPH_LEXICON may name "
            "the module path)"
        ),
    )
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=N",
        help=(
            "raise (or lower) a limit on what one file may unpack to, e.g. max_cells=5000000 "
            f"(repeatable; the limits and their defaults: {_limit_names()})"
        ),
    )
    parser.add_argument(
        "--follow-links",
        action="store_true",
        help=(
            "also read what symlinks inside the folders point to outside every PATH "
            "(default: such links are skipped with a warning)"
        ),
    )
    parser.add_argument(
        "--lock-timeout",
        type=float,
        metavar="SECONDS",
        help="how long to wait for another build of the same index to finish (default: 3600)",
    )
    parser.set_defaults(func=run)


def _limit_names() -> str:
    from sealgraph.ingest import LoaderLimits

    return ", ".join(f"{f.name} {f.default:,}" for f in dataclasses.fields(LoaderLimits))


def _limits(pairs: list[str]) -> Any:
    """Return the ``LoaderLimits`` of ``--limit NAME=N`` pairs (None when none is given)."""
    from sealgraph.errors import InputError
    from sealgraph.ingest import LoaderLimits

    if not pairs:
        return None
    names = {f.name for f in dataclasses.fields(LoaderLimits)}
    values: dict[str, int] = {}
    for pair in pairs:
        name, _, raw = pair.partition("=")
        name = name.strip()
        if name not in names:
            raise InputError(
                f"unknown limit {name!r} in --limit {pair}: use one of {_limit_names()}"
            )
        try:
            value = int(raw.replace("_", "").strip())
        except ValueError:
            raise InputError(f"--limit {pair}: the value must be a whole number") from None
        if value < 1:
            raise InputError(f"--limit {pair}: the value must be at least 1")
        values[name] = value
    return LoaderLimits(**values)


def run(args: argparse.Namespace) -> int:
    """Build the index and print a one-line summary of this build."""
    from sealgraph.index import build_index

    started = time.perf_counter()
    options: dict[str, Any] = {}
    if args.lock_timeout is not None:  # build_index's default otherwise (kept in one place)
        options["lock_timeout"] = args.lock_timeout
    if args.remove:
        return _remove(args, options, started)
    if not args.paths:
        return _refresh(args, options, started)
    index = build_index(
        args.paths,
        index_arg(args, announce=True),
        embedder=args.embedder,
        max_chunk_tokens=args.max_chunk_tokens,
        encoding=args.encoding,
        replace=args.replace,
        force=args.force,
        lexicon=args.lexicon,
        prune=args.prune,
        follow_links=args.follow_links,
        limits=_limits(args.limit),
        **options,
    )
    # The index build_index returns is this build's own (loaded under its lock),
    # so the counts cannot be those of a concurrent build.
    counts = index.manifest["counts"]
    changes = (
        f"{counts['documents_added']} added, {counts['documents_updated']} updated, "
        f"{counts['documents_kept']} kept"
    )
    if counts["documents_removed"]:
        changes += f", {counts['documents_removed']} removed"
    if index.embedder_name:
        vectors = (
            f"embeddings: {counts['vectors_reused']} reused, {counts['vectors_new']} new "
            f"({index.embedder_name})"
        )
        if counts.get("vectors_resumed"):
            vectors += f", {counts['vectors_resumed']} of them embedded before an interruption"
    else:
        vectors = "embedder: none (lexical only)"
    print(
        f"indexed {counts['documents']} documents, {counts['chunks']} chunks into {index.path} "
        f"({changes}); {vectors}; {time.perf_counter() - started:.1f} s"
    )
    return 0


def _remove(args: argparse.Namespace, options: dict[str, Any], started: float) -> int:
    """Remove documents from an existing index (``--remove PATH...``)."""
    from sealgraph.errors import InputError
    from sealgraph.index import remove_documents

    if not args.paths:
        raise InputError("give the files, folders or document ids to remove (--remove PATH...)")
    given = [
        flag
        for flag, value in (
            ("--replace", args.replace),
            ("--prune", args.prune),
            ("--force", args.force),
            ("--lexicon", args.lexicon),
            ("--max-chunk-tokens", args.max_chunk_tokens),
            ("--encoding", args.encoding),
            ("--embedder", args.embedder != "auto"),
        )
        if value
    ]
    if given:
        raise InputError(f"--remove takes none of {', '.join(given)}: it only removes documents")
    path = index_arg(args, announce=True)
    index = remove_documents(path, args.paths, embedder="none", **options)
    counts = index.manifest["counts"]
    print(
        f"removed {counts['documents_removed']} documents from {index.path}: "
        f"{counts['documents']} documents, {counts['chunks']} chunks remain; nothing embedded "
        f"again; {time.perf_counter() - started:.1f} s"
    )
    return 0


def _refresh(args: argparse.Namespace, options: dict[str, Any], started: float) -> int:
    """Rebuild the lexical part of an existing index (no PATH given)."""
    from pathlib import Path

    from sealgraph.errors import InputError
    from sealgraph.index import refresh_lexical

    path = index_arg(args, announce=True)
    if not (Path(path) / "manifest.json").is_file():
        raise InputError(
            f"give the files or folders to index (PATH); without PATH, --index must be an "
            f"existing index, and {path} holds none"
        )
    given = [
        flag
        for flag, value in (
            ("--replace", args.replace),
            ("--prune", args.prune),
            ("--force", args.force),
            ("--lexicon", args.lexicon),
            ("--max-chunk-tokens", args.max_chunk_tokens),
            ("--encoding", args.encoding),
        )
        if value
    ]
    if given:
        raise InputError(
            f"{', '.join(given)} change how documents are chunked: give the PATHs to index "
            f"again (unchanged chunks keep their embeddings)"
        )
    index = refresh_lexical(path, embedder="none", **options)
    tokenizer = index.manifest["lexical"]["tokenizer_version"]
    print(
        f"rebuilt the lexical index of {index.path} ({index.n_docs} documents, "
        f"{index.n_chunks} chunks; tokenizer {tokenizer}); nothing embedded again; "
        f"{time.perf_counter() - started:.1f} s"
    )
    return 0
