"""Needs, the gap specification G_t = N(q) minus U_t, and the sufficiency gate.

A question's needs are expanded into concrete *need items* that a set of passages
either covers or not:

- ``entity``: a passage about each entity the question names (gazetteer-linked);
- ``member``: a passage of each member of a set the question asks over;
- ``mention``: for names the corpus has no document for, a passage mentioning them;
- ``relation``: for single-hop questions, the question's relation words stated by
  passages of the named entities' documents (or by passages linked to them, when
  the entity's own document leaves some unstated);
- ``bridge``: for questions whose form nests a relation (two hops or more, see
  :func:`sealgraph.ledger.needs.question_hops`), a passage linked to a question
  entity's passage (the second hop) that can hold an answer of the expected type;
- ``qualifier``: for comparisons of dates or numbers, a value of that type in each
  compared entity's passage.

A single-hop question never gets a bridge need: one passage may answer it.

Coverage is graded in [0, 1]; a need is met at >= :data:`MET`. Unmet needs are the
gaps, each typed as missing entity / relation / qualifier with its reason.

This module holds the gap specification (:func:`gap_spec`) and the hop documents and
names it points to (:func:`bridge_targets`, :func:`bridge_names`). The need items are
built in :mod:`sealgraph.ledger._need_items`, their coverage graded in
:mod:`sealgraph.ledger._coverage` and :mod:`sealgraph.ledger._hop_coverage` (memoised
inside :func:`coverage_memo`, for callers that grade the same sets many times); the
values (:class:`NeedItem`, :class:`Gap`) are :mod:`sealgraph.model`'s. Every name is
importable from here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sealgraph.ledger._cover_memo import coverage_memo
from sealgraph.ledger._coverage import (
    _name_links,
    _stated_relation,
    cover,
    coverage,
    graded_alone,
    relation_share,
    set_cover,
)
from sealgraph.ledger._hop_coverage import _first_hops, _question_words, scored_hop_names
from sealgraph.ledger._need_items import (
    MET,
    _entity_docs,
    compared_value_type,
    need_items,
    relation_item,
    role_terms,
)
from sealgraph.ledger.chain import follow_chain, next_hop
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.model import Gap, NeedItem, QuestionNeeds
from sealgraph.text.lexicon import stem, stemmed_terms

__all__ = [
    "MET",
    "Gap",
    "NeedItem",
    "bridge_names",
    "bridge_targets",
    "compared_value_type",
    "cover",
    "coverage",
    "coverage_memo",
    "gap_spec",
    "graded_alone",
    "need_items",
    "relation_item",
    "relation_share",
    "role_terms",
    "set_cover",
]


def gap_spec(
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    passages: Sequence[PassageFeatures],
) -> list[Gap]:
    """Return G_t: the unmet need items as typed gaps with reasons (empty = sufficient)."""
    gaps: list[Gap] = []
    cov = coverage(items, passages)
    relation = " ".join(needs.relation_terms[:6])
    for i, (it, c) in enumerate(zip(items, cov, strict=True)):
        if c >= MET or it.kind == "terms":
            continue
        # Any other kind is read as a bridge.
        gap = _GAP_BY_KIND.get(it.kind, _bridge_gap)(i, it, needs, items, passages, relation)
        if gap is not None:
            gaps.append(gap)
    return gaps


def _entity_gap(
    i: int,
    it: NeedItem,
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    passages: Sequence[PassageFeatures],
    relation: str,
) -> Gap | None:
    """Ask for a named entity no passage of the evidence is about.

    A member of a set the question asks over, or an entity the question gives a year
    ("X in 2019"), is asked for with the question's relation words (and the year): its
    passage on the asked relation is wanted, not its opening.
    """
    member = it.kind == "member"
    return Gap(
        "missing_entity",
        it.name,
        relation if member else " ".join((*it.words, relation)) if it.words else "",
        None,
        f"no evidence passage is from the set member {it.name!r}"
        if member
        else f"no evidence passage is about {it.name!r}",
        it.targets,
        i,
    )


def _mention_gap(
    i: int,
    it: NeedItem,
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    passages: Sequence[PassageFeatures],
    relation: str,
) -> Gap | None:
    """Ask for a name without a document that no passage of the evidence mentions."""
    return Gap(
        "missing_entity",
        it.name,
        "",
        None,
        f"{it.name!r} is not mentioned in the evidence",
        (),
        i,
    )


def _relation_gap(
    i: int,
    it: NeedItem,
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    passages: Sequence[PassageFeatures],
    relation: str,
) -> Gap | None:
    """Ask for an unstated relation with its unstated words, where it may be stated."""
    seen = _stated_relation(it, passages, items)
    missing = [t for t in it.key.split() if t not in seen]
    # Ask with the question's own words, the unstated ones first.
    surface = [w for w in needs.relation_terms if stem(w) in missing] or list(needs.relation_terms)
    words = " ".join(dict.fromkeys(surface[:6]))
    subject = it.name or "the question's subject"
    # Where to look: the named entities' own documents first, then the
    # documents and names their passages point to (the unstated part of the
    # relation may be stated there: "a hit song written by <X>").
    anchors = set(it.targets)
    named = set().union(*(_name_links(p) for p in passages if p.doc_id in anchors))
    linked = [
        d
        for d in bridge_targets(needs, items, passages, limit=4, anchor_docs=anchors)
        if d in named
    ][:2]
    return Gap(
        "missing_relation",
        subject,
        words,
        None,
        f"no passage about {subject!r} states '{words}'",
        tuple(dict.fromkeys((*it.targets, *linked))),
        i,
        bridge_names(needs, items, passages, limit=1, anchor_docs=anchors),
    )


def _qualifier_gap(
    i: int,
    it: NeedItem,
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    passages: Sequence[PassageFeatures],
    relation: str,
) -> Gap | None:
    """Ask for a compared entity's value the evidence does not state."""
    return Gap(
        "missing_qualifier",
        it.name,
        relation,
        it.qualifier_type,
        f"no {it.qualifier_type} is stated for {it.name!r}",
        it.targets,
        i,
    )


def _chain_gap(
    i: int,
    it: NeedItem,
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    passages: Sequence[PassageFeatures],
    relation: str,
) -> Gap | None:
    """Ask for a hop after the second: the entity the hop before states, then its links.

    Only once the hop before is in the evidence (its passage, or the answer it states):
    the chain is followed one hop at a time.
    """
    prior = {q.doc_id for q in _first_hops(passages, items, hop=it.hop - 1)}
    following = next_hop(follow_chain(needs, items, passages))
    if not prior and following is None:
        return None
    targets = bridge_targets(needs, items, passages, anchor_docs=prior) if prior else ()
    if following is None:
        entity, words, hops = it.name or "the question's subject", relation, ()
    else:
        entity, words = following.entity, following.relation
        hops = ((entity, words),)
        # The entity's page, when it has one, is asked first for the hop's words.
        targets = tuple(dict.fromkeys((following.page, *targets))) if following.page else targets
    return Gap(
        "missing_relation",
        entity,
        words,
        None,
        f"hop {it.hop}: no passage linked from the hop before answers '{words}'",
        targets,
        i,
        hops,
    )


def _bridge_gap(
    i: int,
    it: NeedItem,
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    passages: Sequence[PassageFeatures],
    relation: str,
) -> Gap | None:
    """Ask for the second hop: the documents and names the anchors link to."""
    targets = bridge_targets(needs, items, passages, anchor_docs=set(it.targets))
    hops = bridge_names(needs, items, passages, anchor_docs=set(it.targets))
    # The hop the question's chain reaches next: the answer hop 1's passage states.
    following = next_hop(follow_chain(needs, items, passages))
    if following is not None and it.kind == "bridge" and following.hop == 2:
        hops = tuple(dict.fromkeys(((following.entity, following.relation), *hops)))
        if following.page:
            targets = tuple(dict.fromkeys((following.page, *targets)))
    subject = it.name or "the question's subject"
    what = f" holding a {it.qualifier_type}" if it.qualifier_type else ""
    return Gap(
        "missing_relation",
        subject,
        relation,
        it.qualifier_type,
        f"no passage linked to {subject!r}{what} answers '{relation}'",
        targets,
        i,
        hops,
    )


_GAP_BY_KIND: dict[str, Callable[..., Gap | None]] = {
    "entity": _entity_gap,
    "member": _entity_gap,
    "mention": _mention_gap,
    "relation": _relation_gap,
    "qualifier": _qualifier_gap,
    "chain": _chain_gap,
}
"""Gap of each unmet need-item kind (see :func:`gap_spec`; any other kind is a bridge)."""


def bridge_targets(
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    passages: Sequence[PassageFeatures],
    limit: int = 4,
    anchor_docs: set[str] | None = None,
) -> tuple[str, ...]:
    """Documents linked from the evidence that could be the bridge, best first.

    A linked document is scored by how many question relation words share a
    sentence with its mention (the link that answers the question's relation is
    usually stated in the same sentence).
    """
    entity_docs = _entity_docs(items)
    rel = {stem(w) for w in needs.relation_terms}
    if anchor_docs:
        # A per-entity bridge only follows links from its own anchor's passages.
        passages = [p for p in passages if p.doc_id in anchor_docs] or list(passages)
    in_set = {p.doc_id for p in passages}
    scored: dict[str, float] = {}
    for p in passages:
        anchor_bonus = 1.0 if (p.doc_id in entity_docs or not entity_docs) else 0.3
        for sent, m in p.mentions:
            if len(m.targets) != 1:
                continue
            doc = m.targets[0]
            if doc in in_set or doc in entity_docs:
                continue
            sent_words = p.words_of_sentence(sent)
            overlap = len(rel & sent_words)
            score = anchor_bonus * (1.0 + 0.1 * overlap) + (0.2 if m.kind == "title" else 0.0)
            scored[doc] = max(scored.get(doc, 0.0), score)
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    return tuple(d for d, _ in ranked[:limit])


def bridge_names(
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    passages: Sequence[PassageFeatures],
    limit: int = 2,
    anchor_docs: set[str] | None = None,
) -> tuple[tuple[str, str], ...]:
    """Proper names in the evidence that could be the next hop, best first.

    A name is read from the anchor passages (those about a question entity, or
    every passage when the question names none the corpus knows), must not be
    one the question states itself, and is scored by how many question words
    share its sentence ("the mother of the lead character (played by Mira
    Castellan)"). Each comes with the question's relation words that sentence leaves
    unstated: what to ask about the name ("mira castellan" + "spouse").
    """
    entity_docs = anchor_docs or _entity_docs(items)
    anchors = [p for p in passages if p.doc_id in entity_docs] or list(passages)
    qwords = _question_words(items) | set(stemmed_terms(needs.question))
    in_set = {p.topic for p in passages}
    roles = frozenset(next((it.roles for it in items if it.roles), ()))
    scored = {}
    for key, (score, sent, p) in scored_hop_names(anchors, qwords, roles, in_set).items():
        sent_words = p.words_of_sentence(sent)
        rest = [w for w in needs.relation_terms if stem(w) not in sent_words]
        scored[key] = (score, " ".join(rest[:4]))
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return tuple((k, rel) for k, (_, rel) in ranked[:limit])
