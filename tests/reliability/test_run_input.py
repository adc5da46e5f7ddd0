"""What a run is given: the question's bytes and the run context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired

import pytest
from langgraph.graph import END, START, StateGraph
from support.cli import assert_clear_error, run_cli
from support.fakes import write_tiny_docs
from typing_extensions import TypedDict

from sealgraph import build_graph
from sealgraph.errors import InputError
from sealgraph.graph.context import SealContext

QUESTION = "In which province is the town where Northwind Studio was founded?"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from sealgraph.index import build_index

    root = tmp_path_factory.mktemp("input")
    return build_index(write_tiny_docs(root / "docs"), root / "idx", embedder="none", warn=print)


def test_invalid_utf8_in_a_command_line_question_is_a_clear_error(index, tmp_path):
    result = run_cli(
        "ask",
        b"Where is Port Ellis \xff\xfe?",
        "--index",
        str(index.path),
        "--db",
        str(tmp_path / "runs.sqlite"),
    )
    assert_clear_error(result, "not valid text")


def test_lone_surrogates_in_an_api_question_are_a_clear_error(index):
    with pytest.raises(InputError, match="not valid text"):
        build_graph(index=index).invoke({"question": "Where is Port Ellis \udcff?"})


@pytest.mark.parametrize("context", [{}, None, SealContext()], ids=["empty-dict", "none", "empty"])
def test_an_empty_run_context_runs_the_built_graph(index, context):
    graph = build_graph(index=index, config={"k": 2})
    expected = graph.invoke({"question": QUESTION})
    out = graph.invoke({"question": QUESTION}, context=context)
    assert out["evidence"] == expected["evidence"]
    assert out["answer"] == expected["answer"]


def test_a_partial_run_context_overrides_only_its_fields(index):
    graph = build_graph(index=index, config={"k": 2})
    out = graph.invoke({"question": QUESTION}, context={"config": {"k": 1}})
    assert len(out["evidence"]) == 1
    out = graph.invoke({"question": QUESTION}, context=SealContext(config={"max_loops": 0}))
    assert len(out["evidence"]) == 2  # k still from the built graph
    assert out["loops"] == 0


def test_an_unknown_run_context_field_is_a_clear_error(index):
    with pytest.raises((InputError, TypeError)):
        build_graph(index=index).invoke({"question": QUESTION}, context={"indx": "typo"})


@dataclass
class ParentContext:
    user: str = "someone"


class ParentState(TypedDict):
    question: str
    answer: NotRequired[str]


def test_a_parent_graphs_own_context_does_not_reach_sealgraph(index):
    # sealgraph as a subgraph of a graph with a context of its own: LangGraph hands
    # the parent's context to the child's nodes; sealgraph must use its own.
    builder = StateGraph(ParentState, context_schema=ParentContext)
    builder.add_node("sealgraph", build_graph(index=index))
    builder.add_edge(START, "sealgraph")
    builder.add_edge("sealgraph", END)
    out = builder.compile().invoke({"question": QUESTION}, context=ParentContext("ada"))
    assert out["answer"] == build_graph(index=index).invoke({"question": QUESTION})["answer"]


def test_the_inputs_own_config_is_honoured_within_the_run_allow_list(index):
    from sealgraph.errors import ConfigError

    graph = build_graph(index=index, config={"k": 3})
    out = graph.invoke({"question": QUESTION, "config": {"k": 2}})
    assert len(out["evidence"]) == 2  # honoured, not ignored
    # With a context of its own too, the input's settings come last.
    out = graph.invoke(
        {"question": QUESTION, "config": {"k": 1}}, context={"config": {"max_loops": 0}}
    )
    assert len(out["evidence"]) == 1 and out["loops"] == 0
    for config in ({"k": 500}, {"lexicon": "this:x"}, {"kk": 1}, "k=2"):
        with pytest.raises(ConfigError):
            graph.invoke({"question": QUESTION, "config": config})


@pytest.mark.parametrize(
    ("context", "needle"),
    [
        ({"reasoner": "llm"}, "reasoner must be a reasoner object built in Python"),
        ({"index": "/etc"}, "needs a sealgraph index"),
        ({"indx": "typo"}, "unknown run context field 'indx'"),
    ],
)
def test_a_context_a_client_cannot_send_is_refused_where_it_is_made(index, context, needle):
    # LangGraph makes the context from the client's dict before any node runs.
    with pytest.raises(InputError, match=needle):
        build_graph(index=index).invoke({"question": QUESTION}, context=context)
