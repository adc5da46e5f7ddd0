"""Turning a checked reply into the ledger's types: the question's needs, the passages' facts.

The model's names are never taken on trust: a needs reading keeps only the names the
question writes, linked to the corpus as the offline reader links them
(:func:`needs_from`); an extraction keeps each passage's own topic entity with its
document link, whatever the model read (:func:`facts_from`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import Facts, Provenance, Qualifier, Relation
from sealgraph.ledger.needs import NeedEntity, QuestionNeeds, linked_docs, relation_words
from sealgraph.prompts import unfence
from sealgraph.text.names import content_words, normalize_name
from sealgraph.types import Chunk

if TYPE_CHECKING:
    from sealgraph.reasoning.llm._schemas import Extraction, NeedsReading


def _written(name: str, question: str) -> re.Match[str] | None:
    """Where the question writes ``name`` (case aside, as whole words), None when it does not."""
    if not name:
        return None
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", question, re.IGNORECASE)


def _written_entities(
    question: str, r: NeedsReading, gazetteer: Gazetteer
) -> tuple[tuple[NeedEntity, ...], list[tuple[int, int]]]:
    """Return the reply's names the question writes, linked, and where the question writes them.

    A name is kept as the question writes it, or as the gazetteer name written inside
    it that the question writes; a name the question does not write is dropped. The
    entities keep the question's order.
    """
    found: list[tuple[int, NeedEntity]] = []
    spans: list[tuple[int, int]] = []
    seen: set[str] = set()
    for raw in r.entities:
        name = " ".join(unfence(raw).split())
        hit = _written(name, question) or next(
            (
                m
                for mention in gazetteer.find_mentions(name, min_kind="acronym")
                if (m := _written(mention.surface, question))
            ),
            None,
        )
        if hit is None:
            continue
        surface = hit.group(0)
        key = normalize_name(surface)
        if not key or key in seen:
            continue
        seen.add(key)
        targets = linked_docs(surface, gazetteer)
        if not targets:
            mentions = gazetteer.find_mentions(surface, min_kind="acronym")
            if mentions:
                targets = max(mentions, key=lambda m: m.end - m.start).targets
        found.append((hit.start(), NeedEntity(surface, key, targets, "llm")))
        pattern = re.compile(rf"(?<!\w){re.escape(surface)}(?!\w)", re.IGNORECASE)
        spans.extend(m.span() for m in pattern.finditer(question))
    found.sort(key=lambda t: t[0])
    return tuple(e for _, e in found), spans


def needs_from(question: str, r: NeedsReading, gazetteer: Gazetteer) -> QuestionNeeds:
    """Turn the model's reading into ``QuestionNeeds``, its names resolved against the corpus.

    A name is kept as the question writes it, or as the gazetteer name written inside
    it that the question writes ("Quiet Harbour" for a reply's "Quiet Harbour
    (film)"); a name the question does not write is dropped (the model may not add
    entities, the answer least of all). Each kept name links to its documents as the
    offline reader links a name (:func:`~sealgraph.ledger.needs.linked_docs`, else
    the gazetteer names written inside it). Entities keep the question's order;
    relation terms are the question's words outside them
    (:func:`~sealgraph.ledger.needs.relation_words`), plus the words of the compared
    attribute; options are kept for a choice question only, answer modifiers only
    when they are among the entities.
    """
    entities, spans = _written_entities(question, r, gazetteer)
    relation = relation_words(question, spans)
    compared = content_words(unfence(r.compared_attribute))
    relation += tuple(w for w in dict.fromkeys(compared) if w not in relation)
    keys = {e.key for e in entities}
    options: dict[str, str] = {}
    if r.answer_type == "choice":
        for raw in r.options:
            option = " ".join(unfence(raw).split())
            if normalize_name(option):
                options.setdefault(normalize_name(option), option)
    modifiers = (normalize_name(unfence(m)) for m in r.answer_modifiers)
    return QuestionNeeds(
        question=question,
        entities=entities,
        relation_terms=relation,
        answer_type=r.answer_type,
        structure=r.structure,
        options=tuple(options.values()),
        hops=r.hops,
        answer_modifiers=tuple(dict.fromkeys(k for k in modifiers if k in keys)),
    )


def facts_from(
    out: Extraction, chunks: Sequence[Chunk], features: Sequence[PassageFeatures]
) -> Facts:
    """Turn the model's extraction into ledger facts with provenance."""
    topic = {normalize_name(c.title): c.doc_id for c in chunks}

    def pid(n: int) -> Chunk:
        return chunks[min(max(n, 1), len(chunks)) - 1]

    # Every passage's own topic entity keeps its document link, whatever the model read.
    ents = [
        (f.topic, c.title, (c.doc_id,), Provenance(c.chunk_id, 0), 1.0)
        for c, f in zip(chunks, features, strict=True)
    ]
    for e in out.entities:
        name = unfence(e.name)
        key = normalize_name(name)
        if not key:
            continue
        docs = (topic[key],) if key in topic else ()
        ents.append((key, name, docs, Provenance(pid(e.passage).chunk_id, 0), 0.9))
        for alias in map(unfence, e.aliases):
            akey = normalize_name(alias)
            if akey:
                ents.append((akey, alias, docs, Provenance(pid(e.passage).chunk_id, 0), 0.8))
    rels = tuple(
        Relation(
            normalize_name(unfence(r.subject)),
            unfence(r.relation),
            normalize_name(unfence(r.object)),
            Provenance(pid(r.passage).chunk_id, 0),
            0.9,
        )
        for r in out.relations
    )
    quals = tuple(
        Qualifier(
            normalize_name(unfence(q.entity)),
            q.type,
            unfence(q.value),
            Provenance(pid(q.passage).chunk_id, 0),
        )
        for q in out.qualifiers
    )
    return Facts(tuple(ents), rels, quals, tuple(c.chunk_id for c in chunks))
