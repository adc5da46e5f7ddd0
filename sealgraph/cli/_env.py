"""``$SEALGRAPH_INDEX``: the default ``--index`` of the commands that work on one index.

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
from pathlib import Path
from typing import Any

INDEX_ENV = "SEALGRAPH_INDEX"
"""Environment variable naming the default index directory (also read by the server)."""


def env_index() -> str | None:
    """Return ``$SEALGRAPH_INDEX`` with ``~`` expanded, or None when unset or blank."""
    value = os.environ.get(INDEX_ENV, "").strip()
    return str(Path(value).expanduser()) if value else None


def add_index_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--index DIR`` defaulting to ``$SEALGRAPH_INDEX`` (required when that is unset).

    The value stays None in ``args`` when the flag is not given; read it with
    :func:`index_arg`, which falls back to the variable.
    """
    parser.add_argument(
        "--index",
        metavar="DIR",
        required=env_index() is None,
        help=f"{what} (default: ${INDEX_ENV}; required when that is not set)",
    )


def index_arg(args: argparse.Namespace, *, announce: bool = False) -> str:
    """Return ``--index``, else ``$SEALGRAPH_INDEX``.

    Args:
        args: Parsed arguments of a command that added :func:`add_index_argument`.
        announce: Say on stderr that the variable was used (for commands that
            write to the index, so the target is never a surprise).

    Raises:
        InputError: Neither is set (the variable was cleared after parsing).

    """
    if args.index is not None:
        return args.index
    value = env_index()
    if value is None:
        from sealgraph.errors import InputError

        raise InputError(f"give --index DIR or set {INDEX_ENV}")
    if announce:
        print(f"sealgraph: using --index {value} (from ${INDEX_ENV})", file=sys.stderr, flush=True)
    return value


def run_index_arg(checkpointer: Any, thread_id: str, given: str | None) -> str | None:
    """Return the index override of ``resume``/``replay``: ``--index``, else None.

    None lets the run's recorded index apply; only a run that recorded none
    falls back to ``$SEALGRAPH_INDEX`` (a run always continues over the index it
    started with, whatever the variable says now).
    """
    if given is not None:
        return given
    from sealgraph.audit.runs import read_origin

    if read_origin(checkpointer, thread_id).index:
        return None
    return env_index()
