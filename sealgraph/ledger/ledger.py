"""The entity ledger U_t: entities, aliases, relations, qualifiers, provenance.

The ledger is an immutable value: :meth:`EntityLedger.merge` returns a new ledger,
so every version can be logged and checkpointed. Merging resolves every incoming
name through the alias map first (exact key, then legal-form-stripped key, then
acronym), so one real-world entity never gets two entries however many loops add
mentions of it.

The facts it is built from (:class:`Facts`, :class:`Relation`, :class:`Qualifier`,
:class:`Provenance`) and its entries (:class:`LedgerEntity`) are plain values of
:mod:`sealgraph.model`, importable from here as well.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from sealgraph.ledger.gazetteer import acronym, strip_org_suffix
from sealgraph.model import ChainHop, Facts, LedgerEntity, Provenance, Qualifier, Relation

__all__ = [
    "ChainHop",
    "EntityLedger",
    "Facts",
    "LedgerEntity",
    "Provenance",
    "Qualifier",
    "Relation",
]


@dataclass(frozen=True)
class EntityLedger:
    """U_t: the accumulated, de-duplicated knowledge read from the evidence."""

    entities: dict[str, LedgerEntity] = field(default_factory=dict)
    """Canonical id → entity."""
    alias_map: dict[str, str] = field(default_factory=dict)
    """Normalised alias → canonical id."""
    relations: tuple[Relation, ...] = ()
    """All triples, in the order read."""
    qualifiers: tuple[Qualifier, ...] = ()
    """All qualifiers, in the order read."""
    chunk_ids: tuple[str, ...] = ()
    """Passages read so far."""
    chain: tuple[ChainHop, ...] = ()
    """The question's chain as the evidence supports it, hop by hop (hop, entity,
    relation, supporting passage): :func:`sealgraph.ledger.chain.follow_chain`."""

    def with_chain(self, chain: tuple[ChainHop, ...]) -> EntityLedger:
        """Return the ledger with the chain followed through its current evidence."""
        return replace(self, chain=tuple(chain))

    def resolve(self, key: str) -> str | None:
        """Return the canonical id of a normalised name, or None."""
        if key in self.alias_map:
            return self.alias_map[key]
        stripped = strip_org_suffix(key)
        if stripped in self.alias_map:
            return self.alias_map[stripped]
        return None

    def has_doc(self, doc_id: str) -> bool:
        """Tell whether some entity of the ledger is about ``doc_id``."""
        return any(doc_id in e.doc_ids for e in self.entities.values())

    def merge(self, facts: Facts) -> EntityLedger:
        """Return a new ledger with ``facts`` merged in (never duplicating an entity)."""
        entities = dict(self.entities)
        alias_map = dict(self.alias_map)

        def resolve(key: str) -> str | None:
            for k in (key, strip_org_suffix(key)):
                if k in alias_map:
                    return alias_map[k]
            return None

        def add_alias(eid: str, key: str) -> None:
            for k in {key, strip_org_suffix(key), acronym(key)}:
                if k and k not in alias_map:
                    alias_map[k] = eid

        for key, name, doc_ids, prov, conf in facts.entities:
            eid = resolve(key)
            if eid is None:
                # Two names that share a document are one entity ("Harbourlight" and
                # "Harbourlight (album)"): link through the gazetteer targets too.
                eid = next(
                    (e.id for e in entities.values() if doc_ids and set(doc_ids) == set(e.doc_ids)),
                    None,
                )
            if eid is None:
                eid = key
                entities[eid] = LedgerEntity(eid, name, (key,), tuple(doc_ids), (prov,), conf)
                add_alias(eid, key)
                continue
            ent = entities[eid]
            aliases = ent.aliases if key in ent.aliases else (*ent.aliases, key)
            provs = ent.provenance if prov in ent.provenance else (*ent.provenance, prov)
            docs = tuple(sorted(set(ent.doc_ids) | set(doc_ids)))
            better_name = name if len(name) > len(ent.name) and conf >= ent.confidence else ent.name
            entities[eid] = replace(
                ent,
                name=better_name,
                aliases=aliases,
                doc_ids=docs,
                provenance=provs,
                confidence=max(ent.confidence, conf),
            )
            add_alias(eid, key)

        def canon(key: str) -> str:
            return resolve(key) or key

        seen_rel = {(r.subject, r.relation, r.object, r.provenance) for r in self.relations}
        relations = list(self.relations)
        for r in facts.relations:
            r2 = replace(r, subject=canon(r.subject), object=canon(r.object))
            sig = (r2.subject, r2.relation, r2.object, r2.provenance)
            if sig not in seen_rel:
                seen_rel.add(sig)
                relations.append(r2)
        seen_q = {(q.entity, q.type, q.value, q.provenance) for q in self.qualifiers}
        qualifiers = list(self.qualifiers)
        for q in facts.qualifiers:
            q2 = replace(q, entity=canon(q.entity))
            sig = (q2.entity, q2.type, q2.value, q2.provenance)
            if sig not in seen_q:
                seen_q.add(sig)
                qualifiers.append(q2)
        chunk_ids = tuple(dict.fromkeys((*self.chunk_ids, *facts.chunk_ids)))
        return EntityLedger(
            entities, alias_map, tuple(relations), tuple(qualifiers), chunk_ids, self.chain
        )

    def without_chunks(self, chunk_ids: Iterable[str]) -> EntityLedger:
        """Return the ledger rebuilt without the facts read from ``chunk_ids``.

        Used when a passage is evicted: knowledge that only it supported leaves the
        ledger, so the gate can reopen the gap it had closed.
        """
        drop = set(chunk_ids)
        entities: dict[str, LedgerEntity] = {}
        for eid, ent in self.entities.items():
            provs = tuple(p for p in ent.provenance if p.chunk_id not in drop)
            if provs:
                entities[eid] = replace(ent, provenance=provs)
        alias_map = {k: v for k, v in self.alias_map.items() if v in entities}
        return EntityLedger(
            entities,
            alias_map,
            tuple(r for r in self.relations if r.provenance.chunk_id not in drop),
            tuple(q for q in self.qualifiers if q.provenance.chunk_id not in drop),
            tuple(c for c in self.chunk_ids if c not in drop),
            tuple(h for h in self.chain if h.chunk_id not in drop),
        )

    def to_dict(self) -> dict:
        """Return a JSON-safe summary (used in state and logs)."""
        return {
            "entities": [
                {
                    "id": e.id,
                    "name": e.name,
                    "aliases": list(e.aliases),
                    "doc_ids": list(e.doc_ids),
                    "confidence": round(e.confidence, 3),
                    "provenance": [[p.chunk_id, p.sentence] for p in e.provenance],
                }
                for e in self.entities.values()
            ],
            "relations": [
                [
                    r.subject,
                    r.relation,
                    r.object,
                    r.provenance.chunk_id,
                    r.provenance.sentence,
                    round(r.confidence, 3),
                ]
                for r in self.relations
            ],
            "qualifiers": [
                [q.entity, q.type, q.value, q.provenance.chunk_id, q.provenance.sentence]
                for q in self.qualifiers
            ],
            "chunk_ids": list(self.chunk_ids),
            "chain": [h.to_dict() for h in self.chain],
        }

    @classmethod
    def from_dict(cls, data: dict | None) -> EntityLedger:
        """Inverse of :meth:`to_dict`."""
        if not data:
            return cls()
        entities = {}
        alias_map: dict[str, str] = {}
        for e in data.get("entities", []):
            ent = LedgerEntity(
                e["id"],
                e["name"],
                tuple(e["aliases"]),
                tuple(e["doc_ids"]),
                tuple(Provenance(c, s) for c, s in e["provenance"]),
                float(e["confidence"]),
            )
            entities[ent.id] = ent
            for a in ent.aliases:
                for k in (a, strip_org_suffix(a), acronym(a)):
                    if k:
                        alias_map.setdefault(k, ent.id)
        # Relations written before confidence was stored have five fields.
        rels = tuple(
            Relation(s, r, o, Provenance(c, i), float(conf[0]) if conf else 1.0)
            for s, r, o, c, i, *conf in data.get("relations", [])
        )
        quals = tuple(
            Qualifier(e, t, v, Provenance(c, i)) for e, t, v, c, i in data.get("qualifiers", [])
        )
        chain = tuple(ChainHop.from_dict(h) for h in data.get("chain", []))
        return cls(entities, alias_map, rels, quals, tuple(data.get("chunk_ids", [])), chain)
