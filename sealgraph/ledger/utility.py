"""The entity-first utility S(c) = λ1·GapCov + λ2·Corr + λ3·Nov − λ4·Red.

Every component is in [0, 1] and is computed for a passage *relative to a set*:
for a candidate, against the current evidence set; for an incumbent, against the
evidence set without it. That makes scores of candidates and incumbents
comparable, which fixed-k replacement needs:

- **GapCov**: marginal need coverage. For a candidate, how much of the open
  gaps it would close; for an incumbent, how much coverage would be lost (gaps
  reopened) if it were evicted. Normalised by the number of need items.
- **Corr**: corroboration with the question and the ledger: 0.6 × question
  relevance (retrieval score normalised over the pool) + 0.4 × link strength to
  passages in the set that are about question entities (a mention in either
  direction).
- **Nov**: share of the passage's entities not yet known to the rest of the set;
  0 for a second passage of a document the set already covers.
- **Red**: redundancy with the rest of the set: the highest lexical (Jaccard)
  overlap with another passage, at least 0.5 for a passage of the same document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sealgraph.config import UtilityWeights
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import NeedItem, set_cover


@dataclass(frozen=True, slots=True)
class UtilityScore:
    """S(c) with its components."""

    chunk_id: str
    """Passage scored."""
    gap_coverage: float
    """GapCov in [0, 1]."""
    corroboration: float
    """Corr in [0, 1]."""
    novelty: float
    """Nov in [0, 1]."""
    redundancy: float
    """Red in [0, 1]."""
    total: float
    """λ1·GapCov + λ2·Corr + λ3·Nov − λ4·Red."""

    def to_dict(self) -> dict[str, float | str]:
        """Return a JSON-safe dict with rounded components."""
        return {
            "chunk_id": self.chunk_id,
            "gap_coverage": round(self.gap_coverage, 4),
            "corroboration": round(self.corroboration, 4),
            "novelty": round(self.novelty, 4),
            "redundancy": round(self.redundancy, 4),
            "total": round(self.total, 4),
        }


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two word sets."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def utility(
    passage: PassageFeatures,
    others: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
    relevance: Mapping[str, float],
    weights: UtilityWeights,
) -> UtilityScore:
    """Score ``passage`` against the set ``others`` (which must not contain it).

    Args:
        passage: The passage to score (candidate or incumbent).
        others: The rest of the evidence set.
        items: Need items of the question.
        relevance: Question relevance per chunk id, normalised to [0, 1].
        weights: λ1..λ4.

    """
    # GapCov: marginal coverage of need items.
    with_p = [*others, passage]
    gain = 0.0
    for it in items:
        # Set coverage with and without the passage: this also credits a passage
        # that raises another's coverage (a bridge needs its anchor).
        gain += max(0.0, set_cover(it, with_p, items) - set_cover(it, others, items))
    gap_cov = gain / len(items) if items else 0.0

    # Corr: question relevance and links to the set.
    entity_docs = {d for it in items if it.kind == "entity" for d in it.targets}
    link = 0.0
    for o in others:
        linked = passage.doc_id in o.mentioned_docs() or o.doc_id in passage.mentioned_docs()
        if linked:
            link = max(link, 1.0 if o.doc_id in entity_docs else 0.5)
    corr = 0.6 * relevance.get(passage.chunk_id, 0.0) + 0.4 * link

    # Nov: entities new to the set.
    if any(o.doc_id == passage.doc_id for o in others):
        nov = 0.0
    else:
        known = {o.topic for o in others} | {k for o in others for k in o.mentioned_keys()}
        keys = passage.mentioned_keys() | {passage.topic}
        nov = len(keys - known) / len(keys) if keys else 0.0

    # Red: overlap with the most similar other passage.
    red = 0.0
    for o in others:
        r = jaccard(passage.words, o.words)
        if o.doc_id == passage.doc_id:
            r = max(r, 0.5)
        red = max(red, r)

    total = (
        weights.gap_coverage * gap_cov
        + weights.corroboration * corr
        + weights.novelty * nov
        - weights.redundancy * red
    )
    return UtilityScore(passage.chunk_id, gap_cov, corr, nov, red, total)


def score_set(
    evidence: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
    relevance: Mapping[str, float],
    weights: UtilityWeights,
) -> dict[str, UtilityScore]:
    """Score every incumbent against the rest of the set."""
    out = {}
    for i, p in enumerate(evidence):
        others = [o for j, o in enumerate(evidence) if j != i]
        out[p.chunk_id] = utility(p, others, items, relevance, weights)
    return out
