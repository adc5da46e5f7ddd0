"""Where the local model runs: CUDA, then Apple MPS, else the CPU; a device named must be there.

CI has no GPU: torch's answers (``torch.cuda.is_available`` and the like) are
replaced here, and the model is a fake that records what it was asked, so no test
loads a model or needs a GPU.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.fakes import write_tiny_docs

import sealgraph.index.embedders as embedders
from sealgraph.cli import main
from sealgraph.errors import ConfigError
from sealgraph.index._device import (
    DEVICE_ENV,
    check_precision,
    default_batch_size,
    device_spec,
    resolve_device,
)
from sealgraph.index.embedders import (
    LocalEmbedder,
    StaticEmbedder,
    check_embedder_ready,
    resolve_embedder,
)

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="needs torch (sealgraph[local])"
)
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _no_device_env(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)


@pytest.fixture
def gpus(monkeypatch):
    """Set what torch reports: ``gpus(cuda=2, mps=False)``."""
    torch = pytest.importorskip("torch")

    def set_(cuda: int = 0, mps: bool = False) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: cuda)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)

    return set_


class FakeModel:
    """Stands in for the SentenceTransformer: records the device, precision and batch size."""

    def __init__(self, device: str, precision: str) -> None:
        self.device = device
        self.precision = precision
        self.batch_sizes: list[int] = []

    def encode(self, texts, batch_size, **kwargs):
        self.batch_sizes.append(batch_size)
        return np.ones((len(texts), 384), dtype=np.float32)


@pytest.fixture
def fake_model(monkeypatch):
    models: dict[tuple[str, str], FakeModel] = {}

    def load(device: str = "cpu", precision: str = "fp32") -> FakeModel:
        return models.setdefault((device, precision), FakeModel(device, precision))

    monkeypatch.setattr(embedders, "_local_model", load)
    return models


# --- auto: CUDA, then MPS, else the CPU -----------------------------------------------------


@needs_torch
def test_auto_picks_cuda_then_mps_then_the_cpu(gpus):
    gpus(cuda=1, mps=True)
    assert resolve_device() == resolve_device("auto") == "cuda"
    gpus(cuda=0, mps=True)
    assert resolve_device() == "mps"
    gpus(cuda=0, mps=False)
    assert resolve_device() == "cpu"


@needs_torch
def test_a_device_named_is_used_when_it_is_there(gpus):
    gpus(cuda=2, mps=True)
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("CUDA") == "cuda"
    assert resolve_device("cuda:1") == "cuda:1"
    assert resolve_device("mps") == "mps"


@needs_torch
def test_the_environment_is_the_default_and_the_argument_wins(gpus, monkeypatch):
    gpus(cuda=1)
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert resolve_device() == "cpu" and LocalEmbedder().resolved_device() == "cpu"
    assert resolve_device("cuda") == "cuda"
    assert LocalEmbedder(device="auto").resolved_device() == "cuda"
    monkeypatch.setenv(DEVICE_ENV, " ")
    assert device_spec() == "auto"


@needs_torch
@pytest.mark.parametrize(
    ("asked", "cuda", "mps", "message"),
    [
        ("cuda", 0, False, "device cuda: CUDA is not available here"),
        ("cuda:0", 0, True, "device cuda:0: CUDA is not available here"),
        ("cuda:2", 2, False, "device cuda:2: this machine has 2 CUDA device(s) (cuda:0 to cuda:1)"),
        ("mps", 1, False, "device mps (Apple's Metal) is not available here"),
    ],
)
def test_a_device_named_that_is_not_there_is_a_one_line_error(gpus, asked, cuda, mps, message):
    gpus(cuda=cuda, mps=mps)
    with pytest.raises(ConfigError) as caught:
        resolve_device(asked)
    text = str(caught.value)
    assert text.startswith(message) and "\n" not in text
    assert "--device cpu" in text or "cuda:0 to" in text


def test_a_misspelt_device_is_an_error_without_torch(monkeypatch):
    for bad in ("gpu", "cuda:", "cuda:x", "tpu", "cuda:0:1"):
        with pytest.raises(ConfigError, match="use auto, cpu, cuda, cuda:N or mps"):
            device_spec(bad)
    monkeypatch.setenv(DEVICE_ENV, "gpu")
    with pytest.raises(ConfigError, match=r"unknown \$SEALGRAPH_DEVICE 'gpu'"):
        LocalEmbedder()


# --- the local embedder on the chosen device ------------------------------------------------


@needs_torch
def test_the_batch_size_fits_the_device_unless_given(gpus, fake_model):
    assert default_batch_size("cpu") == 64 and default_batch_size("cuda:1") == 256
    gpus(cuda=1)
    LocalEmbedder().embed_documents(["a", "b"])
    LocalEmbedder(device="cpu").embed_documents(["a"])
    LocalEmbedder(32, device="cuda").embed_documents(["a"])
    assert fake_model[("cuda", "fp32")].batch_sizes == [256, 32]
    assert fake_model[("cpu", "fp32")].batch_sizes == [64]


@needs_torch
def test_fp32_is_the_default_everywhere_and_fp16_runs_on_cuda_only(gpus, fake_model):
    gpus(cuda=1, mps=True)
    assert LocalEmbedder().precision == "fp32"
    LocalEmbedder(device="cuda", precision="fp16").embed_query("q")
    assert ("cuda", "fp16") in fake_model
    for device in ("cpu", "mps"):
        embedder = LocalEmbedder(device=device, precision="fp16")
        with pytest.raises(ConfigError, match="fp16 runs on a CUDA device only"):
            check_embedder_ready(embedder)
    with pytest.raises(ConfigError, match="unknown precision"):
        check_precision("int8")


@needs_torch
def test_check_embedder_ready_says_now_that_cuda_is_missing(gpus):
    gpus(cuda=0)
    with pytest.raises(ConfigError, match="CUDA is not available"):
        check_embedder_ready(LocalEmbedder(device="cuda"))
    check_embedder_ready(LocalEmbedder())  # auto: always works
    with pytest.raises(ConfigError, match="CUDA is not available"):
        check_embedder_ready(StaticEmbedder(device="cuda"))


def test_options_that_do_not_suit_the_embedder_are_refused():
    with pytest.raises(ConfigError, match=r"--device \(device\) applies to the local and "):
        resolve_embedder("openai:m", device="cuda")
    with pytest.raises(ConfigError, match=r"--precision \(precision\) applies to the local "):
        resolve_embedder("none", precision="fp16")


def test_the_static_distillation_runs_on_the_device_asked_for(monkeypatch, tmp_path):
    import sealgraph.index.static_embedder as se

    seen = []
    monkeypatch.setattr(se, "_model_dir", lambda: tmp_path)
    monkeypatch.setattr(se, "_load_tokenizer", lambda _: _Vocab())
    monkeypatch.setattr(se, "static_table_path", lambda *_: tmp_path / "table.npy")
    monkeypatch.setattr(se, "_TABLES", {})

    def distill(model_dir, **kwargs):
        seen.append(kwargs.get("device"))
        return np.ones((3, se.STATIC_DIM), dtype=np.float32)

    monkeypatch.setattr(se, "distill_static_table", distill)
    se.StaticEmbedder(device="cpu").embed_query("a")
    assert seen == ["cpu"]


class _Vocab:
    def get_vocab_size(self) -> int:
        return 3

    def encode_batch(self, texts, add_special_tokens=False):
        return [type("E", (), {"ids": [0, 1]})() for _ in texts]


# --- the command line ----------------------------------------------------------------------


@needs_torch
def test_index_device_cuda_without_cuda_is_a_one_line_error(tmp_path, capsys, gpus, monkeypatch):
    gpus(cuda=0)
    monkeypatch.setattr(embedders, "local_embedder_available", lambda: True)
    docs = write_tiny_docs(tmp_path / "docs")
    idx = tmp_path / "idx"
    code = main(["index", str(docs), "--index", str(idx), "--device", "cuda"])
    _, err = capsys.readouterr()
    assert code != 0 and "Traceback" not in err and err.count("\n") == 1
    assert "device cuda: CUDA is not available here" in err and "--device cpu" in err
    assert not idx.exists()
    code = main(["index", str(docs), "--index", str(idx), "--device", "gpu"])
    _, err = capsys.readouterr()
    assert code != 0 and "unknown device 'gpu'" in err and err.count("\n") == 1


@needs_torch
def test_index_device_cpu_builds_with_the_device_and_batch_size_given(
    tmp_path, capsys, fake_model, monkeypatch
):
    monkeypatch.setattr(embedders, "local_embedder_available", lambda: True)
    docs = write_tiny_docs(tmp_path / "docs")
    argv = ["index", str(docs), "--index", str(tmp_path / "idx"), "--embedder", "local"]
    code = main([*argv, "--device", "cpu", "--embed-batch-size", "7"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert fake_model[("cpu", "fp32")].batch_sizes == [7]
    assert "sentence-transformers/all-MiniLM-L6-v2" in out


def test_a_lexical_build_and_the_device_spelling_import_no_torch(tmp_path):
    docs = write_tiny_docs(tmp_path / "docs")
    script = (
        "import sys\n"
        "from sealgraph.cli import main\n"
        "from sealgraph.index.embedders import LocalEmbedder, check_embedder_ready\n"
        "check_embedder_ready(LocalEmbedder())\n"
        "check_embedder_ready(LocalEmbedder(device='cpu'))\n"
        f"assert main(['index', {str(docs)!r}, '--index', {str(tmp_path / 'idx')!r},"
        " '--embedder', 'none']) == 0\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
