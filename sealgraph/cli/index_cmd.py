"""``sealgraph index``: build an index from documents, add documents to one or remove them."""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

from sealgraph.cli._env import INDEX_ENV, add_index_argument, add_lexicon_argument, index_arg
from sealgraph.terminal import one_line


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``index`` subcommand."""
    parser = subparsers.add_parser(
        "index",
        help="build an index from documents (Markdown, HTML, PDF, Office, text, JSONL...), "
        "or add files to one or remove them",
        description=(
            f"Ingest documents (files or folders; {_formats()}), chunk them on "
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
            "chunked or embedded again. Folders leave out build output and theme templates "
            "by default, and what their .sealgraphignore (gitignore-style patterns) and "
            "--exclude name."
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
    _add_embedding_arguments(parser)
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
        "--verify",
        action="store_true",
        help=(
            "check every file of --index against the full SHA-256 checksums taken at build "
            "time and the docstore's integrity, and say what is damaged (opening an index "
            "checks only sizes and quick digests); nothing is written"
        ),
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
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help=(
            "leave out files or folders matching this gitignore-style pattern, after the "
            "defaults and the folder's .sealgraphignore; !PATTERN takes one back "
            f"(repeatable; defaults: {_default_excludes()})"
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


def _add_embedding_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags that tune the embedder: where the local model runs, the remote server."""
    parser.add_argument(
        "--device",
        metavar="DEVICE",
        help=(
            "where the local model runs (local, and minilm-static's one-time distillation): "
            "auto (CUDA, then Apple MPS, else the CPU), cpu, cuda, cuda:N or mps; a device "
            "named but not there is an error (default: $SEALGRAPH_DEVICE, else auto)"
        ),
    )
    parser.add_argument(
        "--precision",
        choices=("fp32", "fp16"),
        help="what the local model computes in: fp32 (default) or fp16 (CUDA only)",
    )
    parser.add_argument(
        "--embed-batch-size",
        type=int,
        metavar="N",
        help=(
            "texts per forward pass of the local model (default: 64 on the CPU, 128 on MPS, "
            "256 on CUDA), or most texts per request of openai:MODEL (default 64)"
        ),
    )
    parser.add_argument(
        "--embedder-base-url",
        metavar="URL",
        help=(
            "OpenAI-compatible server of --embedder openai:MODEL, e.g. http://localhost:8080/v1 "
            "(TEI, vLLM, Infinity, Ollama; docs/embedding.md); recorded in the index, and "
            "needed again to add to it (default: $SEALGRAPH_EMBEDDER_BASE_URL, else "
            "$OPENAI_BASE_URL, else the OpenAI API). The key is $OPENAI_API_KEY, sent to "
            "this URL only; a server that needs none gets none when it is unset"
        ),
    )
    parser.add_argument(
        "--embed-concurrency",
        type=int,
        metavar="N",
        help="requests of openai:MODEL in flight at once (default 4)",
    )


_EMBEDDING_FLAGS = {
    "device": "--device",
    "precision": "--precision",
    "batch_size": "--embed-batch-size",
    "base_url": "--embedder-base-url",
    "concurrency": "--embed-concurrency",
}


def _embedding_options(args: argparse.Namespace) -> dict[str, Any]:
    """Return the embedder options the flags give (None: not given)."""
    return {
        "device": args.device,
        "precision": args.precision,
        "batch_size": args.embed_batch_size,
        "base_url": args.embedder_base_url,
        "concurrency": args.embed_concurrency,
    }


def _embedder_arg(args: argparse.Namespace, index_dir: str) -> Any:
    """Return what the build embeds with: ``--embedder`` tuned by the flags (``embedder_for_build``)."""
    from sealgraph.index.embedders import embedder_for_build

    return embedder_for_build(
        args.embedder,
        _recorded_embedder(index_dir),
        where=f"the index at {index_dir}",
        **_embedding_options(args),
    )


def _recorded_embedder(index_dir: str) -> dict[str, Any] | None:
    """Return the ``embedder`` entry of the manifest of the index at ``index_dir``, if any."""
    from sealgraph.errors import SealgraphError
    from sealgraph.index import read_index_manifest

    try:
        info = read_index_manifest(index_dir).get("embedder")
    except SealgraphError:
        return None  # no index there yet, or the build says what is wrong with it
    return info if isinstance(info, dict) else None


def _formats() -> str:
    from sealgraph.ingest import FORMATS

    def name(fmt: Any) -> str:
        extra = f" with the {fmt.extra} extra" if fmt.extra else ""
        return "/".join(fmt.suffixes) + extra

    return ", ".join([*(name(f) for f in FORMATS), ".jsonl"])


def _default_excludes() -> str:
    from sealgraph.ingest.ignore import DEFAULT_EXCLUDES

    return " ".join(DEFAULT_EXCLUDES)


def _limit_names() -> str:
    from sealgraph.ingest import LoaderLimits

    return ", ".join(f"{f.name} {f.default:,}" for f in dataclasses.fields(LoaderLimits))


def _given_embedding_flags(args: argparse.Namespace) -> list[tuple[str, bool]]:
    return [
        (_EMBEDDING_FLAGS[key], value is not None)
        for key, value in _embedding_options(args).items()
    ]


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
    from sealgraph.index import build_index, index_location

    started = time.perf_counter()
    options: dict[str, Any] = {}
    if args.lock_timeout is not None:  # build_index's default otherwise (kept in one place)
        options["lock_timeout"] = args.lock_timeout
    if args.verify:
        return _verify(args, started)
    if args.remove:
        return _remove(args, options, started)
    if not args.paths:
        return _refresh(args, options, started)
    index_dir = index_arg(args, announce=True)
    index = build_index(
        args.paths,
        index_dir,
        embedder=_embedder_arg(args, index_dir),
        max_chunk_tokens=args.max_chunk_tokens,
        encoding=args.encoding,
        replace=args.replace,
        force=args.force,
        lexicon=args.lexicon,
        prune=args.prune,
        follow_links=args.follow_links,
        limits=_limits(args.limit),
        exclude=args.exclude,
        **options,
    )
    _remember(args.paths, index_dir)
    # The index build_index returns is this build's own (loaded under its lock),
    # so the counts cannot be those of a concurrent build.
    counts = index.manifest["counts"]
    changes = (
        f"{counts['documents_added']} added, {counts['documents_updated']} updated, "
        f"{counts.get('documents_unchanged', 0)} unchanged"
    )
    if counts["documents_kept"]:  # documents not given this time, left as they were
        changes += f", {counts['documents_kept']} kept"
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
        one_line(
            f"indexed {counts['documents']} documents, {counts['chunks']} chunks into "
            f"{index_location(index)} "
            f"({changes}); {vectors}; {time.perf_counter() - started:.1f} s"
        )
    )
    return 0


def _remember(paths: list[str], index_dir: str) -> None:
    """Note a folder's index in the user cache, for ``eval --corpus`` to reuse."""
    from pathlib import Path

    from sealgraph.index._registry import is_index_address

    if len(paths) == 1 and Path(paths[0]).is_dir() and not is_index_address(index_dir):
        from sealgraph.eval._built_indexes import remember_built_index

        remember_built_index(paths[0], index_dir)


def _remove(args: argparse.Namespace, options: dict[str, Any], started: float) -> int:
    """Remove documents from an existing index (``--remove PATH...``)."""
    from sealgraph.errors import InputError
    from sealgraph.index import index_location, remove_documents

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
            *_given_embedding_flags(args),
        )
        if value
    ]
    if given:
        raise InputError(f"--remove takes none of {', '.join(given)}: it only removes documents")
    path = index_arg(args, announce=True)
    index = remove_documents(path, args.paths, embedder="none", **options)
    counts = index.manifest["counts"]
    print(
        one_line(
            f"removed {counts['documents_removed']} documents from {index_location(index)}: "
            f"{counts['documents']} documents, {counts['chunks']} chunks remain; nothing embedded "
            f"again; {time.perf_counter() - started:.1f} s"
        )
    )
    return 0


def _verify(args: argparse.Namespace, started: float) -> int:
    """Check the index's files in full (``--verify``); nothing else may be asked with it."""
    from sealgraph.errors import InputError
    from sealgraph.index import is_index_address, verify_index

    if args.paths or args.remove or args.prune or args.replace or args.force:
        raise InputError("--verify checks an index and changes nothing: give only --index")
    path = index_arg(args, announce=True)
    checked = verify_index(path)
    what = "points match its manifest" if is_index_address(path) else "files match their checksums"
    print(
        one_line(
            f"sealgraph: the index at {path} is intact: {checked} {what} "
            f"({time.perf_counter() - started:.1f} s)"
        )
    )
    return 0


def _refresh(args: argparse.Namespace, options: dict[str, Any], started: float) -> int:
    """Rebuild the lexical part of an existing index (no PATH given)."""
    from pathlib import Path

    from sealgraph.errors import InputError
    from sealgraph.index import index_location, is_index_address, refresh_lexical

    path = index_arg(args, announce=True)
    if not is_index_address(path) and not (Path(path) / "manifest.json").is_file():
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
    embedding = [flag for flag, value in _given_embedding_flags(args) if value]
    if embedding:
        raise InputError(
            f"without PATH nothing is embedded, so {', '.join(embedding)} do nothing: give the "
            f"PATHs to index"
        )
    if given:
        raise InputError(
            f"{', '.join(given)} change how documents are chunked: give the PATHs to index "
            f"again (unchanged chunks keep their embeddings)"
        )
    index = refresh_lexical(path, embedder="none", **options)
    tokenizer = index.manifest["lexical"]["tokenizer_version"]
    print(
        one_line(
            f"rebuilt the lexical index of {index_location(index)} ({index.n_docs} documents, "
            f"{index.n_chunks} chunks; tokenizer {tokenizer}); nothing embedded again; "
            f"{time.perf_counter() - started:.1f} s"
        )
    )
    return 0
