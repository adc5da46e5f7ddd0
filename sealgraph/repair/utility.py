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
- **Nov**: share of the passage's entities not yet known to the rest of the set.
- **Red**: redundancy with the rest of the set, judged on content: the highest
  lexical (Jaccard) overlap of its text's words with another passage's (title and
  headings left out: they are the document's, not the passage's). Several chunks of
  one document are not redundant for sharing a title; two near-identical passages
  are, whatever their documents.

Each score also carries what the do-no-harm rules of fixed-k replacement read
(:mod:`sealgraph.repair.replacement`): the marginal need coverage, the part of it
that is about documents (entity, mention, bridge and qualifier needs), the passage's
own coverage of each document need, the share of the question's relation words it
states, and whether it belongs to a document the question names
(:class:`UtilityScore`, a plain value of :mod:`sealgraph.model`, importable from here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from sealgraph.config import UtilityWeights
from sealgraph.ledger._need_items import NAMED_KINDS
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import cover, graded_alone, relation_share, set_cover
from sealgraph.model import NeedItem, UtilityScore

__all__ = ["UtilityScore", "jaccard", "score_set", "set_covers", "utility"]

_DOCUMENT_NEEDS = frozenset(["entity", "member", "mention", "bridge", "qualifier"])
"""Needs met by bringing the right document (the others by stating the right words)."""


def _text_words(passage: PassageFeatures) -> frozenset[str]:
    """Words of the passage's text alone: its title and headings are its document's."""
    if passage.sentence_words:
        return _union(passage.sentence_words)
    return passage.words


# The same passages are scored against each other many times per loop (every
# candidate against every member): both caches key on frozensets, whose hash
# Python keeps, so a hit costs little.
@lru_cache(maxsize=8192)
def _union(sets: tuple[frozenset[str], ...]) -> frozenset[str]:
    return frozenset().union(*sets)


@lru_cache(maxsize=65536)
def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two word sets."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def set_covers(passages: Sequence[PassageFeatures], items: Sequence[NeedItem]) -> tuple[float, ...]:
    """Coverage of each need item by the set ``passages``."""
    return tuple(set_cover(it, passages, items) for it in items)


def utility(
    passage: PassageFeatures,
    others: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
    relevance: Mapping[str, float],
    weights: UtilityWeights,
    *,
    base_cover: Sequence[float] | None = None,
) -> UtilityScore:
    """Score ``passage`` against the set ``others`` (which must not contain it).

    Args:
        passage: The passage to score (candidate or incumbent).
        others: The rest of the evidence set.
        items: Need items of the question.
        relevance: Question relevance per chunk id, normalised to [0, 1].
        weights: λ1..λ4.
        base_cover: :func:`set_covers` of ``others``, when the caller scores many
            passages against one set (it is the same for each); computed when None.

    """
    # GapCov: marginal coverage of need items.
    with_p = [*others, passage]
    if base_cover is None:
        base_cover = set_covers(others, items)
    gap_cov, need_gain, doc_gain, covers = _gains(passage, with_p, items, base_cover)
    named = any(passage.doc_id in it.targets for it in items if it.kind in NAMED_KINDS)

    # Corr: question relevance and links to the set.
    entity_docs = {d for it in items if it.kind in NAMED_KINDS for d in it.targets}
    own_docs = passage.mentioned_docs()
    link = 0.0
    for o in others:
        linked = passage.doc_id in o.mentioned_docs() or o.doc_id in own_docs
        if linked:
            link = max(link, 1.0 if o.doc_id in entity_docs else 0.5)
    corr = 0.6 * relevance.get(passage.chunk_id, 0.0) + 0.4 * link

    # Nov: entities new to the set.
    known = {o.topic for o in others} | {k for o in others for k in o.mentioned_keys()}
    keys = passage.mentioned_keys() | {passage.topic}
    nov = len(keys - known) / len(keys) if keys else 0.0

    # Red: content overlap with the most similar other passage (a shared document
    # or title is no redundancy by itself).
    own = _text_words(passage)
    red = max((jaccard(own, _text_words(o)) for o in others), default=0.0)

    total = (
        weights.gap_coverage * gap_cov
        + weights.corroboration * corr
        + weights.novelty * nov
        - weights.redundancy * red
    )
    return UtilityScore(
        passage.chunk_id,
        gap_cov,
        corr,
        nov,
        red,
        total,
        need_gain=need_gain,
        doc_gain=doc_gain,
        relation=relation_share(items, passage),
        covers=covers,
        named=named,
    )


def _gains(
    passage: PassageFeatures,
    with_p: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
    base_cover: Sequence[float],
) -> tuple[float, float, float, tuple[float, ...]]:
    """Return GapCov, the need and document gains, and the passage's document-need covers.

    ``with_p`` is the set with the passage (last), ``base_cover`` the set's coverage
    without it.
    """
    gain = need_gain = doc_gain = 0.0
    own: dict[int, float] = {}
    for i, (it, before) in enumerate(zip(items, base_cover, strict=True)):
        if graded_alone(it, passage, items):
            # The passage changes no other member's grade: the set's coverage with
            # it is the better of its own and the rest's, without grading every
            # member again.
            own[i] = cover(it, passage, with_p, items)
            after = max(before, own[i])
        else:
            # Set coverage with and without the passage: this also credits a passage
            # that raises another's coverage (a bridge needs its anchor).
            after = set_cover(it, with_p, items)
        g = max(0.0, after - before)
        gain += g
        need_gain += g
        if it.kind in _DOCUMENT_NEEDS:
            doc_gain += g
    gap_cov = gain / len(items) if items else 0.0
    covers = tuple(
        own[i] if i in own else cover(it, passage, with_p, items)
        for i, it in enumerate(items)
        if it.kind in _DOCUMENT_NEEDS
    )
    return gap_cov, need_gain, doc_gain, covers


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
