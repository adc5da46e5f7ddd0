"""The LLM steps, declared once: one :class:`StepSpec` record per step, in one registry.

A record names everything a step is made of: its name (the ``step`` of its notes,
fallbacks and events, and its ``llm.max_tokens.<name>`` entry), its prompt file
(``sealgraph/prompts/<prompt>.md``), its reply schema (:mod:`._schemas`), its token
bound when the config names none, its offline fallback (a method of
:class:`~sealgraph.reasoning.offline.OfflineReasoner`, or any function taking the
offline reasoner first), and ``ask``: how the step's arguments become the prompt's
values, the step's own checks of a reply and the step's value made from a checked
reply (:class:`~sealgraph.reasoning.base.Ask`). ``ask`` returns a
:class:`~sealgraph.reasoning.base.StepOutcome` instead when there is nothing to ask
(no new passage, no open gap).

Everything else is derived from the record: :func:`step_request` builds the request
the runner sends (:class:`~sealgraph.reasoning.llm._request.StepRequest`), the
reasoners run any record with ``run_step(spec, ...)`` (the LLM reasoner with the
model, the offline reasoner with the fallback alone), the LLM reasoner refuses an
``llm.max_tokens.<name>`` that names no record, and that bound falls back on the
record's (:meth:`~sealgraph.config.StepTokens.for_step`).

Every reply schema forbids unknown keys (a schema-invalid reply must not pass as an
empty one), and no field has a default, so ``{}`` never validates. The answer is the
one exception: its citations may come as ``[n]`` markers instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from sealgraph.config import StepTokens
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import Gap, NeedItem
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger, Facts
from sealgraph.ledger.needs import MAX_HOPS, QuestionNeeds
from sealgraph.model import Step
from sealgraph.prompts import fence, passages_block, prompt_example, prompt_messages, unfence
from sealgraph.reasoning.answer import SpanText
from sealgraph.reasoning.base import Ask, GeneratedAnswer, StepOutcome, StepSpec, Verdict
from sealgraph.reasoning.llm._convert import facts_from, needs_from
from sealgraph.reasoning.llm._request import StepRequest
from sealgraph.reasoning.llm._schemas import (
    AnswerOut,
    Assessment,
    Extraction,
    NeedsReading,
    QueryPlan,
)
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.repair.microqueries import MicroQuery
from sealgraph.text.names import normalize_name
from sealgraph.types import Chunk

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


STEPS: dict[str, StepSpec[Any, Any]] = {}
"""Every LLM step by name, in the order a run meets them (:func:`register_step` adds one)."""


def register_step(spec: StepSpec[M, T]) -> StepSpec[M, T]:
    """Add ``spec`` to :data:`STEPS` and return it; a name registered twice is an error."""
    if spec.name in STEPS:
        raise ValueError(f"an LLM step named {spec.name!r} is registered already")
    STEPS[spec.name] = spec
    return spec


def step_request(
    spec: StepSpec[M, T], offline: Any, *args: Any, **kwargs: Any
) -> StepRequest[M, T] | StepOutcome[T]:
    """Return the request of one call of ``spec`` with the step's arguments.

    ``offline`` is the offline reasoner the fallback runs on. The outcome of ``ask``
    is returned as it is when there is nothing to ask.
    """
    ask = spec.ask(*args, **kwargs)
    if isinstance(ask, StepOutcome):
        return ask
    system, user = prompt_messages(spec.prompt, **ask.values)
    return StepRequest(
        spec.name,
        spec.schema,
        system,
        user,
        ask.convert,
        lambda: spec.offline(offline, *args, **kwargs),
        ask.check,
        prompt_example(spec.prompt),
        ask.stream,
        spec.max_tokens,
    )


_BOUNDS = StepTokens()
"""The built-in steps' token bounds, as ``llm.max_tokens`` documents them."""


# --- needs -------------------------------------------------------------------------------


def _needs_check(r: NeedsReading) -> str | None:
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


def _ask_needs(question: str, gazetteer: Gazetteer) -> Ask[NeedsReading, QuestionNeeds]:
    """See :meth:`~sealgraph.reasoning.llm.LLMReasoner.needs`."""
    return Ask(
        {"question": fence(question)},
        lambda r: needs_from(question, r, gazetteer),
        _needs_check,
    )


NEEDS = register_step(
    StepSpec(
        Step.NEEDS,
        "needs",
        NeedsReading,
        _BOUNDS.needs,
        OfflineReasoner.needs,
        _ask_needs,
        "Read the question's needs before any search: answer type, hops, structure, the names.",
    )
)


# --- extract -----------------------------------------------------------------------------


def _ask_extract(
    question: str, chunks: Sequence[Chunk], features: Sequence[PassageFeatures]
) -> Ask[Extraction, Facts] | StepOutcome[Facts]:
    """See :meth:`~sealgraph.reasoning.llm.LLMReasoner.extract`."""
    if not chunks:
        return StepOutcome(Facts())
    return Ask(
        {"question": fence(question), "passages": passages_block(chunks)},
        lambda out: facts_from(out, chunks, features),
    )


EXTRACT = register_step(
    StepSpec(
        Step.EXTRACT,
        "extract",
        Extraction,
        _BOUNDS.extract,
        OfflineReasoner.extract,
        _ask_extract,
        "Read entities, relations and qualifiers from the new passages (one batched call).",
    )
)


# --- assess ------------------------------------------------------------------------------


def _assess_check(a: Assessment) -> str | None:
    if not a.sufficient and not a.gaps:
        return "the evidence is called insufficient but no gap is named"
    return None


def _ask_assess(
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    features: Sequence[PassageFeatures],
    ledger: EntityLedger,
) -> Ask[Assessment, Verdict]:
    """See :meth:`~sealgraph.reasoning.llm.LLMReasoner.assess` (``items`` asks nothing)."""
    names = "\n".join(fence(e.name) for e in ledger.entities.values()) or "(empty)"

    def convert(a: Assessment) -> Verdict:
        gaps = tuple(
            Gap(g.kind, unfence(g.entity), unfence(g.relation), g.qualifier, unfence(g.reason))
            for g in ([] if a.sufficient else a.gaps)
        )
        named = {n for n in a.supporting if 1 <= n <= len(features)}
        support = (
            {f.chunk_id: float(n in named) for n, f in enumerate(features, 1)} if named else None
        )
        return Verdict(gaps, support)

    values = {
        "question": fence(needs.question),
        "ledger": names,
        "passages": passages_block(features),
    }
    return Ask(values, convert, _assess_check)


ASSESS = register_step(
    StepSpec(
        Step.ASSESS,
        "assess",
        Assessment,
        _BOUNDS.assess,
        OfflineReasoner.assess,
        _ask_assess,
        "The sufficiency gate: the open gaps, and the passages that support the needs.",
    )
)


# --- plan --------------------------------------------------------------------------------


def _ask_plan(
    needs: QuestionNeeds,
    gaps: Sequence[Gap],
    issued: Sequence[str],
    doc_titles: dict[str, str],
    limit: int,
) -> Ask[QueryPlan, list[MicroQuery]] | StepOutcome[list[MicroQuery]]:
    """See :meth:`~sealgraph.reasoning.llm.LLMReasoner.plan` (``doc_titles`` asks nothing)."""
    if not gaps:
        return StepOutcome([])
    examples = {
        normalize_name(str(q.get("text", ""))) for q in prompt_example(Step.PLAN).get("queries", [])
    }

    def check(out: QueryPlan) -> str | None:
        copied = [q.text for q in out.queries if normalize_name(unfence(q.text)) in examples]
        if copied:
            return (
                f"the query {copied[0]!r} copies the example of the instructions; "
                "write queries naming the entities of the open gaps"
            )
        return None

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

    values = {
        "question": fence(needs.question),
        "gaps": "\n".join(fence(f"- {g.kind}: {g.entity} {g.relation} ({g.reason})") for g in gaps),
        "issued": "\n".join(fence(f"- {q}") for q in issued) or "(none)",
    }
    return Ask(values, convert, check)


PLAN = register_step(
    StepSpec(
        Step.PLAN,
        "plan",
        QueryPlan,
        _BOUNDS.plan,
        OfflineReasoner.plan,
        _ask_plan,
        "Write one micro-query per open gap (the graph's micro_query node runs it).",
    )
)


# --- generate ----------------------------------------------------------------------------


_MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")


def cited_numbers(answer: AnswerOut) -> set[int]:
    """Return the passage numbers an answer cites: its ``[n]`` markers and its citations list."""
    marked = {int(n) for m in _MARKER.finditer(answer.answer) for n in re.split(r"[,;]", m[1])}
    return marked | set(answer.citations)


def _ask_generate(
    needs: QuestionNeeds,
    spans: Sequence[SpanText],
    gaps: Sequence[Gap],
    **_aids: Any,
) -> Ask[AnswerOut, GeneratedAnswer]:
    """See :meth:`~sealgraph.reasoning.llm.LLMReasoner.generate`.

    Its reply's ``answer`` field streams as text (the ask's ``stream``); the offline
    reader's ``aids`` ask nothing of the model.
    """
    valid = {s.n for s in spans}

    def check(a: AnswerOut) -> str | None:
        if a.insufficient:
            return None
        cited = cited_numbers(a)
        unknown = sorted(cited - valid)
        if unknown:
            given = ", ".join(f"[{n}]" for n in sorted(valid)) or "none"
            return (
                f"the answer cites {', '.join(f'[{n}]' for n in unknown)}, which is not "
                f"a passage of the context (its passages: {given})"
            )
        if not cited:
            return "the answer cites no passage: write [n] after each claim"
        return None

    def convert(a: AnswerOut) -> GeneratedAnswer:
        cited = tuple(sorted(cited_numbers(a) & valid))
        return GeneratedAnswer(unfence(a.answer), cited, a.insufficient)

    values = {"question": fence(needs.question), "context": passages_block(spans)}
    return Ask(values, convert, check, stream=needs.question)


GENERATE = register_step(
    StepSpec(
        Step.GENERATE,
        "generate",
        AnswerOut,
        _BOUNDS.generate,
        OfflineReasoner.generate,
        _ask_generate,
        "Answer from the packed spans, citing them.",
    )
)
