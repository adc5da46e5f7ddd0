"""The LLM reasoner: schema-checked LLM calls, bounded in time, with offline fallback.

Each SEAL step makes at most one call per loop (extraction is batched over the new
passages) through ``with_structured_output(..., include_raw=True)``: one call reads
the question's needs before the search, then extract, assess and plan each loop,
and generate once. Need support for packing costs no call of its own: the assess
reply names the passages that support the needs. The pydantic
schemas forbid unknown keys and require every field, so a reply that does not
validate (``{"totally": "wrong"}``, ``{}``, plain text, a bad JSON body) is a
failure, never an empty extraction or plan; ``include_raw`` keeps the rejected
reply, whose excerpt goes into the log with the reason.

One step is one LangChain chain built per call: the attempt (model call, schema
and sanity checks) ``.with_retry`` for ``LLMConfig.retries`` more attempts, then
``.with_fallbacks`` to the offline reasoner, which does that step instead; the
outcome says so (and why), so the graph logs the fallback.

Time is bounded at two levels (see :class:`~sealgraph.config.LLMConfig`): a step,
all its attempts included, gets at most ``step_bound_s`` and never more than what
the run has left of ``deadline_s`` (``time_left``, kept in the graph state); each
HTTP attempt gets ``timeout_s`` at most and never more than what is left of the
step. When the run's time is spent, steps fall back without making a call.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sealgraph.config import LLMConfig
from sealgraph.errors import ConfigError
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import Gap, NeedItem
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger, Facts, Provenance, Qualifier, Relation
from sealgraph.ledger.microqueries import MicroQuery
from sealgraph.ledger.needs import (
    MAX_HOPS,
    NeedEntity,
    QuestionNeeds,
    linked_docs,
    relation_words,
)
from sealgraph.prompts import fence, load_prompt, passages_block, unfence
from sealgraph.reasoning.answer import SpanText
from sealgraph.reasoning.base import FELL_BACK, GeneratedAnswer, StepOutcome, Verdict
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.text import content_words, normalize_name
from sealgraph.types import Chunk

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

MIN_ATTEMPT_S = 0.05
"""An attempt is not started with less step time left than this: it could not finish."""
EXCERPT_CHARS = 200
"""Longest excerpt of an error message or a rejected reply kept in a note."""
RUN_DEADLINE_SPENT = "run deadline spent"
"""Fallback reason of a step started after the run's ``llm.deadline_s`` was used up."""


class _Reply(BaseModel):
    # Every reply model: unknown keys are an error (a schema-invalid reply must not
    # pass as an empty one), and no field has a default, so {} never validates.
    model_config = ConfigDict(extra="forbid")


class ExtractedEntity(_Reply):
    """An entity named in a passage."""

    name: str = Field(description="Canonical name")
    aliases: list[str] = Field(description="Other names used in the passage (may be empty)")
    passage: int = Field(description="Number of the passage it comes from")


class ExtractedRelation(_Reply):
    """A (subject, relation, object) triple."""

    subject: str
    relation: str
    object: str
    passage: int


class ExtractedQualifier(_Reply):
    """A date, number or place attached to an entity."""

    entity: str
    type: Literal["date", "number", "place"]
    value: str
    passage: int


class Extraction(_Reply):
    """Facts read from a batch of passages (empty lists when there is nothing)."""

    entities: list[ExtractedEntity]
    relations: list[ExtractedRelation]
    qualifiers: list[ExtractedQualifier]


class NeedsReading(_Reply):
    """What a question asks for, read before any search (maps onto ``QuestionNeeds``)."""

    answer_type: Literal["person", "date", "number", "place", "yes_no", "choice", "other"]
    hops: int = Field(description="Facts to chain to reach the answer, 1 to 4")
    structure: Literal["single", "bridge", "comparison", "multi_step"]
    entities: list[str] = Field(description="Names the question itself names, as written")
    options: list[str] = Field(description="The options a choice question names (else empty)")
    answer_modifiers: list[str] = Field(
        description="Names among entities that only describe the answer (may be empty)"
    )
    compared_attribute: str = Field(description='What a comparison compares, "" when none')


class GapOut(_Reply):
    """One missing piece of evidence."""

    kind: Literal["missing_entity", "missing_relation", "missing_qualifier"]
    entity: str
    relation: str = Field(description='The relation asked for, "" when none')
    qualifier: Literal["date", "number", "place"] | None = Field(
        description="The qualifier asked for, null when none"
    )
    reason: str


class Assessment(_Reply):
    """The sufficiency gate's verdict (no gaps when sufficient)."""

    sufficient: bool
    gaps: list[GapOut]
    supporting: list[int] = Field(
        description="Numbers of the passages holding evidence the answer needs (may be empty)"
    )


class QueryOut(_Reply):
    """One micro-query."""

    text: str = Field(description="Short atomic query naming one entity and one relation")
    entity: str = Field(description="The entity the query is anchored on")
    gap_kind: Literal["missing_entity", "missing_relation", "missing_qualifier"]


class QueryPlan(_Reply):
    """Micro-queries for the open gaps (empty when none is needed)."""

    queries: list[QueryOut]


class AnswerOut(_Reply):
    """A cited answer."""

    answer: str = Field(description="Short answer with [n] citations")
    citations: list[int] = Field(description="Numbers of the passages cited")
    insufficient: bool = Field(description="True when the context does not hold the answer")


def chat_model_from_config(config: LLMConfig):
    """Build ``ChatOpenAI`` for any OpenAI-compatible server from :class:`LLMConfig`."""
    import os

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
        max_retries=0,  # retries are ours, so every attempt is counted, bounded and logged
    )


def _openai_chat_class() -> type | None:
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # pragma: no cover - langchain-openai is a dependency
        return None
    return BaseChatOpenAI


def _without_sdk_retries(model: Any) -> Any:
    """Return ``model`` with the OpenAI SDK's own retries off (a copy when they were on).

    The SDK retries timeouts and 5xx replies itself (twice by default), each retry
    with the full timeout, which would multiply a step's time behind our back.
    The copy is rebuilt from the model's fields, as LangChain's configurable fields
    do, minus the clients, so that they are rebuilt with ``max_retries=0``.
    """
    cls = _openai_chat_class()
    if cls is None or not isinstance(model, cls) or model.max_retries == 0:
        return model
    clients = {"client", "async_client", "root_client", "root_async_client"}
    fields = {
        k: v
        for k, v in model.__dict__.items()
        if k in type(model).model_fields and k not in clients
    }
    return type(model)(**{**fields, "max_retries": 0})


class StepFailed(Exception):
    """One attempt of an LLM step failed; ``retryable`` says whether another may start."""

    def __init__(self, reason: str, *, retryable: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


def _retryable(exc: BaseException) -> bool:
    # Only our own attempt failures are retried; anything else is a bug and surfaces.
    return isinstance(exc, StepFailed) and exc.retryable


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def _describe_error(exc: BaseException) -> str:
    """One line naming the error: the type and a short message (validation errors per field)."""
    cause: BaseException | None = exc
    seen: set[int] = set()  # exception chains can loop
    while cause is not None and id(cause) not in seen and not isinstance(cause, ValidationError):
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, ValidationError):
        errors = cause.errors()
        parts = [
            f"{'.'.join(str(p) for p in e['loc']) or '(reply)'}: {e['msg']}" for e in errors[:3]
        ]
        more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
        return _excerpt(f"{cause.title} does not match its schema: {'; '.join(parts)}{more}")
    return _excerpt(f"{type(exc).__name__}: {exc}")


def _raw_excerpt(raw: Any) -> str:
    """Return the rejected reply as the model wrote it: its tool-call arguments, else its text."""
    calls = list(getattr(raw, "tool_calls", None) or [])
    calls += list(getattr(raw, "invalid_tool_calls", None) or [])
    if calls:
        args = calls[0].get("args")
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    else:
        content = getattr(raw, "content", raw)
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return _excerpt(text) if text.strip() else "(empty)"


@dataclass
class _StepRun:
    """Book-keeping of one step call (a fresh one per call: runs may be concurrent)."""

    bound_s: float
    """Seconds the step may take, all attempts included."""
    start: float = field(default_factory=time.monotonic)
    calls: int = 0
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    cut_short: bool = False
    """True when an attempt was not started because the step's time was spent."""
    llm_end: float | None = None

    def left(self) -> float:
        return self.start + self.bound_s - time.monotonic()

    def failed(self, reason: str) -> StepFailed:
        self.failures.append(reason)
        self.notes.append(f"attempt {self.calls} failed: {reason}")
        return StepFailed(reason)

    def reason(self) -> str:
        last = self.failures[-1] if self.failures else "step deadline spent"
        return f"{last} (step deadline spent)" if self.cut_short and self.failures else last

    def seconds(self) -> float:
        end = self.llm_end if self.llm_end is not None else time.monotonic()
        return round(end - self.start, 3)


@dataclass(frozen=True)
class _Step(Generic[M, T]):
    """What one LLM step needs: its schema and checks, and how to turn a reply into a value."""

    schema: type[M]
    prompt: str
    convert: Callable[[M], T]
    offline: Callable[[], StepOutcome[T]]
    validate: Callable[[M], str | None] | None = None


class LLMReasoner:
    """Reasoner backed by a LangChain chat model, falling back to :class:`OfflineReasoner`.

    Args:
        model: Any LangChain chat model supporting ``with_structured_output``. A
            ``ChatOpenAI`` gets the OpenAI SDK's own retries turned off (ours are
            counted and bounded) and a per-request timeout on every attempt; other
            models must bound their own calls.
        config: Retries, timeouts, deadlines and the structured-output method.

    """

    name = "llm"

    def __init__(self, model: Any, config: LLMConfig | None = None) -> None:
        self.model = _without_sdk_retries(model)
        self.config = config or LLMConfig()
        self.offline = OfflineReasoner()
        cls = _openai_chat_class()
        self._per_request_timeout = cls is not None and isinstance(self.model, cls)

    # --- the chain of one step -----------------------------------------------------------

    def _structured(self, schema: type[BaseModel], timeout_s: float) -> Runnable:
        # ChatOpenAI forwards extra with_structured_output kwargs into the request,
        # and the OpenAI SDK takes a per-request timeout: the attempt gets the step's
        # remaining time, not the client's fixed one.
        extra = {"timeout": timeout_s} if self._per_request_timeout else {}
        return self.model.with_structured_output(
            schema, method=self.config.structured_output_method, include_raw=True, **extra
        )

    def _attempt(self, run: _StepRun, step: _Step[M, T], config: RunnableConfig) -> M:
        """Make one call and check the reply; raise :class:`StepFailed` when it is unusable."""
        left = run.left()
        if left < MIN_ATTEMPT_S:
            run.cut_short = True
            run.notes.append(
                f"attempt {run.calls + 1} not made: the step's {run.bound_s:g} s are spent"
            )
            raise StepFailed("step deadline spent", retryable=False)
        run.calls += 1
        try:
            reply = self._structured(step.schema, min(self.config.timeout_s, left)).invoke(
                step.prompt, config
            )
        except Exception as exc:  # timeouts, HTTP errors, bad bodies: this attempt failed
            raise run.failed(_describe_error(exc)) from exc
        raw = reply.get("raw") if isinstance(reply, dict) else None
        parsed = reply.get("parsed") if isinstance(reply, dict) else reply
        error = reply.get("parsing_error") if isinstance(reply, dict) else None
        if error is not None:
            raise run.failed(f"{_describe_error(error)}; reply: {_raw_excerpt(raw)}")
        if isinstance(parsed, dict):  # a model returning plain dicts
            try:
                parsed = step.schema.model_validate(parsed)
            except ValidationError as exc:
                raise run.failed(f"{_describe_error(exc)}; reply: {_raw_excerpt(raw)}") from exc
        if not isinstance(parsed, step.schema):
            got = "nothing" if parsed is None else type(parsed).__name__
            raise run.failed(
                f"unparsable reply: no {step.schema.__name__} ({got}); reply: {_raw_excerpt(raw)}"
            )
        problem = step.validate(parsed) if step.validate else None
        if problem:
            raise run.failed(problem)
        return parsed

    def _run(self, step: _Step[M, T], time_left: float | None) -> StepOutcome[T]:
        """Run one step: attempt, retry, fall back; count calls and time."""
        if time_left is not None and time_left < MIN_ATTEMPT_S:
            offline = step.offline()
            note = f"{RUN_DEADLINE_SPENT}: no LLM time left (llm.deadline_s), no call made"
            return StepOutcome(offline.value, 0, (note, FELL_BACK), True, RUN_DEADLINE_SPENT, 0.0)
        bound = self.config.step_bound_s
        run = _StepRun(bound if time_left is None else min(bound, time_left))

        def fall_back(_: str) -> tuple[T, bool]:
            run.llm_end = time.monotonic()
            return step.offline().value, True

        attempt = RunnableLambda(
            lambda _prompt, config: self._attempt(run, step, config), name="llm_attempt"
        )
        chain = (
            attempt.with_retry(
                retry_if_exception_type=_retryable,
                stop_after_attempt=self.config.retries + 1,
                wait_exponential_jitter=False,  # the deadline, not a back-off, bounds retries
            )
            | RunnableLambda(lambda reply: (step.convert(reply), False), name="llm_reply")
        ).with_fallbacks(
            [RunnableLambda(fall_back, name="offline_reasoner")],
            exceptions_to_handle=(StepFailed,),
        )
        value, fell_back = chain.invoke(step.prompt)
        if fell_back:
            return StepOutcome(
                value, run.calls, (*run.notes, FELL_BACK), True, run.reason(), run.seconds()
            )
        return StepOutcome(value, run.calls, tuple(run.notes), False, "", run.seconds())

    # --- the steps ----------------------------------------------------------------------

    def needs(
        self,
        question: str,
        gazetteer: Gazetteer,
        *,
        time_left: float | None = None,
    ) -> StepOutcome[QuestionNeeds]:
        """One call reading the question's needs; its names are linked through the gazetteer.

        The model gives the answer type, the hop count and structure, the names the
        question writes, a choice's options, the names that only describe the answer
        and a comparison's compared attribute (:class:`NeedsReading`). Each name is
        resolved against the corpus as the offline reader resolves one
        (:func:`_needs`). A hop count out of range, or one its structure contradicts
        ("bridge" with 1 hop), is rejected: retried, then the offline reading
        (:func:`~sealgraph.ledger.needs.question_needs`) is used instead.
        """
        prompt = load_prompt("needs").format(question=fence(question))

        def check(r: NeedsReading) -> str | None:
            if not 1 <= r.hops <= MAX_HOPS:
                return f"hops must be 1 to {MAX_HOPS}, got {r.hops}"
            fits = {
                "single": r.hops == 1,
                "bridge": r.hops == 2,
                "multi_step": r.hops >= 3,
                "comparison": True,
            }[r.structure]
            if not fits:
                return f"structure {r.structure!r} does not fit hops={r.hops}"
            return None

        return self._run(
            _Step(
                NeedsReading,
                prompt,
                lambda r: _needs(question, r, gazetteer),
                lambda: self.offline.needs(question, gazetteer),
                check,
            ),
            time_left,
        )

    def extract(
        self,
        question: str,
        chunks: Sequence[Chunk],
        features: Sequence[PassageFeatures],
        *,
        time_left: float | None = None,
    ) -> StepOutcome[Facts]:
        """One batched extraction call over the new passages, focused by the question."""
        if not chunks:
            return StepOutcome(Facts())
        prompt = load_prompt("extract").format(
            question=fence(question), passages=passages_block(chunks)
        )
        return self._run(
            _Step(
                Extraction,
                prompt,
                lambda out: _facts(out, chunks, features),
                lambda: self.offline.extract(question, chunks, features),
            ),
            time_left,
        )

    def assess(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        ledger: EntityLedger,
        *,
        time_left: float | None = None,
    ) -> StepOutcome[Verdict]:
        """One assess call: the model's gaps, and the passages it says support the needs.

        The same reply names the supporting passages (``Assessment.supporting``), so
        need support costs no call of its own: a named passage gets support 1, the
        others 0 (``Verdict.support``; None when it named no valid passage number).
        The graph keeps it for packing, which asks :meth:`support` for it.
        """
        names = "\n".join(fence(e.name) for e in ledger.entities.values()) or "(empty)"
        prompt = load_prompt("assess").format(
            question=fence(needs.question), ledger=names, passages=passages_block(features)
        )

        def check(a: Assessment) -> str | None:
            if not a.sufficient and not a.gaps:
                return "the evidence is called insufficient but no gap is named"
            return None

        def convert(a: Assessment) -> Verdict:
            gaps = tuple(
                Gap(g.kind, unfence(g.entity), unfence(g.relation), g.qualifier, unfence(g.reason))
                for g in ([] if a.sufficient else a.gaps)
            )
            named = {n for n in a.supporting if 1 <= n <= len(features)}
            support = (
                {f.chunk_id: float(n in named) for n, f in enumerate(features, 1)}
                if named
                else None
            )
            return Verdict(gaps, support)

        return self._run(
            _Step(
                Assessment,
                prompt,
                convert,
                lambda: self.offline.assess(needs, items, features, ledger),
                check,
            ),
            time_left,
        )

    def support(
        self,
        needs: QuestionNeeds,
        items: Sequence[NeedItem],
        features: Sequence[PassageFeatures],
        *,
        assessed: Mapping[str, float] | None = None,
        time_left: float | None = None,
    ) -> StepOutcome[dict[str, float] | None]:
        """Return the need support the last assessment judged (no call is made).

        ``assessed`` is the ``Verdict.support`` of the last :meth:`assess` (the graph
        keeps it in its state as ``need_support``). When it does not cover every
        evidence passage (the assess step fell back to the offline gate, the model
        named no supporting passage, or the evidence changed since), the offline need
        support (:func:`~sealgraph.reasoning.offline.need_support`) is used, with a
        note saying so.
        """
        ids = [f.chunk_id for f in features]
        if assessed is not None and ids and all(i in assessed for i in ids):
            return StepOutcome({i: float(assessed[i]) for i in ids})
        note = "no need support from the last assessment: the offline need coverage is used"
        return StepOutcome(self.offline.support(needs, items, features).value, notes=(note,))

    def plan(
        self,
        needs: QuestionNeeds,
        gaps: Sequence[Gap],
        issued: Sequence[str],
        doc_titles: dict[str, str],
        limit: int,
        *,
        time_left: float | None = None,
    ) -> StepOutcome[list[MicroQuery]]:
        """One micro-query call for all open gaps."""
        if not gaps:
            return StepOutcome([])
        prompt = load_prompt("micro_query").format(
            question=fence(needs.question),
            gaps="\n".join(
                fence(f"- {g.kind}: {g.entity} {g.relation} ({g.reason})") for g in gaps
            ),
            issued="\n".join(fence(f"- {q}") for q in issued) or "(none)",
        )

        def convert(out: QueryPlan) -> list[MicroQuery]:
            seen = {normalize_name(q) for q in issued}
            queries = []
            for q in out.queries:
                text = unfence(q.text)
                key = normalize_name(text)
                if key and key not in seen and len(queries) < limit:
                    seen.add(key)
                    queries.append(MicroQuery(text, unfence(q.entity), q.gap_kind, ()))
            return queries

        return self._run(
            _Step(
                QueryPlan,
                prompt,
                convert,
                lambda: self.offline.plan(needs, gaps, issued, doc_titles, limit),
            ),
            time_left,
        )

    def generate(
        self,
        needs: QuestionNeeds,
        spans: Sequence[SpanText],
        gaps: Sequence[Gap],
        *,
        time_left: float | None = None,
    ) -> StepOutcome[GeneratedAnswer]:
        """One generation call; an answer citing nothing it was given is rejected and retried."""
        valid = {s.n for s in spans}
        prompt = load_prompt("generate").format(
            question=fence(needs.question), context=passages_block(spans)
        )

        def check(a: AnswerOut) -> str | None:
            if a.insufficient:
                return None
            if not any(n in valid for n in a.citations):
                return "the answer cites no passage it was given"
            return None

        def convert(a: AnswerOut) -> GeneratedAnswer:
            cited = tuple(sorted({n for n in a.citations if n in valid}))
            return GeneratedAnswer(unfence(a.answer), cited, a.insufficient)

        return self._run(
            _Step(
                AnswerOut, prompt, convert, lambda: self.offline.generate(needs, spans, gaps), check
            ),
            time_left,
        )


def _written(name: str, question: str) -> re.Match[str] | None:
    """Where the question writes ``name`` (case aside, as whole words), None when it does not."""
    if not name:
        return None
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", question, re.IGNORECASE)


def _needs(question: str, r: NeedsReading, gazetteer: Gazetteer) -> QuestionNeeds:
    """Turn the model's reading into ``QuestionNeeds``, its names resolved against the corpus.

    A name is kept as the question writes it, or as the gazetteer name written inside
    it that the question writes ("Quiet Harbour" for a reply's "Quiet Harbour
    (film)"); a name the question does not write is dropped (the model may not add
    entities, the answer least of all). Each kept name links to its documents as the
    offline reader links a name (:func:`~sealgraph.ledger.needs.linked_docs`, else
    the gazetteer names written inside it). Entities keep the question's order;
    relation terms are the question's words outside them
    (:func:`~sealgraph.ledger.needs.relation_words`), plus the words of the compared
    attribute; options are kept for a choice question only, answer modifiers only
    when they are among the entities.
    """
    found: list[tuple[int, NeedEntity]] = []
    spans: list[tuple[int, int]] = []
    seen: set[str] = set()
    for raw in r.entities:
        name = " ".join(unfence(raw).split())
        hit = _written(name, question) or next(
            (
                m
                for mention in gazetteer.find_mentions(name, min_kind="acronym")
                if (m := _written(mention.surface, question))
            ),
            None,
        )
        if hit is None:
            continue
        surface = hit.group(0)
        key = normalize_name(surface)
        if not key or key in seen:
            continue
        seen.add(key)
        targets = linked_docs(surface, gazetteer)
        if not targets:
            mentions = gazetteer.find_mentions(surface, min_kind="acronym")
            if mentions:
                targets = max(mentions, key=lambda m: m.end - m.start).targets
        found.append((hit.start(), NeedEntity(surface, key, targets, "llm")))
        pattern = re.compile(rf"(?<!\w){re.escape(surface)}(?!\w)", re.IGNORECASE)
        spans.extend(m.span() for m in pattern.finditer(question))
    found.sort(key=lambda t: t[0])
    entities = tuple(e for _, e in found)
    relation = relation_words(question, spans)
    compared = content_words(unfence(r.compared_attribute))
    relation += tuple(w for w in dict.fromkeys(compared) if w not in relation)
    keys = {e.key for e in entities}
    options: dict[str, str] = {}
    if r.answer_type == "choice":
        for raw in r.options:
            option = " ".join(unfence(raw).split())
            if normalize_name(option):
                options.setdefault(normalize_name(option), option)
    modifiers = (normalize_name(unfence(m)) for m in r.answer_modifiers)
    return QuestionNeeds(
        question=question,
        entities=entities,
        relation_terms=relation,
        answer_type=r.answer_type,
        structure=r.structure,
        options=tuple(options.values()),
        hops=r.hops,
        answer_modifiers=tuple(dict.fromkeys(k for k in modifiers if k in keys)),
    )


def _facts(out: Extraction, chunks: Sequence[Chunk], features: Sequence[PassageFeatures]) -> Facts:
    """Turn the model's extraction into ledger facts with provenance."""
    topic = {normalize_name(c.title): c.doc_id for c in chunks}

    def pid(n: int) -> Chunk:
        return chunks[min(max(n, 1), len(chunks)) - 1]

    # Every passage's own topic entity keeps its document link, whatever the model read.
    ents = [
        (f.topic, c.title, (c.doc_id,), Provenance(c.chunk_id, 0), 1.0)
        for c, f in zip(chunks, features, strict=True)
    ]
    for e in out.entities:
        name = unfence(e.name)
        key = normalize_name(name)
        if not key:
            continue
        docs = (topic[key],) if key in topic else ()
        ents.append((key, name, docs, Provenance(pid(e.passage).chunk_id, 0), 0.9))
        for alias in map(unfence, e.aliases):
            akey = normalize_name(alias)
            if akey:
                ents.append((akey, alias, docs, Provenance(pid(e.passage).chunk_id, 0), 0.8))
    rels = tuple(
        Relation(
            normalize_name(unfence(r.subject)),
            unfence(r.relation),
            normalize_name(unfence(r.object)),
            Provenance(pid(r.passage).chunk_id, 0),
            0.9,
        )
        for r in out.relations
    )
    quals = tuple(
        Qualifier(
            normalize_name(unfence(q.entity)),
            q.type,
            unfence(q.value),
            Provenance(pid(q.passage).chunk_id, 0),
        )
        for q in out.qualifiers
    )
    return Facts(tuple(ents), rels, quals, tuple(c.chunk_id for c in chunks))
