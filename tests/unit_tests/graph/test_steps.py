"""Packing and answering any evidence set: the evaluation's baselines and the nodes alike."""

from __future__ import annotations

import pytest
from support.runs import run_nodes, runtime_for

from sealgraph.graph.steps import answer_from_evidence
from sealgraph.ledger.gaps import gap_spec, need_items
from sealgraph.nodes.generate import generate
from sealgraph.nodes.pack import pack

QUESTIONS = [
    "Who designed the Lumen Lamp?",
    "In which province is the town where Northwind Studio was founded?",
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_flat_baseline_is_packed_and_answered_as_the_nodes_pack_and_answer(tiny_index, question):
    runtime = runtime_for(tiny_index, k=3, budget=200)
    run = runtime.context
    kn = run.knowledge
    chunks = tiny_index.get_chunks([h.chunk_id for h in tiny_index.search_lexical(question, 3)])
    flat = answer_from_evidence(question, chunks, tiny_index, run.config, knowledge=kn)

    # The same evidence, needs and gaps handed to the pack and generate nodes.
    needs = run.reasoner.needs(question, kn.gazetteer).value
    ids = [c.chunk_id for c in chunks]
    gaps = gap_spec(needs, need_items(needs, kn.idf), kn.features(ids))
    state = {
        "question": question,
        "needs": needs.to_dict(),
        "gaps": [g.to_dict() for g in gaps],
        "slots": [{"chunk_id": i, "inserted_loop": 0} for i in ids],
    }
    state = run_nodes([pack, generate], state, runtime)

    assert flat["context"] == state["context"] and flat["context_tokens"] == state["context_tokens"]
    assert flat["answer"] == state["answer"] and flat["short_answer"] == state["short_answer"]
    assert flat["insufficient"] == state["declined"]
    assert flat["citations"] == state["citations"]
    assert flat["answerability"] == state["answerability"]
    # The packed spans' places, as the pack event records them.
    (event,) = [e for e in state["seal_log"] if e["kind"] == "pack"]
    spans = event["data"]["spans"]
    assert flat["packed"] == [
        {"doc_id": s["doc_id"], "start": s["start"], "end": s["end"]} for s in spans
    ]
    for span, packed in zip(flat["packed"], state["packed"], strict=True):
        doc = tiny_index.doc_chunks(span["doc_id"])
        text = "".join(c.text for c in doc)  # the tiny corpus's chunks tile their documents
        assert text[span["start"] - doc[0].start : span["end"] - doc[0].start] == packed["text"]
