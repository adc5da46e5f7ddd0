"""The LLM steps, one section each: the reply's schema and the step's request.

A step's request (:class:`~sealgraph.reasoning.llm._request.StepRequest`) holds its
prompt filled with the fenced question and data (``sealgraph/prompts/<step>.md``),
the schema the reply must validate against, the step's own checks of a reply, how a
checked reply becomes the step's value, and the offline reasoner's step, used when
the LLM step falls back. A builder returns a :class:`~sealgraph.reasoning.base.StepOutcome`
instead when there is nothing to ask (no new passage, no open gap).

Every reply schema forbids unknown keys (a schema-invalid reply must not pass as an
empty one), and no field has a default, so ``{}`` never validates. The answer is the
one exception: its citations may come as ``[n]`` markers instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import Gap, NeedItem
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger, Facts
from sealgraph.ledger.needs import MAX_HOPS, QuestionNeeds
from sealgraph.model import Step
from sealgraph.prompts import fence, passages_block, prompt_example, prompt_messages, unfence
from sealgraph.reasoning.answer import AnswerAids, SpanText
from sealgraph.reasoning.base import GeneratedAnswer, StepOutcome, Verdict
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


def _request(
    step: Step,
    schema: type[M],
    convert: Callable[[M], T],
    offline: Callable[[], StepOutcome[T]],
    validate: Callable[[M], str | None] | None = None,
    stream: str | None = None,
    **values: str,
) -> StepRequest[M, T]:
    """Return the request of ``step``: its prompt filled with ``values`` (fenced already)."""
    system, user = prompt_messages(step, **values)
    example = prompt_example(step)
    return StepRequest(step, schema, system, user, convert, offline, validate, example, stream)


# --- needs -------------------------------------------------------------------------------


def needs_request(
    offline: OfflineReasoner, question: str, gazetteer: Gazetteer
) -> StepRequest[Any, Any] | StepOutcome[QuestionNeeds]:
    """Return the needs step (see :meth:`~sealgraph.reasoning.llm.LLMReasoner.needs`)."""

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

    return _request(
        Step.NEEDS,
        NeedsReading,
        lambda r: needs_from(question, r, gazetteer),
        lambda: offline.needs(question, gazetteer),
        check,
        question=fence(question),
    )


# --- extract -----------------------------------------------------------------------------


def extract_request(
    offline: OfflineReasoner,
    question: str,
    chunks: Sequence[Chunk],
    features: Sequence[PassageFeatures],
) -> StepRequest[Any, Any] | StepOutcome[Facts]:
    """Return the extract step (see :meth:`~sealgraph.reasoning.llm.LLMReasoner.extract`)."""
    if not chunks:
        return StepOutcome(Facts())
    return _request(
        Step.EXTRACT,
        Extraction,
        lambda out: facts_from(out, chunks, features),
        lambda: offline.extract(question, chunks, features),
        question=fence(question),
        passages=passages_block(chunks),
    )


# --- assess ------------------------------------------------------------------------------


def assess_request(
    offline: OfflineReasoner,
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    features: Sequence[PassageFeatures],
    ledger: EntityLedger,
) -> StepRequest[Any, Any] | StepOutcome[Verdict]:
    """Return the assess step (see :meth:`~sealgraph.reasoning.llm.LLMReasoner.assess`)."""
    names = "\n".join(fence(e.name) for e in ledger.entities.values()) or "(empty)"

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
            {f.chunk_id: float(n in named) for n, f in enumerate(features, 1)} if named else None
        )
        return Verdict(gaps, support)

    return _request(
        Step.ASSESS,
        Assessment,
        convert,
        lambda: offline.assess(needs, items, features, ledger),
        check,
        question=fence(needs.question),
        ledger=names,
        passages=passages_block(features),
    )


# --- plan --------------------------------------------------------------------------------


def plan_request(
    offline: OfflineReasoner,
    needs: QuestionNeeds,
    gaps: Sequence[Gap],
    issued: Sequence[str],
    doc_titles: dict[str, str],
    limit: int,
) -> StepRequest[Any, Any] | StepOutcome[list[MicroQuery]]:
    """Return the plan step (see :meth:`~sealgraph.reasoning.llm.LLMReasoner.plan`)."""
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

    return _request(
        Step.PLAN,
        QueryPlan,
        convert,
        lambda: offline.plan(needs, gaps, issued, doc_titles, limit),
        check,
        question=fence(needs.question),
        gaps="\n".join(fence(f"- {g.kind}: {g.entity} {g.relation} ({g.reason})") for g in gaps),
        issued="\n".join(fence(f"- {q}") for q in issued) or "(none)",
    )


# --- generate ----------------------------------------------------------------------------


_MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")


def cited_numbers(answer: AnswerOut) -> set[int]:
    """Return the passage numbers an answer cites: its ``[n]`` markers and its citations list."""
    marked = {int(n) for m in _MARKER.finditer(answer.answer) for n in re.split(r"[,;]", m[1])}
    return marked | set(answer.citations)


def generate_request(
    offline: OfflineReasoner,
    needs: QuestionNeeds,
    spans: Sequence[SpanText],
    gaps: Sequence[Gap],
    aids: AnswerAids | None = None,
) -> StepRequest[Any, Any] | StepOutcome[GeneratedAnswer]:
    """Return the generate step (see :meth:`~sealgraph.reasoning.llm.LLMReasoner.generate`).

    Its reply's ``answer`` field streams as text (the request's ``stream``).
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

    return _request(
        Step.GENERATE,
        AnswerOut,
        convert,
        lambda: offline.generate(needs, spans, gaps, aids=aids),
        check,
        needs.question,  # the answer streams as text
        question=fence(needs.question),
        context=passages_block(spans),
    )
