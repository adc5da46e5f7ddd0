"""Check that sealgraph works on its base install: run as a script, in a subprocess.

``python base_install.py [--block]`` imports every module of the package (``__main__``
aside) and runs ``sealgraph --help`` and each subcommand's ``--help``; it prints one line
per problem and exits 1 when there was any. ``--block`` first makes every optional
extra's modules unimportable, so that a full development virtualenv can stand in for a
base-only one; without it, the interpreter must be one whose environment holds only the
base install (CI makes one), and the script checks that it does.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import pkgutil
import sys

EXTRA_MODULES = (
    "qdrant_client",  # qdrant
    "pypdf",  # pdf
    "docx",  # office
    "openpyxl",  # office
    "bs4",  # html
    "psycopg",  # postgres
    "psycopg_pool",  # postgres
    "langgraph.checkpoint.postgres",  # postgres
    "matplotlib",  # plot
    "sentence_transformers",  # local
    "torch",  # local
)
"""The top modules of the optional extras (pyproject.toml's optional-dependencies)."""


def block_extras() -> None:
    """Make the extras' modules unimportable, as if they were not installed.

    ``sys.modules[name] = None`` is Python's own mark for that: ``import name`` raises
    ModuleNotFoundError and ``importlib.util.find_spec(name)`` returns None.
    """
    for name in EXTRA_MODULES:
        sys.modules[name] = None  # type: ignore[assignment]


def check() -> list[str]:
    """Return one line per module that does not import or command whose help fails."""
    import sealgraph
    from sealgraph.cli import build_parser, main

    problems = []
    for info in pkgutil.walk_packages(sealgraph.__path__, "sealgraph."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # every failure is reported, whatever it is
            problems.append(f"import {info.name}: {type(exc).__name__}: {exc}")
    commands = sorted(build_parser()._subparsers._group_actions[0].choices)
    for argv in ([], *([c] for c in commands)):
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                main([*argv, "--help"])
        except SystemExit as exc:
            if exc.code not in (0, None):
                problems.append(f"sealgraph {' '.join(argv)} --help exited {exc.code}")
                continue
        except Exception as exc:
            problems.append(f"sealgraph {' '.join(argv)} --help: {type(exc).__name__}: {exc}")
            continue
        if "usage: sealgraph" not in out.getvalue():
            problems.append(f"sealgraph {' '.join(argv)} --help printed no usage")
    if not commands:
        problems.append("no subcommand found")
    return problems


def present_extras() -> list[str]:
    """The extras' modules this interpreter can import (none, in a base-only install)."""
    found = []
    for name in EXTRA_MODULES:
        try:
            spec = importlib.util.find_spec(name)
        except (ModuleNotFoundError, ValueError):
            spec = None
        if spec is not None:
            found.append(name)
    return found


if __name__ == "__main__":
    if "--block" in sys.argv:
        block_extras()
    else:
        extras = present_extras()
        if extras:
            print(f"not a base-only install: {', '.join(extras)} can be imported")
            sys.exit(1)
    problems = check()
    print("\n".join(problems) or "base install: every module imports, every --help works")
    sys.exit(1 if problems else 0)
