"""The example corpus shipped with sealgraph.

Fourteen Markdown documents make up the internal wiki of Corvane, a fictional
mid-size software company: team pages, service pages, offices, a project, a
policy, a postmortem, an org chart and a glossary. Each file has exactly one
level-1 heading, the title of the entity it is about. Documents name each other
by full title ("Payments Platform Team"), by acronym ("PPT") or by short name
("Ledgerline"), so that questions need two or more hops.

``questions.jsonl`` holds multi-hop questions over that corpus, one JSON object
per line with the keys:

- ``id``: stable question id.
- ``question``: the question text. It names its first-hop entity.
- ``answer``: short gold answer; for ``yes/no`` questions ``"yes"`` or ``"no"``.
- ``type``: ``"bridge"``, ``"comparison"`` or ``"yes/no"``.
- ``supporting_titles``: titles of every document needed, in hop order for bridge
  questions.
- ``supporting_sentences``: sentences, verbatim from those documents, that state
  the needed facts.

All text was written for sealgraph and ships under the package's licence. The
files are located with :mod:`importlib.resources`, so they are found from a
source checkout and from an installed wheel alike.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from sealgraph.errors import IngestError

__all__ = [
    "QUESTION_FIELDS",
    "QUESTION_TYPES",
    "corpus_dir",
    "corpus_files",
    "load_questions",
    "package_data_dir",
    "questions_path",
]

QUESTION_FIELDS: tuple[str, ...] = (
    "id",
    "question",
    "answer",
    "type",
    "supporting_titles",
    "supporting_sentences",
)
"""Keys every example question has."""

QUESTION_TYPES: tuple[str, ...] = ("bridge", "comparison", "yes/no")
"""Allowed values of a question's ``type``."""

_PACKAGE = "sealgraph.examples"
_CORPUS = "corpus"
_QUESTIONS = "questions.jsonl"


def corpus_dir() -> Path:
    """Return the directory holding the example Markdown documents.

    Returns:
        A real filesystem directory. When sealgraph is imported from an archive
        (for example a zipped wheel), the example files are first copied once per
        process to a temporary directory that is removed at exit.

    """
    return package_data_dir(_PACKAGE) / _CORPUS


def corpus_files() -> list[Path]:
    """Return the example Markdown documents, sorted by file name."""
    return sorted(corpus_dir().glob("*.md"), key=lambda path: path.name)


def questions_path() -> Path:
    """Return the path of ``questions.jsonl``, the example multi-hop questions."""
    return package_data_dir(_PACKAGE) / _QUESTIONS


def load_questions() -> list[dict[str, Any]]:
    """Load the example questions in file order.

    Returns:
        One dict per question with the keys of :data:`QUESTION_FIELDS`.

    Raises:
        IngestError: If a line is not a JSON object with every expected key. The
            file ships with the package, so this means the installation is damaged.

    """
    path = questions_path()
    questions: list[dict[str, Any]] = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise IngestError(f"{path}:{line_no}: not valid JSON ({exc})") from None
        if not isinstance(record, dict):
            raise IngestError(f"{path}:{line_no}: expected a JSON object")
        missing = [key for key in QUESTION_FIELDS if key not in record]
        if missing:
            raise IngestError(f"{path}:{line_no}: missing keys {', '.join(missing)}")
        questions.append(record)
    return questions


@cache
def package_data_dir(package: str) -> Path:
    """Return a filesystem directory holding the resources of ``package``.

    Args:
        package: Dotted name of an importable package.

    Returns:
        The package directory itself when it lives on disk (source checkouts,
        installed wheels); otherwise a temporary copy of its resources, made once
        per process and removed at exit.

    """
    root = files(package)
    if isinstance(root, Path):
        return root
    target = Path(tempfile.mkdtemp(prefix="sealgraph-resources-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    _copy_tree(root, target)
    return target


def _copy_tree(source: Traversable, target: Path) -> None:
    for child in source.iterdir():
        if child.is_dir():
            subdir = target / child.name
            subdir.mkdir()
            _copy_tree(child, subdir)
        else:
            (target / child.name).write_bytes(child.read_bytes())
