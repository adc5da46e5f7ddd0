"""The LLM reasoner: structured LLM calls with retry and offline fallback.

Each SEAL step makes at most one call per loop (extraction is batched over the new
passages), with pydantic schemas through ``with_structured_output``. A call that
raises (timeout, HTTP error) or returns something unparsable is retried
``LLMConfig.retries`` times; then the offline reasoner does that step and the
outcome says so, so the graph logs the fallback.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from sealgraph.config import LLMConfig
from sealgraph.errors import ConfigError
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import Gap, NeedItem
from sealgraph.ledger.ledger import EntityLedger, Facts, Provenance, Qualifier, Relation
from sealgraph.ledger.microqueries import MicroQuery
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.prompts import load_prompt
from sealgraph.reasoning.answer import SpanText
from sealgraph.reasoning.base import GeneratedAnswer, StepOutcome
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.text import normalize_name
from sealgraph.types import Chunk

M = TypeVar("M", bound=BaseModel)


class ExtractedEntity(BaseModel):
    """An entity named in a passage."""

    name: str = Field(description="Canonical name")
    aliases: list[str] = Field(default_factory=list, description="Other names used in the passage")
    passage: int = Field(description="Number of the passage it comes from")


class ExtractedRelation(BaseModel):
    """A (subject, relation, object) triple."""

    subject: str
    relation: str
    object: str
    passage: int


class ExtractedQualifier(BaseModel):
    """A date, number or place attached to an entity."""

    entity: str
    type: Literal["date", "number", "place"]
    value: str
    passage: int


class Extraction(BaseModel):
    """Facts read from a batch of passages."""

    entities: list[ExtractedEntity] = Field(default_factory=list)
    relations: list[ExtractedRelation] = Field(default_factory=list)
    qualifiers: list[ExtractedQualifier] = Field(default_factory=list)


class GapOut(BaseModel):
    """One missing piece of evidence."""

    kind: Literal["missing_entity", "missing_relation", "missing_qualifier"]
    entity: str
    relation: str = ""
    qualifier: Literal["date", "number", "place"] | None = None
    reason: str


class Assessment(BaseModel):
    """The sufficiency gate's verdict."""

    sufficient: bool
    gaps: list[GapOut] = Field(default_factory=list)


class QueryOut(BaseModel):
    """One micro-query."""

    text: str = Field(description="Short atomic query naming one entity and one relation")
    entity: str = Field(description="The entity the query is anchored on")
    gap_kind: Literal["missing_entity", "missing_relation", "missing_qualifier"]


class QueryPlan(BaseModel):
    """Micro-queries for the open gaps."""

    queries: list[QueryOut] = Field(default_factory=list)


class AnswerOut(BaseModel):
    """A cited answer."""

    answer: str = Field(description="Short answer with [n] citations")
    citations: list[int] = Field(default_factory=list, description="Numbers of the passages cited")
    insufficient: bool = False


def chat_model_from_config(config: LLMConfig):
    """Build ``ChatOpenAI`` for any OpenAI-compatible server from :class:`LLMConfig`."""
    from langchain_openai import ChatOpenAI

    key = os.environ.get(config.api_key_env)
    if not key and config.base_url is None:
        raise ConfigError(
            f"LLM mode needs an API key in ${config.api_key_env} (or set llm.base_url "
            "for a local OpenAI-compatible server)"
        )
    return ChatOpenAI(
        model=config.model,
        base_url=config.base_url,
        api_key=key or "not-needed",
        temperature=config.temperature,
        timeout=config.timeout_s,
        max_retries=0,  # retries are ours, so every attempt is counted and logged
    )


def _passages_block(
    chunks: Sequence[Chunk] | Sequence[SpanText] | Sequence[PassageFeatures],
) -> str:
    parts = []
    for i, c in enumerate(chunks, 1):
        n = getattr(c, "n", i)
        parts.append(f'<passage n="{n}" title="{c.title}">\n{c.text}\n</passage>')
    return "\n".join(parts)


class LLMReasoner:
    """Reasoner backed by a LangChain chat model, falling back to :class:`OfflineReasoner`.

    Args:
        model: Any LangChain chat model supporting ``with_structured_output``.
        config: Retry count and structured-output method.

    """

    name = "llm"

    def __init__(self, model: Any, config: LLMConfig | None = None) -> None:
        self.model = model
        self.config = config or LLMConfig()
        self.offline = OfflineReasoner()

    def _call(
        self, schema: type[M], prompt: str, validate: Callable[[M], str | None] | None = None
    ):
        """Return (parsed or None, calls, notes)."""
        runnable = self.model.with_structured_output(
            schema, method=self.config.structured_output_method
        )
        notes: list[str] = []
        calls = 0
        for attempt in range(self.config.retries + 1):
            calls += 1
            try:
                out = runnable.invoke(prompt)
                if isinstance(out, dict):
                    out = schema.model_validate(out)
                if not isinstance(out, schema):
                    raise ValueError(f"unparsable reply ({type(out).__name__})")
                problem = validate(out) if validate else None
                if problem:
                    raise ValueError(problem)
                return out, calls, notes
            except Exception as exc:  # timeouts, HTTP errors, parse errors: retry then fall back
                notes.append(
                    f"attempt {attempt + 1} failed: {type(exc).__name__}: {str(exc)[:200]}"
                )
        return None, calls, notes

    def _fallback(self, offline: StepOutcome, calls: int, notes: list[str]) -> StepOutcome:
        return StepOutcome(
            offline.value, calls, (*notes, "fell back to the offline reasoner"), True
        )

    def extract(
        self, chunks: Sequence[Chunk], features: Sequence[PassageFeatures]
    ) -> StepOutcome[Facts]:
        """One batched extraction call over the new passages."""
        if not chunks:
            return StepOutcome(Facts())
        prompt = load_prompt("extract").format(question="", passages=_passages_block(chunks))
        out, calls, notes = self._call(Extraction, prompt)
        if out is None:
            return self._fallback(self.offline.extract(chunks, features), calls, notes)
        topic = {normalize_name(c.title): c.doc_id for c in chunks}

        def pid(n: int) -> Chunk:
            return chunks[min(max(n, 1), len(chunks)) - 1]

        # Every passage's own topic entity keeps its document link, whatever the model read.
        ents = [
            (f.topic, c.title, (c.doc_id,), Provenance(c.chunk_id, 0), 1.0)
            for c, f in zip(chunks, features, strict=True)
        ]
        for e in out.entities:
            key = normalize_name(e.name)
            if not key:
                continue
            docs = (topic[key],) if key in topic else ()
            ents.append((key, e.name, docs, Provenance(pid(e.passage).chunk_id, 0), 0.9))
            for a in e.aliases:
                akey = normalize_name(a)
                if akey:
                    ents.append((akey, a, docs, Provenance(pid(e.passage).chunk_id, 0), 0.8))
        rels = tuple(
            Relation(
                normalize_name(r.subject),
                r.relation,
                normalize_name(r.object),
                Provenance(pid(r.passage).chunk_id, 0),
                0.9,
            )
            for r in out.relations
        )
        quals = tuple(
            Qualifier(
                normalize_name(q.entity), q.type, q.value, Provenance(pid(q.passage).chunk_id, 0)
            )
            for q in out.qualifiers
        )
        facts = Facts(tuple(ents), rels, quals, tuple(c.chunk_id for c in chunks))
        return StepOutcome(facts, calls, tuple(notes))

    def assess(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        ledger: EntityLedger,
    ) -> StepOutcome[list[Gap]]:
        """One assess call; the model's gaps replace the offline ones."""
        names = ", ".join(e.name for e in ledger.entities.values()) or "(empty)"
        prompt = load_prompt("assess").format(
            question=needs.question, ledger=names, passages=_passages_block(features)
        )

        def check(a: Assessment) -> str | None:
            if not a.sufficient and not a.gaps:
                return "the evidence is called insufficient but no gap is named"
            return None

        out, calls, notes = self._call(Assessment, prompt, check)
        if out is None:
            return self._fallback(self.offline.assess(needs, items, features, ledger), calls, notes)
        if out.sufficient:
            return StepOutcome([], calls, tuple(notes))
        gaps = [Gap(g.kind, g.entity, g.relation, g.qualifier, g.reason) for g in out.gaps]
        return StepOutcome(gaps, calls, tuple(notes))

    def plan(
        self,
        needs: QuestionNeeds,
        gaps: Sequence[Gap],
        issued: Sequence[str],
        doc_titles: dict[str, str],
        limit: int,
    ) -> StepOutcome[list[MicroQuery]]:
        """One micro-query call for all open gaps."""
        if not gaps:
            return StepOutcome([])
        prompt = load_prompt("micro_query").format(
            question=needs.question,
            gaps="\n".join(f"- {g.kind}: {g.entity} {g.relation} ({g.reason})" for g in gaps),
            issued="\n".join(f"- {q}" for q in issued) or "(none)",
        )
        out, calls, notes = self._call(QueryPlan, prompt)
        if out is None:
            return self._fallback(
                self.offline.plan(needs, gaps, issued, doc_titles, limit), calls, notes
            )
        seen = {normalize_name(q) for q in issued}
        queries = []
        for q in out.queries:
            key = normalize_name(q.text)
            if key and key not in seen and len(queries) < limit:
                seen.add(key)
                queries.append(MicroQuery(q.text, q.entity, q.gap_kind, ()))
        return StepOutcome(queries, calls, tuple(notes))

    def generate(
        self, needs: QuestionNeeds, spans: Sequence[SpanText], gaps: Sequence[Gap]
    ) -> StepOutcome[GeneratedAnswer]:
        """One generation call; an answer citing nothing it was given is rejected and retried."""
        valid = {s.n for s in spans}
        prompt = load_prompt("generate").format(
            question=needs.question, context=_passages_block(spans)
        )

        def check(a: AnswerOut) -> str | None:
            if a.insufficient:
                return None
            if not any(n in valid for n in a.citations):
                return "the answer cites no passage it was given"
            return None

        out, calls, notes = self._call(AnswerOut, prompt, check)
        if out is None:
            return self._fallback(self.offline.generate(needs, spans, gaps), calls, notes)
        cited = tuple(sorted({n for n in out.citations if n in valid}))
        return StepOutcome(
            GeneratedAnswer(out.answer, cited, out.insufficient), calls, tuple(notes)
        )
