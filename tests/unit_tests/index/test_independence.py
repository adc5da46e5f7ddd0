"""The index package stands on its own: it stores what any reasoner may use and
imports none of them (the offline reasoner builds its own tables from the index)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import sealgraph.index

INDEX_PACKAGE = "sealgraph.index"
INDEX_DIR = Path(sealgraph.index.__file__).parent
FORBIDDEN = ("sealgraph.ledger", "sealgraph.reasoning", "sealgraph.nodes", "sealgraph.graph")


def imported_modules(source: str, module: str) -> set[str]:
    """Every module ``source`` (the text of ``module``) imports, however and wherever.

    Top-level, function-level and ``TYPE_CHECKING`` imports alike; relative imports
    resolved; ``from a import b`` counts ``a`` and ``a.b``; ``importlib.import_module``
    and ``__import__`` with a literal name count too.
    """
    package = module if module.endswith(".__init__") else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            arg = node.args[0]
            if name in ("import_module", "__import__") and isinstance(arg, ast.Constant):
                found.add(str(arg.value))
    return found


def forbidden(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in FORBIDDEN))


def index_modules() -> list[tuple[Path, str]]:
    out = []
    for path in sorted(INDEX_DIR.rglob("*.py")):
        rel = path.relative_to(INDEX_DIR).with_suffix("").as_posix().replace("/", ".")
        out.append((path, f"{INDEX_PACKAGE}.{rel}"))
    return out


def test_the_import_scan_sees_every_kind_of_import():
    source = """
from typing import TYPE_CHECKING
import sealgraph.ledger.gaps
from sealgraph.reasoning import offline
from ..graph import builder
if TYPE_CHECKING:
    from sealgraph.nodes.search import search
def later():
    import importlib
    importlib.import_module("sealgraph.ledger.knowledge")
"""
    names = imported_modules(source, "sealgraph.index._plan")
    assert forbidden(names) == [
        "sealgraph.graph",
        "sealgraph.graph.builder",
        "sealgraph.ledger.gaps",
        "sealgraph.ledger.knowledge",
        "sealgraph.nodes.search",
        "sealgraph.nodes.search.search",
        "sealgraph.reasoning",
        "sealgraph.reasoning.offline",
    ]


@pytest.mark.parametrize("path,module", index_modules(), ids=lambda v: getattr(v, "name", v))
def test_no_index_module_imports_a_reasoner(path, module):
    names = imported_modules(path.read_text(encoding="utf-8"), module)
    assert forbidden(names) == [], f"{path} imports {forbidden(names)}"


def test_importing_the_index_loads_no_reasoner_module():
    # Indirect imports too: whatever sealgraph.index pulls in must not reach them.
    code = (
        "import json, sys, sealgraph.index, sealgraph.index.derived; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('sealgraph.'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=INDEX_DIR.parent.parent,
    )
    loaded = set(json.loads(result.stdout))
    assert INDEX_PACKAGE in loaded
    assert forbidden(loaded) == []
