"""The ``sealgraph`` command line.

Each subcommand lives in its own module with a ``register(subparsers)`` function
that adds its parser and sets ``func``. User errors (:class:`SealgraphError`) are
printed as one line on stderr with a non-zero exit code, never as a traceback;
everything printed has its control characters escaped (:mod:`sealgraph.terminal`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from sealgraph.errors import SealgraphError
from sealgraph.terminal import printable, safe_std_streams

# Subcommand modules, in the order their commands are listed in --help.
_COMMAND_MODULES = (
    "sealgraph.cli.index_cmd",
    "sealgraph.cli.ask_cmd",
    "sealgraph.cli.eval_cmd",
    "sealgraph.cli.trace_cmd",
    "sealgraph.cli.info_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(
        prog="sealgraph",
        description="Multi-hop QA that repairs its evidence (Search-Extract-Assess-Loop).",
    )
    from sealgraph import __version__

    parser.add_argument("--version", action="version", version=f"sealgraph {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # command not built yet in this checkout
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    # langchain-community is being sunset and warns on import; users of the CLI
    # should never see that noise.
    warnings.filterwarnings("ignore", module=r"langchain_community(\..*)?")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    parser = build_parser()
    args = parser.parse_args(argv)
    # File names, titles, answers and errors can come from strangers: on the
    # terminal they are shown, never obeyed (escape sequences are escaped).
    with safe_std_streams():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        if getattr(args, "lexicon", None):
            from sealgraph.text.lexicon import import_lexicon

            import_lexicon(args.lexicon)  # named on the command line: the user's own code
        return int(args.func(args) or 0)
    except SealgraphError as exc:
        # One error is one line, whatever a file name in it holds.
        print(f"sealgraph: error: {printable(exc, one_line=True)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("sealgraph: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
