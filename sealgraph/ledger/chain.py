"""The question's chain, followed hop by hop through the evidence.

"Who leads the team that owns the system whose lag caused the outage?" asks three
hops from the outage: the system, its team, the team's lead. :func:`follow_chain`
reads, from the evidence, the passage that supports each hop and the answer it
states: hop 1 starts at the entity the question names, and its passage is the one of
that entity's documents that states most of the question's relation words; the name
that passage writes next to those words is hop 1's answer, and it becomes the entity
of hop 2, whose passage is one that names it (its own page, or a passage that writes
it), asked with the relation words the earlier passages leave unstated. The chain
stops at the first hop no passage supports, kept with no passage: :func:`next_hop` is
what to ask for next (the gap's micro-query: "<hop answer> <unstated relation words>").

Pure functions of the need items and the passages' features; the entity ledger keeps
the chain (:attr:`sealgraph.ledger.ledger.EntityLedger.chain`) and the trace shows it.
"""

from __future__ import annotations

from collections.abc import Sequence

from sealgraph.ledger._hop_coverage import ROLE_NAME_BONUS, _role_names
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.model import ChainHop, NeedItem, QuestionNeeds
from sealgraph.text.lexicon import active, stem, stemmed_terms

__all__ = ["describe_chain", "follow_chain", "next_hop"]

_RELATION_WORDS = 4
"""Most relation words a hop is asked with (its micro-query's, after the entity)."""


def _candidates(passage: PassageFeatures) -> list[tuple[int, str, str]]:
    """Return ``(sentence, key, page)`` of the names a passage writes.

    Every proper name it writes (no page: ``page`` is "") and the titles it links to
    (their page).
    """
    found = [(sent, key, "") for sent, key in passage.written_names() if key != passage.topic]
    found.extend((sent, m.key, m.targets[0]) for sent, m in passage.mentions if len(m.targets) == 1)
    return found


def _kind(word: str) -> str:
    """Return the kind a head noun names: ``organization``, ``place``, ``person`` or ""."""
    lex = active()
    if word in lex.organization_heads:
        return "organization"
    if word in lex.place_heads:
        return "place"
    return "person" if word in lex.person_heads or word in lex.agent_roles else ""


def _name_kind(key: str, title: str) -> str:
    """Return the kind a name reads as, from its last word or its page's title's."""
    for text in (title, key):
        words = text.lower().split()
        kind = _kind(words[-1]) if words else ""
        if kind in ("organization", "place"):
            return kind
    return ""


def _answer(
    passage: PassageFeatures,
    words: frozenset[str],
    roles: frozenset[str],
    skip: set[str],
    expect: str = "",
) -> tuple[float, str, str]:
    """Return the name a passage states as a hop's answer: ``(score, key, page)``.

    A name scores by the hop's relation words its sentence holds, plus a bonus when the
    passage gives it the asked role; names of the question and earlier hops are skipped,
    and so are names of another kind than the hop's head noun asks for ("the team that
    owns X" is no gateway, "the incident commander" no guild).
    """
    in_role = _role_names(passage, roles, passage.role_linked_docs(roles)) if roles else frozenset()
    titles = {m.targets[0]: m.surface for _, m in passage.mentions if len(m.targets) == 1}
    best = (0.0, "", "")
    for sent, key, page in _candidates(passage):
        if key in skip or set(stemmed_terms(key)) <= skip:
            continue
        kind = _name_kind(key, titles.get(page, ""))
        if expect and kind and kind != expect:
            continue
        if expect == "organization" and not kind:
            continue
        score = len(words & passage.text_sentence_words(sent)) + (
            ROLE_NAME_BONUS if key in in_role else 0.0
        )
        if score > best[0]:
            best = (score, key, page)
    return best


def _about(passage: PassageFeatures, key: str, page: str) -> bool:
    """Tell whether a passage is of ``key``'s page, or writes ``key``."""
    return (
        passage.doc_id == page
        or passage.topic == key
        or key in passage.mentioned_keys()
        or any(k == key for _, k in passage.written_names())
    )


def follow_chain(
    needs: QuestionNeeds, items: Sequence[NeedItem], passages: Sequence[PassageFeatures]
) -> tuple[ChainHop, ...]:
    """Follow the question's hops through ``passages``; stop at the first one unsupported.

    Only questions of two hops or more that are no comparison have a chain. A hop
    after the first is supported by a passage of another document than the earlier
    hops' that is about the entity the hop starts from and states one of the relation
    words still unstated; a hop no passage supports ends the chain with no passage.
    """
    if needs.hops < 2 or needs.structure == "comparison":
        return ()
    walk = _Walk(needs, items, passages)
    chain: list[ChainHop] = []
    for hop in range(1, needs.hops + 1):
        step = walk.step(hop)
        chain.append(step)
        if not step.answer or not step.chunk_id:
            break
    return tuple(chain)


class _Walk:
    """The state of :func:`follow_chain` between hops."""

    def __init__(
        self, needs: QuestionNeeds, items: Sequence[NeedItem], passages: Sequence[PassageFeatures]
    ) -> None:
        anchor = next(
            (e for e in needs.entities if e.targets and e.key not in needs.answer_modifiers),
            None,
        )
        self.needs, self.passages = needs, passages
        self.roles = frozenset(next((it.roles for it in items if it.roles), ()))
        self.skip = set(stemmed_terms(needs.question)) | {e.key for e in needs.entities}
        self.pool = [p for p in passages if anchor and p.doc_id in anchor.targets] or list(passages)
        self.entity, self.page = (anchor.name if anchor else ""), ""
        self.stated: set[str] = set()
        self.used: set[str] = set()

    def words(self, hop: int) -> list[str]:
        """Return the hop's own words when the question's form gives them, else those unstated."""
        given = self.needs.hop_relations
        said = given[hop - 1] if hop <= len(given) else ()
        return list(said) or [w for w in self.needs.relation_terms if stem(w) not in self.stated]

    def step(self, hop: int) -> ChainHop:
        """Follow one hop: its passage and the answer it states (the next entity)."""
        unstated = self.words(hop)
        words = frozenset(stem(w) for w in unstated)
        relation = " ".join(unstated[:_RELATION_WORDS])
        pool = [p for p in self.pool if p.doc_id not in self.used]
        passage = max(pool, key=lambda p: len(words & p.words), default=None)
        if passage is None or (hop > 1 and words and not words & passage.words):
            # No passage about the entity states the hop: the hop to ask for.
            return ChainHop(hop, self.entity, relation, "", "", self.page)
        answer, found = "", ""
        if hop < self.needs.hops:
            expect = _kind(unstated[0]) if unstated else ""
            scored = [(_answer(p, words, self.roles, self.skip, expect), p) for p in pool]
            (score, answer, found), passage = max(scored, key=lambda t: t[0][0])
            if not score:
                # Its passages name no answer of the asked kind: the hop to ask for.
                return ChainHop(hop, self.entity, relation, "", "", self.page)
        here = ChainHop(hop, self.entity, relation, answer, passage.chunk_id, self.page)
        if answer:
            self.stated |= words & passage.words
            self.used.add(passage.doc_id)
            self.skip.add(answer)
            self.entity, self.page = answer, found
            self.pool = [p for p in self.passages if _about(p, answer, found)]
        return here


def next_hop(chain: Sequence[ChainHop]) -> ChainHop | None:
    """Return the hop the chain lacks a passage for, or None.

    Known only when the hop before stated an answer: that answer is the entity to ask
    about (with its page, when it has one), with the relation words no passage of the
    chain states yet.
    """
    if chain and not chain[-1].chunk_id and chain[-1].entity:
        return chain[-1]
    return None


def describe_chain(chain: Sequence[ChainHop]) -> str:
    """One line for the trace: each hop's entity, answer and supporting passage."""
    parts = []
    for h in chain:
        start = h.entity or "the question"
        if not h.chunk_id:
            parts.append(f"hop {h.hop}: {start} -> no passage yet ('{h.relation}')")
        else:
            found = f" -> {h.answer}" if h.answer else ""
            parts.append(f"hop {h.hop}: {start}{found} [{h.chunk_id}]")
    return "chain: " + "; ".join(parts)
