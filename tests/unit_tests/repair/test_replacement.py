"""Fixed-k replacement: hysteresis, dwell guard, blocklist, victim choice, fill and expansion."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.runtime import Runtime

from sealgraph.config import SealConfig
from sealgraph.graph.context import RunContext
from sealgraph.ledger.knowledge import CorpusKnowledge
from sealgraph.ledger.needs import question_needs
from sealgraph.nodes.assess import assess as assess_node
from sealgraph.nodes.micro_query import micro_query as micro_query_node
from sealgraph.nodes.replace import replace as replace_node
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.repair.replacement import (
    Slot,
    evict_victim,
    expansion_step,
    protected,
    replacement_step,
)
from sealgraph.repair.utility import UtilityScore
from sealgraph.text.names import content_words, normalize_name
from sealgraph.types import Chunk, Hit


def score(chunk_id: str, total: float) -> UtilityScore:
    return UtilityScore(chunk_id, 0.0, 0.0, 0.0, 0.0, total)


class Table:
    """Set-independent utilities: S(c) is a fixed number per passage."""

    def __init__(self, totals: dict[str, float]) -> None:
        self.totals = totals
        self.candidate_calls: list[tuple[str, tuple[str, ...]]] = []

    def score_set(self, ids: Sequence[str]) -> dict[str, UtilityScore]:
        return {i: score(i, self.totals[i]) for i in ids}

    def score_candidate(self, cid: str, ids: Sequence[str]) -> UtilityScore:
        self.candidate_calls.append((cid, tuple(ids)))
        return score(cid, self.totals[cid])


def step(evidence, candidates, totals, *, k=3, loop=1, dwell=1, epsilon=0.05, **kw):
    table = Table(totals)
    return replacement_step(
        evidence,
        candidates,
        k=k,
        loop=loop,
        dwell=dwell,
        epsilon=epsilon,
        score_set=table.score_set,
        score_candidate=table.score_candidate,
        **kw,
    )


def ids(slots) -> list[str]:
    return [s.chunk_id for s in slots]


FULL = [Slot("a", 0), Slot("b", 0), Slot("c", 0)]


# --- hand-made cases ---------------------------------------------------------------------


def test_swap_evicts_the_lowest_utility_passage():
    res = step(FULL, ["x"], {"a": 0.9, "b": 0.1, "c": 0.5, "x": 0.8}, max_swaps=1)
    assert ids(res.evidence) == ["a", "x", "c"]  # x takes b's slot
    assert res.evicted == ("b",)
    (d,) = res.decisions
    assert (d.action, d.candidate, d.victim) == ("swap", "x", "b")
    assert d.candidate_score.total == 0.8 and d.victim_score.total == 0.1
    assert res.changed
    assert res.evidence[1] == Slot("x", 1)


def test_hysteresis_refuses_a_marginal_improvement():
    totals = {"a": 0.9, "b": 0.5, "c": 0.7, "x": 0.54}
    res = step(FULL, ["x"], totals, epsilon=0.05)
    assert ids(res.evidence) == ["a", "b", "c"]
    assert res.evicted == ()
    (d,) = res.decisions
    assert (d.action, d.candidate, d.victim) == ("refuse", "x", "b")
    assert "<=" in d.reason and "ε=0.05" in d.reason
    assert not res.changed
    # Just above the margin, it swaps.
    assert step(FULL, ["x"], {**totals, "x": 0.56}, epsilon=0.05).evicted == ("b",)


def test_equal_scores_never_swap_even_without_margin():
    res = step(FULL, ["x"], {"a": 0.5, "b": 0.5, "c": 0.5, "x": 0.5}, epsilon=0.0)
    assert res.evicted == () and not res.changed


def test_passages_within_dwell_time_are_never_evicted():
    evidence = [Slot("a", 0), Slot("new", 2), Slot("c", 0)]
    totals = {"a": 0.6, "new": 0.0, "c": 0.5, "x": 0.9}
    # Loop 2, dwell 1: "new" entered this loop and is protected; c is the victim.
    res = step(evidence, ["x"], totals, loop=2, dwell=1, max_swaps=1)
    assert res.evicted == ("c",)
    # Loop 3, dwell 2: still protected.
    assert step(evidence, ["x"], totals, loop=3, dwell=2, max_swaps=1).evicted == ("c",)
    # Loop 3, dwell 1: its dwell time is over; it is the weakest.
    assert step(evidence, ["x"], totals, loop=3, dwell=1, max_swaps=1).evicted == ("new",)


def test_initial_passages_are_never_protected():
    assert not protected(Slot("a", 0), loop=1, dwell=5)
    assert protected(Slot("a", 1), loop=1, dwell=1)
    assert not protected(Slot("a", 1), loop=1, dwell=0)


def test_all_protected_refuses():
    evidence = [Slot("a", 1), Slot("b", 1)]
    res = step(evidence, ["x"], {"a": 0.0, "b": 0.0, "x": 1.0}, k=2, loop=1, dwell=1)
    assert ids(res.evidence) == ["a", "b"]
    (d,) = res.decisions
    assert d.action == "refuse"
    assert d.reason == "every passage is protected by the dwell guard"
    assert d.candidate == "x" and d.victim is None


def test_swapped_in_passage_is_protected_for_the_rest_of_the_step():
    # Two strong candidates and dwell=1: the second may not evict the first newcomer.
    totals = {"a": 0.9, "b": 0.1, "c": 0.2, "x": 0.3, "y": 0.25}
    res = step(FULL, ["x", "y"], totals, epsilon=0.0, max_swaps=3)
    assert res.evicted == ("b", "c")
    assert ids(res.evidence) == ["a", "x", "y"]


def test_blocklisted_and_member_candidates_are_ignored():
    totals = {"a": 0.9, "b": 0.1, "c": 0.5, "gone": 5.0, "x": 0.6}
    res = step(FULL, ["gone", "a", "x", "x"], totals, blocklist=frozenset({"gone"}))
    assert "gone" not in ids(res.evidence)
    assert res.evicted == ("b",)
    assert ids(res.evidence) == ["a", "x", "c"]


def test_evicted_passage_never_re_enters():
    totals = {"a": 0.9, "b": 0.1, "c": 0.5, "x": 0.8}
    first = step(FULL, ["x", "b"], totals, max_swaps=1)
    assert first.evicted == ("b",)
    # Next loop b is retrieved again and would now win, but the blocklist keeps it out.
    second = step(
        first.evidence, ["b"], {**totals, "b": 5.0}, loop=2, blocklist=frozenset(first.evicted)
    )
    assert "b" not in ids(second.evidence)
    assert [d.reason for d in second.decisions] == ["no new candidate passages"]


def test_no_candidates_refuses():
    res = step(FULL, [], {"a": 1, "b": 1, "c": 1})
    (d,) = res.decisions
    assert (d.action, d.reason) == ("refuse", "no new candidate passages")
    assert not res.changed


def test_fill_when_the_set_is_short():
    res = step([Slot("a", 0)], ["x", "y", "z"], {"a": 0.9, "x": 0.1, "y": 0.5, "z": -1.0}, k=3)
    assert [d.action for d in res.decisions[:2]] == ["fill", "fill"]
    assert ids(res.evidence) == ["a", "y", "x"]  # best first; a low score still fills
    assert res.evicted == ()
    assert "< k=3" in res.decisions[0].reason


def test_victim_ties_evict_the_latest_then_the_smallest_id():
    scores = {"a": score("a", 0.1), "b": score("b", 0.1), "c": score("c", 0.1)}
    slots = [Slot("b", 0), Slot("a", 0), Slot("c", 1)]
    assert evict_victim(slots, scores, loop=3, dwell=1) == Slot("c", 1)
    assert evict_victim(slots[:2], scores, loop=3, dwell=1) == Slot("a", 0)
    assert evict_victim([Slot("c", 3)], scores, loop=3, dwell=1) is None


def test_candidate_is_rescored_against_the_set_it_would_join():
    # y is redundant with b; once b is the victim, y scores high against the rest.
    def score_set(set_ids):
        return {i: score(i, {"a": 0.9, "b": 0.2, "c": 0.8}[i]) for i in set_ids}

    def score_candidate(cid, set_ids):
        if cid == "y":
            return score("y", 0.1 if "b" in set_ids else 0.7)
        return score("x", 0.4)

    res = replacement_step(
        FULL,
        ["x", "y"],
        k=3,
        loop=1,
        dwell=1,
        epsilon=0.05,
        score_set=score_set,
        score_candidate=score_candidate,
        max_swaps=1,
    )
    (d,) = res.decisions
    assert (d.action, d.candidate, d.victim) == ("swap", "y", "b")
    assert d.candidate_score.total == 0.7


def test_expansion_appends_without_evicting():
    table = Table({"a": 0.0, "b": 0.0, "x": 0.3, "y": 0.9, "z": 0.5, "gone": 9.0})
    res = expansion_step(
        [Slot("a", 0), Slot("b", 0)],
        ["x", "y", "z", "a", "gone"],
        loop=2,
        n_add=2,
        score_candidate=table.score_candidate,
        blocklist=frozenset({"gone"}),
    )
    assert ids(res.evidence) == ["a", "b", "y", "z"]
    assert res.evicted == ()
    assert [d.action for d in res.decisions] == ["append", "append"]
    assert res.evidence[-1] == Slot("z", 2)
    empty = expansion_step(
        [Slot("a", 0)], ["a"], loop=1, n_add=2, score_candidate=table.score_candidate
    )
    assert [d.action for d in empty.decisions] == ["refuse"] and not empty.changed


# --- properties over random utility tables ---------------------------------------------


@st.composite
def scenarios(draw):
    k = draw(st.integers(1, 5))
    loop = draw(st.integers(1, 4))
    n_evidence = draw(st.integers(0, k))
    evidence = [Slot(f"e{i}", draw(st.integers(0, loop))) for i in range(n_evidence)]
    n_new = draw(st.integers(0, 6))
    new = [f"c{j}" for j in range(n_new)]
    universe = [*new, *ids(evidence)]
    candidates = draw(st.lists(st.sampled_from(universe), max_size=10)) if universe else []
    blocklist = frozenset(draw(st.lists(st.sampled_from(new), max_size=3)) if new else [])
    value = st.integers(-100, 100).map(lambda v: v / 100)
    totals = {i: draw(value) for i in [*ids(evidence), *new]}
    return {
        "evidence": evidence,
        "candidates": candidates,
        "totals": totals,
        "k": k,
        "loop": loop,
        "dwell": draw(st.integers(0, 3)),
        "epsilon": draw(st.sampled_from([0.0, 0.01, 0.05, 0.3])),
        "max_swaps": draw(st.integers(1, 4)),
        "blocklist": blocklist,
    }


def run(sc):
    return step(
        sc["evidence"],
        sc["candidates"],
        sc["totals"],
        k=sc["k"],
        loop=sc["loop"],
        dwell=sc["dwell"],
        epsilon=sc["epsilon"],
        max_swaps=sc["max_swaps"],
        blocklist=sc["blocklist"],
    )


@settings(max_examples=150, deadline=None, derandomize=True)
@given(scenarios())
def test_set_size_never_exceeds_k_and_stays_k(sc):
    res = run(sc)
    out = ids(res.evidence)
    assert len(out) <= sc["k"]
    assert len(set(out)) == len(out)
    before = ids(sc["evidence"])
    pool = [
        c for c in dict.fromkeys(sc["candidates"]) if c not in sc["blocklist"] and c not in before
    ]
    if len(before) == sc["k"]:
        assert len(out) == sc["k"]
    else:
        # Fill while short: one new passage per decision, up to k.
        assert len(out) == len(before) + min(sc["k"] - len(before), len(pool), sc["max_swaps"])


@settings(max_examples=150, deadline=None, derandomize=True)
@given(scenarios())
def test_decisions_obey_hysteresis_dwell_and_victim_rules(sc):
    res = run(sc)
    totals, eps, loop, dwell = sc["totals"], sc["epsilon"], sc["loop"], sc["dwell"]
    current = list(sc["evidence"])
    entered: set[str] = set()
    for d in res.decisions:
        if d.action == "fill":
            assert len(current) < sc["k"]
            current.append(Slot(d.candidate, loop))
            entered.add(d.candidate)
        elif d.action == "swap":
            assert totals[d.candidate] > totals[d.victim] + eps
            unprotected = [s for s in current if not protected(s, loop, dwell)]
            victim = next(s for s in current if s.chunk_id == d.victim)
            assert victim in unprotected
            assert totals[d.victim] == min(totals[s.chunk_id] for s in unprotected)
            current = [Slot(d.candidate, loop) if s == victim else s for s in current]
            entered.add(d.candidate)
        else:
            assert d.action == "refuse"
            if d.victim is not None:
                assert totals[d.candidate] <= totals[d.victim] + eps
    assert current == list(res.evidence)
    # Nothing blocklisted or evicted is in the set; evicted passages were members.
    out = set(ids(res.evidence))
    assert not out & sc["blocklist"]
    assert not out & set(res.evicted)
    assert set(res.evicted) <= set(ids(sc["evidence"])) | entered
    # Protected incumbents survive.
    for s in sc["evidence"]:
        if protected(s, loop, dwell):
            assert s.chunk_id in out


@settings(max_examples=100, deadline=None, derandomize=True)
@given(scenarios())
def test_no_swap_when_no_candidate_beats_the_weakest_by_epsilon(sc):
    full = len(sc["evidence"]) == sc["k"]
    before = ids(sc["evidence"])
    pool = [c for c in sc["candidates"] if c not in sc["blocklist"] and c not in before]
    open_slots = [s for s in sc["evidence"] if not protected(s, sc["loop"], sc["dwell"])]
    if not (full and pool and open_slots):
        return
    weakest = min(sc["totals"][s.chunk_id] for s in open_slots)
    best = max(sc["totals"][c] for c in pool)
    res = run(sc)
    if best > weakest + sc["epsilon"]:
        assert res.decisions[0].action == "swap"
    else:
        assert res.evidence == tuple(sc["evidence"])
        assert [d.action for d in res.decisions] == ["refuse"]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(scenarios(), st.integers(0, 4))
def test_expansion_never_evicts(sc, n_add):
    table = Table(sc["totals"])
    res = expansion_step(
        sc["evidence"],
        sc["candidates"],
        loop=sc["loop"],
        n_add=n_add,
        score_candidate=table.score_candidate,
        blocklist=sc["blocklist"],
    )
    assert list(res.evidence[: len(sc["evidence"])]) == list(sc["evidence"])
    added = ids(res.evidence[len(sc["evidence"]) :])
    assert len(added) <= n_add and res.evicted == ()
    assert not set(added) & sc["blocklist"]
    assert len(set(ids(res.evidence))) == len(res.evidence)


# --- loop stopping rules of the graph nodes (tiny in-memory index) ----------------------


class TinyIndex:
    """The few index methods the assess, micro_query and replace nodes call."""

    def __init__(self, docs: dict[str, tuple[str, list[str]]]) -> None:
        self.chunks = {}
        self._titles = []
        self._doc_chunks = {}
        for doc_id, (title, texts) in docs.items():
            self._titles.append((doc_id, title))
            self._doc_chunks[doc_id] = []
            for i, text in enumerate(texts):
                c = Chunk(f"{doc_id}#{i}", doc_id, title, (), i, 0, len(text), text, 10)
                self.chunks[c.chunk_id] = c
                self._doc_chunks[doc_id].append(c)
        self.has_dense = False
        self.path = Path("tiny-index")  # in memory: never read, the manifest lists no files
        self.manifest = {}

    def titles(self):
        return list(self._titles)

    def headings(self):
        return []

    def get_chunk(self, chunk_id):
        return self.chunks[chunk_id]

    def get_chunks(self, chunk_ids):
        return [self.chunks[c] for c in chunk_ids]

    def doc_chunks(self, doc_id):
        return list(self._doc_chunks.get(doc_id, []))

    def iter_chunks(self):
        return iter([c for chunks in self._doc_chunks.values() for c in chunks])

    @property
    def n_chunks(self):
        return sum(len(v) for v in self._doc_chunks.values())

    def score_lexical(self, query, chunk_ids):
        q = set(content_words(query))
        return np.array(
            [float(len(q & set(content_words(self.chunks[c].text)))) for c in chunk_ids]
        )

    def lookup_title(self, name):
        key = normalize_name(name)
        return [
            c.chunk_id
            for d, t in self._titles
            if normalize_name(t) == key
            for c in self._doc_chunks[d]
        ]

    def search_hybrid(self, query, k, retrieval=None):
        ids = list(self.chunks)
        scores = self.score_lexical(query, ids)
        order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
        return [
            Hit(ids[i], float(scores[i]), r, "lexical")
            for r, i in enumerate(order[:k])
            if scores[i] > 0
        ]


INDEX = TinyIndex(
    {
        "lit": (
            "Lost in Fogland (film)",
            ["Lost in Fogland is a 2003 film directed by Mira Castellan."],
        ),
        "castellan": ("Mira Castellan", ["Mira Castellan was born in May 1971."]),
        "tokyo": ("Tokyo", ["Tokyo is a large city."]),
    }
)


def run_with(cfg: SealConfig) -> Runtime[RunContext]:
    """The runtime a node gets in a run of a graph built over INDEX with ``cfg``."""
    return Runtime(context=RunContext.build(INDEX, OfflineReasoner(), cfg))


QUESTION = "What year was the director of Lost in Fogland born?"


def node_state(slots, loop=0, **extra):
    needs = question_needs(QUESTION, CorpusKnowledge(INDEX).gazetteer)
    return {
        "question": QUESTION,
        "needs": needs.to_dict(),
        "slots": [{"chunk_id": c, "inserted_loop": 0} for c in slots],
        "ledger": {},
        "loop": loop,
        **extra,
    }


def test_assess_stops_when_sufficient():
    out = assess_node(node_state(["lit#0", "castellan#0"]), run_with(SealConfig()))
    assert out["sufficient"] and out["gaps"] == []
    assert out["stop_reason"].startswith("sufficient")


def test_assess_stops_when_the_loop_budget_is_spent():
    cfg = SealConfig(max_loops=2)
    out = assess_node(node_state(["lit#0"], loop=2), run_with(cfg))
    assert not out["sufficient"] and out["gaps"]
    assert out["stop_reason"] == "loop budget spent (L=2)"
    # With loops left, the gaps send the graph on to micro-queries.
    assert assess_node(node_state(["lit#0"], loop=1), run_with(cfg))["stop_reason"] == ""
    # L = 0: no repair loop at all.
    out = assess_node(node_state(["lit#0"]), run_with(SealConfig(max_loops=0)))
    assert out["stop_reason"] == "loop budget spent (L=0)"


def test_micro_query_stops_when_no_new_query_is_left():
    gaps = assess_node(node_state(["lit#0"]), run_with(SealConfig()))["gaps"]
    first = micro_query_node(node_state(["lit#0"], gaps=gaps, issued=[]), run_with(SealConfig()))
    assert first["queries"] and "stop_reason" not in first
    assert "castellan#0" in {c for ids in first["candidates"].values() for c in ids}
    again = micro_query_node(
        node_state(["lit#0"], loop=1, gaps=gaps, issued=first["issued"]), run_with(SealConfig())
    )
    assert again["queries"] == []
    assert again["stop_reason"] == "no new micro-queries"


def test_replace_stops_when_no_swap_improves():
    cfg = SealConfig(k=2)
    state = node_state(
        ["lit#0", "castellan#0"],
        loop=1,
        candidates={"tokyo": ["tokyo#0"]},
        queries=[{"text": "tokyo"}],
    )
    out = replace_node(state, run_with(cfg))
    assert [s["chunk_id"] for s in out["slots"]] == ["lit#0", "castellan#0"]
    assert out["stop_reason"] == "no swap improves the evidence set"
    # A candidate that closes the bridge gap replaces the weak passage and the loop goes on.
    state = node_state(
        ["lit#0", "tokyo#0"], loop=1, candidates={"q": ["castellan#0"]}, queries=[{"text": "q"}]
    )
    out = replace_node(state, run_with(cfg))
    assert [s["chunk_id"] for s in out["slots"]] == ["lit#0", "castellan#0"]
    assert out["blocklist"] == ["tokyo#0"]
    assert "stop_reason" not in out
