"""Context-bubble selection: greedy MMR admission under global and per-section budgets.

Candidates are considered one at a time in maximal-marginal-relevance order: the next
one maximises ``λ·final − (1 − λ)·max_sim(candidate, selected)``. Each is then put
through the gates, in this order:

1. ``low_relevance``: its bubble score ``final`` is below ``min_relevance``;
2. ``doc_cap``: its document already has ``per_doc_cap`` selected spans;
3. ``too_redundant``: its lexical overlap with the bubble is ≥ δ, or (optional) its
   embedding cosine with a selected span is ≥ ``semantic_delta``. Overlap with the
   bubble is the highest Jaccard index of content words with any selected span (the
   pairwise measure the paper reports as "average lexical overlap");
4. ``budget_exceeded``: its rendered block does not fit in what is left of the budget;
5. section budget: section ``s`` may spend ``floor(ρ_s · budget)`` tokens in this first
   pass. A span over its section's quota is deferred; after the pass every deferred span
   is reconsidered (same gates, same order) against the *slack pool*, i.e. whatever the
   first pass left of the global budget, which includes every section's unspent share.
   A deferred span that still does not fit is ``section_budget``. Quotas only apply
   when the candidates come from two or more sections: with a single section there is
   no coverage to balance, and a quota would only let weaker spans jump the queue.

Greedy admission continues past a span that does not fit, so a smaller one later can
still use the room. Everything is deterministic: ties go to the lower index.

Candidates marked ``keep`` (answer-bearing spans) are considered first, in MMR order
among themselves, and only the budget gate applies to them (and the redundancy gate
for an exact repeat, lexical overlap 1, of a selected span): the packer never drops
an answer-bearing sentence while budget remains. They do not count towards the
per-document cap of the other spans.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sealgraph.packing.config import PackConfig
from sealgraph.packing.scoring import match_section_key
from sealgraph.packing.types import Decision

__all__ = ["BubbleItem", "Choice", "marginal_values", "section_quotas", "select_spans"]


@dataclass(frozen=True, slots=True)
class BubbleItem:
    """A scored candidate span as the selector sees it."""

    span_id: str
    """Id of the span (used in reasons only)."""
    doc_id: str
    """Its document (for the per-document cap)."""
    section: str
    """Its section label (for section budgets)."""
    tokens: int
    """Tokens of its rendered block."""
    final: float
    """Its bubble score."""
    keep: bool = False
    """Answer-bearing: considered before the others, exempt from the relevance,
    per-document, redundancy (short of an exact repeat) and section gates; only the
    budget can leave it out."""


@dataclass(frozen=True, slots=True)
class Choice:
    """The selector's verdict on one candidate."""

    index: int
    """Index of the candidate in the input sequence."""
    decision: Decision
    """``selected`` or the reason it was left out."""
    reason: str
    """One human-readable line."""
    novelty: float
    """1 − highest similarity to the spans selected before it was considered."""
    mmr: float
    """Its MMR value when it was considered."""


def section_quotas(
    items: Sequence[BubbleItem], budget: int, config: PackConfig
) -> tuple[dict[str, str], dict[str, int]]:
    """Map each section label to its budget key, and each key to its token quota.

    Labels matching a key of ``config.section_budgets`` share that key's quota;
    any other label is its own key with ``default_section_share`` of the budget.
    """
    key_of: dict[str, str] = {}
    quota: dict[str, int] = {}
    for item in items:
        if item.section in key_of:
            continue
        key = match_section_key(item.section, config.section_budgets)
        if key is None:
            key, share = f"label:{item.section}", config.default_section_share
        else:
            key, share = f"key:{key}", config.section_budgets[key]
        key_of[item.section] = key
        quota[key] = int(share * budget)
    return key_of, quota


def select_spans(
    items: Sequence[BubbleItem],
    *,
    budget: int,
    config: PackConfig,
    overlap: Sequence[Sequence[float]],
    semantic: Sequence[Sequence[float]] | None = None,
) -> list[Choice]:
    """Select spans into the context bubble.

    Args:
        items: The candidates.
        budget: Token budget for the rendered blocks.
        config: Packing settings (δ, ``semantic_delta``, caps, λ, section budgets).
        overlap: ``overlap[i][j]``: lexical overlap (Jaccard of content words) of
            candidates i and j; drives the redundancy gate, and MMR without embeddings.
        semantic: ``semantic[i][j]``: embedding cosine of candidates i and j, or None;
            drives MMR and the optional semantic gate when given.

    Returns:
        One :class:`Choice` per candidate, in the order they were considered.

    """
    lam = config.mmr_lambda
    mmr_sim = semantic if semantic is not None else overlap
    key_of, quota = section_quotas(items, budget, config)
    balance_sections = len(quota) > 1
    spent_section = dict.fromkeys(quota, 0)
    per_doc: dict[str, int] = {}
    selected: list[int] = []
    used = 0
    n = len(items)
    max_mmr_sim = [0.0] * n
    max_overlap = [0.0] * n
    max_semantic = [0.0] * n
    choices: list[Choice] = []
    deferred: list[tuple[int, float, float]] = []

    def admit(i: int) -> None:
        nonlocal used
        selected.append(i)
        used += items[i].tokens
        spent_section[key_of[items[i].section]] += items[i].tokens
        if not items[i].keep:  # answer-bearing spans take no place under the cap
            per_doc[items[i].doc_id] = per_doc.get(items[i].doc_id, 0) + 1
        for j in range(n):
            max_mmr_sim[j] = max(max_mmr_sim[j], mmr_sim[i][j])
            max_overlap[j] = max(max_overlap[j], overlap[i][j])
            if semantic is not None:
                max_semantic[j] = max(max_semantic[j], semantic[i][j])

    def common_gates(i: int) -> tuple[Decision, str] | None:
        item = items[i]
        if item.keep:
            return keep_gates(i)
        if per_doc.get(item.doc_id, 0) >= config.per_doc_cap:
            return "doc_cap", f"document {item.doc_id!r} already has {config.per_doc_cap} spans"
        if selected and max_overlap[i] >= config.delta:
            return "too_redundant", (
                f"lexical overlap {max_overlap[i]:.2f} with the bubble ≥ δ={config.delta:g}"
            )
        if (
            semantic is not None
            and config.semantic_delta is not None
            and selected
            and max_semantic[i] >= config.semantic_delta
        ):
            return "too_redundant", (
                f"embedding similarity {max_semantic[i]:.2f} with the bubble "
                f"≥ semantic_delta={config.semantic_delta:g}"
            )
        if item.tokens > budget - used:
            return "budget_exceeded", (
                f"{item.tokens} tokens > {budget - used} left of the {budget}-token budget"
            )
        return None

    def keep_gates(i: int) -> tuple[Decision, str] | None:
        item = items[i]
        if selected and max_overlap[i] >= 1.0:
            return "too_redundant", "answer-bearing, but repeats a selected span word for word"
        if item.tokens > budget - used:
            return "budget_exceeded", (
                f"answer-bearing, but {item.tokens} tokens > {budget - used} left of the "
                f"{budget}-token budget"
            )
        return None

    remaining = list(range(n))
    while remaining:
        pool = [i for i in remaining if items[i].keep] or remaining
        best = max(pool, key=lambda i: (lam * items[i].final - (1 - lam) * max_mmr_sim[i], -i))
        remaining.remove(best)
        item = items[best]
        novelty = 1.0 - max_mmr_sim[best]
        mmr = lam * item.final - (1 - lam) * max_mmr_sim[best]
        if item.final < config.min_relevance and not item.keep:
            choices.append(
                Choice(
                    best,
                    "low_relevance",
                    f"score {item.final:.3f} < min_relevance={config.min_relevance:g}",
                    novelty,
                    mmr,
                )
            )
            continue
        verdict = common_gates(best)
        if verdict is not None:
            choices.append(Choice(best, verdict[0], verdict[1], novelty, mmr))
            continue
        key = key_of[item.section]
        if balance_sections and spent_section[key] + item.tokens > quota[key] and not item.keep:
            deferred.append((best, novelty, mmr))
            continue
        admit(best)
        how = "admitted (answer-bearing)" if item.keep else "admitted"
        choices.append(Choice(best, "selected", f"{how}: {item.tokens} tokens", novelty, mmr))

    for i, novelty, mmr in deferred:
        item = items[i]
        key = key_of[item.section]
        verdict = common_gates(i)
        if verdict is None:
            admit(i)
            choices.append(
                Choice(
                    i,
                    "selected",
                    f"admitted from the slack pool: {item.tokens} tokens "
                    f"(section quota {quota[key]} spent)",
                    novelty,
                    mmr,
                )
            )
        elif verdict[0] == "budget_exceeded":
            choices.append(
                Choice(
                    i,
                    "section_budget",
                    f"section {item.section or '(untagged)'!r} quota {quota[key]} tokens spent "
                    f"and the slack pool has {budget - used} < {item.tokens} tokens",
                    novelty,
                    mmr,
                )
            )
        else:
            choices.append(Choice(i, verdict[0], verdict[1], novelty, mmr))
    return choices


def marginal_values(
    indices: Sequence[int],
    finals: Sequence[float],
    similarity: Sequence[Sequence[float]],
    mmr_lambda: float,
) -> list[float]:
    """Marginal value of each kept span: λ·final − (1 − λ)·max similarity to the others.

    A span that scores low *and* repeats what the rest of the context says has the
    lowest marginal value: it is the first to go when the rendered context overshoots.
    """
    out = []
    for i in indices:
        sim = max((similarity[i][j] for j in indices if j != i), default=0.0)
        out.append(mmr_lambda * finals[i] - (1 - mmr_lambda) * sim)
    return out
