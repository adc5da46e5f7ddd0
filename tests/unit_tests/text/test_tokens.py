"""The packaged tiktoken encodings: offline with no set-up, identical to tiktoken's own."""

from __future__ import annotations

import hashlib

import pytest
from support.cli import run_cli
from support.fakes import write_tiny_docs

from sealgraph.errors import TokenizerError
from sealgraph.text import tokens

SAMPLE = (
    "Dana Whitcombe leads the Ledgerline team — since 2019, über 3,141 réunions!\n"
    "  def f(x): return x**2"
)
# Token ids from tiktoken 0.14 with the encodings it downloads itself.
EXPECTED = {
    "o200k_base": [195053, 49998, 149364, 15286, 290, 111992, 1137, 3214, 2733, 3630, 220, 667,
                   24, 11, 5469, 220, 18, 11, 16926, 185187, 4175, 220, 1056, 285, 4061, 3127,
                   622, 1215, 410, 17],
    "cl100k_base": [35, 3444, 27484, 92157, 11767, 279, 71406, 1074, 2128, 2001, 2533, 220, 679,
                    24, 11, 14104, 220, 18, 11, 9335, 9517, 359, 919, 4999, 220, 711, 282,
                    2120, 1680, 471, 865, 334, 17],
}  # fmt: skip
N_VOCAB = {"o200k_base": 200019, "cl100k_base": 100277}


@pytest.fixture
def fresh(monkeypatch):
    """No tiktoken cache configured, no network (a dead proxy), no loaded encodings."""
    for name in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    tokens.get_encoding.cache_clear()
    yield
    tokens.get_encoding.cache_clear()


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_packaged_encoding_encodes_as_tiktoken_does(fresh, name):
    encoding = tokens.get_encoding(name)
    assert encoding.name == name
    assert encoding.n_vocab == N_VOCAB[name]
    assert encoding.encode(SAMPLE) == EXPECTED[name]
    assert encoding.decode(EXPECTED[name]) == SAMPLE
    assert encoding.encode("<|endoftext|>", allowed_special="all") == [encoding.eot_token]


def test_default_counter_needs_no_cache_folder(fresh):
    assert tokens.TokenCounter().count(SAMPLE) == len(EXPECTED["o200k_base"])
    assert set(tokens.bundled_encodings()) >= {"o200k_base", "cl100k_base"}


def test_cache_folder_without_the_file_still_uses_the_package(fresh, tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert tokens.get_encoding("o200k_base").encode(SAMPLE) == EXPECTED["o200k_base"]
    assert list(tmp_path.iterdir()) == []  # nothing downloaded, nothing written


def test_cache_folder_with_the_file_is_honoured(fresh, tmp_path, monkeypatch):
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    key = hashlib.sha1(url.encode()).hexdigest()  # tiktoken's name for the cached file
    (tmp_path / key).write_bytes((tokens._BUNDLED_DIR / "o200k_base.tiktoken").read_bytes())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    seen = []
    import tiktoken

    real = tiktoken.get_encoding
    monkeypatch.setattr(tiktoken, "get_encoding", lambda n: seen.append(n) or real(n))
    assert tokens.get_encoding("o200k_base").encode(SAMPLE) == EXPECTED["o200k_base"]
    assert seen == ["o200k_base"]


def test_encoding_not_packaged_and_not_cached_is_a_clear_error(fresh, tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(TokenizerError, match="TIKTOKEN_CACHE_DIR") as info:
        tokens.get_encoding("p50k_base")
    assert "o200k_base" in str(info.value)  # says what ships


def test_first_run_indexes_and_asks_without_any_tiktoken_setting(tmp_path):
    # The README's first run, in a child process with no cache folder and no network.
    docs = write_tiny_docs(tmp_path / "docs")
    env = {
        "TIKTOKEN_CACHE_DIR": "",
        "DATA_GYM_CACHE_DIR": "",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    built = run_cli(
        "index", str(docs), "--index", str(tmp_path / "i"), "--embedder", "none", env=env
    )
    assert built.code == 0, built.err
    asked = run_cli("ask", "Who leads the team?", "--index", str(tmp_path / "i"), env=env)
    assert asked.code == 0, asked.err


def test_a_damaged_file_in_the_cache_folder_is_left_alone(fresh, tmp_path, monkeypatch):
    # tiktoken would delete it and download again, with no time limit: the package's is used.
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    damaged = tmp_path / hashlib.sha1(url.encode()).hexdigest()
    damaged.write_bytes(b"not an encoding\n")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert tokens.get_encoding("o200k_base").encode(SAMPLE) == EXPECTED["o200k_base"]
    assert damaged.read_bytes() == b"not an encoding\n"
