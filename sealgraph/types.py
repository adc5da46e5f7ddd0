"""Value types shared across ingestion, retrieval, the controller and packing.

They are plain frozen dataclasses so that the algorithms that use them stay
independent of LangGraph; :func:`dataclasses.asdict` turns any of them into the
JSON-safe dicts kept in the graph state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Document:
    """A source document before chunking."""

    doc_id: str
    """Stable id: derived from the source path (and record) or given by the JSONL."""
    title: str
    """Human title: first heading, JSONL title, or the file stem."""
    text: str
    """Full text; chunk offsets refer to this string."""
    source: str = ""
    """Where the document came from (file path, optionally with ``:line``)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Free-form extra fields kept from the source."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A zero-overlap piece of a document, cut on sentence boundaries."""

    chunk_id: str
    """Globally unique id, ``"{doc_id}#{order}"``."""
    doc_id: str
    """Id of the document this chunk belongs to."""
    title: str
    """Title of the document."""
    section: tuple[str, ...]
    """Heading chain from the document root to this chunk (may be empty)."""
    order: int
    """0-based position of the chunk within its document."""
    start: int
    """Character offset of the chunk's first character in the document text."""
    end: int
    """Character offset one past the chunk's last character."""
    text: str
    """The chunk text, exactly ``document.text[start:end]``."""
    n_tokens: int
    """Token count of ``text`` with the index's tokenizer."""
    sentences: tuple[tuple[int, int], ...] = ()
    """Sentence spans as (start, end) offsets relative to ``text``; they tile it."""

    def sentence_texts(self) -> list[str]:
        """Return the chunk's sentences, whose concatenation is ``text``."""
        if not self.sentences:
            return [self.text]
        return [self.text[a:b] for a, b in self.sentences]


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieval result."""

    chunk_id: str
    """Id of the retrieved chunk."""
    score: float
    """Retriever score (higher is better; scales differ between retrievers)."""
    rank: int
    """0-based rank within this result list."""
    source: str
    """Which retriever produced it: ``lexical``, ``dense``, ``hybrid`` or ``title``."""
