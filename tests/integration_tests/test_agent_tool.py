"""sealgraph as an agent tool (examples/agent_tool_example.py), driven by a scripted chat model."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from sealgraph import build_graph

QUESTION = "Who designed the Lumen Lamp?"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_tool_example.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("agent_tool_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # typing.get_type_hints looks the module up by name
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def seal_graph(tiny_index):
    return build_graph(tiny_index)


def test_tool_returns_answer_and_citations(example, seal_graph):
    tool = example.make_sealgraph_tool(seal_graph)
    assert tool.name == "ask_documents"
    assert set(tool.args) == {"question"}
    assert "multi-hop" in tool.description
    payload = json.loads(tool.invoke({"question": QUESTION}))
    direct = seal_graph.invoke({"question": QUESTION})
    assert payload["answer"] == direct["answer"]
    assert [c["chunk_id"] for c in payload["citations"]] == [
        c["chunk_id"] for c in direct["citations"]
    ]
    assert all({"n", "title", "chunk_id", "text"} <= set(c) for c in payload["citations"])


def test_agent_calls_sealgraph_then_answers(example, seal_graph):
    model = example.scripted_model(QUESTION, "Ada Brightwater designed it.")
    agent = example.build_agent(model, seal_graph)
    result = agent.invoke({"messages": [{"role": "user", "content": QUESTION}]})
    messages = result["messages"]
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    call = messages[1].tool_calls[0]
    assert call["name"] == "ask_documents"
    assert call["args"] == {"question": QUESTION}
    tool_message = messages[2]
    assert isinstance(tool_message, ToolMessage)
    assert tool_message.tool_call_id == call["id"]
    payload = json.loads(tool_message.content)
    direct = seal_graph.invoke({"question": QUESTION})
    assert payload["answer"] == direct["answer"]
    assert [c["chunk_id"] for c in payload["citations"]] == [
        c["chunk_id"] for c in direct["citations"]
    ]
    assert isinstance(messages[3], AIMessage)
    assert messages[3].content == "Ada Brightwater designed it."


def test_scripted_model_binds_tools_to_itself(example):
    model = example.scripted_model("q", "a")
    assert model.bind_tools([]) is model
