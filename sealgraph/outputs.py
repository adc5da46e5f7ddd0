"""Files a command writes because it was asked to: one writer for all of them.

``trace --html``, ``eval --out``, ``--records``, ``--plot`` and ``--html`` (and
:func:`sealgraph.runs.write_run_page`) name a file to write, and a typo or a
stranger's script can name anything: the run database being read, a questions
file, a corpus document, an index file, ``/dev/null``. Every such file goes
through :func:`write_outputs`, which first checks every target and refuses,
with one line naming the flag and the path and with nothing changed, a target:

* that is a file the same command reads (:class:`Inputs`: the run database and
  its side files, the questions file, a pool file), whatever path or hard link
  names it;
* that lies inside a folder the command reads (a corpus folder, an index folder
  given) or inside any sealgraph index (:func:`enclosing_index`);
* that exists but is not a regular file (a folder, a FIFO, a device, a socket),
  or is a symbolic link: the link is never followed nor replaced;
* that another output of the same command also names.

Then each file is written to a temporary file in its own folder and moved into
place with one rename, all of them only once every one was written: a failed
write (a full disk) leaves every target as it was.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from sealgraph.errors import InputError
from sealgraph.paths import file_kind

__all__ = ["Inputs", "Output", "enclosing_index", "write_output", "write_outputs"]

_INDEX_MANIFEST = "manifest.json"
_INDEX_FORMAT = "sealgraph-index"  # a folder manifest's "format" (index/folder/_manifest.py)
_SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


@dataclass(frozen=True, slots=True)
class Output:
    """One file a command was asked to write."""

    path: str | os.PathLike[str]
    """Where, as the user gave it."""
    flag: str
    """The option that named it (``--html``), for messages."""
    write: Callable[[BinaryIO], object]
    """Writes the content to an open binary file."""


@dataclass(frozen=True, slots=True)
class Inputs:
    """What one command reads: no output of the same command may land on it."""

    files: tuple[tuple[str | os.PathLike[str], str], ...] = ()
    """``(path, what it is)``: files read (``("q.jsonl", "the questions file")``)."""
    folders: tuple[tuple[str | os.PathLike[str], str], ...] = ()
    """``(path, what it is)``: folders read; nothing inside them is written."""

    @staticmethod
    def of(
        *,
        files: Iterable[tuple[str | os.PathLike[str] | None, str]] = (),
        folders: Iterable[tuple[str | os.PathLike[str] | None, str]] = (),
        databases: Iterable[str | os.PathLike[str] | None] = (),
    ) -> Inputs:
        """Build the inputs of a command, skipping paths that are None.

        ``databases`` are SQLite run database files (not a PostgreSQL URL): their
        side files (``-wal``, ``-shm``, ``-journal``) and thread-lock folder are
        protected as well.
        """
        kept_files = [(p, what) for p, what in files if p is not None]
        kept_folders = [(p, what) for p, what in folders if p is not None]
        for db in databases:
            if db is None:
                continue
            kept_files.append((db, "the run database"))
            kept_files += [
                (f"{db}{end}", "a file of the run database") for end in _SQLITE_SIDE_FILES
            ]
            path = Path(db)
            kept_folders.append((path.parent / f".{path.name}.threads", "the run database's locks"))
        return Inputs(tuple(kept_files), tuple(kept_folders))


def write_output(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    flag: str = "output",
    inputs: Inputs | None = None,
) -> Path:
    """Write one text (UTF-8) or bytes output through :func:`write_outputs`; return its path."""
    content = data.encode("utf-8") if isinstance(data, str) else data
    write_outputs([Output(path, flag, lambda handle: handle.write(content))], inputs)
    return Path(path)


def write_outputs(outputs: Sequence[Output], inputs: Inputs | None = None) -> None:
    """Check every target, then write them all atomically, or change nothing.

    Raises:
        InputError: A target is refused (see the module docstring), its folder does
            not exist, or a write failed (a full disk: "no space left"); no target
            was changed and no temporary file is left.

    """
    checked = _check_all(outputs, inputs or Inputs())
    staged: list[tuple[str, Path, str]] = []
    target, flag = Path(), ""
    try:
        for target, output in checked:
            flag = output.flag
            staged.append((_stage(target, output), target, flag))
        for tmp, target, flag in staged:
            _refuse_special(target, flag)  # swapped for a link or a FIFO while we wrote?
            os.replace(tmp, target)
    except OSError as exc:
        raise InputError(_write_failed(exc, target, flag)) from None
    finally:
        for tmp, _, _ in staged:
            with suppress(FileNotFoundError):
                os.unlink(tmp)  # gone once renamed; still there only after a failure


def check_outputs(outputs: Sequence[Output], inputs: Inputs | None = None) -> None:
    """Refuse, before any work, the targets :func:`write_outputs` would refuse."""
    _check_all(outputs, inputs or Inputs())


def enclosing_index(path: str | os.PathLike[str]) -> Path | None:
    """Return the sealgraph index folder holding ``path`` (at any depth), if any."""
    try:
        folders = Path(path).expanduser().resolve().parents
    except (OSError, RuntimeError):
        return None
    for folder in folders:
        manifest = folder / _INDEX_MANIFEST
        try:
            if not manifest.is_file():
                continue
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue  # not readable as a manifest: not an index folder we can recognise
        if isinstance(data, dict) and data.get("format") == _INDEX_FORMAT:
            return folder
    return None


# ------------------------------------------------------------------ checks


def _check_all(outputs: Sequence[Output], inputs: Inputs) -> list[tuple[Path, Output]]:
    checked: list[tuple[Path, Output]] = []
    seen: dict[str, str] = {}
    for output in outputs:
        target = Path(output.path).expanduser()
        _check_one(target, output.flag, inputs)
        real = _real(target)
        if real in seen:
            raise InputError(
                f"{output.flag} {target}: {seen[real]} writes the same file; give each "
                "output its own path (nothing was written)"
            )
        seen[real] = output.flag
        checked.append((target, output))
    return checked


def _check_one(target: Path, flag: str, inputs: Inputs) -> None:
    shown = f"{flag} {target}"
    if not target.name or target.name in (".", ".."):
        raise InputError(f"{shown}: give a file name, not a folder")
    real = _real(target)
    for path, what in inputs.files:
        if _same_file(target, real, Path(path).expanduser()):
            raise InputError(f"{shown} is {what} this command reads; {_UNTOUCHED}")
    for path, what in inputs.folders:
        folder = _real(Path(path).expanduser())
        if _within(real, folder):
            raise InputError(f"{shown} lies inside {what} ({path}); {_UNTOUCHED}")
    index = enclosing_index(target)
    if index is not None:
        raise InputError(f"{shown} lies inside the sealgraph index at {index}; {_UNTOUCHED}")
    if not target.parent.is_dir():
        raise InputError(f"{shown}: directory {target.parent} does not exist")
    _refuse_special(target, flag)


_UNTOUCHED = "refusing to write there, nothing was changed: give another path"


def _refuse_special(target: Path, flag: str) -> None:
    """Refuse a target that exists and is a link, a folder or anything but a regular file."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"{flag} {target}: cannot check it: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(
            f"{flag} {target} is a symbolic link (to {os.readlink(target)}); sealgraph does not "
            "write through links nor replace them, nothing was changed: give the real path"
        )
    if not stat.S_ISREG(info.st_mode):
        raise InputError(
            f"{flag} {target} is {file_kind(info.st_mode)}, not a regular file; {_UNTOUCHED}"
        )


def _real(path: Path) -> str:
    """Return the real path of ``path``'s folder joined with its name (the name not followed)."""
    return os.path.join(os.path.realpath(path.parent), path.name)


def _same_file(target: Path, real_target: str, other: Path) -> bool:
    if real_target == os.path.realpath(other):
        return True
    try:  # two names of one file (a hard link, a bind mount)
        return os.path.samestat(os.stat(target), os.stat(other))
    except OSError:
        return False


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# ------------------------------------------------------------------ writing


def _stage(target: Path, output: Output) -> str:
    """Write ``output`` to a new temporary file beside ``target``; return its path."""
    # Same folder: the rename is atomic. Same suffix: tools that pick a format from
    # the extension see the right one. Created exclusively, never an existing file.
    fd, tmp = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=f".tmp{target.suffix}", dir=target.parent
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            output.write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # what a plain open() would have made
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_failed(exc: OSError, target: Path, flag: str) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return (
            f"{flag} {target}: no space left in {target.parent} ({_free(target.parent)} free); "
            "nothing was written"
        )
    return f"{flag} {target}: cannot write: {exc.strerror or exc}; nothing was written"


def _free(folder: Path) -> str:
    try:
        usage = os.statvfs(folder)
    except (OSError, AttributeError):
        return "unknown"
    free = usage.f_bavail * usage.f_frsize
    return f"{free / 1e6:.1f} MB" if free >= 100_000 else f"{free / 1e3:.1f} kB"
