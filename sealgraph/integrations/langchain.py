"""Use sealgraph from LangChain: a retriever, an agent tool, LangChain documents and embeddings.

* :class:`SealRetriever` is a LangChain ``BaseRetriever``: it runs the SEAL graph
  on the query and returns the repaired evidence set (or the packed spans the
  generator saw) as ``Document`` objects.
* :func:`make_tool` returns a LangChain tool (``{"question": str}`` in, the
  answer with its citations out, the evidence as the tool message's artifact)
  for ``langchain.agents.create_agent`` or any tool-calling model (over an
  index or a compiled graph); ``build_graph(...).as_tool()`` is LangChain's generic
  conversion, which asks for the question and the run's ``config`` (``{}`` will do)
  and returns the run's output.
* :func:`sealgraph.index.build_index` accepts LangChain ``Document`` objects
  (converted by :func:`sealgraph.ingest.from_langchain.documents_from_langchain`,
  re-exported here) and any LangChain
  ``Embeddings`` (wrapped in :class:`LangChainEmbedder`); pass the same
  embeddings to :func:`sealgraph.index.load_index` when loading the index.

A LangChain vector store or retriever cannot serve as sealgraph's index (the SEAL
loop reads chunks by id and walks documents in order): :func:`build_graph`
refuses one with a clear :class:`~sealgraph.errors.InputError`. Index the
documents with :func:`sealgraph.index.build_index` instead.

Metadata of the returned documents
----------------------------------

Every document (``mode="evidence"``, the default: one per evidence chunk, in
evidence-set order, ``page_content`` the chunk text, ``id`` the chunk id) has:

``chunk_id``
    Id of the chunk, ``"{doc_id}#{order}"``.
``chunk_ids``
    The chunk ids the content comes from (``[chunk_id]`` for evidence).
``doc_id`` / ``title`` / ``section``
    The source document's id and title, and the chunk's heading chain (a list).
``score`` / ``score_kind``
    The score under which the chunk entered the evidence set: its retriever
    score for the initial search (``"retrieval"``, loop 0) or its utility S(c)
    when a repair loop swapped it in (``"utility"``); with ``mode="packed"``
    the packing score of the span (``"pack"``). None when the run recorded none.
``loop``
    The loop that admitted the chunk (0 = initial search).
``rank``
    0-based position in the returned list.
``n_tokens``
    Token count of ``page_content`` with the index's tokenizer.
``cited``
    Citation numbers ``[n]`` of the answer that cite this content (may be empty).

With ``mode="packed"`` (one document per span of the packed context, in context
order) ``chunk_id`` is the span's first chunk, ``loop`` the earliest loop among
its chunks, and ``n`` the span's number in the context.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    AsyncCallbackManagerForToolRun,
    CallbackManagerForRetrieverRun,
    CallbackManagerForToolRun,
)
from langchain_core.documents import Document as LangChainDocument
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from sealgraph.errors import InputError
from sealgraph.index.embedders import LangChainEmbedder, langchain_embedder_name
from sealgraph.ingest.from_langchain import documents_from_langchain

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.config import SealConfig

__all__ = [
    "DEFAULT_TOOL_DESCRIPTION",
    "DEFAULT_TOOL_NAME",
    "LangChainEmbedder",
    "QuestionInput",
    "SealRetriever",
    "SealTool",
    "documents_from_langchain",
    "langchain_embedder_name",
    "make_tool",
    "result_documents",
]

DEFAULT_TOOL_NAME = "ask_documents"
"""Name of the tool :func:`make_tool` returns when none is given."""

DEFAULT_TOOL_DESCRIPTION = (
    "Answer a (multi-hop) question from the indexed documents. Returns JSON with the "
    "answer and its numbered citations (title, chunk id, quoted text). Pass the full "
    "question, naming the entities it is about."
)
"""Description of the tool :func:`make_tool` returns when none is given."""

Mode = Literal["evidence", "packed"]

_RUN_KEYS = ("answer", "citations", "evidence", "packed", "seal_log")
"""State keys a retriever or tool run reads (``packed`` is not in the output schema)."""


# -- documents out ---------------------------------------------------------------


def result_documents(result: Mapping[str, Any], mode: Mode = "evidence") -> list[LangChainDocument]:
    """Turn a SEAL run's state into LangChain documents (see the module's metadata keys).

    Args:
        result: The run's values: ``evidence``, ``citations`` and ``seal_log``
            (what ``graph.invoke`` returns), plus ``packed`` for ``mode="packed"``
            (``graph.invoke(..., output_keys=[..., "packed"])``).
        mode: ``"evidence"`` for the evidence chunks, ``"packed"`` for the spans
            of the packed context.

    Raises:
        InputError: Unknown ``mode``, or ``packed`` missing for ``mode="packed"``.

    """
    evidence = list(result.get("evidence") or [])
    events = list(result.get("seal_log") or [])
    cited = _cited_by_chunk(result.get("citations") or [])
    if mode == "evidence":
        return _evidence_documents(evidence, events, cited)
    if mode != "packed":
        raise InputError(f"mode must be 'evidence' or 'packed', got {mode!r}")
    if "packed" not in result:
        raise InputError("mode='packed' needs the run's 'packed' spans (output_keys)")
    return _packed_documents(result["packed"] or [], evidence, events, cited)


def _evidence_documents(
    evidence: list[Mapping[str, Any]],
    events: list[Mapping[str, Any]],
    cited: Mapping[str, set[int]],
) -> list[LangChainDocument]:
    """One document per evidence chunk, in evidence-set order (``mode="evidence"``)."""
    admitted = _admission_scores(events)
    docs = []
    for rank, item in enumerate(evidence):
        chunk_id = item["chunk_id"]
        score, kind = admitted.get(chunk_id, (None, None))
        docs.append(
            LangChainDocument(
                id=chunk_id,
                page_content=item["text"],
                metadata={
                    "chunk_id": chunk_id,
                    "chunk_ids": [chunk_id],
                    "doc_id": item["doc_id"],
                    "title": item["title"],
                    "section": list(item.get("section") or []),
                    "score": score,
                    "score_kind": kind,
                    "loop": int(item.get("inserted_loop", 0)),
                    "rank": rank,
                    "n_tokens": int(item.get("n_tokens", 0)),
                    "cited": sorted(cited.get(chunk_id, ())),
                },
            )
        )
    return docs


def _packed_documents(
    packed: Iterable[Mapping[str, Any]],
    evidence: list[Mapping[str, Any]],
    events: list[Mapping[str, Any]],
    cited: Mapping[str, set[int]],
) -> list[LangChainDocument]:
    """One document per span of the packed context, in context order (``mode="packed"``)."""
    by_chunk = {item["chunk_id"]: item for item in evidence}
    cited_numbers = {n for numbers in cited.values() for n in numbers}
    pack_scores = _pack_decisions(events)
    return [
        LangChainDocument(
            page_content=span["text"],
            metadata=_span_metadata(span, rank, by_chunk, pack_scores, cited_numbers),
        )
        for rank, span in enumerate(packed)
    ]


def _span_metadata(
    span: Mapping[str, Any],
    rank: int,
    by_chunk: Mapping[str, Mapping[str, Any]],
    pack_scores: list[tuple[list[str], float | None]],
    cited_numbers: set[int],
) -> dict[str, Any]:
    # A span takes the section of its first chunk, the earliest loop of its chunks and
    # the best packing score of the selected spans that share a chunk with it.
    chunk_ids = list(span.get("chunk_ids") or [])
    first = by_chunk.get(chunk_ids[0], {}) if chunk_ids else {}
    loops = [int(by_chunk[c].get("inserted_loop", 0)) for c in chunk_ids if c in by_chunk]
    scores = [
        score for ids, score in pack_scores if score is not None and set(ids) & set(chunk_ids)
    ]
    return {
        "chunk_id": chunk_ids[0] if chunk_ids else None,
        "chunk_ids": chunk_ids,
        "doc_id": span.get("doc_id"),
        "title": span.get("title"),
        "section": list(first.get("section") or []),
        "score": max(scores) if scores else None,
        "score_kind": "pack" if scores else None,
        "loop": min(loops) if loops else None,
        "rank": rank,
        "n_tokens": int(span.get("tokens", 0)),
        "cited": [span["n"]] if span.get("n") in cited_numbers else [],
        "n": span.get("n"),
    }


def _cited_by_chunk(citations: Iterable[Mapping[str, Any]]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for c in citations:
        for chunk_id in c.get("chunk_ids") or [c.get("chunk_id")]:
            if chunk_id:
                out.setdefault(chunk_id, set()).add(int(c["n"]))
    return out


def _admission_scores(events: Iterable[Mapping[str, Any]]) -> dict[str, tuple[float, str]]:
    """Map each chunk id to (score, kind) of the last event that put it in the evidence set."""
    scores: dict[str, tuple[float, str]] = {}
    for event in events:
        data = event.get("data") or {}
        kind = event.get("kind")
        if kind == "retrieved":
            for hit in data.get("hits") or []:
                scores[hit["chunk_id"]] = (float(hit["score"]), "retrieval")
        elif kind in ("swap", "fill", "append"):
            candidate, score = data.get("candidate"), data.get("candidate_score")
            if candidate and isinstance(score, Mapping) and "total" in score:
                scores[candidate] = (float(score["total"]), "utility")
    return scores


def _pack_decisions(events: Iterable[Mapping[str, Any]]) -> list[tuple[list[str], float | None]]:
    """(chunk ids, final score) of every span the last pack event selected."""
    decisions: list[tuple[list[str], float | None]] = []
    for event in events:
        if event.get("kind") != "pack":
            continue
        decisions = []
        for d in (event.get("data") or {}).get("decisions") or []:
            if d.get("decision") == "selected":
                final = (d.get("scores") or {}).get("final")
                decisions.append((list(d.get("chunk_ids") or []), final))
    return decisions


# -- the graph behind the retriever and the tool ----------------------------------


def _is_seal_graph(value: Any) -> bool:
    # A compiled sealgraph graph is told by its input schema, whatever its class.
    from sealgraph.graph.state import SealInput

    builder = getattr(value, "builder", None)
    return builder is not None and getattr(builder, "input_schema", None) is SealInput


def _seal_graph(index: Any, llm: Any, config: Any) -> Any:
    """Return ``index`` if it is a compiled sealgraph graph, else build one over it."""
    if _is_seal_graph(index):
        if llm is not None or config is not None:
            raise InputError(
                "llm and config are settings of a graph to build: give them to build_graph, "
                "or pass an index here instead of a compiled graph"
            )
        return index
    from sealgraph.graph.builder import build_graph

    return build_graph(index, llm=llm, config=config)


def _run_input(question: str, overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"question": question}


def _run_context(overrides: Mapping[str, Any] | None) -> dict[str, Any] | None:
    # A run's own settings travel in its context (SealContext.config), not in the input.
    return {"config": dict(overrides)} if overrides else None


# -- the retriever ---------------------------------------------------------------


class SealRetriever(BaseRetriever):
    """A LangChain retriever that returns SEAL's repaired evidence as ``Document`` objects.

    Each query runs the whole SEAL graph (search, extract, assess, repair loops,
    pack, generate) and returns its final evidence set, or with ``mode="packed"``
    the spans of the packed context. The offline reasoner (the default) makes the
    result deterministic. The metadata keys are listed in :mod:`sealgraph.integrations.langchain`.

    Example::

        retriever = SealRetriever(index=load_index("./idx"))      # or index="./idx"
        docs = retriever.invoke("Who leads the team that owns Ledgerline?")
        docs[0].metadata["chunk_id"], docs[0].metadata["score"]

    Args:
        index: An index directory, a loaded index, or a compiled sealgraph graph
            (from :func:`~sealgraph.graph.builder.build_graph`, without a
            checkpointer). A LangChain vector store or retriever is refused here,
            with an :class:`~sealgraph.errors.InputError`.
        llm: None for the offline reasoner, or a chat model / ``"openai"`` (as
            :func:`build_graph`); only with an index.
        config: A :class:`SealConfig` or dict of settings for the graph built over
            ``index``; only with an index.
        overrides: Per-run config overrides sent with every query (as the input's
            ``config``), e.g. ``{"max_loops": 2}``; they work with a given graph too.
            A run may set only what :data:`sealgraph.config.RUN_OVERRIDES` allows
            (k, loops, budget, pool, micro-queries, LLM calls and time); other
            settings go to ``config``.
        k: Evidence-set size; shorthand for ``overrides={"k": k}``.
        mode: ``"evidence"`` (default) or ``"packed"``.

    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Any
    llm: Any = None
    config: Any = None
    overrides: dict[str, Any] | None = None
    k: int | None = Field(default=None, ge=1)
    mode: Mode = "evidence"

    _graph: Any = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Build (or take) the graph now, so a wrong ``index`` fails here, not at invoke."""
        super().model_post_init(context)
        self._graph = _seal_graph(self.index, self.llm, self.config)

    @property
    def graph(self) -> Any:
        """The compiled SEAL graph the retriever runs."""
        return self._graph

    def _overrides(self) -> dict[str, Any]:
        overrides = dict(self.overrides or {})
        if self.k is not None:
            overrides["k"] = self.k
        return overrides

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[LangChainDocument]:
        result = self._graph.invoke(
            _run_input(query, None),
            {"callbacks": run_manager.get_child()},
            output_keys=list(_RUN_KEYS),
            context=_run_context(self._overrides()),
        )
        return result_documents(result, self.mode)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[LangChainDocument]:
        result = await self._graph.ainvoke(
            _run_input(query, None),
            {"callbacks": run_manager.get_child()},
            output_keys=list(_RUN_KEYS),
            context=_run_context(self._overrides()),
        )
        return result_documents(result, self.mode)


# -- the tool ----------------------------------------------------------------------


class QuestionInput(BaseModel):
    """Input of the sealgraph tool."""

    question: str = Field(
        description="The full question to answer from the documents, naming its entities."
    )


class SealTool(BaseTool):
    """A LangChain tool that answers a question with the SEAL graph.

    Input ``{"question": str}``. Content: a JSON object ``{"answer": str,
    "citations": [{"n", "title", "chunk_id", "text"}, ...]}``. With
    ``response_format="content_and_artifact"`` (the default) the tool message's
    ``artifact`` holds the evidence as LangChain ``Document`` objects (the
    metadata of :mod:`sealgraph.integrations.langchain`). Build one with :func:`make_tool`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = DEFAULT_TOOL_NAME
    description: str = DEFAULT_TOOL_DESCRIPTION
    args_schema: Any = QuestionInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    graph: Any = Field(exclude=True)
    """The compiled SEAL graph."""
    overrides: dict[str, Any] | None = None
    """Per-run config overrides sent with every question (what
    :data:`sealgraph.config.RUN_OVERRIDES` allows a run to set)."""

    def _result(self, result: Mapping[str, Any]) -> Any:
        content = json.dumps(
            {
                "answer": result.get("answer", ""),
                "citations": [
                    {
                        "n": c.get("n"),
                        "title": c.get("title"),
                        "chunk_id": c.get("chunk_id"),
                        "text": c.get("text"),
                    }
                    for c in result.get("citations") or []
                ],
            },
            ensure_ascii=False,
        )
        if self.response_format == "content_and_artifact":
            return content, result_documents(result, "evidence")
        return content

    def _run(self, question: str, run_manager: CallbackManagerForToolRun | None = None) -> Any:
        config = {"callbacks": run_manager.get_child()} if run_manager else None
        result = self.graph.invoke(
            _run_input(question, None),
            config,
            output_keys=list(_RUN_KEYS),
            context=_run_context(self.overrides),
        )
        return self._result(result)

    async def _arun(
        self, question: str, run_manager: AsyncCallbackManagerForToolRun | None = None
    ) -> Any:
        config = {"callbacks": run_manager.get_child()} if run_manager else None
        result = await self.graph.ainvoke(
            _run_input(question, None),
            config,
            output_keys=list(_RUN_KEYS),
            context=_run_context(self.overrides),
        )
        return self._result(result)


def make_tool(
    index: Any,
    *,
    name: str = DEFAULT_TOOL_NAME,
    description: str | None = None,
    config: SealConfig | dict[str, Any] | None = None,
    llm: Any = None,
    overrides: Mapping[str, Any] | None = None,
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact",
) -> SealTool:
    """Return a LangChain tool that answers ``{"question": str}`` with the SEAL graph.

    Hand it to ``langchain.agents.create_agent(model, tools=[tool])`` or bind it
    to any tool-calling chat model. The content is JSON ``{"answer", "citations"}``;
    the artifact (with the default ``response_format``) is the evidence as
    LangChain documents.

    Args:
        index: An index directory, a loaded index (:class:`SearchIndex`), or a
            compiled sealgraph graph. A LangChain vector store or retriever is
            refused with an :class:`~sealgraph.errors.InputError`.
        name: Tool name the model calls.
        description: What the model is told the tool does; a default when None.
        config: Settings of the graph built over ``index`` (not with a graph).
        llm: Reasoner of the graph built over ``index`` (not with a graph); None
            is the offline reasoner.
        overrides: Per-run config overrides sent with every question (what
            :data:`sealgraph.config.RUN_OVERRIDES` allows a run to set).
        response_format: ``"content_and_artifact"`` (default) or ``"content"``.

    Raises:
        InputError: ``index`` is not a sealgraph index or graph.

    """
    graph = _seal_graph(index, llm, config)
    return SealTool(
        name=name,
        description=description or DEFAULT_TOOL_DESCRIPTION,
        graph=graph,
        overrides=dict(overrides) if overrides else None,
        response_format=response_format,
    )
