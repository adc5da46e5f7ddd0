"""Exceptions raised by sealgraph.

Every error a user can cause (a bad path, a bad question, a corrupt index) is a
:class:`SealgraphError`; the CLI prints its message and exits non-zero without a
traceback. Anything else is a bug and is allowed to surface.
"""

from __future__ import annotations


class SealgraphError(Exception):
    """Base class for errors caused by input, configuration or environment."""

    exit_code: int = 2


class InputError(SealgraphError):
    """A user-supplied value (question, path, flag) is unusable."""


class IngestError(SealgraphError):
    """A corpus file cannot be ingested (for example a malformed JSONL line)."""


class IndexCorruptError(SealgraphError):
    """An index directory is missing, incomplete or damaged."""


class StaleTokenizerError(IndexCorruptError):
    """An index's lexical part was built with another tokenizer (lexicon or stemmer).

    Nothing is damaged: ``sealgraph index --index DIR`` (or
    :func:`sealgraph.index.refresh_lexical`) rebuilds the lexical part from the stored
    chunks, without embedding anything again.
    """


class EmbedderMismatchError(SealgraphError):
    """An index was built with a different embedder than the one requested."""


class TokenizerError(SealgraphError):
    """A tiktoken encoding cannot be loaded."""


class ConfigError(SealgraphError):
    """A configuration value is invalid."""


class CheckpointError(SealgraphError):
    """A checkpoint database or thread cannot be used."""


class DiskFullError(SealgraphError):
    """No space is left where an index is written; what was there is unchanged."""
