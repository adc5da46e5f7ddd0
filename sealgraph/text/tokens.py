"""Token-true counting with tiktoken.

Encodings are loaded once per process. The encodings the default config needs
(``o200k_base``, and ``cl100k_base`` for older OpenAI models) ship inside the
package, so counting works offline with no set-up. ``TIKTOKEN_CACHE_DIR`` is
still honoured: when it is set, tiktoken reads (or downloads into) that folder
first. Any other encoding comes from tiktoken's usual download; when one cannot
be loaded we fail fast with a message that says how to fix it instead of letting
a network error surface deep inside a run.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sealgraph.errors import TokenizerError

DEFAULT_ENCODING = "o200k_base"

# The encodings shipped in the package: tiktoken's own files, byte for byte (their
# SHA-256 below is the one tiktoken checks after a download), with the split
# pattern and special tokens of tiktoken_ext.openai_public; a test checks that an
# encoding built from them encodes exactly as tiktoken's does.
_BUNDLED_DIR = Path(__file__).with_name("encodings")
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
_BUNDLED: dict[str, dict[str, Any]] = {
    "o200k_base": {
        "url": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "pat_str": _O200K_PATTERN,
        "special_tokens": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    },
    "cl100k_base": {
        "url": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "pat_str": _CL100K_PATTERN,
        "special_tokens": {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    },
}

# Texts longer than this are counted but not cached (see TokenCounter.count).
_MAX_CACHED_CHARS = 1 << 16
# UTF-8 continuation bytes (10xxxxxx): every other byte starts a character.
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


def encoding_for_model(model: str | None) -> str:
    """Return the tiktoken encoding name used by ``model`` (o200k_base for None or "").

    Args:
        model: An encoding name (``o200k_base``), a model name tiktoken knows
            (``gpt-4o-mini``), or None.

    Raises:
        TokenizerError: ``model`` is neither: a budget counted with a guessed
            tokenizer would be silently wrong, and an index would record an
            encoding nobody asked for. Self-hosted models name the encoding
            closest to theirs (``o200k_base`` for most modern BPE models).

    """
    if not model:
        return DEFAULT_ENCODING
    import tiktoken

    name = model.strip()
    if name in tiktoken.list_encoding_names():
        return name
    try:
        return tiktoken.encoding_name_for_model(name)
    except KeyError:
        known = ", ".join(sorted(tiktoken.list_encoding_names()))
        raise TokenizerError(
            f"unknown tokenizer {model!r}: give a tiktoken encoding ({known}) or an OpenAI "
            f"model name such as gpt-4o; for another model, the encoding closest to its "
            f"tokenizer (o200k_base for most)"
        ) from None


def bundled_encodings() -> tuple[str, ...]:
    """Names of the tiktoken encodings shipped in the package (usable offline)."""
    return tuple(sorted(_BUNDLED))


def _cache_dir() -> str | None:
    return os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")


def _in_cache(name: str, cache: str) -> bool:
    """Whether tiktoken's cache folder holds its own, intact file for a packaged encoding.

    tiktoken names a cached file by the SHA-1 of its download address. A file
    whose hash is not the encoding's is not used: tiktoken would delete it and
    download again, with no time limit; the packaged copy is used instead.
    """
    key = hashlib.sha1(_BUNDLED[name]["url"].encode("utf-8")).hexdigest()
    path = Path(cache) / key
    try:
        return (
            path.is_file()
            and hashlib.sha256(path.read_bytes()).hexdigest() == (_BUNDLED[name]["sha256"])
        )
    except OSError:
        return False


def _load_bundled(name: str):
    import tiktoken

    spec = _BUNDLED[name]
    # Read here, not through tiktoken.load: that would copy the file into the user's
    # TIKTOKEN_CACHE_DIR under its path's hash.
    data = (_BUNDLED_DIR / f"{name}.tiktoken").read_bytes()
    if hashlib.sha256(data).hexdigest() != spec["sha256"]:
        raise TokenizerError(
            f"the packaged tiktoken encoding {name!r} is damaged (hash mismatch); reinstall sealgraph"
        )
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(
        name=name,
        pat_str=spec["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=dict(spec["special_tokens"]),
    )


@functools.lru_cache(maxsize=8)
def get_encoding(name: str = DEFAULT_ENCODING):
    """Load a tiktoken encoding, raising :class:`TokenizerError` with a fix on failure.

    A packaged encoding is read from the package unless ``TIKTOKEN_CACHE_DIR``
    (or tiktoken's older ``DATA_GYM_CACHE_DIR``) names a folder that holds
    tiktoken's file for it, which is then used as tiktoken always does; a
    packaged encoding is never downloaded (tiktoken's download has no time
    limit). Any other encoding is tiktoken's: cache, else download.
    """
    import tiktoken

    cache = _cache_dir()
    if name in _BUNDLED and not (cache and _in_cache(name, cache)):
        return _load_bundled(name)
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # network errors, hash mismatches, unknown names
        where = f"TIKTOKEN_CACHE_DIR={cache}" if cache else "TIKTOKEN_CACHE_DIR is not set"
        shipped = ", ".join(bundled_encodings())
        raise TokenizerError(
            f"cannot load the tiktoken encoding {name!r} ({type(exc).__name__}: {exc}). "
            f"sealgraph ships {shipped}; tiktoken downloads any other encoding on first "
            f"use: on an offline machine put the encoding file in a folder and "
            f"`export TIKTOKEN_CACHE_DIR=/that/folder` ({where}), or run once with "
            f"network access."
        ) from exc


class TokenCounter:
    """Counts tokens with one encoding, caching counts per distinct text.

    Args:
        encoding: tiktoken encoding name (see :func:`encoding_for_model`).
        cache_size: Most distinct texts whose counts are remembered.

    """

    def __init__(self, encoding: str = DEFAULT_ENCODING, cache_size: int = 65536) -> None:
        self.encoding_name = encoding
        self._enc = get_encoding(encoding)
        self._count = functools.lru_cache(maxsize=cache_size)(self._count_uncached)

    def _count_uncached(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        if not text:
            return 0
        if len(text) > _MAX_CACHED_CHARS:
            # A cache entry keeps its text alive: a huge text would pin megabytes
            # for a count that is rarely asked twice.
            return self._count_uncached(text)
        return self._count(text)

    @functools.cached_property
    def max_token_bytes(self) -> int:
        """Most UTF-8 bytes of any one token of the encoding.

        A text of more than ``n * max_token_bytes`` characters therefore has more
        than ``n`` tokens, which tells that a text is too long without counting it.
        """
        return max(len(token) for token in self._enc.token_byte_values())

    def prefix_chars(self, text: str, max_tokens: int) -> int:
        """Return how many characters of ``text`` its first ``max_tokens`` tokens cover.

        ``text`` is encoded once; characters that a token boundary splits are not
        counted. The result is ``len(text)`` when ``text`` has at most ``max_tokens``
        tokens. A prefix of that length usually counts ``max_tokens`` tokens or
        fewer on its own, but BPE is not prefix-stable, so callers that need a bound
        count the prefix they keep.

        Args:
            text: Any text.
            max_tokens: Number of leading tokens, 0 or more.

        """
        ids = self._enc.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return len(text)
        n_bytes = len(self._enc.decode_bytes(ids[: max(0, max_tokens)]))
        # "surrogatepass" keeps lone surrogates at the 3 bytes tiktoken encodes them as.
        raw = text.encode("utf-8", "surrogatepass")
        head = raw[:n_bytes]
        chars = len(head.translate(None, _CONTINUATION_BYTES))  # one lead byte per character
        if n_bytes < len(raw) and raw[n_bytes] in _CONTINUATION_BYTES:
            chars -= 1  # the last character is cut by the boundary: not covered
        return chars

    def count_many(self, texts: Iterable[str]) -> list[int]:
        """Return token counts for several texts."""
        return [self.count(t) for t in texts]

    def truncate(self, text: str, max_tokens: int) -> str:
        """Return the longest prefix of ``text`` (on a token boundary) within ``max_tokens``."""
        if max_tokens <= 0:
            return ""
        ids = self._enc.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        return self._enc.decode(ids[:max_tokens])


@functools.lru_cache(maxsize=8)
def token_counter(encoding: str = DEFAULT_ENCODING) -> TokenCounter:
    """Return a process-wide shared :class:`TokenCounter` for ``encoding``."""
    return TokenCounter(encoding)
