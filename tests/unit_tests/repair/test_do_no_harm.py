"""Do no harm: a swap must close a gap the victim does not; named initial passages are kept."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sealgraph.repair.replacement import Slot, harm_reason, replacement_step
from sealgraph.repair.utility import UtilityScore


def sc(
    chunk_id: str,
    total: float,
    *,
    gain: float | None = 0.0,
    doc_gain: float = 0.0,
    relation: float = 0.0,
    covers: tuple[float, ...] = (),
    named: bool = False,
) -> UtilityScore:
    return UtilityScore(
        chunk_id,
        0.0,
        0.0,
        0.0,
        0.0,
        total,
        need_gain=gain,
        doc_gain=doc_gain,
        relation=relation,
        covers=covers,
        named=named,
    )


def test_a_candidate_that_closes_nothing_more_than_the_victim_loses_is_refused():
    why = harm_reason(Slot("v", 0), sc("v", 0.1, gain=0.5), sc("c", 0.9, gain=0.5))
    assert "closes no gap" in why
    assert harm_reason(Slot("v", 0), sc("v", 0.1, gain=0.0), sc("c", 0.9, gain=0.4)) == ""


def test_a_passage_serving_nothing_may_give_way_to_a_better_corroborated_one():
    # Neither covers a need: the utility decides, as without the rules.
    assert harm_reason(Slot("v", 0), sc("v", 0.1, gain=0.0), sc("c", 0.9, gain=0.0)) == ""
    # A passage of a named document serves the question even when it covers no gap.
    named = sc("v", 0.1, gain=0.0, named=True, covers=(1.0,))
    assert "closes no gap" in harm_reason(Slot("v", 1), named, sc("c", 0.9, gain=0.0))


def test_a_named_passage_stating_more_relation_words_goes_only_for_a_needed_document():
    victim = sc("v", 0.1, relation=0.8, named=True, covers=(1.0,))
    words_only = sc("c", 0.9, gain=0.3, relation=0.4, covers=(1.0,))
    assert "relation words" in harm_reason(Slot("v", 1), victim, words_only)
    document = sc("c", 0.9, gain=1.0, doc_gain=1.0, relation=0.4, covers=(0.0,))
    assert harm_reason(Slot("v", 1), victim, document) == ""
    # A passage of a document the question does not name has no such protection.
    other = sc("v", 0.1, relation=0.8, covers=(0.0,))
    assert harm_reason(Slot("v", 1), other, words_only) == ""


def test_initial_passages_of_a_named_document_need_a_candidate_covering_strictly_more():
    victim = sc("v", 0.1, relation=0.2, named=True, covers=(1.0, 0.0))
    same = sc("c", 0.9, gain=0.2, relation=0.5, covers=(1.0, 0.0))
    assert "covers strictly more" in harm_reason(Slot("v", 0), victim, same)
    # Inserted by a repair loop, the same passage is not protected.
    assert harm_reason(Slot("v", 1), victim, same) == ""
    more = sc("c", 0.9, gain=0.2, relation=0.5, covers=(1.0, 1.0))
    assert harm_reason(Slot("v", 0), victim, more) == ""


def test_scores_without_need_coverage_are_not_judged():
    assert harm_reason(Slot("v", 0), sc("v", 0.1, gain=None), sc("c", 0.9, gain=None)) == ""


class Scores:
    def __init__(self, members: dict[str, UtilityScore], cands: dict[str, UtilityScore]):
        self.members, self.cands = members, cands

    def score_set(self, ids: Sequence[str]) -> dict[str, UtilityScore]:
        return {i: self.members[i] for i in ids}

    def score_candidate(self, cid: str, ids: Sequence[str]) -> UtilityScore:
        return self.cands[cid]


def test_when_the_weakest_may_not_go_the_next_weakest_is_tried():
    members = {
        "named#0": sc("named#0", 0.1, relation=0.5, named=True, covers=(1.0,)),
        "other#0": sc("other#0", 0.2, covers=(0.0,)),
        "named#1": sc("named#1", 0.6, gain=1.0, named=True, covers=(1.0,)),
    }
    cands = {"named#7": sc("named#7", 0.5, gain=0.3, relation=0.9, covers=(1.0,), named=True)}
    s = Scores(members, cands)
    result = replacement_step(
        [Slot(i, 0) for i in members],
        ["named#7"],
        k=3,
        loop=1,
        dwell=1,
        epsilon=0.02,
        score_set=s.score_set,
        score_candidate=s.score_candidate,
        max_swaps=1,
    )
    # The weakest is an initial passage of the named document: the other one goes.
    assert result.evicted == ("other#0",)
    assert [x.chunk_id for x in result.evidence] == ["named#0", "named#7", "named#1"]


def test_every_victim_protected_refuses_with_the_reason():
    members = {"named#0": sc("named#0", 0.1, relation=0.5, named=True, covers=(1.0,))}
    cands = {"other#3": sc("other#3", 0.9, gain=0.2, covers=(0.0,))}
    s = Scores(members, cands)
    result = replacement_step(
        [Slot("named#0", 0)],
        ["other#3"],
        k=1,
        loop=1,
        dwell=1,
        epsilon=0.02,
        score_set=s.score_set,
        score_candidate=s.score_candidate,
    )
    assert not result.changed
    assert result.decisions[0].action == "refuse"
    assert result.decisions[0].reason.startswith("do no harm")


POLICIES = {
    "alpha.md": "# Alpha Notes\n\n"
    + "\n\n".join(
        f"## Part {i}\n\nAlpha Notes {topic} your data for {i} reasons and keeps a record."
        for i, topic in enumerate(["shares", "stores", "deletes", "encrypts", "exports"])
    ),
    "beta.md": "# Beta Mail\n\n"
    + "\n\n".join(
        f"## Part {i}\n\nBeta Mail shares your data with partners who see {i} fields."
        for i in range(5)
    ),
}


def test_the_graph_keeps_the_named_documents_initial_chunks(tmp_path: Path):
    from sealgraph.graph.builder import build_graph
    from sealgraph.index import build_index

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in POLICIES.items():
        (docs / name).write_text(text, encoding="utf-8")
    index = build_index(
        docs, tmp_path / "index", embedder="none", max_chunk_tokens=24, warn=lambda _: None
    )
    question = 'Consider "Alpha Notes"\'s privacy policy; who sees my data?'
    result = build_graph(index=index, config={"k": 3}).invoke({"question": question})
    (retrieved,) = [e for e in result["seal_log"] if e["kind"] == "retrieved"]
    initial = [h["chunk_id"] for h in retrieved["data"]["hits"]][:3]
    named = [c for c in initial if index.get_chunk(c).doc_id == "alpha.md"]
    kept = [e["chunk_id"] for e in result["evidence"]]
    assert named and set(named) <= set(kept)
