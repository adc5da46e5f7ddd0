"""Helpers of the reliability suite: run the CLI as a user would and check what it leaves.

Import them in any test module with ``from support.cli import ...``.

Every case of this suite asserts one of three outcomes: a clear one-line error
(no traceback), an untouched file system, or the correct result.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class CliResult:
    """What one ``sealgraph`` command did."""

    code: int
    """Exit code."""
    out: str
    """Standard output."""
    err: str
    """Standard error."""


def run_cli(
    *args: str | bytes,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120.0,
) -> CliResult:
    """Run ``python -m sealgraph ARGS`` in a subprocess (real argv bytes, real exit code)."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "sealgraph", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    out = proc.stdout.decode("utf-8", errors="replace")
    err = proc.stderr.decode("utf-8", errors="replace")
    return CliResult(proc.returncode, out, err)


def assert_clear_error(result: CliResult, *fragments: str) -> None:
    """A user error: non-zero exit, one ``sealgraph: error:`` line naming the fragments."""
    assert result.code != 0, result
    assert "Traceback" not in result.err, result.err
    assert "sealgraph: error:" in result.err, result.err
    for fragment in fragments:
        assert fragment in result.err, (fragment, result.err)


def snapshot(directory: Path) -> dict[str, str]:
    """SHA-256 of every file under ``directory`` (symlinks not followed), by relative path."""
    sums: dict[str, str] = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.is_symlink():
            sums[path.relative_to(directory).as_posix()] = hashlib.sha256(
                path.read_bytes()
            ).hexdigest()
    return sums


@contextmanager
def small_tmpfs(mount: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of ``size`` (``"2m"``, ``"64k"``) on a new folder ``mount``; unmount after.

    Needs root and mount rights: the test is skipped elsewhere.
    """
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``sealgraph ARGS`` in this process: ``(exit code, stdout, stderr)``.

    An exception escaping the command (a traceback for the user) fails the test.
    """
    from sealgraph.cli import main

    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def eval_argv(questions: Path, *extra: str, methods: str = "flat-bm25") -> list[str]:
    """``eval`` of ``questions`` with ``methods``, lexical only, without a progress bar."""
    return [
        "eval",
        "--questions",
        str(questions),
        "--methods",
        methods,
        "--embedder",
        "none",
        "--no-progress",
        *extra,
    ]
