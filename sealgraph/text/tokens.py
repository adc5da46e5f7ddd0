"""Token-true counting with tiktoken.

Encodings are loaded once per process. tiktoken downloads its BPE files on first
use; on a machine without network access they must come from a local cache
(``TIKTOKEN_CACHE_DIR``). When an encoding cannot be loaded we fail fast with a
message that says how to fix it instead of letting a network error surface deep
inside a run.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable

from sealgraph.errors import TokenizerError

DEFAULT_ENCODING = "o200k_base"

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


@functools.lru_cache(maxsize=8)
def get_encoding(name: str = DEFAULT_ENCODING):
    """Load a tiktoken encoding, raising :class:`TokenizerError` with a fix on failure."""
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # network errors, hash mismatches, unknown names
        cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
        where = f"TIKTOKEN_CACHE_DIR={cache}" if cache else "TIKTOKEN_CACHE_DIR is not set"
        raise TokenizerError(
            f"cannot load the tiktoken encoding {name!r} ({type(exc).__name__}: {exc}). "
            f"tiktoken downloads encodings on first use; on an offline machine put the "
            f"encoding file in a folder and `export TIKTOKEN_CACHE_DIR=/that/folder` "
            f"({where}), or run once with network access."
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
