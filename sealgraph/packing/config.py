"""Configuration of the pack step (see :mod:`sealgraph.packing`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

STRICT = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)
"""Settings models accept exactly their types: no unknown keys, no ``true`` for a
number or ``"3"`` for an int, no NaN or infinity (``--set`` values are read as JSON
first, so ``k=3`` is still the number 3)."""


class PackConfig(BaseModel):
    """How evidence is cut into spans and packed under the token budget.

    Defaults of the unit scoring (priors, boosts, thresholds) were tuned with
    ``benchmarks/bench_packing.py`` on the HotpotQA dev sample (k=3 evidence
    paragraphs, budget 400, lexical only): they sit where ≥95% of the supporting
    sentences survive with the pipeline's inputs (focus terms, relevance).
    ``rse_threshold`` moves along the recall/size trade-off. The need-support fields
    need the SEAL ledger's signal (absent from that benchmark) and were tuned with
    ``sealgraph eval`` instead.
    """

    model_config = STRICT

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
    rse_threshold: float = Field(default=0.55)
    """Relevant segment extraction: unit value = relevance + prior + boosts − threshold.

    Higher keeps fewer sentences. The seed's 0.3 applies to a bare fused similarity;
    here priors and boosts add to it, hence a higher default.
    """
    max_segment_length: int = Field(default=6, ge=1)
    """Most units (sentences) in one relevant segment."""
    window_threshold: float = Field(default=0.5, ge=-1, le=1)
    """Dynamic semantic window: keep growing while the neighbours' embedding cosine ≥ this.

    The seed's 0.75 is for bge-small; all-MiniLM-L6-v2 gives consecutive sentences of
    one paragraph cosines of about 0.3-0.6.
    """
    window_max_expand: int = Field(default=1, ge=0)
    """Dynamic semantic window: most units added on each side of a seed (segment)."""
    lead_prior: float = Field(default=0.3, ge=0)
    """Structural prior of a document's lead sentence (first sentence of its first chunk).

    In encyclopedic text the lead sentence defines the document's subject and is very
    often a supporting sentence; in the ``bubble`` strategy the whole first chunk gets it.
    """
    position_prior: float = Field(default=0.15, ge=0)
    """Prior of early sentences: ``position_prior · (1 − min(i, 5)/5)`` for the i-th sentence
    of a document's first chunk (0 for later chunks): facts cluster near the start."""
    title_prior: float = Field(default=0.2, ge=0)
    """Prior of every unit of a document whose title the question names, plus as much again
    when another evidence document names it (it is a hop of the reasoning chain)."""
    bridge_boost: float = Field(default=0.3, ge=0)
    """Boost of a unit that names another evidence document's title: the sentence that
    links two hops is usually a supporting fact."""
    rank_weight: float = Field(default=0.1, ge=0, le=1)
    """Weight of the evidence chunk's rank score in a unit's fused relevance.

    Fused relevance = (1 − w)·similarity(unit, question) + w·(1 − rank/n). Relevant
    segment extraction averages the two (w = 0.5), but a chunk's rank says little about
    which of its sentences matter and a lexically close distractor often ranks first:
    on HotpotQA w = 0.5 costs 10 points of context size at equal recall.
    """
    semantic_weight: float = Field(default=0.5, ge=0, le=1)
    """With embeddings: unit similarity = (1 − w)·lexical + w·cosine(unit, query)."""
    window_lexical_threshold: float = Field(default=1.0, ge=0, le=1)
    """Window growth threshold on the lexical cohesion used when there are no embeddings.

    Cohesion is 1.0 for a sentence that opens by referring back ("He", "It", "The band")
    and the term overlap coefficient otherwise; 1.0 grows only over such references.
    """
    neighbor_chunks: int = Field(default=1, ge=0)
    """Chunks fetched on each side of every evidence chunk to grow segments and windows."""
    max_segments_per_doc: int = Field(default=4, ge=1)
    """Most relevant segments extracted from one document."""
    min_need_support: float = Field(default=0.5, ge=0, le=1)
    """Need support below which an evidence chunk counts as unsupported.

    A chunk's need support (``chunk_support`` of :func:`sealgraph.packing.pack`) says
    how well it serves the question's needs, in [0, 1]; the pipeline gives a passage's
    best need-item coverage (about a question entity, linked second hop, compared
    value). Without a support signal no chunk is unsupported.
    """
    unsupported_penalty: float = Field(default=0.25, ge=0)
    """Prior subtracted from every unit of an unsupported chunk (see ``min_need_support``).

    A passage that serves no need is usually a distractor. Measured with
    ``sealgraph eval`` (method seal, HotpotQA k=3, budget 400): 0 → 0.25 takes the
    context from 0.79 to 0.74 of the evidence tokens while 0.956 of the evidence's
    supporting sentences survive (0.3: 0.73 at 0.948, under the 0.95 floor). Numbers
    for all three dev files are in docs/benchmarks.md.
    """
    boilerplate_penalty: float = Field(default=0.5, ge=0)
    """Prior subtracted from every boilerplate unit (front matter, navigation and link
    lines, "See the guide" pointers, short fragments, lines many documents repeat; see
    :func:`sealgraph.packing.scoring.boilerplate_reason`).

    Boilerplate competes with content for the budget on documentation sites: a
    navigation line shares the page's title words with the question. A boilerplate
    unit's value is its prior minus ``rse_threshold`` (no relevance, no boost), so with
    this penalty it is negative and enters a segment only between two relevant
    sentences; 0 removes the demotion (the value keeps no relevance all the same).
    """
    keep_answer_bearing: bool = True
    """Never drop an answer-bearing evidence sentence (one holding a third of the
    question's relation terms and a value of the expected answer kind) while budget
    remains: it gets a span of its own when no segment covers it, bypasses the
    relevance, per-document and redundancy gates (an exact repeat aside), is admitted
    before other spans and is the last dropped at the final render."""
    fill: bool = True
    """After the must-have spans, spend what is left of the budget on the best remaining
    evidence sentences (MMR over unit values, δ redundancy gate, real token count; see
    :mod:`sealgraph.packing.fill`). Off: the context stops where the bubble does, which
    leaves most of the budget unused when the corpus's scores sit below the absolute
    thresholds above (tuned on encyclopedic text)."""
    fill_relative_floor: float = Field(default=0.0, ge=0, le=1)
    """A sentence is filled only if its relevance is at least this share of the best
    relevance among the question's evidence sentences (relative to the question's own
    score distribution; 0 fills in relevance order until the budget is spent)."""
    fill_adjacency_bonus: float = Field(default=0.1, ge=0)
    """Fill-order bonus of a sentence that touches packed text: it extends a block (no
    new header) and keeps a long clause whole."""
