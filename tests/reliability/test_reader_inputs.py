"""Hostile questions to the offline reader (issue 31, cases 15 and 16), over the demo corpus.

* A misspelt name ("Ledgerlinne" for the "Ledgerline" the documents write) must not
  get a confident answer about something else: the answer reads the name as the one
  the context writes (or declines), ``missing`` names the misspelling, and the
  answerability is lowered.
* "What does PPT own?" asks the relation "own": the answer is the sentence that
  states it, not one that only names PPT (who leads it).
"""

from __future__ import annotations

import pytest

from sealgraph.examples import corpus_dir
from sealgraph.graph.builder import build_graph
from sealgraph.index import build_index


@pytest.fixture(scope="module")
def demo_graph(tmp_path_factory):
    """The graph over the packaged demo corpus, indexed lexically (pinned: no embedder)."""
    root = tmp_path_factory.mktemp("demo")
    index = build_index(corpus_dir(), root / "index", embedder="none", warn=lambda _: None)
    return build_graph(index)


def _ask(graph, question: str) -> dict:
    return graph.invoke({"question": question}, {"configurable": {"thread_id": question}})


@pytest.mark.parametrize(
    "question",
    [
        "Who leads the team that owns Ledgerlinne?",
        "What does Ledgerlinne consume?",
        "When did Ledgerlinne go live?",
    ],
)
def test_a_misspelt_name_is_read_as_the_written_one_and_named_never_answered_about_another(
    demo_graph, question
):
    got = _ask(demo_graph, question)
    assert "'Ledgerlinne'" in got["missing"]
    assert got["answerability"] < 1.0
    if not got["declined"]:
        # The answer is about the service the question misspells, not another one.
        cited = " ".join(c["text"] for c in got["citations"])
        assert "the documents never write 'Ledgerlinne': read as 'Ledgerline'" in got["missing"]
        assert "Ledgerline" in got["answer"] and "Ledgerline" in cited


def test_the_misspelt_name_is_answered_like_the_written_one(demo_graph):
    got = _ask(demo_graph, "Who leads the team that owns Ledgerlinne?")
    right = _ask(demo_graph, "Who leads the team that owns Ledgerline?")
    assert right["short_answer"] == "Dana Whitcombe"
    assert got["short_answer"] in ("Dana Whitcombe", "")  # the same, or no short answer


def test_the_asked_relation_decides_the_sentence_over_one_that_only_names_the_entity(demo_graph):
    got = _ask(demo_graph, "What does PPT own?")
    assert not got["declined"]
    cited = " ".join(c["text"] for c in got["citations"])
    assert "Ledgerline" in got["answer"] and "own" in got["answer"]
    assert "Ledgerline" in cited
    assert "led" not in got["answer"].split(" [")[0]  # not who leads PPT
    # The same question asked with its head noun gives the same service.
    which = _ask(demo_graph, "Which service does PPT own?")
    assert "Ledgerline" in which["short_answer"]
