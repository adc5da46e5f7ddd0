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

The verdicts are git's own (a test compares them with ``git check-ignore`` on
random patterns and trees). The matcher is written here rather than taken from
``pathspec`` for two reasons: pathspec is MPL-2.0, not a permissive licence, so
it cannot be in the default install; and it translates a pattern into one
backtracking regex (``*a*a*a*a*a*a*a*a*b`` took 117 s on a 60-character name
with pathspec 1.1.1), where this one matches part by part in linear time
(microseconds on the same name).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sealgraph.errors import InputError

__all__ = ["DEFAULT_EXCLUDES", "IGNORE_FILE", "IgnoreRules"]

IGNORE_FILE = ".sealgraphignore"
"""The ignore file read in a folder given and in each of its subfolders."""

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
_MAX_PATTERN_CHARS = 1024
_MAX_PATTERNS = 2000  # every path is tested against every pattern: bound the work a folder asks


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: str
    parts: tuple[re.Pattern[str] | None, ...]
    """One matcher per ``/``-separated part of the pattern; None for ``**``."""
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
        if len(self._rules) > _MAX_PATTERNS:
            raise InputError(
                f"{len(self._rules)} ignore patterns in force (.sealgraphignore files and "
                f"--exclude): at most {_MAX_PATTERNS}"
            )

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
            if _matches(rule.parts, relative):
                verdict = not rule.negated
        return verdict


def _read_ignore_file(path: Path) -> list[str]:
    if not path.exists() and not path.is_symlink():
        return []
    if path.is_symlink() or not path.is_file():
        raise InputError(f"{path} must be a regular file (not a link or a folder)")
    try:
        with path.open("rb") as file:
            data = file.read(_MAX_IGNORE_BYTES + 1)  # never more than the limit in memory
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
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
    if len(body) > _MAX_PATTERN_CHARS:
        raise InputError(
            f"ignore pattern {line.strip()[:60]!r}... cannot be read: longer than "
            f"{_MAX_PATTERN_CHARS} characters"
        )
    parts = tuple(_segment(part, line) for part in body.split("/"))
    anchored = "/" in text.rstrip("/")
    return _Rule(text, parts if anchored else (None, *parts), negated, dir_only)


def _segment(glob: str, line: str) -> re.Pattern[str] | None:
    """Compile one ``/``-free part of a pattern; None for ``**`` (any number of folders).

    :func:`fnmatch.translate` makes a matcher that cannot backtrack
    catastrophically (a stranger's ``*a*a*a*a*b`` stays linear), and a part never
    holds a ``/``, so its ``*`` cannot cross folders. A backslash makes the next
    character literal, as in gitignore.
    """
    if glob == "**":
        return None
    depth, i, out = 0, 0, []
    while i < len(glob):
        c = glob[i]
        if c == "\\" and i + 1 < len(glob) and depth == 0:
            out.append(f"[{glob[i + 1]}]")
            i += 2
            continue
        if c == "[" and depth == 0:
            depth = 1
        elif c == "]" and depth == 1 and out[-1] not in ("[", "!"):  # "[]...]": "]" is a member
            depth = 0
        out.append(c)
        i += 1
    if depth:
        raise InputError(f"ignore pattern {line.strip()!r} cannot be read: unclosed [")
    return re.compile(fnmatch.translate("".join(out)))


def _matches(parts: tuple[re.Pattern[str] | None, ...], relative: str) -> bool:
    """Whether the ``/``-separated path matches the pattern parts (``None``: ``**``).

    The parts after the last ``**`` match the path's last names, one each; then the
    positions a prefix of the other parts can reach in the path's folders, part by
    part: at most parts x folders steps whatever the pattern, and a pattern without
    a ``**`` inside (``name``, ``dir/*.md``) costs one step per part however deep
    the path is.
    """
    names = relative.split("/")
    rest = list(parts)
    while rest and rest[-1] is not None:
        part = rest.pop()
        if not names or not part.match(names.pop()):
            return False
    if not rest:
        return not names
    ends_in_stars = len(rest) == len(parts)
    rest.pop()  # the last ** takes whatever names are left ...
    reach = {0}
    for part in rest:
        if part is None:
            reach = set(range(min(reach), len(names) + 1))
        else:
            reach = {i + 1 for i in reach if i < len(names) and part.match(names[i])}
        if not reach:
            return False
    # ... but a pattern ending in "dir/**" needs one name at least after dir (git:
    # "a/**" is what is inside a, not a itself).
    return not (ends_in_stars and rest) or min(reach) < len(names)
