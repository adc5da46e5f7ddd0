r"""Which files of the paths given are read: folders walked, links weighed, names checked.

A folder is walked with an explicit stack, never by recursion: a stranger's folder
nested thousands of levels deep costs memory in proportion, not a
``RecursionError``. A file or folder whose name is not valid UTF-8 (``bad\xff.md``,
possible on POSIX) cannot be stored, shown or given an id: it is skipped with a
warning naming it (its undecodable bytes shown as ``\xff``); named on the command
line, it is an error.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from sealgraph.errors import InputError
from sealgraph.ingest.ignore import IgnoreRules
from sealgraph.ingest.loaders import FORMATS, WarnFn
from sealgraph.paths import file_kind

__all__ = ["SUPPORTED_SUFFIXES", "iter_input_files", "shown_path", "walk_tree"]

SUPPORTED_SUFFIXES = frozenset({s for fmt in FORMATS for s in fmt.suffixes} | {".jsonl"})
"""File suffixes picked up when walking a directory; others there are skipped."""


def shown_path(path: str | os.PathLike[str]) -> str:
    r"""Return ``path`` as text, its bytes that are not UTF-8 shown as ``\xff`` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _undecodable(name: str) -> bool:
    # A name read from the file system with bytes that are not UTF-8 holds lone
    # surrogates (Python's surrogateescape), which no UTF-8 writer accepts.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def walk_tree(
    top: str | os.PathLike[str], onerror: Callable[[OSError], None]
) -> Iterator[tuple[str, list[str], list[str]]]:
    """Walk ``top`` like ``os.walk(top, onerror=onerror)`` top-down, without recursion.

    Yields ``(dirpath, dirnames, filenames)``; the caller may prune ``dirnames`` in
    place, and the folders left are entered in that order. Symlinks to folders are
    listed in ``dirnames`` but not entered (``followlinks=False``).
    """
    stack = [os.fspath(top)]
    while stack:
        path = stack.pop()
        try:
            with os.scandir(path) as listing:
                entries = list(listing)
        except OSError as exc:
            onerror(exc)
            continue
        dirs: list[str] = []
        files: list[str] = []
        links: set[str] = set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
            if is_dir and entry.is_symlink():
                links.add(entry.name)
        yield path, dirs, files
        stack.extend(os.path.join(path, d) for d in reversed(dirs) if d not in links)


def iter_input_files(
    paths: list[Path],
    warn: WarnFn,
    follow_links: bool,
    exclude: Sequence[str] = (),
    excluded: list[str] | None = None,
) -> Iterator[tuple[Path, Path, bool]]:
    """Yield ``(root, file, named explicitly)``: ids are built from the path relative to root.

    The files and folders the ignore patterns leave out are appended to ``excluded``
    (real POSIX paths), so that pruning can remove what they held before.
    """
    roots = [os.path.realpath(p) for p in paths]
    for path in paths:
        if _undecodable(str(path)):
            raise InputError(
                f"{shown_path(path)}: the name is not valid UTF-8, which sealgraph cannot store "
                "or show; rename it"
            )
        if not path.exists():
            raise InputError(f"no such file or directory: {path}")
        if path.is_dir():
            rules = IgnoreRules.for_folder(path, exclude)
            walker = _Walker(path, warn, None if follow_links else roots, rules)
            yield from ((path, file, False) for file in walker.run())
            if excluded is not None:
                excluded.extend(walker.excluded)
        else:
            kind = file_kind(path.stat().st_mode)
            if kind != "regular file":
                raise InputError(
                    f"{path} is {kind}, not a regular file or folder; sealgraph reads only files"
                )
            yield path.parent, path, True


class _Walker:
    """One folder's walk: the supported, non-hidden regular files under ``root``.

    Files and folders ``rules`` leave out (:mod:`sealgraph.ingest.ignore`) are not
    read, and are noted in :attr:`excluded`; a folder left out is not entered; a
    file or folder whose name is not UTF-8 is skipped with a warning.

    Symlinks are followed when they resolve inside one of ``roots`` (the real
    paths given; None follows every link) and skipped with a warning otherwise.
    Every real folder and file is taken once, the first way it is reached: the
    real tree under ``root`` first, then the linked folders (breadth first,
    sorted), then symlinked files; so a link to a folder or file already taken
    adds nothing and a link back up the tree cannot loop. Other files that are not
    regular files (FIFOs, sockets, devices) are skipped with a warning.
    """

    def __init__(
        self, root: Path, warn: WarnFn, roots: list[str] | None, rules: IgnoreRules | None
    ) -> None:
        self.root = root
        self.warn = warn
        self.roots = roots
        self.rules = rules
        self.found: dict[str, Path] = {}  # real path -> the path it was reached by
        self.walked: set[str] = set()  # real paths of folders already listed
        self.file_links: list[Path] = []
        self.inherited: dict[str, IgnoreRules | None] = {}  # folder -> rules its parent passes on
        self.excluded: list[str] = []  # real paths the rules left out

    def run(self) -> list[Path]:
        """Walk the tree, then the linked folders found in it; return the files, sorted by path."""
        pending = [self.root]
        while pending:
            top = pending.pop(0)
            pending.extend(self.walk(top))  # the linked folders it found, walked after
        return self.files()

    def unreadable(self, error: OSError) -> None:
        self.warn(
            f"skipped unreadable folder {shown_path(error.filename)}: {error.strerror or error}"
        )

    def inside(self, link: Path) -> bool:
        real = os.path.realpath(link)
        if self.roots is None or any(_is_within(real, r) for r in self.roots):
            return True
        self.warn(
            f"skipped symlink {link}: it points to {real}, outside the paths given "
            f"(--follow-links reads it)"
        )
        return False

    def walk(self, top: Path) -> list[Path]:
        """List the real tree under ``top``; return the linked folders found in it."""
        real_top = os.path.realpath(top)
        if real_top in self.walked:
            if _is_within(os.path.realpath(top.parent), real_top):
                self.warn(f"skipped symlink {top}: it points back to {real_top}, a folder above it")
            return []
        links: list[Path] = []
        start = os.fspath(top)
        for dirpath, dirnames, filenames in walk_tree(top, self.unreadable):
            # The tree below top holds no link it enters: its real paths are real_top's
            # (realpath on each folder would cost its depth in system calls).
            real_dir = real_top + dirpath[len(start) :]
            if real_dir in self.walked:  # reached through an earlier link already
                dirnames[:] = []
                continue
            self.walked.add(real_dir)
            links.extend(self.folder(dirpath, real_dir, dirnames, filenames))
        return links

    def folder(
        self, dirpath: str, real_dir: str, dirnames: list[str], filenames: list[str]
    ) -> list[Path]:
        """Take one folder's files, keep in ``dirnames`` those to enter; return its linked folders."""
        here = Path(dirpath).relative_to(self.root).as_posix()
        prefix = "" if here == "." else here + "/"
        # A folder's own .sealgraphignore applies below it, after its parents' rules.
        local = self.inherited.pop(dirpath, self.rules)
        if local is not None and prefix:
            local = local.below(Path(dirpath), prefix)

        def entry(name: str) -> tuple[Path, Path, str]:
            return Path(dirpath, name), Path(real_dir, name), prefix + name

        dirnames[:] = sorted(d for d in dirnames if self.wanted(*entry(d), local, is_dir=True))
        self.inherited.update((os.path.join(dirpath, d), local) for d in dirnames)
        for name in sorted(n for n in filenames if self.wanted(*entry(n), local, is_dir=False)):
            self.take(Path(dirpath, name))
        return [
            Path(dirpath, d)
            for d in dirnames
            if os.path.islink(Path(dirpath, d)) and self.inside(Path(dirpath, d))
        ]

    def wanted(
        self, path: Path, real: Path, relative: str, rules: IgnoreRules | None, *, is_dir: bool
    ) -> bool:
        """Whether the walk reads this file or enters this folder.

        Hidden entries and files of no supported format are passed by silently; what
        the ignore patterns leave out is noted in :attr:`excluded`; a name that is
        not UTF-8 is skipped with a warning.
        """
        if not _wanted(relative, is_dir=is_dir):
            return False
        if rules is not None and rules.ignored(relative, is_dir=is_dir):
            self.excluded.append(real.as_posix())
            return False
        if _undecodable(path.name):
            what = "folder" if is_dir else "file"
            self.warn(
                f"skipped {what} {shown_path(path)}: its name is not valid UTF-8 "
                "(rename it to index it)"
            )
            return False
        return True

    def take(self, file: Path) -> None:
        if file.is_symlink():
            self.file_links.append(file)
        elif file.is_file():
            self.found.setdefault(os.path.realpath(file), file)
        else:
            _warn_special(file, self.warn)

    def files(self) -> list[Path]:
        for file in self.file_links:  # after every real file, so a real path wins over a link
            if not file.exists():
                self.warn(f"skipped broken symlink {file}")
            elif not self.inside(file):
                continue
            elif file.is_file():
                self.found.setdefault(os.path.realpath(file), file)
            elif not file.is_dir():
                _warn_special(file, self.warn)
        return sorted(self.found.values(), key=lambda f: f.relative_to(self.root).as_posix())


def _wanted(relative: str, *, is_dir: bool) -> bool:
    """Whether a folder walk may read this file or enter this folder (not hidden, a document)."""
    name = relative.rsplit("/", 1)[-1]
    if name.startswith("."):
        return False
    return is_dir or Path(name).suffix.lower() in SUPPORTED_SUFFIXES


def _warn_special(file: Path, warn: WarnFn) -> None:
    try:
        kind = file_kind(file.stat().st_mode)
    except OSError as exc:
        warn(f"skipped unreadable file {file}: {exc.strerror or exc}")
        return
    warn(f"skipped {file}: it is {kind}, not a regular file")


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
