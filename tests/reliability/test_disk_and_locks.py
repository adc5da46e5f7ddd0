"""Untrusted inputs, round 3 ("Also"): full-disk messages that add up, and no lock file left.

An add on a nearly full disk said "needs about 0.3 MB (4.7 MB free)" and failed:
the need was the old index's size and the free space was read after the failed
write had been cleaned up. Both are now of the same moment, before the write, and
the need counts what the add writes. A build that failed left an empty
``.NAME.lock`` beside the index; the lock file is now removed when the lock is
released (:class:`sealgraph._lockfile.LockFile`), which keeps builds mutually
exclusive (checked below with processes racing for it).
"""

from __future__ import annotations

import multiprocessing
import re
from pathlib import Path

import pytest
from support.cli import run_cli, small_tmpfs, snapshot
from support.documents import write_pages
from support.fakes import write_tiny_docs

from sealgraph._lockfile import LockFile
from sealgraph.index import build_index


def _fill(disk: Path, leave_bytes: int) -> None:
    import shutil

    free = shutil.disk_usage(disk).free
    (disk / "filler").write_bytes(b"x" * max(free - leave_bytes, 0))


def test_an_add_on_a_nearly_full_disk_says_what_it_needs_against_what_was_free(tmp_path):
    with small_tmpfs(tmp_path / "disk", "6m") as disk:
        index_dir = disk / "idx"
        small = write_pages(tmp_path / "small", 3, 5)
        built = run_cli("index", str(small), "--index", str(index_dir), "--embedder", "none")
        assert built.code == 0, built.err
        before = snapshot(index_dir)
        _fill(disk, 1_500_000)
        big = write_pages(tmp_path / "big", 40, 400)  # ~1.3 MB of text: its rows cannot fit
        result = run_cli("index", str(big), "--index", str(index_dir), "--embedder", "none")
        assert result.code != 0 and "no space left" in result.err, result.err
        found = re.search(
            r"it needs about ([\d,.]+) MB there and ([\d,.]+) MB were free", result.err
        )
        assert found, result.err
        needed, free = (float(x.replace(",", "")) for x in found.groups())
        assert needed > free >= 1.0  # the same quantities: what the add needs, what was free
        assert snapshot(index_dir) == before
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "idx"]  # no lock file left


def test_a_failed_build_leaves_no_lock_file(tmp_path, monkeypatch):
    import sealgraph.index.folder._build as build

    docs = write_tiny_docs(tmp_path / "docs")
    build_index(docs, tmp_path / "idx", embedder="none", warn=lambda _: None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "idx"]

    def fail(*_args, **_kwargs):
        raise RuntimeError("the build broke")

    monkeypatch.setattr(build.DocstoreWriter, "add", fail)
    with pytest.raises(RuntimeError, match="the build broke"):
        build_index(docs, tmp_path / "idx", embedder="none", replace=True, warn=lambda _: None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "idx"]


def _count_under_lock(path: str, counter: str, rounds: int) -> None:
    import fcntl
    import time
    import types

    import sealgraph._lockfile as lockfile

    real = fcntl.flock

    def slow_flock(fd: int, operation: int) -> None:
        time.sleep(0.002)  # a wide window between opening the lock file and locking it
        real(fd, operation)

    # Without the check that the file locked is still the one at the path, this
    # window loses updates (135 of 400 kept in a trial); with it, none.
    lockfile.fcntl = types.SimpleNamespace(
        flock=slow_flock, LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB
    )
    for _ in range(rounds):
        lock = LockFile(Path(path))
        assert lock.acquire(timeout=60)
        try:
            value = int(Path(counter).read_text())
            time.sleep(0.001)  # widen the window a lost update would need
            Path(counter).write_text(str(value + 1))
        finally:
            lock.release()


def test_a_removed_lock_file_still_excludes_other_processes(tmp_path):
    counter = tmp_path / "counter"
    counter.write_text("0")
    lock_path = tmp_path / ".idx.lock"
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_count_under_lock, args=(str(lock_path), str(counter), 60))
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert counter.read_text() == "240"  # no update lost: one holder at a time
    assert not lock_path.exists()
