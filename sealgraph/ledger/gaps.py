"""Needs, the gap specification G_t = N(q) minus U_t, and the sufficiency gate.

A question's needs are expanded into concrete *need items* that a set of passages
either covers or not:

- ``entity``: a passage about each entity the question names (gazetteer-linked);
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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.needs import QuestionNeeds
from sealgraph.text.lexicon import active, content_words, stem, stemmed, stemmed_terms

MET = 0.85
"""Coverage at which a need counts as met."""

_TYPED = {"date": "date", "number": "number", "place": "place"}


def compared_value_type(question: str) -> str | None:
    """Return the value type a comparison's comparative word compares, or None.

    ``"date"`` for "earlier" or "in the same year", ``"number"`` for "more engineers".
    """
    lexicon = active()
    if lexicon.date_comparative_re.search(question):
        return "date"
    if lexicon.count_comparative_re.search(question):
        return "number"
    return None


@dataclass(frozen=True, slots=True)
class NeedItem:
    """One concrete requirement derived from N(q)."""

    kind: str
    """``entity``, ``mention``, ``relation``, ``bridge``, ``chain``, ``qualifier`` or
    ``terms``."""
    key: str
    """Normalised entity key it is about ('' for a bridge with no resolved anchor)."""
    name: str
    """Display name."""
    targets: tuple[str, ...] = ()
    """Documents about the entity (entity needs)."""
    qualifier_type: str | None = None
    """Value type required (qualifier needs, typed bridge needs)."""
    weights: tuple[float, ...] = ()
    """``terms`` and ``relation`` needs: weight of each word of ``key`` (rarer words
    weigh more)."""
    roles: tuple[str, ...] = ()
    """``bridge`` needs: stemmed role nouns that name the second hop ("director" in
    "the director of film X"); an anchor naming a document next to one of them
    states the asked link."""

    def term_weights(self) -> Mapping[str, float]:
        """Word → weight of a ``terms`` or ``relation`` need (uniform without weights).

        Read-only: it is shared between calls (coverage asks for it once per passage).
        """
        return _term_weights(self.key, self.weights)


@lru_cache(maxsize=4096)
def _term_weights(key: str, weights: tuple[float, ...]) -> Mapping[str, float]:
    words = key.split()
    if len(weights) == len(words):
        return MappingProxyType(dict(zip(words, weights, strict=True)))
    return MappingProxyType(dict.fromkeys(words, 1.0))


@dataclass(frozen=True, slots=True)
class Gap:
    """One entry of the gap specification."""

    kind: str
    """``missing_entity``, ``missing_relation`` or ``missing_qualifier``."""
    entity: str
    """Entity the gap is about (display name)."""
    relation: str
    """Relation words the gap asks for ('' when none)."""
    qualifier: str | None
    """Qualifier type asked for (``date``, ``number``, ``place``) or None."""
    reason: str
    """Why the gap is open, in one sentence."""
    targets: tuple[str, ...] = ()
    """Known documents that would close it (from the gazetteer or the ledger's links)."""
    need: int = -1
    """Index of the need item it comes from."""
    hops: tuple[tuple[str, str], ...] = ()
    """(name, relation words) for proper names in the evidence that could be the
    missing hop when it has no document title in the corpus: the name's key and the
    question's relation words its own sentence does not state already."""

    def to_dict(self) -> dict:
        """Return a JSON-safe dict."""
        return {
            "kind": self.kind,
            "entity": self.entity,
            "relation": self.relation,
            "qualifier": self.qualifier,
            "reason": self.reason,
            "targets": list(self.targets),
            "hops": [list(h) for h in self.hops],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Gap:
        """Inverse of :meth:`to_dict`."""
        return cls(
            data["kind"],
            data["entity"],
            data.get("relation", ""),
            data.get("qualifier"),
            data.get("reason", ""),
            tuple(data.get("targets", ())),
            hops=tuple((str(n), str(r)) for n, r in data.get("hops", ())),
        )


def need_items(
    needs: QuestionNeeds, term_weight: Callable[[str], float] | None = None
) -> list[NeedItem]:
    """Expand N(q) into need items.

    Args:
        needs: N(q).
        term_weight: Weight of a stemmed relation word (e.g. its IDF in the corpus);
            uniform when None.

    """
    items: list[NeedItem] = []
    # A single-hop question about a named document asks for that document's words:
    # names the corpus has no document for ("Receiving Party") are words of its
    # relation, not passages to find anywhere.
    scoped = (
        needs.structure != "comparison"
        and needs.hops < 2
        and any(e.targets for e in needs.entities if e.key not in needs.answer_modifiers)
    )
    for e in needs.entities:
        if e.key in needs.answer_modifiers:
            continue  # "German" in "which German philosopher": the answer must fit it
        if e.targets:
            items.append(NeedItem("entity", e.key, e.name, e.targets))
        elif len(content_words(e.name)) >= 1 and not scoped:
            items.append(NeedItem("mention", e.key, e.name))
    terms = sorted({stem(w) for w in needs.relation_terms})
    if terms:
        # Soft need: the question's relation words should appear somewhere in the set.
        # It steers the utility toward passages that state the asked relation, but
        # never blocks the gate (some question words are in no document at all).
        weights = tuple(term_weight(t) for t in terms) if term_weight else ()
        items.append(
            NeedItem("terms", " ".join(terms), " ".join(needs.relation_terms), weights=weights)
        )
    qtype = _TYPED.get(needs.answer_type)
    if needs.structure != "comparison" and needs.hops < 2:
        rel = relation_item(needs, term_weight)
        if rel is not None:
            items.append(rel)
        return items
    if needs.structure != "comparison":
        anchor = next(
            (e for e in needs.entities if e.targets and e.key not in needs.answer_modifiers),
            None,
        )
        # No targets: the second hop may hang off any entity the question names.
        items.append(
            NeedItem(
                "bridge",
                anchor.key if anchor else "",
                anchor.name if anchor else "",
                (),
                qtype,
                roles=role_terms(needs.question),
            )
        )
        if needs.hops >= 3:
            # "Who leads the team that owns the system that caused X?": the answer is two
            # links away from X's document, so a first hop alone does not answer it.
            items.append(
                NeedItem("chain", anchor.key if anchor else "", anchor.name if anchor else "")
            )
    else:
        # A comparison needs the compared value of every entity: the one the answer
        # type asks for, or the one its comparative word implies for choice and yes/no.
        if qtype is None:
            qtype = compared_value_type(needs.question)
        if active().related_role_re.search(needs.question):
            roles = role_terms(needs.question)
            # "Which film has the director who died earlier, X or Y?": the compared
            # value belongs to an entity related to each option, one hop away.
            for e in needs.entities:
                if e.targets:
                    items.append(
                        NeedItem(
                            "bridge",
                            e.key,
                            e.name,
                            e.targets,
                            qtype if qtype in ("date", "number") else None,
                            roles=roles,
                        )
                    )
            return items
        if qtype not in ("date", "number"):
            return items
        for e in needs.entities:
            if e.targets:
                items.append(NeedItem("qualifier", e.key, e.name, e.targets, qtype))
    return items


def relation_item(
    needs: QuestionNeeds, term_weight: Callable[[str], float] | None = None
) -> NeedItem | None:
    """Return the relation need of a single-hop question (None when it states no relation).

    Its words are the question's relation words (with the words of names that only
    describe the answer, and of names without a document when a named document
    anchors the question) minus the value nouns the answer type stands for ("year",
    "city": the answer states the value, not the noun) and minus words no passage of
    the corpus holds (they cannot be stated). Its targets are the documents of the
    entities the question names.
    """
    named = [e for e in needs.entities if e.key not in needs.answer_modifiers]
    # Names that only describe the answer, and names without a document when another
    # name anchors the question, are words the relation must state.
    anchored = any(e.targets for e in named)
    unlinked = [e.key for e in named if anchored and not e.targets]
    describing = [
        w
        for k in (*needs.answer_modifiers, *unlinked)
        for w in k.split()
        if w not in active().stop_words
    ]
    words = sorted(
        {stem(w) for w in (*needs.relation_terms, *describing) if w not in active().attribute_nouns}
    )
    if term_weight is not None and words:
        # A word no chunk holds gets the largest weight any word can get.
        unseen = term_weight("\x00")
        words = [w for w in words if term_weight(w) < unseen - 1e-9]
    if not words:
        return None
    weights = tuple(term_weight(w) for w in words) if term_weight else ()
    targets = tuple(dict.fromkeys(d for e in named for d in e.targets))
    anchor = next((e for e in named if e.targets), None) or next(iter(named), None)
    return NeedItem(
        "relation",
        " ".join(words),
        anchor.name if anchor else "",
        targets,
        weights=weights,
    )


# Ranking bonus of a hop name given in the asked role: less than one shared
# question word, so it breaks ties between names of one sentence.
_ROLE_NAME_BONUS = 0.5


def role_terms(question: str) -> tuple[str, ...]:
    """Stemmed role nouns the question links its hops by ("director", "husband")."""
    found = []
    lex = active()
    for pattern in lex.role_patterns:
        for m in pattern.finditer(question):
            word = m.group(1).lower()
            if word not in lex.attribute_nouns and word not in lex.stop_words:
                found.append(stem(word))
    return tuple(dict.fromkeys(found))


def _entity_docs(items: Sequence[NeedItem]) -> set[str]:
    return {d for it in items if it.kind == "entity" for d in it.targets}


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
    only mentions the entity is a lead worth a little, never the need met.
    """
    if passage.doc_id in item.targets:
        return 1.0
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


def _cover_bridge(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """Strength of the passage as the second hop from a question entity's passage.

    The second hop is not about a question entity (that is the first hop), and is
    only recognisable through its link to an anchor (the item's own anchor entity
    when it has one) in ``context``: named by the anchor in the asked role, linked
    by title, or sharing a rare name with it. A weak link is discounted when the
    passage lacks the asked value type or the relation words the anchors leave
    unstated.
    """
    entity_docs = _entity_docs(items)
    if passage.doc_id in entity_docs:
        return 0.0
    anchor_docs = set(item.targets) or entity_docs
    anchors = [p for p in context if p.doc_id in anchor_docs and p.chunk_id != passage.chunk_id]
    confirmed, side_link = _role_hop(item, passage, anchors)
    if confirmed:
        return _confirmed_hop(item, passage)
    link = _title_link(passage, anchors, context, entity_docs, side_link=side_link)
    if link < 1.0:
        sources = _name_sources(passage, anchors, context, entity_docs)
        if sources:
            named = _name_link(passage, sources, items)
            if named == 1.0:
                return _confirmed_hop(item, passage)
            if not link:
                link = named
    return _discounted_link(link, item, passage, anchors, items)


def _role_hop(
    item: NeedItem, passage: PassageFeatures, anchors: Sequence[PassageFeatures]
) -> tuple[bool, bool]:
    """Tell whether an anchor names the passage in the asked role: ``(confirmed, side_link)``.

    An anchor naming this passage's subject in the asked role ("directed by X") is
    the second hop, whatever words X's own page uses. The same holds for a person
    or work with no page of its own ("a treatise by Zed Young"): a passage naming
    them is the second hop, from any anchor, title links or not. ``side_link``:
    some anchor names another page in the role, so a plain title link to this one
    is a side link.
    """
    if not item.roles:
        return False, False
    roles = frozenset(item.roles)
    role_docs = [a.role_linked_docs(roles) for a in anchors]
    if any(passage.doc_id in r for r in role_docs):
        return True, False
    role_named = set().union(
        *(_role_names(a, roles, r) for a, r in zip(anchors, role_docs, strict=True))
    )
    return bool(role_named & (passage.name_keys() - {passage.topic})), any(role_docs)


def _title_link(
    passage: PassageFeatures,
    anchors: Sequence[PassageFeatures],
    context: Sequence[PassageFeatures],
    entity_docs: set[str],
    *,
    side_link: bool,
) -> float:
    """Strength of a title link between the passage and an anchor (0 when none).

    An anchor naming the passage's page is the usual way a second hop is written
    (1.0, or 0.7 when the anchor gives another page the asked role); the passage
    naming the anchor's subject links the other way (0.8). When nothing anchors
    the question in the corpus, any linked pair of passages will do (0.8).
    """
    if any(passage.doc_id in a.mentioned_docs() for a in anchors):
        return 0.7 if side_link else 1.0
    if any(a.topic in passage.mentioned_keys() for a in anchors):
        return 0.8
    if not entity_docs:
        others = [p for p in context if p.chunk_id != passage.chunk_id]
        if any(
            passage.doc_id in o.mentioned_docs() or o.doc_id in passage.mentioned_docs()
            for o in others
        ):
            return 0.8
    return 0.0


def _name_sources(
    passage: PassageFeatures,
    anchors: Sequence[PassageFeatures],
    context: Sequence[PassageFeatures],
    entity_docs: set[str],
) -> list[PassageFeatures]:
    """Passages whose rare names may link to this one (a content link).

    Both passages naming the same rare person or work, which may have no page of
    its own in the corpus, is a link. From anchors that link to other pages by
    title, the title links are the reliable hops; content links serve the anchors
    that link nowhere (and questions that name no page at all).
    """
    if entity_docs:
        return [a for a in anchors if not (a.mentioned_docs() - entity_docs)]
    return [p for p in context if p.chunk_id != passage.chunk_id]


def _discounted_link(
    link: float,
    item: NeedItem,
    passage: PassageFeatures,
    anchors: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """Discount the link strength for what the linked passage cannot answer.

    A hop without the asked value type cannot give the answer (x0.6). A linked
    passage that shares none of the question's relation words is a side link, not
    the second hop: the link is weighted by how much it shares of the part of the
    relation the anchors do not state already.
    """
    if not link:
        return link
    if item.qualifier_type and item.qualifier_type not in passage.qualifier_types():
        link *= 0.6
    terms = next((set(it.key.split()) for it in items if it.kind == "terms"), None)
    if terms:
        residual = terms - set().union(*(a.words for a in anchors)) if anchors else terms
        residual = residual or terms
        link *= 0.5 + 0.5 * min(1.0, 2 * len(residual & passage.words) / len(residual))
    return link


def _first_hops(
    context: Sequence[PassageFeatures], items: Sequence[NeedItem], *, besides: str = ""
) -> list[PassageFeatures]:
    """Passages of ``context`` (other than chunk ``besides``) that meet the bridge need."""
    bridge = next((it for it in items if it.kind == "bridge"), None)
    if bridge is None:
        return []
    return [
        q
        for q in context
        if q.chunk_id != besides and _cover_bridge(bridge, q, context, items) >= MET
    ]


def _cover_chain(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """Strength of the passage as the hop after the first: linked from a first hop.

    A passage about another document that a first-hop passage links to (by title, or
    through a rare name both write) continues the chain; the question's own entities'
    documents and the first hops' own documents do not.
    """
    entity_docs = _entity_docs(items)
    if passage.doc_id in entity_docs:
        return 0.0
    firsts = [
        q
        for q in _first_hops(context, items, besides=passage.chunk_id)
        if q.doc_id != passage.doc_id
    ]
    if not firsts:
        return 0.0
    linked = any(passage.doc_id in q.mentioned_docs() for q in firsts) or any(
        passage.topic in q.name_keys() for q in firsts
    )
    if not linked:
        return 0.0
    # The last link states what the rest of the evidence leaves unsaid ("leads" once
    # the team is known): a passage of the linked document without it is half a hop.
    terms = next((frozenset(it.key.split()) for it in items if it.kind == "terms"), frozenset())
    others = [q.words for q in context if q.chunk_id != passage.chunk_id]
    residual = terms - frozenset().union(*others)
    if not residual:
        return 1.0
    return 0.5 + 0.5 * min(1.0, 2 * len(residual & passage.words) / len(residual))


_COVER_BY_KIND: dict[str, Callable[..., float]] = {
    "entity": _cover_entity,
    "terms": _cover_terms,
    "relation": _cover_relation,
    "mention": _cover_mention,
    "qualifier": _cover_qualifier,
    "bridge": _cover_bridge,
    "chain": _cover_chain,
}
"""Coverage function of each need-item kind (see :func:`cover`)."""


def _role_names(
    anchor: PassageFeatures, roles: frozenset[str], role_docs: frozenset[str]
) -> frozenset[str]:
    """Names (with no page of their own) the anchor gives in the asked role.

    "painted by X" when the question asks for a painter: the role word itself next to
    the name, or, for a maker's role ("author", "creator"), plain "by" when the anchor
    names nobody next to the role word, by name or by page.
    """
    named = anchor.role_named_keys(roles) - {anchor.topic}
    if not named and not role_docs and roles & stemmed(active().agent_roles):
        named = anchor.role_named_keys(stemmed(active().by_words)) - {anchor.topic}
    return named


def _confirmed_hop(item: NeedItem, passage: PassageFeatures) -> float:
    """Coverage of a confirmed hop: full, or 0.6 when it lacks the asked value type."""
    typed = not item.qualifier_type or item.qualifier_type in passage.qualifier_types()
    return 1.0 if typed else 0.6


def _question_words(items: Sequence[NeedItem]) -> set[str]:
    """Stemmed words of the question's entities and relation."""
    out: set[str] = set()
    for it in items:
        if it.kind == "terms":
            out.update(it.key.split())
        elif it.name:
            out.update(stemmed_terms(it.name))
    return out


def _hop_name(key: str, question_words: set[str]) -> bool:
    """Tell whether a proper name can be a hop: the question does not name it already."""
    return not set(stemmed_terms(key)) <= question_words


def _name_link(
    passage: PassageFeatures, others: Sequence[PassageFeatures], items: Sequence[NeedItem]
) -> float:
    """Strength of a content link: ``passage`` and one of ``others`` name the same hop.

    1.0 when the other passage names it in a sentence holding at least two of the
    question's relation words besides the name's and its own title's ("the mother of
    the lead character (played by Mira Castellan)"), 0.8 for any other shared name
    the question does not state, else 0.
    """
    own = passage.name_keys()
    if not own:
        return 0.0
    qwords = _question_words(items)
    # Only the relation's words confirm a hop: an anchor's lead sentence repeats
    # the question's entity names whatever else it names.
    relation = next((set(it.key.split()) for it in items if it.kind == "terms"), set())
    best = 0.0
    for o in others:
        if o.doc_id == passage.doc_id:
            continue
        shared = {
            k for k in (own & o.name_keys()) - {o.topic, passage.topic} if _hop_name(k, qwords)
        }
        for sent, key in o.names:
            if key not in shared:
                continue
            best = max(best, 0.8)
            words = o.words_of_sentence(sent)
            if len((words & relation) - set(stemmed_terms(key)) - o.words_of_topic()) >= 2:
                return 1.0
    return best


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
        if c >= MET or it.kind in ("terms", "chain"):
            continue
        if it.kind == "entity":
            gaps.append(
                Gap(
                    "missing_entity",
                    it.name,
                    "",
                    None,
                    f"no evidence passage is about {it.name!r}",
                    it.targets,
                    i,
                )
            )
        elif it.kind == "mention":
            gaps.append(
                Gap(
                    "missing_entity",
                    it.name,
                    "",
                    None,
                    f"{it.name!r} is not mentioned in the evidence",
                    (),
                    i,
                )
            )
        elif it.kind == "relation":
            seen = _stated_relation(it, passages, items)
            missing = [t for t in it.key.split() if t not in seen]
            # Ask with the question's own words, the unstated ones first.
            surface = [w for w in needs.relation_terms if stem(w) in missing] or list(
                needs.relation_terms
            )
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
            gaps.append(
                Gap(
                    "missing_relation",
                    subject,
                    words,
                    None,
                    f"no passage about {subject!r} states '{words}'",
                    tuple(dict.fromkeys((*it.targets, *linked))),
                    i,
                    bridge_names(needs, items, passages, limit=1, anchor_docs=anchors),
                )
            )
        elif it.kind == "qualifier":
            gaps.append(
                Gap(
                    "missing_qualifier",
                    it.name,
                    relation,
                    it.qualifier_type,
                    f"no {it.qualifier_type} is stated for {it.name!r}",
                    it.targets,
                    i,
                )
            )
        elif it.kind == "chain":
            # Only once a first hop is in the evidence: follow its links onward.
            firsts = {q.doc_id for q in _first_hops(passages, items)}
            if not firsts:
                continue
            targets = bridge_targets(needs, items, passages, anchor_docs=firsts)
            gaps.append(
                Gap(
                    "missing_relation",
                    it.name or "the question's subject",
                    relation,
                    None,
                    f"no passage linked from the first hop ({', '.join(sorted(firsts))}) "
                    f"answers '{relation}'",
                    targets,
                    i,
                )
            )
        else:
            targets = bridge_targets(needs, items, passages, anchor_docs=set(it.targets))
            hops = bridge_names(needs, items, passages, anchor_docs=set(it.targets))
            subject = it.name or "the question's subject"
            what = f" holding a {it.qualifier_type}" if it.qualifier_type else ""
            gaps.append(
                Gap(
                    "missing_relation",
                    subject,
                    relation,
                    it.qualifier_type,
                    f"no passage linked to {subject!r}{what} answers '{relation}'",
                    targets,
                    i,
                    hops,
                )
            )
    return gaps


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
    scored: dict[str, tuple[float, str]] = {}
    for p in anchors:
        # A name given in the asked role ("a painting by X" for "the creator of")
        # beats other names of an equally relevant sentence.
        in_role = _role_names(p, roles, p.role_linked_docs(roles)) if roles else frozenset()
        for sent, key in p.names:
            if key in in_set or not _hop_name(key, qwords):
                continue
            sent_words = p.words_of_sentence(sent)
            score = len(qwords & sent_words) + (_ROLE_NAME_BONUS if key in in_role else 0.0)
            if score and score > scored.get(key, (0.0, ""))[0]:
                rest = [w for w in needs.relation_terms if stem(w) not in sent_words]
                scored[key] = (score, " ".join(rest[:4]))
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return tuple((k, rel) for k, (_, rel) in ranked[:limit])
