"""The reply schema of each LLM step: what a model's JSON must hold, nothing more.

Pydantic models with ``extra="forbid"`` and no defaults, so that a reply with
unknown keys, or an empty object, is rejected rather than read as an empty answer.
:mod:`sealgraph.reasoning.llm._steps` builds the requests that ask for them and
:mod:`sealgraph.reasoning.llm._convert` turns them into sealgraph's own types.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AnswerOut",
    "Assessment",
    "ExtractedEntity",
    "ExtractedQualifier",
    "ExtractedRelation",
    "Extraction",
    "GapOut",
    "NeedsReading",
    "QueryOut",
    "QueryPlan",
]


class _Reply(BaseModel):
    # Every reply model: unknown keys are an error (a schema-invalid reply must not
    # pass as an empty one), and no field has a default, so {} never validates. The
    # answer is the one exception: its citations may come as [n] markers instead.
    model_config = ConfigDict(extra="forbid")


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

    # The one answer contract: citations as [n] markers in the text, in the list, or
    # both; the numbers are read from both and checked once against the packed spans
    # (generate_request).

    answer: str = Field(description="Short answer with an [n] citation after each claim")
    citations: list[int] = Field(
        default_factory=list,
        description="Numbers of the passages cited (may be left out when the answer has [n])",
    )
    insufficient: bool = Field(
        default=False, description="True when the context does not hold the answer"
    )
