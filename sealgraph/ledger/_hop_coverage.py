"""Coverage of the hop needs: ``bridge`` (the second hop) and ``chain`` (the hops after).

A hop is not about a question entity (that is the first hop): it is recognised only
through its link to an anchor passage in the set, named by the anchor in the asked
role, linked by title, or sharing a rare proper name with it. The name-link helpers
here also rank the hop names the gap specification proposes
(:func:`sealgraph.ledger.gaps.bridge_names`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sealgraph.ledger._cover_memo import memoised, remember
from sealgraph.ledger._need_items import MET, _entity_docs
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.model import NeedItem
from sealgraph.text.lexicon import active, stemmed, stemmed_terms, words
from sealgraph.text.names import proper_names


def _bridge_context(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> Sequence[PassageFeatures]:
    """Return what :func:`_cover_bridge` reads of its context (see :func:`_bridge_anchor_docs`)."""
    anchor_docs = _bridge_anchor_docs(item, items)
    if anchor_docs is None:
        return context
    return [p for p in context if p.doc_id in anchor_docs]


def _bridge_anchor_docs(item: NeedItem, items: Sequence[NeedItem]) -> set[str] | None:
    """Return the documents whose passages a bridge grade reads besides the graded one.

    When the question names documents, only the anchors' (the item's own anchor
    documents, else every named one): the title and name links of other passages
    are read only when nothing anchors the question (None: every passage).
    """
    entity_docs = _entity_docs(items)
    if not entity_docs:
        return None
    return set(item.targets) or entity_docs


@memoised(_bridge_context)
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
        return 1.0 if _hop_within(item, passage) else 0.0
    return _onward(passage, items) * _bridge_link(item, passage, context, items, entity_docs)


def _onward(passage: PassageFeatures, items: Sequence[NeedItem]) -> float:
    """Share of a chain's second hop that leads on: under met unless it states the next link.

    "Who leads the team that owns the system that caused X?": the system's passage that
    says who owns it ("owned by the Data Infrastructure Team") is the hop; one listing
    the system's consumers is about the system but leads nowhere the question goes.
    1.0 for a bridge that ends the chain.
    """
    link = next((it.link for it in items if it.kind == "chain" and it.hop == 3), ())
    if not link:
        return 1.0
    # Below the met grade, but only by a quarter: the next link may be written in
    # other words ("buried" for "burial") than the question's.
    return 0.75 + 0.25 * min(1.0, 2 * len(set(link) & passage.words) / len(link))


def _bridge_link(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
    entity_docs: set[str],
) -> float:
    """Strength of the link from a question entity's passage to ``passage`` (see above)."""
    anchor_docs = set(item.targets) or entity_docs
    anchors = [p for p in context if p.doc_id in anchor_docs and p.chunk_id != passage.chunk_id]
    confirmed, side_link = _role_hop(item, passage, anchors)
    if confirmed:
        return _confirmed_hop(item, passage)
    side_link = side_link or _other_kind(item, passage) or _holderless(item, passage)
    link = _title_link(passage, anchors, context, entity_docs, side_link=side_link)
    # Read from what the grade may read (the memo keys it on the anchors alone).
    answer = _names_hop_answer(item, passage, anchors if entity_docs else context, items)
    if link < 1.0:
        sources = _name_sources(passage, anchors, context, entity_docs)
        if sources:
            named = _name_link(passage, sources, items)
            if named == 1.0:
                return _confirmed_hop(item, passage)
            if not link:
                link = named
    discounted = _discounted_link(link, item, passage, anchors, items)
    # Naming the answer an anchor states is the link itself: a hop's passage need not
    # repeat the question's words ("an assistant to professor Ernst Mach").
    return max(discounted, _ANSWER_LINK) if answer else discounted


# Ranking bonus of a hop name given in the asked role: less than one shared
# question word, so it breaks ties between names of one sentence.
ROLE_NAME_BONUS = 0.5
_HOP_ANSWERS = 2
_ANSWER_LINK = 0.8
"""Link strength of a passage naming what an anchor states as the hop's answer: a
content link, below the met threshold unless the role confirms it."""
"""How many of the names an anchor states for the next hop are read as its answer."""


def scored_hop_names(
    anchors: Sequence[PassageFeatures],
    qwords: set[str] | frozenset[str],
    roles: frozenset[str],
    skip: set[str] | frozenset[str] = frozenset(),
) -> dict[str, tuple[float, int, PassageFeatures]]:
    """Proper names the anchors write that could answer the hop: key → (score, sentence, anchor).

    A name (one with no page of its own, or a rare one) scores by how many of the
    question's words share its sentence ("the mother of the lead character (played by
    Mira Castellan)"), plus :data:`ROLE_NAME_BONUS` when the anchor gives it the asked
    role; names the question writes itself, and names in ``skip``, are no answer.
    """
    scored: dict[str, tuple[float, int, PassageFeatures]] = {}
    for p in anchors:
        in_role = _role_names(p, roles, p.role_linked_docs(roles)) if roles else frozenset()
        for sent, key in p.names:
            if key in skip or not _hop_name(key, qwords):
                continue
            score = len(qwords & p.words_of_sentence(sent)) + (
                ROLE_NAME_BONUS if key in in_role else 0.0
            )
            if score and score > scored.get(key, (0.0, 0, p))[0]:
                scored[key] = (score, sent, p)
    return scored


def _hop_answers(
    item: NeedItem, anchors: Sequence[PassageFeatures], items: Sequence[NeedItem]
) -> frozenset[str]:
    """Keys of the names the anchors state as the answer of the hop before: the best two.

    Only rare names link (a defined term every agreement writes, "Confidential
    Materials", would link them all), scored by the hop's own words in its sentence
    (the question's words when the hop has none), plus the role bonus; a name with a
    page of its own is not read here (its page is the hop, linked by title).
    """
    question = _question_words(items)
    # The bridge reads hop 1's answer by hop 1's own words, a later hop the answer of
    # the hop before by that hop's words (its link); the question's words when unread.
    words = set(item.words if item.kind == "bridge" else item.link) or question
    roles = frozenset(next((it.roles for it in items if it.roles), ()))
    scored: dict[str, float] = {}
    for p in anchors:
        in_role = _role_names(p, roles, p.role_linked_docs(roles)) if roles else frozenset()
        paged = p.mentioned_keys()  # a name with a page of its own links by title
        for sent, key in p.names:
            if key == p.topic or key in paged or not _hop_name(key, question):
                continue
            score = len(words & p.words_of_sentence(sent)) + (
                ROLE_NAME_BONUS if key in in_role else 0.0
            )
            if score > scored.get(key, 0.0):
                scored[key] = score
    ranked = sorted(scored, key=lambda k: (-scored[k], k))
    return frozenset(ranked[:_HOP_ANSWERS])


def _names_hop_answer(
    item: NeedItem,
    passage: PassageFeatures,
    anchors: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> bool:
    """Tell whether the passage names what an anchor states as the hop's answer.

    The answer of one hop is the entity of the next: "Mach's principle is credited to
    Ernst Mach" makes a passage naming Ernst Mach the next hop, whatever it says of
    him. Read from the anchors other than the passage's own document.
    """
    others = [a for a in anchors if a.doc_id != passage.doc_id]
    if not others:
        return False
    answers = remember(
        (_hop_answers, id(item), frozenset(map(id, others)), id(items)),
        (item, tuple(others), items),
        lambda: _hop_answers(item, others, items),
    )
    return passage.topic in answers or bool(answers & passage.name_keys())


def _other_kind(item: NeedItem, passage: PassageFeatures) -> bool:
    """Tell whether the passage's page is of another kind than the asked role's holder.

    "The incident commander of X" is a person: a page titled as a group ("Reliability
    Guild") that X links to is no commander, only a side link.
    """
    lex = active()
    if not item.roles or not frozenset(item.roles) & stemmed(lex.person_heads):
        return False
    head = passage.title.lower().split()[-1:] if passage.title else []
    return bool(head) and head[0] in lex.organization_heads | lex.place_heads


def _holderless(item: NeedItem, passage: PassageFeatures) -> bool:
    """Tell whether a passage gives nobody the role whose holder's value is compared.

    "Who joined earlier, the lead of X or the lead of Y?": a page X links to that names
    no lead (an org chart's note that "team leads are not reassigned") holds no lead's
    date, whatever dates it gives; only for a comparison's typed bridge (see
    :func:`_hop_within`), whose value belongs to the holder.
    """
    if not item.roles or item.qualifier_type not in ("date", "number"):
        return False
    lex = active()
    roles = frozenset(item.roles) & stemmed(lex.person_heads | lex.agent_roles)
    return bool(roles) and not (
        passage.role_named_keys(roles) - {passage.topic} or passage.role_linked_docs(roles)
    )


def _hop_within(item: NeedItem, passage: PassageFeatures) -> bool:
    """Tell whether a passage of the anchor's own document states both hops.

    "Dana Whitcombe has led the team since 2019. Dana Whitcombe joined in April 2016":
    the anchor names the asked role's holder, someone with no page of their own, and
    states the compared value in the same passage. Only for a comparison's typed
    bridge (a value of the asked type one hop away); a holder with a page is followed
    to it.
    """
    if not item.roles or item.qualifier_type not in ("date", "number"):
        return False
    if len(item.targets) != 1 or passage.doc_id not in item.targets:
        # Another option's document, or one of several pages of one name (films of one
        # title): no option's own passage.
        return False
    if item.qualifier_type not in passage.qualifier_types():
        return False
    # Only a role a person holds ("lead", "director"): a "wedding" holds nobody.
    lex = active()
    roles = frozenset(item.roles) & stemmed(lex.person_heads | lex.agent_roles)
    if not roles or passage.role_linked_docs(roles):
        return False
    holders = passage.role_named_keys(roles) - {passage.topic}
    return any(not _former(passage.text, key) for key in holders)


def _former(text: str, key: str) -> bool:
    """Tell whether every mention of the name ``key`` in ``text`` marks a past holder.

    "Its first lead, Martin Okonkwo, left in 2019": a former word just before the
    name, or a departure just after it (the lexicon's ``former_words`` and
    ``departure_words``).
    """
    lex = active()
    found = False
    for start, name in proper_names(text):
        if name != key:
            continue
        found = True
        before = words(text[max(0, start - 40) : start])[-3:]
        after = words(text[start : start + len(key) + 40])[len(key.split()) :][:2]
        if not (set(before) & lex.former_words or set(after) & lex.departure_words):
            return False
    return found


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
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
    *,
    besides: str = "",
    hop: int = 2,
) -> list[PassageFeatures]:
    """Passages of ``context`` (other than chunk ``besides``) that meet hop ``hop``'s need.

    Hop 2 is the bridge need; hop 3 and on, the ``chain`` need of that hop.
    """
    need = next(
        (
            it
            for it in items
            if (it.kind == "bridge" and hop == 2) or (it.kind == "chain" and it.hop == hop)
        ),
        None,
    )
    if need is None:
        return []
    # A chain grades every passage of one set against the same prior hops: they are
    # found once per set (inside a coverage memo), then ``besides`` is left out.
    grade = _cover_bridge if need.kind == "bridge" else _cover_chain
    met = remember(
        (_first_hops, id(need), frozenset(map(id, context)), id(items)),
        (need, tuple(context), items),
        lambda: [q for q in context if grade(need, q, context, items) >= MET],
    )
    return [q for q in met if q.chunk_id != besides]


@memoised()
def _cover_chain(
    item: NeedItem,
    passage: PassageFeatures,
    context: Sequence[PassageFeatures],
    items: Sequence[NeedItem],
) -> float:
    """Strength of the passage as a hop after the second: linked from the hop before.

    A passage about another document that a passage of the hop before links to (by
    title, or through a rare name both write), or that names what that passage states
    as its hop's answer, continues the chain; the question's own entities' documents
    and the earlier hops' own documents do not.
    """
    entity_docs = _entity_docs(items)
    if passage.doc_id in entity_docs:
        return 0.0
    # A passage of the hop before continues the chain only when it states that hop's
    # relation ("owned by" for the team that owns the system): its other links (the
    # system's consumers) are no answer of that hop.
    link = frozenset(item.link)
    firsts = [
        q
        for q in _first_hops(context, items, besides=passage.chunk_id, hop=max(2, item.hop - 1))
        if q.doc_id != passage.doc_id and (not link or link & q.words)
    ]
    if not firsts:
        return 0.0
    linked = any(passage.doc_id in q.mentioned_docs() for q in firsts) or any(
        passage.topic in q.name_keys() for q in firsts
    )
    if not linked:
        if not _names_hop_answer(item, passage, firsts, items):
            return 0.0
        # Naming the answer the hop before states, and stating this hop's own words
        # ("Ada Quill was born in ..."), is the hop.
        return 1.0 if set(item.words) & passage.words else _ANSWER_LINK
    # The last link states what the rest of the evidence leaves unsaid ("leads" once
    # the team is known): a passage of the linked document without it is half a hop.
    # The hop's own words when the question's form gives them ("leads" for "who leads
    # the team that ..."), else the relation words no other passage states.
    terms = next((frozenset(it.key.split()) for it in items if it.kind == "terms"), frozenset())
    others = [q.words for q in context if q.chunk_id != passage.chunk_id]
    residual = frozenset(item.words) or terms - frozenset().union(*others)
    if not residual:
        return 1.0
    return 0.5 + 0.5 * min(1.0, 2 * len(residual & passage.words) / len(residual))


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
