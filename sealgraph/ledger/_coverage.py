"""Coverage of need items by passages, graded in [0, 1], one function per need kind.

:func:`cover` grades one passage given the others of the set; :func:`set_cover`
grades a whole set (relation words jointly, every other need by its best passage).
The hop kinds (``bridge``, ``chain``) are graded in :mod:`sealgraph.ledger._hop_coverage`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sealgraph.ledger._hop_coverage import _bridge_anchor_docs, _cover_bridge, _cover_chain
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.model import NeedItem
from sealgraph.text.lexicon import stemmed_terms


def cover(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """How well ``passage`` meets ``item`` given the other passages ``context`` (0..1)."""
    # Any other kind is read as a bridge, as it always was.
    return _COVER_BY_KIND.get(item.kind, _cover_bridge)(item, passage, context, items)


def _cover_entity(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """Full for a passage of the entity's own document, 0.25 for one that names it.

    What the question asks about an entity is stated on its page; a passage that
    only mentions the entity is a lead worth a little, never the need met. When the
    question gives the entity a year ("X in 2019"), the year's passage is the one that
    states the asked relation: another passage of its document is half of it.
    """
    if passage.doc_id in item.targets:
        # "X's shareholder equity in 2019": X's passage that states the asked attribute
        # (the year aside: a report of that year need not repeat it); another of X's
        # passages is half of it.
        asked = {w for w in item.words if not w.isdigit()}
        if not asked:
            return 1.0
        # Stated in one sentence ("Shareholder equity reached $1.4 billion"), not
        # scattered over a passage that mentions equity here and shareholders there.
        sentences = passage.sentence_words or (passage.words,)
        stated = max(len(asked & s) for s in sentences) / len(asked)
        return 1.0 if stated >= _YEAR_RELATION else 0.5
    return 0.25 if item.key in passage.mentioned_keys() else 0.0


def _cover_terms(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """Weighted share of the question's relation words the passage holds.

    Rare words weigh more: "discovered" says more about the asked relation than
    "year" does, and the soft need only steers the utility, so a partial share counts.
    """
    return _weighted_share(item, passage.words)


def _cover_relation(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """Weighted share of the relation words, from a passage allowed to state them.

    The same words in a passage about something else (neither a named entity's nor
    linked to one) do not state the relation of the question's subject.
    """
    if not _states_for(item, passage, context, items):
        return 0.0
    return _weighted_share(item, passage.words)


def _cover_mention(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """Full when the passage holds every word of the name, else half the share it holds.

    A name the corpus has no page for can only be found by its words; part of a
    name ("Castellan" for "Mira Castellan") may be another person, so it stays
    well below the met threshold.
    """
    ws = set(stemmed_terms(item.name))
    if not ws:
        return 0.0
    share = len(ws & passage.words) / len(ws)
    return 1.0 if share == 1.0 else 0.5 * share


def _cover_qualifier(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """Full for the compared entity's passage holding a value of the type, else 0.3 / 0.

    A comparison is only decidable with each side's value; the entity's passage
    without one still anchors the side (0.3), any other passage does not count.
    """
    if passage.doc_id in item.targets:
        return 1.0 if item.qualifier_type in passage.qualifier_types() else 0.3
    return 0.0


_COVER_BY_KIND: dict[str, Callable[..., float]] = {
    "entity": _cover_entity,
    "member": _cover_entity,
    "terms": _cover_terms,
    "relation": _cover_relation,
    "mention": _cover_mention,
    "qualifier": _cover_qualifier,
    "bridge": _cover_bridge,
    "chain": _cover_chain,
}
"""Coverage function of each need-item kind (see :func:`cover`)."""


def set_cover(
    item: NeedItem, passages: Sequence[PassageFeatures], items: Sequence[NeedItem]
) -> float:
    """Coverage of one need item by a whole set of passages.

    Relation words (``terms``) are covered jointly (the union of the passages'
    words); every other need by its best single passage.
    """
    if not passages:
        return 0.0
    if item.kind == "terms":
        w = item.term_weights()
        total = sum(w.values())
        if not total:
            return 0.0
        seen = set().union(*(p.words for p in passages))
        return sum(v for t, v in w.items() if t in seen) / total
    if item.kind == "relation":
        return _weighted_share(item, _stated_relation(item, passages, items))
    return max(cover(item, p, passages, items) for p in passages)


_SELF_CONTAINED = frozenset(["entity", "member", "mention", "qualifier"])

_YEAR_RELATION = 0.66
"""Share of the asked attribute's words one sentence of an entity's passage must state
when the question gives the entity a year ("X's shareholder equity in 2019")."""
"""Needs each passage meets or not by itself, whatever else the set holds."""


def graded_alone(item: NeedItem, passage: PassageFeatures, items: Sequence[NeedItem]) -> bool:
    """Tell whether adding ``passage`` to a set leaves the other passages' grades of ``item``.

    Then the set's coverage with the passage is the better of the set's and the
    passage's own (:func:`set_cover` takes the best passage): true of the needs a
    passage meets by itself, and of a bridge when the passage is none of the
    anchors the other passages' bridge grades read.
    """
    if item.kind in _SELF_CONTAINED:
        return True
    if item.kind == "bridge":
        anchor_docs = _bridge_anchor_docs(item, items)
        return anchor_docs is not None and passage.doc_id not in anchor_docs
    return False


def _stated_relation(
    item: NeedItem, passages: Sequence[PassageFeatures], items: Sequence[NeedItem]
) -> set[str]:
    """Relation words the set states: one chunk of a document, plus linked documents.

    Within a document a single chunk must state the relation (several chunks that
    each hold one word state nothing together); a linked document adds what the
    named entity's own document leaves unstated.
    """
    stating = [p for p in passages if _states_for(item, p, passages, items)]
    best: set[str] = set()
    best_share = -1.0
    for p in stating:
        words = set(p.words)
        by_doc: dict[str, frozenset[str]] = {}
        for o in stating:
            if o.doc_id != p.doc_id:
                # The best chunk of each other document.
                cur = by_doc.get(o.doc_id)
                if cur is None or _weighted_share(item, o.words) > _weighted_share(item, cur):
                    by_doc[o.doc_id] = o.words
        for w in by_doc.values():
            words |= w
        share = _weighted_share(item, words)
        if share > best_share:
            best, best_share = words, share
    return best


def _weighted_share(item: NeedItem, words: frozenset[str] | set[str]) -> float:
    """Weighted share of a ``terms`` / ``relation`` need's words found in ``words``."""
    w = item.term_weights()
    total = sum(w.values())
    return sum(v for t, v in w.items() if t in words) / total if total else 0.0


def relation_share(items: Sequence[NeedItem], passage: PassageFeatures) -> float:
    """Weighted share of the question's relation words that ``passage`` states (0..1).

    The relation need's words when the question has one, else the relation terms.
    """
    item = next((it for it in items if it.kind == "relation"), None) or next(
        (it for it in items if it.kind == "terms"), None
    )
    return _weighted_share(item, passage.words) if item else 0.0


def _name_links(passage: PassageFeatures) -> set[str]:
    """Documents a passage names unambiguously, by a capitalised or multi-word name.

    A lower-case single word that happens to be a title ("keep", "music") is a
    common word of the text more often than a name.
    """
    return {
        m.targets[0]
        for _, m in passage.mentions
        if len(m.targets) == 1 and (m.capitalized or " " in m.key)
    }


def _anchor_passage(item: NeedItem, passage: PassageFeatures, items: Sequence[NeedItem]) -> bool:
    """Tell whether a passage is about an entity the question names.

    A passage of a named entity's document, or, for names the corpus has no
    document for, a passage that names them (its document is the entity's).
    """
    if item.targets:
        return passage.doc_id in item.targets
    names = [it for it in items if it.kind == "mention"]
    if not names:
        return True  # the question names nothing: every passage may state the relation
    return any(cover(it, passage, (), items) >= 1.0 for it in names)


def _states_for(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> bool:
    """Tell whether ``passage`` may state a single-hop question's relation.

    A passage about a named entity may; so may a passage linked to one of those in
    ``context`` (the anchor names its document, it names the anchor's subject, or
    both name the same rare person or work): the relation an entity's document
    leaves unstated may be stated where it points.
    """
    if _anchor_passage(item, passage, items):
        return True
    anchors = [
        a for a in context if a.chunk_id != passage.chunk_id and _anchor_passage(item, a, items)
    ]
    if not anchors:
        return False
    own_names = passage.name_keys()
    own_links = _name_links(passage)
    for a in anchors:
        if a.doc_id == passage.doc_id:
            return True
        if passage.doc_id in _name_links(a) or a.doc_id in own_links:
            return True
        if own_names and (own_names & a.name_keys()) - {a.topic, passage.topic}:
            return True
    return False


def coverage(items: Sequence[NeedItem], passages: Sequence[PassageFeatures]) -> list[float]:
    """Coverage of every need item by a set of passages."""
    return [set_cover(it, passages, items) for it in items]
