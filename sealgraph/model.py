"""The SEAL value types the graph's rooms exchange.

Plain frozen values, no algorithms: what the question needs (:class:`QuestionNeeds`,
:class:`NeedEntity`), the need items and typed gaps of the sufficiency gate
(:class:`NeedItem`, :class:`Gap`), the micro-queries that answer them
(:class:`MicroQuery`), the facts the entity ledger is built from
(:class:`Provenance`, :class:`LedgerEntity`, :class:`Relation`, :class:`Qualifier`,
:class:`Facts`), and fixed-k replacement's scores and decisions
(:class:`UtilityScore`, :class:`Slot`, :class:`Decision`, :class:`ReplacementResult`).

The algorithms that produce and read them live in :mod:`sealgraph.ledger` (needs,
gaps, extraction, the ledger) and :mod:`sealgraph.repair` (micro-queries, utility,
replacement); each type stays importable from the module that used to define it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from types import MappingProxyType

__all__ = [
    "ANSWER_TYPES",
    "STRUCTURES",
    "ChainHop",
    "Decision",
    "Facts",
    "Gap",
    "LedgerEntity",
    "MicroQuery",
    "NeedEntity",
    "NeedItem",
    "Provenance",
    "Qualifier",
    "QuestionNeeds",
    "Relation",
    "ReplacementResult",
    "SetNeed",
    "Slot",
    "Step",
    "UtilityScore",
]

# --- What the question needs --------------------------------------------------------

ANSWER_TYPES = ("person", "date", "number", "place", "yes_no", "choice", "other")
STRUCTURES = ("single", "bridge", "comparison", "multi_step")
"""``single``: one hop; ``bridge``: two; ``multi_step``: three or more; ``comparison``:
compared options (each needs its own evidence)."""


@dataclass(frozen=True, slots=True)
class NeedEntity:
    """An entity named by the question."""

    name: str
    """Surface form in the question."""
    key: str
    """Normalised name."""
    targets: tuple[str, ...]
    """Document ids the name links to through the gazetteer (empty when unknown)."""
    source: str
    """How it was found: ``gazetteer``, ``capitalized`` or ``quoted`` (offline), ``llm``
    (named by the LLM reasoner, linked with :func:`~sealgraph.ledger.needs.linked_docs`),
    ``content`` (linked by the documents' openings,
    :func:`~sealgraph.ledger.content_links.link_by_content`)."""


@dataclass(frozen=True, slots=True)
class SetNeed:
    """A set the question asks over: every member must be in the evidence.

    "How has Intel's net sales changed over time?" asks over Intel's filings, one per
    period: each is a member, found from the corpus (the documents the name links to),
    ordered by period.
    """

    name: str
    """The name the set belongs to, as the question writes it."""
    key: str
    """Normalised name."""
    members: tuple[str, ...]
    """Document ids of the members, in order (earliest period first)."""
    labels: tuple[str, ...]
    """A short label of each member ("2023 Q1"), in the same order."""
    reason: str
    """The words that ask over the set ("over the reported quarters")."""

    def to_dict(self) -> dict:
        """Return a JSON-safe dict."""
        return {
            "name": self.name,
            "key": self.key,
            "members": list(self.members),
            "labels": list(self.labels),
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: dict) -> SetNeed:
        """Inverse of :meth:`to_dict`."""
        return cls(
            data["name"],
            data["key"],
            tuple(data["members"]),
            tuple(data.get("labels", ())),
            data.get("reason", ""),
        )


@dataclass(frozen=True, slots=True)
class QuestionNeeds:
    """N(q): entities, relation, answer type, structure and hop count of a question."""

    question: str
    """The question text."""
    entities: tuple[NeedEntity, ...]
    """Entities the question names, in order of appearance."""
    relation_terms: tuple[str, ...]
    """Content words of the question outside entity names and question words."""
    answer_type: str
    """One of :data:`ANSWER_TYPES`."""
    structure: str
    """One of :data:`STRUCTURES`."""
    options: tuple[str, ...] = field(default=())
    """Named options of a choice question ("X or Y?")."""
    hops: int = 1
    """How many hops the question's form asks for (see
    :func:`~sealgraph.ledger.needs.question_hops`)."""
    answer_modifiers: tuple[str, ...] = ()
    """Keys of named entities that only describe the answer ("German" in "Which German
    philosopher wrote X?"): the answer must be shown to fit them, they anchor nothing."""
    sets: tuple[SetNeed, ...] = ()
    """Sets the question asks over ("over time", "across these quarters"), each member a
    document the evidence must hold (:func:`sealgraph.ledger.periods.set_needs`)."""
    hop_relations: tuple[tuple[str, ...], ...] = ()
    """The relation words of each hop, innermost (from the named entity) first: "who
    leads the team that owns the system whose lag caused X" is (system, lag, caused),
    (team, owns), (leads) (:func:`sealgraph.ledger.needs.hop_relations`; empty when
    not read)."""

    def to_dict(self) -> dict:
        """Return a JSON-safe dict."""
        return {
            "question": self.question,
            "entities": [
                {"name": e.name, "key": e.key, "targets": list(e.targets), "source": e.source}
                for e in self.entities
            ],
            "relation_terms": list(self.relation_terms),
            "answer_type": self.answer_type,
            "structure": self.structure,
            "options": list(self.options),
            "hops": self.hops,
            "answer_modifiers": list(self.answer_modifiers),
            "sets": [x.to_dict() for x in self.sets],
            "hop_relations": [list(h) for h in self.hop_relations],
        }

    @classmethod
    def from_dict(cls, data: dict) -> QuestionNeeds:
        """Inverse of :meth:`to_dict`."""
        return cls(
            question=data["question"],
            entities=tuple(
                NeedEntity(e["name"], e["key"], tuple(e["targets"]), e["source"])
                for e in data["entities"]
            ),
            relation_terms=tuple(data["relation_terms"]),
            answer_type=data["answer_type"],
            structure=data["structure"],
            options=tuple(data.get("options", ())),
            hops=int(data.get("hops", _default_hops(data["structure"]))),
            answer_modifiers=tuple(data.get("answer_modifiers", ())),
            sets=tuple(SetNeed.from_dict(x) for x in data.get("sets", ())),
            hop_relations=tuple(tuple(h) for h in data.get("hop_relations", ())),
        )


def _default_hops(structure: str) -> int:
    """Hop count of needs written before hops were stored (read from their structure)."""
    return {"bridge": 2, "multi_step": 3}.get(structure, 1)


# --- Need items and gaps --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NeedItem:
    """One concrete requirement derived from N(q)."""

    kind: str
    """``entity``, ``member``, ``mention``, ``relation``, ``bridge``, ``chain``,
    ``qualifier`` or ``terms``."""
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
    hop: int = 0
    """``chain`` needs: the hop they stand for (3 or more; the bridge is hop 2)."""
    words: tuple[str, ...] = ()
    """Words the need's passage must write: a ``chain`` need's stemmed relation words
    of that hop (a ``bridge`` need's: those of the first hop, whose answer it
    continues from; empty when not read); an ``entity`` need's year the question gives
    that entity and the stems of the asked attribute ("X's shareholder equity in
    2019": 2019, sharehold, equiti)."""
    link: tuple[str, ...] = ()
    """``chain`` needs: the stemmed relation words of the hop before, which its passage
    states where it names this hop's entity ("own" for "who leads the team that owns the
    system ...": the system's passage says which team owns it); empty when not read or
    when the hop before is its head noun alone ("the spouse of")."""

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
    """Relation words the gap asks for ('' when none; a missing entity asked with them
    is wanted for what its passage states: a set member's passage on the asked relation)."""
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


@dataclass(frozen=True, slots=True)
class MicroQuery:
    """An atomic query for one gap."""

    text: str
    """Query text for hybrid search."""
    entity: str
    """The entity it is anchored on ('' when none)."""
    gap_kind: str
    """Kind of the gap it serves."""
    title_targets: tuple[str, ...] = ()
    """Documents to fetch by exact title/alias lookup before searching."""

    def to_dict(self) -> dict:
        """Return a JSON-safe dict."""
        return {
            "text": self.text,
            "entity": self.entity,
            "gap_kind": self.gap_kind,
            "title_targets": list(self.title_targets),
        }


# --- Ledger facts ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChainHop:
    """One hop of the question's chain, as the evidence states it.

    The answer one passage states for hop i ("the performer of X is Y") is the entity
    of hop i+1, asked with the relation words the earlier hops leave unstated.
    """

    hop: int
    """1-based: hop 1 starts at the entity the question names."""
    entity: str
    """What the hop starts from: the question's entity, or the answer of the hop before."""
    relation: str
    """The question's relation words this hop is asked with (those still unstated)."""
    answer: str
    """Key of the name the supporting passage states as the hop's answer ("" when none
    is read: the last hop, or a passage that names no candidate)."""
    chunk_id: str
    """The passage that supports the hop ("" when none does yet: the hop to ask for)."""
    page: str = ""
    """The document of the hop's entity when it has one ("" for the question's own
    entity, or a name with no page of its own)."""

    def to_dict(self) -> dict:
        """Return a JSON-safe dict."""
        return {
            "hop": self.hop,
            "entity": self.entity,
            "relation": self.relation,
            "answer": self.answer,
            "chunk_id": self.chunk_id,
            "page": self.page,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ChainHop:
        """Inverse of :meth:`to_dict`."""
        return cls(
            int(data["hop"]),
            str(data["entity"]),
            str(data.get("relation", "")),
            str(data.get("answer", "")),
            str(data.get("chunk_id", "")),
            str(data.get("page", "")),
        )


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a fact was read."""

    chunk_id: str
    """Chunk the fact comes from."""
    sentence: int
    """0-based sentence index within the chunk."""


@dataclass(frozen=True, slots=True)
class LedgerEntity:
    """A canonical entity."""

    id: str
    """Canonical id (the normalised canonical name)."""
    name: str
    """Canonical display name (the longest / title form seen)."""
    aliases: tuple[str, ...]
    """Every normalised key that resolves to this entity."""
    doc_ids: tuple[str, ...]
    """Documents that are about this entity (gazetteer targets)."""
    provenance: tuple[Provenance, ...]
    """Where it was mentioned."""
    confidence: float
    """0..1: 1 for title matches, lower for partial or capitalisation-only evidence."""


@dataclass(frozen=True, slots=True)
class Relation:
    """A (subject, relation, object) triple read from one sentence."""

    subject: str
    """Entity id of the subject (usually the passage's own topic)."""
    relation: str
    """Relation words from the sentence."""
    object: str
    """Entity id of the object."""
    provenance: Provenance
    """Where it was read."""
    confidence: float
    """0..1."""


@dataclass(frozen=True, slots=True)
class Qualifier:
    """A typed value (date, number, place) attached to an entity."""

    entity: str
    """Entity id it qualifies."""
    type: str
    """``date``, ``number`` or ``place``."""
    value: str
    """The value as written."""
    provenance: Provenance
    """Where it was read."""


@dataclass(frozen=True, slots=True)
class Facts:
    """What extraction read from a batch of passages (input to :meth:`~sealgraph.ledger.ledger.EntityLedger.merge`)."""

    entities: tuple[tuple[str, str, tuple[str, ...], Provenance, float], ...] = ()
    """(key, surface name, doc ids, provenance, confidence) per mention."""
    relations: tuple[Relation, ...] = ()
    """Triples (subject/object given as keys; resolved on merge)."""
    qualifiers: tuple[Qualifier, ...] = ()
    """Typed values (entity given as key; resolved on merge)."""
    chunk_ids: tuple[str, ...] = ()
    """Passages the facts were read from."""


# --- Utility scores and replacement decisions -----------------------------------------


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
    need_gain: float | None = None
    """Marginal need coverage summed over the items (GapCov before normalising): for a
    candidate, what it would add; for an incumbent, what evicting it would lose. None
    when not computed (the do-no-harm rules are then skipped)."""
    doc_gain: float | None = None
    """The part of ``need_gain`` from entity, mention, bridge and qualifier needs."""
    relation: float = 0.0
    """Weighted share of the question's relation words the passage states."""
    covers: tuple[float, ...] = ()
    """The passage's own coverage of each document need (entity, mention, bridge,
    qualifier), in item order."""
    named: bool = False
    """True when the passage belongs to a document the question names."""

    def to_dict(self) -> dict[str, float | str]:
        """Return a JSON-safe dict with rounded components."""
        out: dict[str, float | str] = {
            "chunk_id": self.chunk_id,
            "gap_coverage": round(self.gap_coverage, 4),
            "corroboration": round(self.corroboration, 4),
            "novelty": round(self.novelty, 4),
            "redundancy": round(self.redundancy, 4),
            "total": round(self.total, 4),
        }
        if self.need_gain is not None:
            out["need_gain"] = round(self.need_gain, 4)
            out["relation"] = round(self.relation, 4)
        return out

    def dominates(self, other: UtilityScore) -> bool:
        """Tell whether this passage covers strictly more than ``other``.

        Every document need at least as well, and one of them better. (Relation
        words do not count: two chunks of one document that differ only there are a
        ranking question, which the initial search settled.)
        """
        if len(self.covers) != len(other.covers):
            return False
        pairs = list(zip(self.covers, other.covers, strict=True))
        return all(a >= b - 1e-9 for a, b in pairs) and any(a > b + 1e-9 for a, b in pairs)


@dataclass(frozen=True, slots=True)
class Slot:
    """One member of the evidence set."""

    chunk_id: str
    """The passage."""
    inserted_loop: int
    """Loop in which it entered the set (0 = initial search)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One replacement decision (becomes a log event)."""

    action: str
    """``swap``, ``fill``, ``append`` or ``refuse``."""
    reason: str
    """Why, in one sentence."""
    candidate: str | None = None
    """Best candidate considered."""
    victim: str | None = None
    """Passage evicted (swap) or that would have been (refuse)."""
    candidate_score: UtilityScore | None = None
    """S(c*) with components."""
    victim_score: UtilityScore | None = None
    """S(victim) with components."""


@dataclass(frozen=True, slots=True)
class ReplacementResult:
    """Outcome of one replacement step."""

    evidence: tuple[Slot, ...]
    """The new evidence set."""
    decisions: tuple[Decision, ...]
    """Every swap, fill and refusal, in order."""
    evicted: tuple[str, ...] = field(default=())
    """Passages evicted in this step (to blocklist)."""

    @property
    def changed(self) -> bool:
        """True when at least one passage entered the set."""
        return any(d.action in ("swap", "fill", "append") for d in self.decisions)


class Step(StrEnum):
    """The LLM steps of SEAL, one name each.

    A step's value names it everywhere: its prompt file (``sealgraph/prompts/<value>.md``),
    its token bound (``llm.max_tokens.<value>``, :meth:`sealgraph.config.StepTokens.for_step`),
    and the ``step`` of its notes, fallbacks and events (``"step": "plan"``).
    """

    NEEDS = "needs"
    """Read the question's needs before any search: answer type, hops, structure, the names."""
    EXTRACT = "extract"
    """Read entities, relations and qualifiers from the new passages (one batched call)."""
    ASSESS = "assess"
    """The sufficiency gate: the open gaps, and the passages that support the needs."""
    PLAN = "plan"
    """Write one micro-query per open gap (the graph's ``micro_query`` node runs it)."""
    GENERATE = "generate"
    """Answer from the packed spans, citing them."""
