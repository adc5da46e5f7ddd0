"""Need items: N(q) expanded into concrete requirements a set of passages meets or not.

- ``entity``: a passage about each entity the question names (gazetteer-linked);
- ``member``: for a set the question asks over, a passage of each member document
  (one company's filing of each period), instead of one of the name's documents;
- ``mention``: for names the corpus has no document for, a passage mentioning them;
- ``terms``: the question's relation words somewhere in the set (a soft need: it
  steers the utility, never blocks the gate);
- ``relation``: for single-hop questions, the question's relation words stated by
  passages of the named entities' documents (or by passages linked to them);
- ``bridge``: for questions whose form nests a relation (two hops or more), a passage
  linked to a question entity's passage that can hold an answer of the expected type;
- ``chain``: for three hops or more, one per hop after the bridge: a passage linked
  onward from the hop before (or naming the answer that hop's passage states);
- ``qualifier``: for comparisons of dates or numbers, a value of that type in each
  compared entity's passage.

A need is met at a coverage of :data:`MET` or more (see :mod:`sealgraph.ledger._coverage`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sealgraph.model import NeedEntity, NeedItem, QuestionNeeds
from sealgraph.text.lexicon import active, content_words, stem

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


def need_items(
    needs: QuestionNeeds, term_weight: Callable[[str], float] | None = None
) -> list[NeedItem]:
    """Expand N(q) into need items.

    Args:
        needs: N(q).
        term_weight: Weight of a stemmed relation word (e.g. its IDF in the corpus);
            uniform when None.

    """
    items = _entity_items(needs)
    terms = _terms_item(needs, term_weight)
    if terms is not None:
        items.append(terms)
    if needs.structure != "comparison" and needs.hops < 2:
        rel = relation_item(needs, term_weight)
        if rel is not None:
            items.append(rel)
        return items
    if needs.structure != "comparison":
        items.extend(_hop_items(needs))
    else:
        items.extend(_comparison_items(needs))
    return items


def _entity_items(needs: QuestionNeeds) -> list[NeedItem]:
    """Return an ``entity`` need per named document, a ``mention`` need per name without one."""
    items: list[NeedItem] = []
    # A single-hop question about a named document asks for that document's words:
    # names the corpus has no document for ("Receiving Party") are words of its
    # relation, not passages to find anywhere.
    scoped = (
        needs.structure != "comparison"
        and needs.hops < 2
        and any(e.targets for e in needs.entities if e.key not in needs.answer_modifiers)
    )
    in_sets = {s.key for s in needs.sets}
    items.extend(member_items(needs))
    years = entity_years(needs)
    for e in needs.entities:
        if e.key in needs.answer_modifiers or e.key in in_sets:
            continue  # "German" in "which German philosopher": the answer must fit it
        if e.targets:
            items.append(NeedItem("entity", e.key, e.name, e.targets, words=years.get(e.key, ())))
        elif len(content_words(e.name)) >= 1 and not scoped:
            items.append(NeedItem("mention", e.key, e.name))
    return items


def entity_years(needs: QuestionNeeds) -> dict[str, tuple[str, ...]]:
    """Return the years the question gives each named document: "X in 2019 and Y in 2021".

    A year written right after a name (after a preposition or a possessive, a few
    words at most, no other name between) qualifies that name: its need is the year
    and the asked attribute's stems, its passage the one that states the attribute.
    Years elsewhere ("the 1959 final") qualify no name.
    """
    lex = active()
    question = needs.question
    out: dict[str, tuple[str, ...]] = {}
    for e in needs.entities:
        at = question.find(e.name)
        if not e.targets or at < 0:
            continue
        after = question[at + len(e.name) : at + len(e.name) + 40]
        m = lex.entity_year_re.match(after) if lex.entity_year_re else None
        if m:
            out[e.key] = (m.group(1), *_attribute_stems(needs))
    return out


def _attribute_stems(needs: QuestionNeeds) -> tuple[str, ...]:
    """Stems of the attribute a question compares or asks ("shareholder equity").

    Its relation words without the words that compare ("compare", "higher"), those
    that name the answer's kind ("company") and years.
    """
    lex = active()
    kinds = lex.organization_heads | lex.person_heads | lex.place_heads | lex.time_heads
    words = [
        w
        for w in needs.relation_terms
        if not w.isdigit()
        and w not in kinds
        and not lex.comparative_re.fullmatch(w)
        and not lex.relating_re.fullmatch(w)
        and not lex.more_re.fullmatch(w)
        and not lex.less_re.fullmatch(w)
    ]
    return tuple(dict.fromkeys(stem(w) for w in words))


def member_items(needs: QuestionNeeds) -> list[NeedItem]:
    """Return a ``member`` need per member of each set the question asks over, in set order.

    Its name says which member ("Intel's (2023 Q1)"); its one target is the member's
    document. A document two sets share is one need.
    """
    items = []
    seen: set[str] = set()
    for group in needs.sets:
        for doc, label in zip(group.members, group.labels, strict=True):
            if doc not in seen:
                seen.add(doc)
                name = f"{group.name} ({label})" if label else group.name
                items.append(NeedItem("member", group.key, name, (doc,)))
    return items


def _terms_item(
    needs: QuestionNeeds, term_weight: Callable[[str], float] | None
) -> NeedItem | None:
    """Return the soft ``terms`` need: the question's relation words, anywhere in the set."""
    terms = sorted({stem(w) for w in needs.relation_terms})
    if not terms:
        return None
    # Soft need: the question's relation words should appear somewhere in the set.
    # It steers the utility toward passages that state the asked relation, but
    # never blocks the gate (some question words are in no document at all).
    weights = tuple(term_weight(t) for t in terms) if term_weight else ()
    return NeedItem("terms", " ".join(terms), " ".join(needs.relation_terms), weights=weights)


def _hop_items(needs: QuestionNeeds) -> list[NeedItem]:
    """Return the ``bridge`` need of a nested question (and its ``chain`` need from 3 hops)."""
    anchor = next(
        (e for e in needs.entities if e.targets and e.key not in needs.answer_modifiers),
        None,
    )
    # No targets: the second hop may hang off any entity the question names.
    items = [
        NeedItem(
            "bridge",
            anchor.key if anchor else "",
            anchor.name if anchor else "",
            (),
            # Only the last hop holds the answer: a bridge of a longer chain is typeless.
            _TYPED.get(needs.answer_type) if needs.hops == 2 else None,
            roles=role_terms(needs.question),
            words=tuple(sorted({stem(w) for w in needs.hop_relations[0]}))
            if needs.hop_relations
            else (),
        )
    ]
    # "Who leads the team that owns the system that caused X?": the answer is two
    # links away from X's document, so a first hop alone does not answer it: one
    # ``chain`` need per hop after the bridge.
    for hop in range(3, needs.hops + 1):
        said = needs.hop_relations[hop - 1] if hop <= len(needs.hop_relations) else ()
        before = needs.hop_relations[hop - 2] if hop - 1 <= len(needs.hop_relations) else ()
        # The hop before's words start at its head noun ("team" of "the team that owns"),
        # which names the kind of this hop's entity; its passage states the rest ("owned
        # by"). A head alone ("the spouse of", "the place of burial of") is often written
        # in other words ("married", "buried"): no link words then.
        before = before[1:]
        items.append(
            NeedItem(
                "chain",
                anchor.key if anchor else "",
                anchor.name if anchor else "",
                hop=hop,
                words=tuple(sorted({stem(w) for w in said})),
                link=tuple(sorted({stem(w) for w in before})),
            )
        )
    return items


def _comparison_items(needs: QuestionNeeds) -> list[NeedItem]:
    """Return the needs of a comparison: each compared entity's value (or related entity).

    ``qualifier`` needs for the value the answer type asks for, or the one its
    comparative word implies for choice and yes/no questions; per-entity ``bridge``
    needs when the value belongs to an entity related to each option.
    """
    qtype = _TYPED.get(needs.answer_type)
    if qtype is None:
        qtype = compared_value_type(needs.question)
    if active().related_role_re.search(needs.question):
        roles = role_terms(needs.question)
        # "Which film has the director who died earlier, X or Y?": the compared
        # value belongs to an entity related to each option, one hop away.
        return [
            NeedItem(
                "bridge",
                e.key,
                e.name,
                e.targets,
                qtype if qtype in ("date", "number") else None,
                roles=roles,
            )
            for e in needs.entities
            if e.targets
        ]
    if qtype not in ("date", "number"):
        return []
    return [
        NeedItem("qualifier", e.key, e.name, e.targets, qtype) for e in needs.entities if e.targets
    ]


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
    words = _relation_stems(needs, named, term_weight)
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


def _relation_stems(
    needs: QuestionNeeds,
    named: Sequence[NeedEntity],
    term_weight: Callable[[str], float] | None,
) -> list[str]:
    """Stemmed words a relation need asks to be stated, sorted (see :func:`relation_item`)."""
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
    return words


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


NAMED_KINDS = frozenset(["entity", "member"])
"""Need kinds met by a passage of a document the question names (by name or as a set)."""


def _entity_docs(items: Sequence[NeedItem]) -> set[str]:
    return {d for it in items if it.kind in NAMED_KINDS for d in it.targets}
