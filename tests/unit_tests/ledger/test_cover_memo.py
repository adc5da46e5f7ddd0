"""The scoped coverage memo and the shortcut of needs a passage is graded for alone."""

from __future__ import annotations

import itertools

from sealgraph.config import UtilityWeights
from sealgraph.ledger._cover_memo import memoised, remember
from sealgraph.ledger.extract import PassageFeatures, passage_features
from sealgraph.ledger.gaps import (
    NeedItem,
    cover,
    coverage,
    coverage_memo,
    gap_spec,
    graded_alone,
    need_items,
    set_cover,
)
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.needs import question_needs
from sealgraph.repair.utility import score_set, utility
from sealgraph.types import Chunk

GAZ = Gazetteer(
    [
        ("outage", "Harbor Outage"),
        ("stream", "Kelp Stream"),
        ("team", "Data Team"),
        ("quill", "Ada Quill"),
    ]
)
QUESTION = "Who leads the team that owns the system whose lag caused the Harbor Outage?"


def feat(chunk_id: str, doc_id: str, title: str, text: str) -> PassageFeatures:
    chunk = Chunk(chunk_id, doc_id, title, (), 0, 0, len(text), text, 10, ((0, len(text)),))
    return passage_features(chunk, GAZ)


PASSAGES = [
    feat("o#0", "outage", "Harbor Outage", "The root cause was lag on the Kelp Stream."),
    feat("s#0", "stream", "Kelp Stream", "The Kelp Stream is owned by the Data Team."),
    feat("t#0", "team", "Data Team", "Ada Quill leads the Data Team."),
    feat("t#1", "team", "Data Team", "The Data Team runs the brokers."),
    feat("q#0", "quill", "Ada Quill", "Ada Quill was born in 1980 and leads teams."),
]
ITEMS = need_items(question_needs(QUESTION, GAZ))


def counting(context_of=None):
    calls: list[tuple[str, str]] = []

    @memoised(context_of)
    def grade(item, passage, context, items):
        calls.append((passage.chunk_id, item.kind))
        return float(len(context))

    return grade, calls


def test_outside_a_block_every_call_computes():
    grade, calls = counting()
    grade(ITEMS[0], PASSAGES[0], PASSAGES[:2], ITEMS)
    grade(ITEMS[0], PASSAGES[0], PASSAGES[:2], ITEMS)
    assert len(calls) == 2


def test_inside_a_block_a_key_is_computed_once_and_forgotten_after():
    grade, calls = counting()
    with coverage_memo():
        assert grade(ITEMS[0], PASSAGES[0], PASSAGES[:2], ITEMS) == 2.0
        # The context is a set: another order is the same key.
        assert grade(ITEMS[0], PASSAGES[0], PASSAGES[1::-1], ITEMS) == 2.0
        with coverage_memo():  # nested blocks share the outer memo
            grade(ITEMS[0], PASSAGES[0], PASSAGES[:2], ITEMS)
        grade(ITEMS[0], PASSAGES[0], PASSAGES[:3], ITEMS)
        grade(ITEMS[1], PASSAGES[0], PASSAGES[:2], ITEMS)
    assert len(calls) == 3
    with coverage_memo():
        grade(ITEMS[0], PASSAGES[0], PASSAGES[:2], ITEMS)
    assert len(calls) == 4


def test_a_narrowed_context_shares_grades_between_sets_that_differ_elsewhere():
    grade, calls = counting(lambda item, passage, context, items: context[:1])
    with coverage_memo():
        grade(ITEMS[0], PASSAGES[0], PASSAGES[:2], ITEMS)
        grade(ITEMS[0], PASSAGES[0], PASSAGES[:4], ITEMS)
    assert len(calls) == 1


def test_remember_holds_what_its_key_names():
    kept = [object()]
    with coverage_memo():
        assert remember(("k", id(kept[0])), (kept[0],), lambda: 1) == 1
        assert remember(("k", id(kept[0])), (kept[0],), lambda: 2) == 1
    assert remember(("k", id(kept[0])), (kept[0],), lambda: 3) == 3


def test_memoised_grades_equal_the_plain_ones():
    sets = [list(s) for n in range(1, 5) for s in itertools.combinations(PASSAGES, n)]

    def grades():
        return [
            (
                coverage(ITEMS, s),
                [cover(it, p, s, ITEMS) for it in ITEMS for p in s],
                [g.to_dict() for g in gap_spec(question_needs(QUESTION, GAZ), ITEMS, s)],
                [u.to_dict() for u in score_set(s, ITEMS, {}, UtilityWeights()).values()],
            )
            for s in sets
        ]

    plain = grades()
    with coverage_memo():
        assert grades() == plain
        assert grades() == plain  # and again from the memo


def test_graded_alone_needs_take_the_better_of_the_set_and_the_passage():
    # Every item, every passage, every set without it: when the passage is graded
    # alone, the set's coverage with it is the better of the two.
    seen = set()
    for it, p in itertools.product(ITEMS, PASSAGES):
        rest = [o for o in PASSAGES if o is not p]
        for n in range(len(rest) + 1):
            for s in itertools.combinations(rest, n):
                if graded_alone(it, p, ITEMS):
                    seen.add(it.kind)
                    with_p = [*s, p]
                    expected = max(set_cover(it, s, ITEMS), cover(it, p, with_p, ITEMS))
                    assert set_cover(it, with_p, ITEMS) == expected
    assert {"entity", "bridge"} <= seen


def test_graded_alone_by_kind():
    entity = NeedItem("entity", "kelp stream", "Kelp Stream", ("stream",))
    bridge = NeedItem("bridge", "harbor outage", "Harbor Outage", ("outage",))
    anchor, hop = PASSAGES[0], PASSAGES[1]
    items = [NeedItem("entity", "harbor outage", "Harbor Outage", ("outage",)), bridge]
    assert graded_alone(entity, anchor, items)
    # An anchor changes the bridge grades of the rest; another passage does not.
    assert not graded_alone(bridge, anchor, items)
    assert graded_alone(bridge, hop, items)
    # A question that names no document: every passage may link to every other.
    assert not graded_alone(bridge, hop, [bridge])
    assert not graded_alone(NeedItem("chain", "", ""), hop, items)
    assert not graded_alone(NeedItem("terms", "lead", "leads"), hop, items)


def test_utility_scores_are_the_same_inside_a_memo():
    weights = UtilityWeights(novelty=0.2)
    plain = [
        utility(p, [o for o in PASSAGES if o is not p][:n], ITEMS, {}, weights).to_dict()
        for p in PASSAGES
        for n in range(5)
    ]
    with coverage_memo():
        memo = [
            utility(p, [o for o in PASSAGES if o is not p][:n], ITEMS, {}, weights).to_dict()
            for p in PASSAGES
            for n in range(5)
        ]
    assert memo == plain
