"""Need support in packing: units of chunks that serve no need of the question are penalised."""

from __future__ import annotations

import pytest
from support.fakes import make_doc

from sealgraph.graph.steps import need_support
from sealgraph.ledger.extract import PassageFeatures
from sealgraph.ledger.gaps import NeedItem
from sealgraph.packing import PackConfig, collect_units, pack, score_units
from sealgraph.text.tokens import token_counter

COUNTER = token_counter()

HOTEL = [
    "The Grand Marlow is a hotel in Aldport opened in 1921. ",
    "Its architect was Edwin Vale. ",
    "The hotel has ninety rooms.",
]
VALE = [
    "Edwin Vale was an architect born in Kestow. ",
    "He designed three railway stations. ",
    "Vale retired in 1950.",
]
MARLOW = [
    "Marlow Park is a garden in Aldport opened in 1930. ",
    "The park was designed by a hotel architect. ",
    "It has a lake.",
]
QUESTION = "Where was the architect of the Grand Marlow hotel in Aldport born?"


def make_chunks(doc_id, title, sentences, per_chunk=None):
    """Zero-overlap chunks of one document, ``per_chunk`` sentences each."""
    return make_doc(doc_id, title, sentences, per_chunk=per_chunk)[1]


def evidence():
    return (
        make_chunks("hotel", "Grand Marlow", HOTEL)
        + make_chunks("vale", "Edwin Vale", VALE)
        + make_chunks("park", "Marlow Park", MARLOW)
    )


def priors_by_doc(chunks, chunk_support, config=None):
    units = [u for d in collect_units(chunks) for u in d.units]
    scores = score_units(QUESTION, units, None, config or PackConfig(), chunk_support=chunk_support)
    out: dict[str, list[float]] = {}
    for u, p in zip(units, scores.prior, strict=True):
        out.setdefault(u.doc_id, []).append(p)
    return out


def test_units_of_an_unsupported_chunk_lose_the_penalty_in_their_prior():
    chunks = evidence()
    plain = priors_by_doc(chunks, None)
    support = {"hotel#0": 1.0, "vale#0": 0.8, "park#0": 0.0}
    supported = priors_by_doc(chunks, support)
    assert supported["hotel"] == plain["hotel"]
    assert supported["vale"] == plain["vale"]
    assert supported["park"] == pytest.approx(
        [p - PackConfig().unsupported_penalty for p in plain["park"]]
    )


def test_min_need_support_is_the_threshold_and_the_penalty_is_configurable():
    chunks = evidence()
    plain = priors_by_doc(chunks, None)
    config = PackConfig(min_need_support=0.6, unsupported_penalty=0.5)
    got = priors_by_doc(chunks, {"hotel#0": 0.6, "vale#0": 0.59, "park#0": 1.0}, config)
    assert got["hotel"] == plain["hotel"]
    assert got["vale"] == pytest.approx([p - 0.5 for p in plain["vale"]])
    assert got["park"] == plain["park"]


def test_neighbour_chunks_take_their_documents_support_and_unknown_documents_none():
    chunks = make_chunks("vale", "Edwin Vale", VALE, per_chunk=1) + make_chunks(
        "park", "Marlow Park", MARLOW
    )
    # Only the middle chunk of "vale" was assessed; its neighbours continue its text.
    plain = priors_by_doc(chunks, None)
    got = priors_by_doc(chunks, {"vale#1": 0.0})
    assert got["vale"] == pytest.approx(
        [p - PackConfig().unsupported_penalty for p in plain["vale"]]
    )
    assert got["park"] == plain["park"]


def test_without_a_signal_or_with_full_support_packing_is_unchanged():
    chunks = evidence()
    plain = pack(QUESTION, chunks, budget=400, counter=COUNTER)
    assert pack(QUESTION, chunks, budget=400, counter=COUNTER, chunk_support=None) == plain
    full = {c.chunk_id: 1.0 for c in chunks}
    assert pack(QUESTION, chunks, budget=400, counter=COUNTER, chunk_support=full) == plain


def test_an_unsupported_distractor_is_left_out_and_still_traced():
    chunks = evidence()
    no_fill = PackConfig(fill=False)  # the bubble stage alone
    plain = pack(QUESTION, chunks, budget=400, counter=COUNTER, config=no_fill)
    assert "Marlow Park is a garden" in plain.context
    support = {"hotel#0": 1.0, "vale#0": 1.0, "park#0": 0.0}
    # A penalty large enough to sink this distractor's lead sentence below the threshold.
    config = PackConfig(unsupported_penalty=0.4, fill=False)
    result = pack(
        QUESTION, chunks, budget=400, counter=COUNTER, chunk_support=support, config=config
    )
    assert "Marlow Park is a garden" not in result.context
    assert "born in Kestow" in result.context
    assert result.tokens < plain.tokens
    # The distractor's text is still accounted for in the trace, as a gap.
    park = [d for d in result.trace if d.doc_id == "park"]
    assert park and all(d.decision == "low_relevance" for d in park)


def features(chunk_id, doc_id):
    return PassageFeatures(chunk_id, doc_id, doc_id, doc_id, (), (), frozenset())


def test_need_support_is_the_best_need_coverage_of_each_passage():
    feats = [features("a#0", "a"), features("b#0", "b")]
    items = [NeedItem("entity", "a", "A", ("a",)), NeedItem("terms", "born", "born")]
    assert need_support(items, feats) == {"a#0": 1.0, "b#0": 0.0}


def test_need_support_is_none_when_no_need_tells_passages_apart():
    feats = [features("a#0", "a"), features("b#0", "b")]
    assert need_support([NeedItem("terms", "born", "born")], feats) is None
    assert need_support([NeedItem("entity", "c", "C", ("c",))], feats) is None
    assert need_support([], feats) is None
