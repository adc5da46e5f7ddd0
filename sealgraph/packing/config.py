"""Configuration of the pack step (see :mod:`sealgraph.packing`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class PackConfig(BaseModel):
    """How evidence is cut into spans and packed under the token budget."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: Literal["bubble", "segments", "window", "auto"] = "auto"
    """Packing strategy; ``auto`` grows spans (segments/window) then selects with the bubble."""
    theta: float = Field(default=120.0, gt=0)
    """Length-penalty scale θ of the context bubble: score × 1/(1 + tokens/θ)."""
    delta: float = Field(default=0.5, gt=0, le=1)
    """Redundancy gate δ: a span whose lexical overlap with the bubble is ≥ δ is dropped."""
    semantic_delta: float | None = Field(default=None, gt=0, le=1)
    """Optional embedding-similarity gate; None disables it."""
    section_priors: dict[str, float] = Field(default_factory=dict)
    """Structural prior π(section) by section label (case-insensitive substring match)."""
    section_budgets: dict[str, float] = Field(default_factory=dict)
    """Per-section budget share ρ_s by section label; unspent share flows to the slack pool."""
    default_section_share: float = Field(default=0.5, gt=0, le=1)
    """Budget share ρ of any section without an explicit entry in ``section_budgets``."""
    per_doc_cap: int = Field(default=4, ge=1)
    """Most spans admitted from one document."""
    mmr_lambda: float = Field(default=0.7, ge=0, le=1)
    """MMR trade-off: λ·relevance − (1−λ)·max similarity to what is already selected."""
    answerability_boost: float = Field(default=0.1, ge=0)
    """Bonus for spans that contain a value of the expected answer type or a gap entity."""
    min_relevance: float = Field(default=0.0)
    """Spans scoring below this are dropped as ``low_relevance``."""
    rse_threshold: float = Field(default=0.3)
    """Relevant segment extraction: value = fused similarity − threshold."""
    max_segment_length: int = Field(default=6, ge=1)
    """Most units (sentences) in one relevant segment."""
    window_threshold: float = Field(default=0.35, ge=-1, le=1)
    """Dynamic semantic window: keep growing while neighbour similarity ≥ this."""
    window_max_expand: int = Field(default=3, ge=0)
    """Dynamic semantic window: most units added on each side of a seed."""
