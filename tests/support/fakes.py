"""The tests' shared fakes: a tiny corpus, a fake embedder, a scripted chat model, a fake server.

* :data:`TINY_DOCS` / :func:`write_tiny_docs`: a fictional company handbook plus three
  linked entity pages, written for these tests, so that multi-hop questions have a known
  chain: *Lumen Lamp* → designed at *Northwind Studio* → founded in *Port Ellis* → in
  the province of *Valmora*; *Ada Brightwater* (the lamp's designer) has a plain-text note.
* :class:`HashEmbedder`: a fast deterministic dense embedder.
* :class:`ScriptedChatModel`: a LangChain chat model that replies from a script.
* :class:`FakeOpenAI` (:mod:`support._openai_server`): an OpenAI-compatible server on
  127.0.0.1 playing one failure mode at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from sealgraph.text.tokens import token_counter
from sealgraph.types import Chunk, Document
from support._openai_server import (
    FILL,
    FakeOpenAI,
    HTTPError,
    requested_tool,
    tool_call_message,
)

__all__ = [
    "FILL",
    "GRAPH_QUESTION",
    "GRAPH_READING",
    "NO_FACTS",
    "TINY_DOCS",
    "FakeOpenAI",
    "HTTPError",
    "HashEmbedder",
    "ScriptedChatModel",
    "make_doc",
    "question_scores",
    "requested_tool",
    "tool_call_message",
    "write_tiny_docs",
]

TINY_DOCS: dict[str, str] = {
    "handbook.md": """# Handbook

Welcome to Northwind Studio. This handbook explains how we work.

## Expenses

Keep every receipt. Claims are paid at the end of each month.

### Travel

Book trains when the journey takes under five hours. Flights need approval from a studio director.
Hotel stays are capped at 140 euros per night in Port Ellis and 180 euros elsewhere.

### Meals

Meals on the road are covered up to 40 euros per day. Alcohol is never reimbursed.

## Leave

Everyone gets 28 days of paid leave per year. Unused days expire at the end of March.
""",
    "products/lumen_lamp.md": """# Lumen Lamp

The Lumen Lamp is a brass desk lamp designed by Ada Brightwater at Northwind Studio.
It was first sold in 2011 and won the Harbour Design Prize in 2013.

## Materials

The shade is spun brass. The base is recycled cast iron from the Kestrel foundry.
""",
    "northwind_studio.md": """# Northwind Studio

Northwind Studio is an industrial design studio founded by Tomas Greyhill in 1998.
It was founded in Port Ellis, where it still has its workshop.
The studio employs about forty designers.
""",
    "port_ellis.md": """# Port Ellis

Port Ellis is a harbour town in the province of Valmora. It has about 52,000 inhabitants.
The town is known for its lighthouse and its annual boat fair.
""",
    "ada_brightwater.txt": """Ada Brightwater is a lighting designer born in Kestrel Bay in 1979.
She joined Northwind Studio in 2006. She designed the Lumen Lamp.
""",
}
"""File name → content of the tiny corpus (one plain-text file, the rest Markdown)."""


def write_tiny_docs(directory: Path) -> Path:
    """Write :data:`TINY_DOCS` under ``directory`` and return it."""
    for name, text in TINY_DOCS.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return directory


class HashEmbedder:
    """A fast deterministic fake embedder: hashed bag of content words, L2-normalised.

    Texts sharing words get similar vectors, so dense search behaves sensibly in
    tests without loading a model. It counts what it embeds.
    """

    def __init__(self, dim: int = 64, name: str = "test:hash-64") -> None:
        self.name = name
        self.dim = dim
        self.documents_embedded = 0
        self.queries_embedded = 0

    def _vector(self, text: str):
        import hashlib

        import numpy as np

        from sealgraph.text.names import content_words

        vector = np.zeros(self.dim, dtype=np.float32)
        for word in content_words(text):
            slot = int(hashlib.sha1(word.encode()).hexdigest()[:8], 16) % self.dim
            vector[slot] += 1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def embed_documents(self, texts):
        import numpy as np

        self.documents_embedded += len(texts)
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim))

    def embed_query(self, text):
        self.queries_embedded += 1
        return self._vector(text)


class ScriptedChatModel(FakeMessagesListChatModel):
    """Replies with scripted messages in order; a scripted exception is raised instead.

    ``bind_tools`` returns the model itself, so it can stand in for a tool-calling
    model; every call's messages are kept (:attr:`sent`, :attr:`prompts`).
    """

    responses: list[BaseMessage] = Field(default_factory=list)
    script: list[Any] = Field(default_factory=list)
    """AIMessages to return and exceptions to raise, consumed one per call."""
    prompts: list[str] = Field(default_factory=list)
    """Text of the last message of every call made (the user message, or a retry's feedback)."""
    sent: list[list[BaseMessage]] = Field(default_factory=list)
    """Every message of every call made."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.prompts.append(str(messages[-1].content))
        self.sent.append(list(messages))
        item = self.script.pop(0) if self.script else AIMessage(content="(script exhausted)")
        if isinstance(item, BaseException):
            raise item
        return ChatResult(generations=[ChatGeneration(message=item)])

    @property
    def calls(self) -> int:
        """Calls made so far."""
        return len(self.sent)


def make_doc(doc_id, title, sentences, *, per_chunk=None, section=()):
    """Return a document and its zero-overlap chunks (``per_chunk`` sentences each).

    Token counts use ``o200k_base``, the default encoding.
    """
    text = "".join(sentences)
    doc = Document(doc_id=doc_id, title=title, text=text)
    per_chunk = per_chunk or len(sentences)
    chunks, offset = [], 0
    for order, first in enumerate(range(0, len(sentences), per_chunk)):
        group = sentences[first : first + per_chunk]
        chunk_text = "".join(group)
        spans, at = [], 0
        for s in group:
            spans.append((at, at + len(s)))
            at += len(s)
        chunks.append(
            Chunk(
                chunk_id=f"{doc_id}#{order}",
                doc_id=doc_id,
                title=title,
                section=tuple(section),
                order=order,
                start=offset,
                end=offset + len(chunk_text),
                text=chunk_text,
                n_tokens=token_counter("o200k_base").count(chunk_text),
                sentences=tuple(spans),
            )
        )
        offset += len(chunk_text)
    return doc, chunks


def question_scores(**overrides: Any) -> Any:
    """Return one question's :class:`~sealgraph.eval.metrics.QuestionScores`: a perfect
    answer of two gold sentences, 10 ms, no loop, with ``overrides`` applied."""
    from sealgraph.eval.metrics import QuestionScores

    base: dict[str, Any] = dict(
        recall=1.0,
        all_gold=True,
        precision=1.0,
        evidence_size=2,
        evidence_tokens=100,
        context_tokens=80,
        sp_sentences=2,
        sp_in_context=2,
        sp_in_evidence=2,
        overlap=0.0,
        exact_match=True,
        f1=1.0,
        latency_ms=10.0,
        loops=0,
        llm_calls=0,
        budget_violation=False,
    )
    base.update(overrides)
    return QuestionScores(**base)


# A two-hop question over the tiny corpus and what a model would read of it: the
# scripted LLM replies of the graph tests.
GRAPH_QUESTION = "Where was the studio that designed the Lumen Lamp founded?"
"""A question over :data:`TINY_DOCS` (answer: Port Ellis)."""
GRAPH_READING = {
    "answer_type": "place",
    "hops": 1,
    "structure": "single",
    "entities": ["Lumen Lamp"],
    "options": [],
    "answer_modifiers": [],
    "compared_attribute": "",
}
"""A needs reply for :data:`GRAPH_QUESTION` (the ``needs`` step's schema)."""
NO_FACTS = {"entities": [], "relations": [], "qualifiers": []}
"""An extraction reply that finds nothing."""
