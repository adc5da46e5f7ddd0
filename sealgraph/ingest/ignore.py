"""Which files of a folder are not documents: ``.sealgraphignore``, ``--exclude`` and defaults.

A docs site's folder holds more than its pages: build output, installed packages,
theme templates. Folders are read through :class:`IgnoreRules`, gitignore-style
patterns applied to each path relative to the folder given:

* ``name`` (no slash) matches a file or folder of that name at any depth;
  ``dir/name`` or ``/name`` is anchored at the folder given;
* a trailing ``/`` matches folders only; ``*``, ``?`` and ``[abc]`` do not cross
  ``/``; ``**`` does;
* ``!pattern`` takes a path back in; the last matching pattern wins; ``#`` starts
  a comment. A folder left out is not entered, so nothing under it comes back.

The rules are :data:`DEFAULT_EXCLUDES`, then the folder's own ``.sealgraphignore``
(read, never executed), then the caller's patterns (``--exclude``), in that order; a
``.sealgraphignore`` in a subfolder adds its patterns for what lies below it, as
git's nested ignore files do (its ``/name`` and ``a/b`` are anchored at that
subfolder). A file named on the command line is read whatever the patterns say:
naming it is asking for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sealgraph.errors import InputError

__all__ = ["DEFAULT_EXCLUDES", "IGNORE_FILE", "IgnoreRules"]

IGNORE_FILE = ".sealgraphignore"
"""The ignore file read at the top of a folder given."""

DEFAULT_EXCLUDES: tuple[str, ...] = (
    # Installed packages and build output: copies of other text, not the corpus.
    "node_modules/",
    "__pycache__/",
    "venv/",
    "site-packages/",
    "_build/",
    "_site/",
    "dist/",
    # Theme and template folders of static site generators (MkDocs, Sphinx, Jekyll, Hugo).
    "overrides/",
    "_templates/",
    "_layouts/",
    "_includes/",
    "layouts/",
    "themes/",
)
"""Patterns every folder starts with; ``!name/`` in ``.sealgraphignore`` or
``--exclude`` takes one back."""

_MAX_IGNORE_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: str
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


class IgnoreRules:
    """Ordered gitignore-style patterns; :meth:`ignored` tells a path's fate.

    Args:
        patterns: Pattern lines, in order (blank lines and ``#`` comments skipped).

    Raises:
        InputError: A pattern that cannot be read (an unclosed ``[``).

    """

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self._lines = tuple(patterns)
        self._rules = tuple(r for line in self._lines if (r := _rule(line)) is not None)

    @property
    def patterns(self) -> tuple[str, ...]:
        """The patterns in force, in order, as written (negations with their ``!``)."""
        return tuple(("!" if r.negated else "") + r.pattern for r in self._rules)

    @classmethod
    def for_folder(cls, root: Path, extra: Sequence[str] = ()) -> IgnoreRules:
        """Rules for ``root``: the defaults, its ``.sealgraphignore``, then ``extra``.

        Raises:
            InputError: The ignore file is not a regular UTF-8 text file of at most
                256 KiB, or holds a pattern that cannot be read.

        """
        return cls([*DEFAULT_EXCLUDES, *_read_ignore_file(root / IGNORE_FILE), *extra])

    def below(self, folder: Path, prefix: str) -> IgnoreRules:
        """Return these rules plus those of ``folder``'s own ``.sealgraphignore``.

        Args:
            folder: A subfolder of the folder given.
            prefix: Its path relative to the folder given, ending in ``/``.

        Raises:
            InputError: The subfolder's ignore file cannot be read.

        """
        lines = _read_ignore_file(folder / IGNORE_FILE)
        if not lines:
            return self
        return IgnoreRules([*self._lines, *(_anchored(line, prefix) for line in lines)])

    def ignored(self, relative: str, *, is_dir: bool) -> bool:
        """Whether ``relative`` (a ``/``-separated path under the folder) is left out."""
        verdict = False
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(relative):
                verdict = not rule.negated
        return verdict


def _read_ignore_file(path: Path) -> list[str]:
    if not path.exists() and not path.is_symlink():
        return []
    if path.is_symlink() or not path.is_file():
        raise InputError(f"{path} must be a regular file (not a link or a folder)")
    data = path.read_bytes()
    if len(data) > _MAX_IGNORE_BYTES:
        raise InputError(f"{path} is larger than {_MAX_IGNORE_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not valid UTF-8 ({exc.reason})") from None
    return text.splitlines()


def _anchored(line: str, prefix: str) -> str:
    """Rewrite a subfolder's pattern line so that it matches paths from the top folder."""
    text = line.strip()
    if not text or text.startswith("#"):
        return text
    bang = "!" if text.startswith("!") else ""
    text = text[len(bang) :]
    anchored = "/" in text.rstrip("/")
    return f"{bang}{prefix}{text.lstrip('/')}" if anchored else f"{bang}{prefix}**/{text}"


def _rule(line: str) -> _Rule | None:
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated or text.startswith("\\"):
        text = text[1:]
    dir_only = text.endswith("/")
    body = text.strip("/") if dir_only else text.lstrip("/")
    if not body:
        return None
    anchored = "/" in text.rstrip("/")
    try:
        regex = re.compile(("^" if anchored else "^(?:.*/)?") + _translate(body) + "$")
    except re.error as exc:
        raise InputError(f"ignore pattern {line.strip()!r} cannot be read: {exc}") from None
    return _Rule(text, regex, negated, dir_only)


def _translate(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = glob.find("]", i + 2 if glob.startswith("[!", i) else i + 1)
            if end < 0:
                raise re.error("unclosed [")
            inner = glob[i + 1 : end]
            inner = "^" + inner[1:] if inner.startswith("!") else inner
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)
