"""``$SEALGRAPH_INDEX`` and ``--lexicon``: what the commands that work on one index share.

``index`` (the build target) and ``ask`` use it whenever ``--index`` is not
given; ``resume`` and ``replay`` use the index the run recorded, and this one
only for a run that recorded none; ``eval`` only when its questions are about
a corpus and neither ``--corpus`` nor ``--index`` is given. ``demo`` never uses
it: the demo index is the example corpus, which must not be built into your
own index. An explicit ``--index`` always wins; an empty value counts as unset.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

INDEX_ENV = "SEALGRAPH_INDEX"
"""Environment variable naming the default index directory (also read by the server)."""


def env_index() -> str | None:
    """Return ``$SEALGRAPH_INDEX`` with ``~`` expanded, or None when unset or blank."""
    from sealgraph.index import user_index_path

    value = os.environ.get(INDEX_ENV, "").strip()
    return user_index_path(value) if value else None


def add_index_argument(parser: argparse.ArgumentParser, what: str, *, lexicon: bool = True) -> None:
    """Add ``--index DIR`` defaulting to ``$SEALGRAPH_INDEX`` (required when that is unset).

    The value stays None in ``args`` when the flag is not given; read it with
    :func:`index_arg`, which falls back to the variable. With ``lexicon``, also
    :func:`add_lexicon_argument` (every command that opens an index takes one).
    """
    parser.add_argument(
        "--index",
        metavar="DIR",
        required=env_index() is None,
        help=(
            f"{what}, or a Qdrant collection: qdrant://HOST:PORT/NAME, qdrants://... (TLS), "
            f"qdrant+memory://NAME (default: ${INDEX_ENV}; required when that is not set)"
        ),
    )
    if lexicon:
        add_lexicon_argument(parser)


def index_arg(args: argparse.Namespace, *, announce: bool = False, in_memory: bool = False) -> str:
    """Return ``--index``, else ``$SEALGRAPH_INDEX``.

    Args:
        args: Parsed arguments of a command that added :func:`add_index_argument`.
        announce: Say on stderr that the variable was used (for commands that
            write to the index, so the target is never a surprise).
        in_memory: Accept a ``qdrant+memory://`` address. Only a command that builds
            and uses an index in one process may (``eval``): such a collection is gone
            when the process exits, so ``index`` would build nothing that lasts and
            ``ask`` would find nothing.

    Raises:
        InputError: Neither is set (the variable was cleared after parsing), or an
            in-memory address where one cannot work.

    """
    value = args.index if args.index is not None else env_index()
    if value is not None and not in_memory:
        refuse_in_memory(value, args)
    if args.index is not None:
        return args.index
    if value is None:
        from sealgraph.errors import InputError

        raise InputError(f"give --index DIR or set {INDEX_ENV}")
    if announce:
        from sealgraph.terminal import one_line

        line = one_line(f"sealgraph: using --index {value} (from ${INDEX_ENV})")
        print(line, file=sys.stderr, flush=True)
    return value


def refuse_in_memory(value: str, args: argparse.Namespace) -> None:
    """Refuse a ``qdrant+memory://`` address on a command whose index must outlive it."""
    if not str(value).strip().lower().startswith("qdrant+memory:"):
        return
    from sealgraph.errors import InputError

    command = getattr(args, "command", None) or "this command"
    raise InputError(
        f"{command} cannot use {value}: a qdrant+memory:// collection lives in one process "
        "and is gone when it exits; use a folder or qdrant://HOST:PORT/NAME (in-memory "
        "collections are for Python code and `sealgraph eval`, which builds and uses one "
        "in one process)"
    )


def run_index_arg(checkpointer: Any, thread_id: str, given: str | None) -> str | None:
    """Return the index override of ``resume``/``replay``: ``--index``, else None.

    None lets the run's recorded index apply; only a run that recorded none
    falls back to ``$SEALGRAPH_INDEX`` (a run always continues over the index it
    started with, whatever the variable says now).
    """
    if given is not None:
        refuse_in_memory(given, argparse.Namespace(command="this command"))
        return given
    from sealgraph.runs.threads import read_origin

    if read_origin(checkpointer, thread_id).index:
        return None
    return env_index()


def add_lexicon_argument(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """Add ``--lexicon SPEC``: a lexicon the user names (and so trusts to import).

    An index records the lexicon it was built with, but a module path read from an
    index is never imported (:func:`sealgraph.text.lexicon.get_lexicon`): an index
    built with your own lexicon is opened with ``--lexicon package.module:NAME``
    (or ``$SEALGRAPH_LEXICON``). :func:`sealgraph.cli.main` imports it before the
    command runs.
    """
    parser.add_argument(
        "--lexicon",
        metavar="SPEC",
        help=help
        or (
            "lexicon of an index built with your own: package.module:NAME of a "
            "sealgraph.text.lexicon.Lexicon, imported because you name it (default: "
            "$SEALGRAPH_LEXICON; an index's own lexicon is never imported from it)"
        ),
    )
