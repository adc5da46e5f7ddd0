"""Vectors a folder build does not embed again.

Those of the index it replaces (:func:`reusable_vectors`), and the batches an
interrupted build kept beside it in ``.NAME.partial-KEY/`` (:class:`PartialEmbeddings`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from sealgraph.errors import (
    IndexCorruptError,
)
from sealgraph.index._embed import embedder_name
from sealgraph.index.embedders import (
    Embedder,
)
from sealgraph.index.folder._dense import VECTORS_FILE
from sealgraph.index.folder._manifest import (
    file_sha256,
    fsync_path,
    sibling_folders,
    verify_files,
)
from sealgraph.index.folder._store import DOCSTORE_FILE, read_chunk_hashes
from sealgraph.ingest import WarnFn


def reusable_vectors(
    index_dir: Path, manifest: dict[str, Any] | None, embedder: Embedder, warn: WarnFn
) -> dict[str, np.ndarray]:
    """Vectors of the index being replaced, by content hash, if its embedder is the same."""
    if manifest is None or embedder_name(manifest) != embedder.name:
        return {}
    info = manifest["embedder"]
    try:
        verify_files(index_dir, manifest, (DOCSTORE_FILE, VECTORS_FILE))
        hashes = read_chunk_hashes(index_dir / DOCSTORE_FILE)
        vectors = np.load(index_dir / VECTORS_FILE, mmap_mode="r", allow_pickle=False)
        n_rows = hashes[-1][0] + 1 if hashes else 0
        if vectors.dtype != np.float32 or vectors.shape[1:] != (info.get("dim"),):
            raise ValueError(f"{VECTORS_FILE} holds {vectors.dtype} {vectors.shape}")
        if vectors.shape[0] < n_rows:
            raise ValueError(f"{VECTORS_FILE} has shape {vectors.shape}, expected {n_rows} rows")
    except (IndexCorruptError, OSError, ValueError, sqlite3.DatabaseError) as exc:
        warn(f"cannot reuse the vectors of {index_dir} ({exc}); embedding every chunk again")
        return {}
    return {digest: np.asarray(vectors[row]) for row, digest in hashes}


def discard_partials(
    index_dir: Path, partial: PartialEmbeddings | None, used: set[str], warn: WarnFn
) -> None:
    """Remove the kept batches of interrupted builds once a build of ``index_dir`` succeeded."""
    for directory in partial_dirs(index_dir):
        if not is_own_partial(directory):
            continue  # our naming, not our files: never removed (a build says so when it opens it)
        if partial is not None and directory == partial.directory:
            unused = sum(1 for digest in partial.vectors if digest not in used)
            if unused:
                warn(
                    f"discarded {unused:,} embeddings an interrupted build left in {directory} "
                    f"for text this index does not hold"
                )
        else:
            warn(f"removed {directory}, embeddings an interrupted build with another embedder left")
        shutil.rmtree(directory, ignore_errors=True)


PARTIAL_FORMAT = "sealgraph-partial-embeddings"


PARTIAL_VERSION = 1


PARTIAL_INFO_FILE = "partial.json"


_SHARD_NAME = re.compile(r"shard-(\d{6})\.(?:npy|json)")


_OWN_PARTIAL_NAME = re.compile(r"(?:partial\.json|shard-\d{6}\.(?:npy|json))(?:\.tmp)?")


_CONTENT_HASH = re.compile(r"[0-9a-f]{64}")


def partial_dir(index_dir: Path, embedder_name: str) -> Path:
    """Return the folder beside ``index_dir`` keeping finished batches of ``embedder_name``."""
    key = hashlib.sha256(embedder_name.encode("utf-8")).hexdigest()[:16]
    return index_dir.parent / f".{index_dir.name}.partial-{key}"


def partial_dirs(index_dir: Path) -> list[Path]:
    """Every folder with the naming of :func:`partial_dir` beside ``index_dir`` (any embedder)."""
    return sibling_folders(index_dir, "partial-[0-9a-f]{16}")


def is_own_partial(directory: Path) -> bool:
    """Say whether ``directory`` is a real folder of :class:`PartialEmbeddings` files only."""
    if directory.is_symlink() or not directory.is_dir():
        return False
    try:
        return all(
            _OWN_PARTIAL_NAME.fullmatch(entry.name) and entry.is_file() and not entry.is_symlink()
            for entry in directory.iterdir()
        )
    except OSError:
        return False


class PartialEmbeddings:
    """The batches of vectors a dense build has finished so far, kept on disk for a resume.

    The folder (:func:`partial_dir`) holds ``partial.json`` (format and embedder name)
    and one shard per finished batch: ``shard-NNNNNN.npy`` (float32 unit rows, read
    with ``allow_pickle=False``) and ``shard-NNNNNN.json`` (the content hash of each
    row's text, the embedder, and the SHA-256 of the ``.npy``). Each file is written
    to a temporary name, flushed and renamed; the ``.json`` is written last, so a
    shard counts only once complete. Vectors are found by content hash, so a resume
    reuses exactly the texts it has vectors for, whatever else changed in between.

    Opening checks everything: a folder of another embedder or format, or a shard
    that is incomplete, damaged or inconsistent, is ignored with a warning (its
    chunks are embedded again), never trusted. A folder that holds files sealgraph
    did not write is left alone and not used.
    """

    def __init__(self, directory: Path, embedder_name: str, warn: Callable[[str], None]) -> None:
        self.directory = directory
        self.embedder_name = embedder_name
        self.vectors: dict[str, np.ndarray] = {}
        """Vectors of finished batches by content hash (those read at open and added since)."""
        self._warn = warn
        self._next = 1
        self._usable = True
        self._started = False
        self._load()

    @classmethod
    def open(
        cls, index_dir: Path, embedder_name: str, warn: Callable[[str], None]
    ) -> PartialEmbeddings:
        """Open (without creating) the folder of ``embedder_name``'s batches beside ``index_dir``."""
        return cls(partial_dir(index_dir, embedder_name), embedder_name, warn)

    def _load(self) -> None:
        directory = self.directory
        if not os.path.lexists(directory):
            return
        if not is_own_partial(directory):
            self._usable = False
            self._warn(
                f"ignored {directory}: it holds files sealgraph did not write, so this build "
                f"cannot be resumed if it is interrupted; move it away"
            )
            return
        problem = self._info_problem()
        if problem is not None:
            self._warn(f"ignored {directory} ({problem}); embedding its chunks again")
            shutil.rmtree(directory, ignore_errors=True)
            return
        self._started = True
        bad = 0
        dim = None
        numbers = [
            int(match.group(1))
            for entry in directory.iterdir()
            if (match := _SHARD_NAME.fullmatch(entry.name))
        ]
        self._next = max(numbers, default=0) + 1
        for number in sorted(set(numbers)):
            shard = self._read_shard(number, dim)
            if shard is None:
                bad += (directory / f"shard-{number:06d}.json").exists()
                continue
            hashes, vectors = shard
            dim = vectors.shape[1]
            self.vectors.update(zip(hashes, vectors, strict=True))
        if bad:
            self._warn(
                f"ignored {bad} damaged batch{'es' if bad > 1 else ''} of embeddings in "
                f"{directory}; embedding their chunks again"
            )

    def _info_problem(self) -> str | None:
        try:
            info = json.loads((self.directory / PARTIAL_INFO_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return f"no {PARTIAL_INFO_FILE}"
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            return f"unreadable {PARTIAL_INFO_FILE}"
        if not isinstance(info, dict) or info.get("format") != PARTIAL_FORMAT:
            return f"its {PARTIAL_INFO_FILE} was not written by sealgraph"
        if info.get("version") != PARTIAL_VERSION:
            return f"format version {info.get('version')!r}, not {PARTIAL_VERSION}"
        if info.get("embedder") != self.embedder_name:
            return f"embeddings of {info.get('embedder')!r}, not {self.embedder_name}"
        return None

    def _read_shard(self, number: int, dim: int | None) -> tuple[list[str], np.ndarray] | None:
        """Return a complete, consistent shard's hashes and vectors; None otherwise."""
        meta_path = self.directory / f"shard-{number:06d}.json"
        data_path = self.directory / f"shard-{number:06d}.npy"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if not isinstance(meta, dict) or meta.get("embedder") != self.embedder_name:
                return None
            hashes = meta.get("hashes")
            if not (
                isinstance(hashes, list)
                and hashes
                and all(isinstance(h, str) and _CONTENT_HASH.fullmatch(h) for h in hashes)
            ):
                return None
            if file_sha256(data_path) != meta.get("sha256"):
                return None
            vectors = np.load(data_path, allow_pickle=False)
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            return None
        if (
            vectors.dtype != np.float32
            or vectors.ndim != 2
            or vectors.shape[0] != len(hashes)
            or vectors.shape[1] == 0
            or (dim is not None and vectors.shape[1] != dim)
            or not np.isfinite(vectors).all()
        ):
            return None
        return hashes, vectors

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Keep one finished batch: ``vectors[i]`` is the vector of the text hashed ``hashes[i]``.

        A batch that cannot be written (disk full, read-only folder) is said once and
        the build goes on without keeping its batches.
        """
        if not self._usable or not len(hashes):
            return
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        name = f"shard-{self._next:06d}"
        try:
            if not self._started:
                self.directory.mkdir(exist_ok=True)
                info = {
                    "format": PARTIAL_FORMAT,
                    "version": PARTIAL_VERSION,
                    "embedder": self.embedder_name,
                }
                _write_atomic(self.directory / PARTIAL_INFO_FILE, _json_bytes(info))
                fsync_path(self.directory.parent)
                self._started = True
            data_path = self.directory / f"{name}.npy"
            _write_atomic(data_path, lambda f: np.save(f, rows, allow_pickle=False))
            meta = {
                "embedder": self.embedder_name,
                "rows": int(rows.shape[0]),
                "dim": int(rows.shape[1]),
                "sha256": file_sha256(data_path),
                "hashes": list(hashes),
            }
            _write_atomic(self.directory / f"{name}.json", _json_bytes(meta))
            fsync_path(self.directory)
        except OSError as exc:
            self._usable = False
            self._warn(
                f"cannot keep embedded batches in {self.directory} ({exc.strerror or exc}); "
                f"if this build is interrupted, it starts over"
            )
            return
        self._next += 1
        self.vectors.update(zip(hashes, rows, strict=True))

    def discard(self) -> None:
        """Remove the folder (only if it holds nothing but this class's files)."""
        if is_own_partial(self.directory):
            shutil.rmtree(self.directory, ignore_errors=True)

    def reset(self) -> None:
        """Forget every kept batch and remove the folder; batches added later start it again."""
        self.discard()
        self.vectors.clear()
        self._next = 1
        self._started = False


def _json_bytes(value: object) -> Callable[[BinaryIO], object]:
    data = (json.dumps(value, sort_keys=True) + "\n").encode("utf-8")
    return lambda f: f.write(data)


def _write_atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` through a temporary sibling, flushed to disk, then renamed into place."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
