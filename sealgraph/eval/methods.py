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
:func:`sealgraph.graph.steps.answer_from_evidence`, the code the graph itself uses,
so only evidence selection differs between methods.

Every output also says where its packed spans lie in their documents and whether
the answer step declined (its structured ``insufficient`` flag), for the
gold-span and decline metrics. The graph's packing trace and answer event carry
both (:func:`packed_ranges_from_trace`, :func:`declined_from_log`); for the
other methods ``answer_from_evidence`` returns both (``packed``, ``insufficient``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sealgraph.config import SealConfig
from sealgraph.errors import InputError
from sealgraph.eval.metrics import CharRange
from sealgraph.text.lexicon import reads_index_lexicon
from sealgraph.types import Chunk, Hit

if TYPE_CHECKING:  # pragma: no cover (sealgraph.index is imported when an index is)
    from sealgraph.index.protocol import SearchIndex
    from sealgraph.ledger.knowledge import CorpusKnowledge

__all__ = [
    "LLM_SUFFIX",
    "METHODS",
    "Method",
    "MethodOutput",
    "MethodRunner",
    "Pipeline",
    "adaptive_cutoff",
    "declined_from_log",
    "default_pipeline",
    "get_method",
    "packed_ranges_from_trace",
    "parse_methods",
    "require_dense",
    "short_answer_from_log",
    "span_id_range",
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
    packed: tuple[CharRange, ...] = ()
    """Where the packed spans lie: ``(doc_id, start, end)`` in their documents' text,
    in reading order (empty when the pipeline does not say)."""
    declined: bool = False
    """Whether the answer step declined to answer (evidence judged insufficient)."""
    short_answer: str = ""
    """The short answer span the answer step marked ("" when it marked none): what
    exact match and F1 score, as the answer text also carries its cited sentences."""
    missing: str = ""
    """What the answer step said the context does not state ("" when nothing)."""
    answerability: float | None = None
    """The packed context's offline answerability (None when the pipeline reports none)."""
    llm_events: tuple[Mapping[str, Any], ...] = ()
    """The run's ``llm_call``, ``llm_fallback`` and ``llm_circuit`` events (graph
    methods; empty offline), for the LLM columns of the report."""
    run: Mapping[str, Any] | None = None
    """A graph method's final state, event log included (None for other methods):
    what ``eval --html`` shows of the run. Dropped with the output once scored."""


LLM_SUFFIX = "+llm"
"""Suffix of a graph method's LLM mode (``seal+llm``): the LLM reasoner from ``llm.*``."""

LLM_EVENT_KINDS = frozenset({"llm_call", "llm_fallback", "llm_circuit"})
"""The kinds of graph events :attr:`MethodOutput.llm_events` keeps."""


MethodRunner = Callable[[str], MethodOutput]
"""Answers one question; built once per (method, config) and reused across questions."""

Answerer = Callable[[str, list[Chunk], "SearchIndex", SealConfig], Mapping[str, Any]]
"""Signature of :func:`sealgraph.graph.steps.answer_from_evidence`."""

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
    warm_up: Callable[[SearchIndex, Sequence[str]], None] | None = None
    """Fills, for an index and the evaluated questions, the per-index caches that
    the pipeline fills lazily, so that no method's latencies pay for work that the
    methods run after it get for free."""
    knowledge: Callable[[SearchIndex], CorpusKnowledge] | None = None
    """The corpus knowledge of an index, made once per index for the whole
    evaluation and shared by every method (None: each use makes its own)."""


class _KnowledgeOfIndexes:
    """The corpus knowledge of each index an evaluation opens, made once per index."""

    def __init__(self) -> None:
        self._made: list[tuple[SearchIndex, CorpusKnowledge]] = []

    def __call__(self, index: SearchIndex) -> CorpusKnowledge:
        from sealgraph.ledger.knowledge import CorpusKnowledge

        for known, knowledge in self._made:
            if known is index:
                return knowledge
        knowledge = CorpusKnowledge(index)
        self._made.append((index, knowledge))
        return knowledge


def default_pipeline() -> Pipeline:
    """Return the real pipeline (imported lazily: it pulls in LangGraph).

    One evaluation, one pipeline: its methods share each index's corpus knowledge.
    """
    from sealgraph.graph.builder import compile_graph, make_reasoner
    from sealgraph.graph.context import RunContext
    from sealgraph.graph.steps import answer_from_evidence

    knowledge = _KnowledgeOfIndexes()

    def build_graph(*, index: SearchIndex, config: SealConfig, llm: Any = None) -> Any:
        reasoner = make_reasoner(llm, config)
        return compile_graph(RunContext.build(index, reasoner, config, knowledge(index)))

    def answer(question: str, chunks: list[Chunk], index: SearchIndex, config: SealConfig, **kw):
        return answer_from_evidence(
            question, chunks, index, config, knowledge=knowledge(index), **kw
        )

    return Pipeline(
        answer_from_evidence=answer,
        build_graph=build_graph,
        warm_up=lambda index, questions: _warm_index_caches(knowledge(index), questions),
        knowledge=knowledge,
    )


def span_id_range(span_id: str, chunk_ids: Sequence[str], index: SearchIndex) -> tuple[int, int]:
    """Return the document offsets of a packing span from its id and chunks.

    Span ids are ``chunk_id`` (the whole chunk), ``"{chunk_id}:{i}"`` (sentence
    ``i``), ``"{chunk_id}:{i}-{j}"`` (sentences ``i..j`` of one chunk) or
    ``"{c1}:{i}-{c2}:{j}"`` (from sentence ``i`` of ``c1`` to ``j`` of ``c2``);
    see :func:`sealgraph.packing.units.make_span`.

    Raises:
        ValueError: The id is in none of these forms.

    """
    if not chunk_ids:
        raise ValueError(f"span {span_id!r} names no chunk")
    first = index.get_chunk(chunk_ids[0])
    if span_id == first.chunk_id and len(chunk_ids) == 1:
        return first.start, first.end
    prefix = f"{first.chunk_id}:"
    head, _, tail = span_id.removeprefix(prefix).partition("-")
    if not span_id.startswith(prefix) or not head.isdigit():
        raise ValueError(f"unrecognised span id {span_id!r} (chunks {list(chunk_ids)})")
    last, last_index = first, tail or head
    if tail and not tail.isdigit():
        last = index.get_chunk(chunk_ids[-1])
        last_prefix = f"{last.chunk_id}:"
        last_index = tail.removeprefix(last_prefix)
        if not tail.startswith(last_prefix) or not last_index.isdigit():
            raise ValueError(f"unrecognised span id {span_id!r} (chunks {list(chunk_ids)})")
    return (
        first.start + _sentence(first, int(head))[0],
        last.start + _sentence(last, int(last_index))[1],
    )


def _sentence(chunk: Chunk, i: int) -> tuple[int, int]:
    spans = chunk.sentences or ((0, len(chunk.text)),)
    if not 0 <= i < len(spans):
        raise ValueError(f"chunk {chunk.chunk_id!r} has no sentence {i}")
    return spans[i]


def packed_ranges_from_trace(
    log: Sequence[Mapping[str, Any]], index: SearchIndex
) -> list[CharRange]:
    """Return the packed spans of a graph run as document ranges, from its pack event.

    The last ``pack`` event's decisions list every candidate span; the ``selected``
    ones are the packed spans (spans dropped at the final render are recorded as
    ``budget_exceeded``). Ranges come in reading order: documents in order of first
    appearance, then by offset.
    """
    events = [e for e in log if e.get("node") == "pack" and e.get("kind") == "pack"]
    if not events:
        return []
    ranges = []
    for decision in events[-1].get("data", {}).get("decisions", ()):
        if decision.get("decision") == "selected":
            start, end = span_id_range(decision["span_id"], list(decision["chunk_ids"]), index)
            ranges.append((str(decision["doc_id"]), start, end))
    doc_rank = {doc: r for r, doc in enumerate(dict.fromkeys(d for d, _, _ in ranges))}
    return sorted(ranges, key=lambda r: (doc_rank[r[0]], r[1], r[2]))


def short_answer_from_log(log: Sequence[Mapping[str, Any]]) -> str:
    """Return the short answer a graph run's answer step marked (its ``answer`` event's ``short``)."""
    answers = [e for e in log if e.get("node") == "generate" and e.get("kind") == "answer"]
    return str(answers[-1].get("data", {}).get("short") or "") if answers else ""


def declined_from_log(log: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a graph run's answer step declined (its ``answer`` event's ``insufficient``)."""
    answers = [e for e in log if e.get("node") == "generate" and e.get("kind") == "answer"]
    return bool(answers and answers[-1].get("data", {}).get("insufficient", False))


def _packed_ranges(result: Mapping[str, Any]) -> tuple[CharRange, ...]:
    return tuple(
        (str(p["doc_id"]), int(p["start"]), int(p["end"]))
        for p in result.get("packed", ())
        if "start" in p and "end" in p
    )


def _warm_index_caches(knowledge: CorpusKnowledge, questions: Sequence[str]) -> None:
    # Passage features (mentions, qualifiers) are computed on a passage's first
    # use and question embeddings on a question's first dense query, and both are
    # cached per index: without this the first method would be charged for work
    # every later method reuses. Question embedding is thereby left out of every
    # method's latency alike.
    index = knowledge.index
    knowledge.features([chunk.chunk_id for chunk in index.iter_chunks()])
    if index.has_dense:
        for question in questions:
            index.embed_query(question)


@dataclass(frozen=True, slots=True)
class Method:
    """One evaluated method."""

    name: str
    """Registry name, as given to ``--methods``."""
    build: Callable[[SearchIndex, SealConfig, Pipeline], MethodRunner]
    """Returns the question -> output callable for an index and a config."""
    uses_loops: bool = False
    """Whether ``max_loops`` changes what the method does."""
    needs_dense: bool = False
    """Whether the method needs an index with dense embeddings."""
    llm: bool = False
    """Whether the method calls an LLM (a graph method's ``+llm`` mode)."""


def require_dense(method: Method, index: SearchIndex) -> None:
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


def _chunks_for_hits(index: SearchIndex, hits: Iterable[Hit]) -> list[Chunk]:
    return index.get_chunks([hit.chunk_id for hit in hits])


def _llm_calls(result: Mapping[str, Any]) -> int:
    if "seal_log" in result:
        return sum(int(event.get("llm_calls", 0)) for event in result["seal_log"])
    return int(result.get("llm_calls", 0))


def _answerability(result: Mapping[str, Any]) -> float | None:
    value = result.get("answerability")
    return float(value) if isinstance(value, int | float) else None


def _answer_chunks(
    question: str, chunks: list[Chunk], index: SearchIndex, config: SealConfig, pipeline: Pipeline
) -> MethodOutput:
    result = pipeline.answer_from_evidence(question, chunks, index, config)
    return MethodOutput(
        evidence=tuple(chunks),
        answer=str(result["answer"]),
        context=str(result["context"]),
        context_tokens=int(result["context_tokens"]),
        citations=tuple(result.get("citations", ())),
        llm_calls=_llm_calls(result),
        packed=_packed_ranges(result),
        declined=bool(result.get("insufficient", False)),
        short_answer=str(result.get("short_answer") or ""),
        missing=str(result.get("missing") or ""),
        answerability=_answerability(result),
    )


SearchFn = Callable[["SearchIndex", str, SealConfig], list[Hit]]
"""One retriever: (index, question, config) -> top ``config.k`` hits."""


def _flat_method(name: str, search: SearchFn, *, needs_dense: bool = False) -> Method:
    def build(index: SearchIndex, config: SealConfig, pipeline: Pipeline) -> MethodRunner:
        require_dense(method, index)

        def run(question: str) -> MethodOutput:
            chunks = _chunks_for_hits(index, search(index, question, config))
            return _answer_chunks(question, chunks, index, config, pipeline)

        return run

    method = Method(name=name, build=build, needs_dense=needs_dense)
    return method


def _build_adaptive_k(index: SearchIndex, config: SealConfig, pipeline: Pipeline) -> MethodRunner:
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
    from sealgraph.text.names import content_words, stem

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


@reads_index_lexicon
def expand_evidence(
    question: str,
    index: SearchIndex,
    config: SealConfig,
    knowledge: CorpusKnowledge | None = None,
) -> tuple[list[Chunk], int]:
    """Run the expansion baseline; return the evidence and the loops that added anything.

    ``knowledge``: the index's corpus knowledge (its word weights), made here when None.
    """
    from sealgraph.ledger.knowledge import CorpusKnowledge

    idf = (knowledge if knowledge is not None else CorpusKnowledge(index)).idf
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


def _build_expand(index: SearchIndex, config: SealConfig, pipeline: Pipeline) -> MethodRunner:
    def run(question: str) -> MethodOutput:
        knowledge = pipeline.knowledge(index) if pipeline.knowledge else None
        chunks, loops = expand_evidence(question, index, config, knowledge)
        out = _answer_chunks(question, chunks, index, config, pipeline)
        return MethodOutput(
            evidence=out.evidence,
            answer=out.answer,
            context=out.context,
            context_tokens=out.context_tokens,
            citations=out.citations,
            loops=loops,
            llm_calls=out.llm_calls,
            packed=out.packed,
            declined=out.declined,
            short_answer=out.short_answer,
            missing=out.missing,
            answerability=out.answerability,
        )

    return run


def _graph_method(name: str, overrides: Mapping[str, Any], *, llm: bool = False) -> Method:
    def build(index: SearchIndex, config: SealConfig, pipeline: Pipeline) -> MethodRunner:
        graph_config = config.override(overrides)
        # One graph (so one reasoner) for every question: what the reasoner learns of
        # the server (the structured output method that works) holds for the run.
        # llm="openai" builds ChatOpenAI from config.llm, as `sealgraph ask --llm` does.
        extra = {"llm": "openai"} if llm else {}
        graph = pipeline.build_graph(index=index, config=graph_config, **extra)

        def run(question: str) -> MethodOutput:
            result = graph.invoke({"question": question})
            log = result.get("seal_log", ())
            packed = _packed_ranges(result)
            if not packed:  # the output's packed spans carry no offsets: read the trace
                packed = tuple(packed_ranges_from_trace(log, index))
            declined = result.get("declined", result.get("insufficient"))
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
                packed=packed,
                declined=declined_from_log(log) if declined is None else bool(declined),
                short_answer=short_answer_from_log(log),
                missing=str(result.get("missing") or ""),
                answerability=_answerability(result),
                llm_events=tuple(e for e in log if e.get("kind") in LLM_EVENT_KINDS),
                run=result,
            )

        return run

    return Method(name=name, build=build, uses_loops=True, llm=llm)


_GRAPH_OVERRIDES: dict[str, dict[str, Any]] = {"seal-append": {"replacement": False}, "seal": {}}
"""The graph methods, which have an LLM mode (``NAME+llm``), and their config overrides."""


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
        *(_graph_method(name, overrides) for name, overrides in _GRAPH_OVERRIDES.items()),
    )
}
"""Every method ``sealgraph eval`` knows, by name, in report order."""


def get_method(name: str) -> Method:
    """Return the registered method called ``name``.

    Raises:
        InputError: No method has that name; the message lists the valid ones.

    """
    if name.endswith(LLM_SUFFIX):
        base = name.removesuffix(LLM_SUFFIX)
        if base in _GRAPH_OVERRIDES:
            return _graph_method(name, _GRAPH_OVERRIDES[base], llm=True)
        if base in METHODS:
            raise InputError(
                f"method {base!r} makes no LLM call: {LLM_SUFFIX} applies to the graph "
                f"methods ({', '.join(_GRAPH_OVERRIDES)})"
            )
    try:
        return METHODS[name]
    except KeyError:
        raise InputError(
            f"unknown method {name!r}; valid methods: {', '.join(METHODS)} "
            f"(and {', '.join(g + LLM_SUFFIX for g in _GRAPH_OVERRIDES)})"
        ) from None


def parse_methods(spec: str | Sequence[str], *, llm: bool = False) -> tuple[Method, ...]:
    """Parse a comma-separated method list (``"flat-bm25,seal"``), keeping its order.

    Duplicates are dropped; blank entries are ignored. ``NAME+llm`` is a graph
    method in LLM mode; ``llm=True`` (``eval --llm``) puts every graph method
    given in LLM mode (``seal`` becomes ``seal+llm``).

    Raises:
        InputError: A name is unknown or the list is empty.

    """
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    cleaned = [name.strip() for name in names if name.strip()]
    if llm:
        cleaned = [name + LLM_SUFFIX if name in _GRAPH_OVERRIDES else name for name in cleaned]
    cleaned = list(dict.fromkeys(cleaned))
    if not cleaned:
        raise InputError(f"no method given; valid methods: {', '.join(METHODS)}")
    return tuple(get_method(name) for name in cleaned)
