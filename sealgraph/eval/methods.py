"""The methods ``sealgraph eval`` compares, as a registry of name -> :class:`Method`.

Every method answers a question from the same index with the same ``k`` and,
for packing, the same token budget:

* ``flat-bm25``, ``flat-dense``, ``flat-hybrid``: the top-k of one retriever, no loop.
* ``adaptive-k``: hybrid candidates from a pool of ``max(3k, 10)``, cut at the
  largest gap between consecutive scores (:func:`adaptive_cutoff`).
* ``expand``: the CRAG/Self-RAG-style iterative baseline. Each loop rewrites the
  query (the question plus the most distinctive terms of the passages added last,
  pseudo-relevance feedback: what such controllers do without a model) and *adds*
  the top-k results of the rewritten query to the set, up to the loop budget.
  No gap specification, no utility, no eviction (:func:`expand_evidence`).
* ``seal-append``: the ablation "replacement off": the sealgraph graph with
  ``replacement=False`` (gap-targeted micro-queries, but appended, never swapped).
* ``seal``: the sealgraph graph (fixed-k replacement).

The flat methods and ``adaptive-k`` pack and answer their evidence with
:func:`sealgraph.pipeline.answer_from_evidence`, the code the graph itself uses,
so only evidence selection differs between methods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sealgraph.config import SealConfig
from sealgraph.errors import InputError
from sealgraph.types import Chunk, Hit

__all__ = [
    "METHODS",
    "Method",
    "MethodOutput",
    "MethodRunner",
    "Pipeline",
    "adaptive_cutoff",
    "default_pipeline",
    "get_method",
    "parse_methods",
    "require_dense",
]


@dataclass(frozen=True, slots=True)
class MethodOutput:
    """What one method produced for one question."""

    evidence: tuple[Chunk, ...]
    """The evidence set before packing, in the method's order."""
    answer: str
    """Generated answer."""
    context: str
    """The exact packed context the answer was generated from."""
    context_tokens: int
    """Tokens of ``context`` as counted by the pipeline."""
    citations: tuple[Mapping[str, Any], ...] = ()
    """Packed items as cited: dicts with ``n``, ``chunk_id``, ``title`` and ``text``."""
    loops: int = 0
    """Repair loops run (0 for methods without a loop)."""
    llm_calls: int = 0
    """LLM calls made (0 offline)."""


MethodRunner = Callable[[str], MethodOutput]
"""Answers one question; built once per (method, config) and reused across questions."""

Answerer = Callable[[str, list[Chunk], Any, SealConfig], Mapping[str, Any]]
"""Signature of :func:`sealgraph.pipeline.answer_from_evidence`."""

GraphBuilder = Callable[..., Any]
"""Signature of :func:`sealgraph.graph.builder.build_graph` (keywords ``index`` and ``config``)."""


@dataclass(frozen=True, slots=True)
class Pipeline:
    """The sealgraph entry points that methods run through.

    Tests pass stand-ins; :func:`default_pipeline` returns the real ones.
    """

    answer_from_evidence: Answerer
    """Packs evidence chunks under the budget and answers from them."""
    build_graph: GraphBuilder
    """Builds the compiled SEAL graph for an index and a config."""
    warm_up: Callable[[Any, Sequence[str]], None] | None = None
    """Fills, for an index and the evaluated questions, the per-index caches that
    the pipeline fills lazily, so that no method's latencies pay for work that the
    methods run after it get for free."""


def default_pipeline() -> Pipeline:
    """Return the real pipeline (imported lazily: it pulls in LangGraph)."""
    from sealgraph.graph.builder import build_graph
    from sealgraph.pipeline import answer_from_evidence

    return Pipeline(
        answer_from_evidence=answer_from_evidence,
        build_graph=build_graph,
        warm_up=_warm_index_caches,
    )


def _warm_index_caches(index: Any, questions: Sequence[str]) -> None:
    # Passage features (mentions, qualifiers) are computed on a passage's first
    # use and question embeddings on a question's first dense query, and both are
    # cached per index: without this the first method would be charged for work
    # every later method reuses. Question embedding is thereby left out of every
    # method's latency alike.
    from sealgraph.ledger.knowledge import knowledge_for

    knowledge_for(index).features([chunk.chunk_id for chunk in index.iter_chunks()])
    if index.has_dense:
        for question in questions:
            index.embed_query(question)


@dataclass(frozen=True, slots=True)
class Method:
    """One evaluated method."""

    name: str
    """Registry name, as given to ``--methods``."""
    build: Callable[[Any, SealConfig, Pipeline], MethodRunner]
    """Returns the question -> output callable for an index and a config."""
    uses_loops: bool = False
    """Whether ``max_loops`` changes what the method does."""
    needs_dense: bool = False
    """Whether the method needs an index with dense embeddings."""


def require_dense(method: Method, index: Any) -> None:
    """Raise a clear error when ``method`` needs dense search and ``index`` has none.

    Raises:
        InputError: The method cannot run on this index.

    """
    if method.needs_dense and not index.has_dense:
        raise InputError(
            f"method {method.name!r} needs dense embeddings, but the index has none "
            "(built with embedder 'none', or its embedder is not installed here); "
            "drop it from --methods or use an index built with an embedder"
        )


def adaptive_cutoff(scores: Sequence[float]) -> int:
    """Return how many top candidates the adaptive-k rule keeps.

    Scores are sorted in descending order and the cut goes at the largest gap
    between consecutive scores: everything above it is kept. The earliest gap
    wins a tie (the smaller set). When no gap is positive (all scores equal)
    nothing separates the candidates and all are kept. The result is at least 1
    and at most ``len(scores)`` (0 only for no candidates).

    Args:
        scores: Candidate scores, higher is better, in any order.

    """
    ordered = sorted(scores, reverse=True)
    if len(ordered) <= 1:
        return len(ordered)
    gaps = [ordered[i] - ordered[i + 1] for i in range(len(ordered) - 1)]
    largest = max(gaps)
    if largest <= 0:
        return len(ordered)
    return gaps.index(largest) + 1


def adaptive_pool_size(k: int) -> int:
    """Return the candidate pool size of ``adaptive-k``: ``max(3k, 10)``."""
    return max(3 * k, 10)


def _chunks_for_hits(index: Any, hits: Iterable[Hit]) -> list[Chunk]:
    return index.get_chunks([hit.chunk_id for hit in hits])


def _llm_calls(result: Mapping[str, Any]) -> int:
    if "seal_log" in result:
        return sum(int(event.get("llm_calls", 0)) for event in result["seal_log"])
    return int(result.get("llm_calls", 0))


def _answer_chunks(
    question: str, chunks: list[Chunk], index: Any, config: SealConfig, pipeline: Pipeline
) -> MethodOutput:
    result = pipeline.answer_from_evidence(question, chunks, index, config)
    return MethodOutput(
        evidence=tuple(chunks),
        answer=str(result["answer"]),
        context=str(result["context"]),
        context_tokens=int(result["context_tokens"]),
        citations=tuple(result.get("citations", ())),
        llm_calls=_llm_calls(result),
    )


SearchFn = Callable[[Any, str, SealConfig], list[Hit]]
"""One retriever: (index, question, config) -> top ``config.k`` hits."""


def _flat_method(name: str, search: SearchFn, *, needs_dense: bool = False) -> Method:
    def build(index: Any, config: SealConfig, pipeline: Pipeline) -> MethodRunner:
        require_dense(method, index)

        def run(question: str) -> MethodOutput:
            chunks = _chunks_for_hits(index, search(index, question, config))
            return _answer_chunks(question, chunks, index, config, pipeline)

        return run

    method = Method(name=name, build=build, needs_dense=needs_dense)
    return method


def _build_adaptive_k(index: Any, config: SealConfig, pipeline: Pipeline) -> MethodRunner:
    pool = adaptive_pool_size(config.k)

    def run(question: str) -> MethodOutput:
        hits = index.search_hybrid(question, pool, retrieval=config.retrieval)
        ordered = sorted(hits, key=lambda hit: (-hit.score, hit.chunk_id))
        keep = adaptive_cutoff([hit.score for hit in ordered])
        chunks = _chunks_for_hits(index, ordered[:keep])
        return _answer_chunks(question, chunks, index, config, pipeline)

    return run


def rewrite_query(
    question: str, passages: Sequence[Chunk], idf: Callable[[str], float], n_terms: int = 8
) -> str:
    """Pseudo-relevance-feedback rewrite: the question plus the passages' top tf-idf terms.

    Terms already in the question are skipped; ties break alphabetically so the
    rewrite is deterministic.
    """
    from sealgraph.text import content_words, stem

    asked = {stem(w) for w in content_words(question)}
    tf: dict[str, int] = {}
    surface: dict[str, str] = {}
    for chunk in passages:
        for w in content_words(chunk.title + " " + chunk.text):
            t = stem(w)
            if t in asked or w.isdigit() or len(w) < 3:
                continue
            tf[t] = tf.get(t, 0) + 1
            surface.setdefault(t, w)
    ranked = sorted(tf, key=lambda t: (-tf[t] * idf(t), t))[:n_terms]
    return " ".join([question, *(surface[t] for t in ranked)])


def expand_evidence(question: str, index: Any, config: SealConfig) -> tuple[list[Chunk], int]:
    """Run the expansion baseline; return the evidence and the loops that added anything."""
    from sealgraph.ledger.knowledge import knowledge_for

    idf = knowledge_for(index).idf
    hits = index.search_hybrid(question, config.k, retrieval=config.retrieval)
    evidence = _chunks_for_hits(index, hits)
    seen = {c.chunk_id for c in evidence}
    newest = list(evidence)
    loops = 0
    for _ in range(config.max_loops):
        query = rewrite_query(question, newest, idf)
        # The top-k results of the rewritten query that are not in the set yet.
        depth = config.k + len(seen)
        added = [
            h
            for h in index.search_hybrid(query, depth, retrieval=config.retrieval)
            if h.chunk_id not in seen
        ][: config.k]
        if not added:
            break
        loops += 1
        newest = _chunks_for_hits(index, added)
        evidence.extend(newest)
        seen.update(c.chunk_id for c in newest)
    return evidence, loops


def _build_expand(index: Any, config: SealConfig, pipeline: Pipeline) -> MethodRunner:
    def run(question: str) -> MethodOutput:
        chunks, loops = expand_evidence(question, index, config)
        out = _answer_chunks(question, chunks, index, config, pipeline)
        return MethodOutput(
            evidence=out.evidence,
            answer=out.answer,
            context=out.context,
            context_tokens=out.context_tokens,
            citations=out.citations,
            loops=loops,
            llm_calls=out.llm_calls,
        )

    return run


def _graph_method(name: str, overrides: Mapping[str, Any]) -> Method:
    def build(index: Any, config: SealConfig, pipeline: Pipeline) -> MethodRunner:
        graph_config = config.override(overrides)
        graph = pipeline.build_graph(index=index, config=graph_config)

        def run(question: str) -> MethodOutput:
            result = graph.invoke({"question": question})
            return MethodOutput(
                evidence=tuple(
                    index.get_chunks([str(item["chunk_id"]) for item in result["evidence"]])
                ),
                answer=str(result["answer"]),
                context=str(result["context"]),
                context_tokens=int(result["context_tokens"]),
                citations=tuple(result.get("citations", ())),
                loops=int(result.get("loops", 0)),
                llm_calls=_llm_calls(result),
            )

        return run

    return Method(name=name, build=build, uses_loops=True)


METHODS: dict[str, Method] = {
    method.name: method
    for method in (
        _flat_method(
            "flat-bm25",
            lambda index, question, config: index.search_lexical(question, config.k),
        ),
        _flat_method(
            "flat-dense",
            lambda index, question, config: index.search_dense(question, config.k),
            needs_dense=True,
        ),
        _flat_method(
            "flat-hybrid",
            lambda index, question, config: index.search_hybrid(
                question, config.k, retrieval=config.retrieval
            ),
        ),
        Method(name="expand", build=_build_expand, uses_loops=True),
        Method(name="adaptive-k", build=_build_adaptive_k),
        _graph_method("seal-append", {"replacement": False}),
        _graph_method("seal", {}),
    )
}
"""Every method ``sealgraph eval`` knows, by name, in report order."""


def get_method(name: str) -> Method:
    """Return the registered method called ``name``.

    Raises:
        InputError: No method has that name; the message lists the valid ones.

    """
    try:
        return METHODS[name]
    except KeyError:
        raise InputError(f"unknown method {name!r}; valid methods: {', '.join(METHODS)}") from None


def parse_methods(spec: str | Sequence[str]) -> tuple[Method, ...]:
    """Parse a comma-separated method list (``"flat-bm25,seal"``), keeping its order.

    Duplicates are dropped; blank entries are ignored.

    Raises:
        InputError: A name is unknown or the list is empty.

    """
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    cleaned = list(dict.fromkeys(name.strip() for name in names if name.strip()))
    if not cleaned:
        raise InputError(f"no method given; valid methods: {', '.join(METHODS)}")
    return tuple(get_method(name) for name in cleaned)
