"""Sets larger than k: one repair branch per group of members, merged into one evidence set.

Fixed-k replacement cannot hold a set whose members outnumber its k slots ("How have
Amazon's and Intel's net sales changed over these quarters?" asks for eight filings
at k = 5): it would cycle members in and out instead of accumulating them. The set
is split into groups of at most k members (one group per set that fits, a larger set
in runs of k: :func:`fanout_groups`); each group gets its own repair branch with its
own fixed k and loop budget (:func:`repair_branch`: the same search, gate,
micro-queries and replacement as the graph's loop, over the needs of that group
alone, :func:`branch_needs`); the branches' sets are merged into one evidence set
that packing fits to the token budget once, and every member is either in it or
named as missing (:func:`merge_branches`).

Pure functions: the graph fans out with LangGraph's ``Send`` (:mod:`sealgraph.graph.builder`)
and its nodes call these; the gate and the planner are given as callables, so a
branch uses the run's reasoner.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sealgraph.config import SealConfig
from sealgraph.ledger.gaps import coverage_memo
from sealgraph.ledger.needs import focus_text
from sealgraph.model import Gap, MicroQuery, NeedItem, QuestionNeeds, SetNeed, Slot
from sealgraph.repair.candidates import gather_candidates, initial_hits, set_members
from sealgraph.repair.scoring import SetScorer, repair_step

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.index.protocol import SearchIndex
    from sealgraph.ledger.extract import PassageFeatures
    from sealgraph.ledger.knowledge import CorpusKnowledge

__all__ = [
    "Assess",
    "BranchResult",
    "Plan",
    "branch_needs",
    "fanout_groups",
    "merge_branches",
    "repair_branch",
]

Assess = Callable[[QuestionNeeds, Sequence[NeedItem], Sequence["PassageFeatures"]], Sequence[Gap]]
"""The gate: the open gaps of a set of passages."""
Plan = Callable[[QuestionNeeds, Sequence[Gap], Sequence[str], int], Sequence[MicroQuery]]
"""The planner: new micro-queries for the open gaps, none issued before."""


def fanout_groups(needs: QuestionNeeds, k: int) -> tuple[SetNeed, ...]:
    """Return the groups of members to repair apart, or () when the sets fit in ``k``.

    Each set is one group while it fits in ``k``; a larger set is cut into runs of ``k``
    members, in its order.
    """
    if len(set_members(needs)) <= k:
        return ()
    groups = []
    for group in needs.sets:
        for start in range(0, len(group.members), k):
            groups.append(
                dataclasses.replace(
                    group,
                    members=group.members[start : start + k],
                    labels=group.labels[start : start + k],
                )
            )
    return tuple(groups)


def branch_needs(needs: QuestionNeeds, group: SetNeed) -> QuestionNeeds:
    """Return the needs of one branch: the question, asked of the group's members alone.

    The group's entity keeps the group's documents as its own; the question's other
    names belong to other branches.
    """
    entities = tuple(
        dataclasses.replace(e, targets=group.members) for e in needs.entities if e.key == group.key
    )
    return dataclasses.replace(needs, entities=entities, sets=(group,))


@dataclass(frozen=True)
class BranchResult:
    """What one branch's repair left: its k slots, its open gaps, its log."""

    group: SetNeed
    """The members it repaired."""
    slots: tuple[Slot, ...]
    """Its evidence set (at most k)."""
    gaps: tuple[Gap, ...]
    """Gaps its gate left open."""
    loops: int
    """Repair loops it ran."""
    stop: str
    """Why it stopped."""
    log: tuple[tuple[int, str, str, dict[str, Any]], ...] = ()
    """``(loop, kind, message, data)`` of each step, for the run's events."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict (kept in the graph state)."""
        return {
            "group": self.group.to_dict(),
            "slots": [
                {"chunk_id": s.chunk_id, "inserted_loop": s.inserted_loop} for s in self.slots
            ],
            "gaps": [g.to_dict() for g in self.gaps],
            "loops": self.loops,
            "stop": self.stop,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BranchResult:
        """Inverse of :meth:`to_dict` (the log is not kept)."""
        return cls(
            SetNeed.from_dict(data["group"]),
            tuple(Slot(s["chunk_id"], int(s["inserted_loop"])) for s in data["slots"]),
            tuple(Gap.from_dict(g) for g in data["gaps"]),
            int(data["loops"]),
            str(data["stop"]),
        )


def repair_branch(
    index: SearchIndex,
    knowledge: CorpusKnowledge,
    needs: QuestionNeeds,
    config: SealConfig,
    *,
    assess: Assess,
    plan: Plan,
) -> BranchResult:
    """Repair one branch: search, then gate, micro-queries and fixed-k replacement.

    The same steps as the graph's loop, with the branch's own k (``config.k``) and
    loop budget (``config.max_loops``).
    """
    hits = initial_hits(index, needs, config.k, config)
    slots = tuple(Slot(h.chunk_id, 0) for h in hits[: config.k])
    log = [(0, "retrieved", f"initial top-{config.k}", {"slots": [s.chunk_id for s in slots]})]
    items = knowledge.need_items(needs)
    issued: list[str] = []
    blocklist: set[str] = set()
    loop, stop = 0, ""
    while True:
        gaps = tuple(assess(needs, items, knowledge.features([s.chunk_id for s in slots])))
        log.extend((loop, "gap", g.reason, g.to_dict()) for g in gaps)
        if not gaps:
            stop = "sufficient: every need of the branch is covered"
            break
        if loop >= config.max_loops:
            stop = f"loop budget spent (L={config.max_loops})"
            break
        loop += 1
        queries = list(plan(needs, gaps, issued, config.max_micro_queries))
        issued.extend(q.text for q in queries)
        exclude = {s.chunk_id for s in slots} | blocklist
        found = gather_candidates(index, queries, config, exclude)
        log.extend((loop, "micro_query", q.text, {"candidates": found[q.text]}) for q in queries)
        pool = list(dict.fromkeys(c for ids in found.values() for c in ids))
        if not pool:
            stop = "micro-queries found no new passages"
            break
        slots, changed = _replace(
            knowledge, needs, items, slots, pool, config, (loop, len(queries)), blocklist, log
        )
        if not changed:
            stop = "no swap improves the evidence set"
            break
    return BranchResult(needs.sets[0], slots, gaps, loop, stop, tuple(log))


def _replace(
    knowledge: CorpusKnowledge,
    needs: QuestionNeeds,
    items: Sequence[NeedItem],
    slots: tuple[Slot, ...],
    pool: list[str],
    config: SealConfig,
    at: tuple[int, int],
    blocklist: set[str],
    log: list[tuple[int, str, str, dict[str, Any]]],
) -> tuple[tuple[Slot, ...], bool]:
    """Run one replacement step of a branch; log its decisions, blocklist what it evicts.

    ``at``: the loop, and how many micro-queries it issued (one change each at most).
    """
    loop, n_queries = at
    ids = [s.chunk_id for s in slots] + pool
    with coverage_memo():
        scorer = SetScorer(
            dict(zip(ids, knowledge.features(ids), strict=True)),
            items,
            knowledge.relevance(focus_text(needs.question), ids),
            config.utility,
        )
        step = repair_step(
            slots,
            pool,
            scorer,
            config,
            loop=loop,
            blocklist=frozenset(blocklist),
            n_queries=n_queries,
        )
    for d in step.result.decisions:
        log.append((loop, d.action, d.reason, {"candidate": d.candidate, "victim": d.victim}))
    blocklist.update(step.result.evicted)
    return step.result.evidence, step.result.changed


def merge_branches(
    results: Sequence[BranchResult], k: int
) -> tuple[tuple[Slot, ...], tuple[Gap, ...]]:
    """Merge the branches' sets into one evidence set; name every member it lacks.

    The set holds each branch's slots, branch by branch (at most ``k`` each); a member
    of a group whose branch left no passage of it is a gap ("missing_entity") that
    names it, so the answer says what the context lacks.
    """
    slots: dict[str, Slot] = {}
    for result in results:
        for slot in result.slots[:k]:
            slots.setdefault(slot.chunk_id, slot)
    return tuple(slots.values()), tuple(g for r in results for g in r.gaps)
