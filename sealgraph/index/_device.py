"""Where the local model runs: CUDA, Apple MPS or the CPU; how many texts go per batch.

A device is asked for as ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``: the
``device`` argument of an embedder (``--device`` on ``sealgraph index``), else
``$SEALGRAPH_DEVICE``, else ``auto``. ``auto`` picks CUDA when torch sees a GPU, then
Apple's MPS, else the CPU; a device asked for by name that is not there is a
one-line :class:`~sealgraph.errors.ConfigError`, never a silent fallback.

The spelling is checked without torch (:func:`device_spec`); torch is imported only
to choose or check a device (:func:`resolve_device`, :func:`check_device`), which a
lexical-only build or an ``ask`` without dense retrieval never does.

The vectors do not depend on the device beyond float rounding: the model runs in
fp32 everywhere unless ``fp16`` is asked for, which only CUDA takes.
"""

from __future__ import annotations

import os
import re
from typing import Any

from sealgraph.errors import ConfigError

DEVICE_ENV = "SEALGRAPH_DEVICE"
"""Environment variable with the default device of the local model (``auto`` when unset)."""

DEVICES = "auto, cpu, cuda, cuda:N or mps"
"""The device spellings, for messages and help."""

PRECISIONS = ("fp32", "fp16")
"""What the local model computes in; fp32 (the default) on every device, fp16 on CUDA only."""

BATCH_SIZES = {"cpu": 64, "mps": 128, "cuda": 256}
"""Texts per forward pass by device kind, when no batch size is given."""

_SPEC = re.compile(r"auto|cpu|mps|cuda(?::\d{1,3})?")


def device_spec(device: str | None = None) -> str:
    """Return the device asked for, lower-cased: ``device``, else ``$SEALGRAPH_DEVICE``, else auto.

    Checks the spelling only (no torch import).

    Raises:
        ConfigError: Not one of auto, cpu, cuda, cuda:N, mps.

    """
    source = "device" if device is not None else f"${DEVICE_ENV}"
    raw = device if device is not None else os.environ.get(DEVICE_ENV, "")
    value = str(raw).strip().lower() or "auto"
    if not _SPEC.fullmatch(value):
        raise ConfigError(f"unknown {source} {str(raw)!r}: use {DEVICES}")
    return value


def check_precision(precision: str | None, device: str | None = None) -> str:
    """Return ``precision`` (``fp32`` when None) after checking it suits ``device`` (a resolved one).

    Raises:
        ConfigError: Not fp32 or fp16, or fp16 on a device other than CUDA.

    """
    value = (precision or "fp32").strip().lower()
    if value not in PRECISIONS:
        raise ConfigError(f"unknown precision {precision!r}: use fp32 (the default) or fp16")
    if value == "fp16" and device is not None and device_kind(device) != "cuda":
        raise ConfigError(
            f"precision fp16 runs on a CUDA device only, not {device}; use fp32 (the default)"
        )
    return value


def device_kind(device: str) -> str:
    """``cuda`` for ``cuda:N``; the device itself otherwise."""
    return device.split(":", 1)[0]


def default_batch_size(device: str) -> int:
    """Texts per forward pass on a resolved ``device`` (:data:`BATCH_SIZES`)."""
    return BATCH_SIZES.get(device_kind(device), BATCH_SIZES["cpu"])


def resolve_device(device: str | None = None) -> str:
    """Return the torch device to run on: ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.

    ``auto`` (the default) picks CUDA, then MPS, else the CPU; a named device must
    be there. Imports torch unless the CPU is asked for by name.

    Raises:
        ConfigError: A bad spelling, or a device that torch cannot use here
            (``cuda`` without CUDA, ``cuda:3`` on a one-GPU machine, ``mps`` off Apple).

    """
    spec = device_spec(device)
    if spec == "cpu":
        return spec
    import torch

    if spec == "auto":
        if torch.cuda.is_available():
            return "cuda"
        return "mps" if _mps_available(torch) else "cpu"
    if device_kind(spec) == "cuda":
        _check_cuda(torch, spec)
    elif not _mps_available(torch):
        raise ConfigError(
            "device mps (Apple's Metal) is not available here; use --device cpu, or auto "
            "to pick what there is"
        )
    return spec


def check_device(device: str | None = None) -> None:
    """Raise now if the device asked for cannot be used; free for ``auto`` and ``cpu`` (no torch)."""
    if device_spec(device) not in {"auto", "cpu"}:
        resolve_device(device)


def _check_cuda(torch: Any, spec: str) -> None:
    if not torch.cuda.is_available():
        build = getattr(torch.version, "cuda", None)
        why = "this torch is built without CUDA" if not build else "torch sees no CUDA GPU"
        raise ConfigError(
            f"device {spec}: CUDA is not available here ({why}, torch "
            f"{getattr(torch, '__version__', '?')}); use --device cpu, or auto to pick what "
            f"there is"
        )
    _, _, index = spec.partition(":")
    count = int(torch.cuda.device_count())
    if index and int(index) >= count:
        raise ConfigError(
            f"device {spec}: this machine has {count} CUDA device(s) (cuda:0 to cuda:{count - 1})"
        )


def _mps_available(torch: Any) -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())
