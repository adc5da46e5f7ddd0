"""``make_tool`` and ``graph.as_tool()``: sealgraph as a LangChain tool, also inside create_agent.

``make_tool`` answers with the answer and its citations (the evidence as the tool
message's artifact); ``graph.as_tool()`` is LangChain's generic conversion of the
compiled graph, which takes ``{"question": str}`` and returns the run's output.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.documents import Document as LangChainDocument
from langchain_core.embeddings.fake import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.graph.state import CompiledStateGraph

from sealgraph import build_graph
from sealgraph.errors import InputError
from sealgraph.integrations.langchain import DEFAULT_TOOL_NAME, SealRetriever, make_tool

QUESTION = "Who designed the Lumen Lamp?"


@pytest.fixture(scope="module")
def graph(tiny_index):
    return build_graph(tiny_index)


@pytest.fixture(scope="module")
def tool(tiny_index):
    return make_tool(tiny_index)


def tool_call(name: str, question: str, call_id: str = "call_1") -> dict[str, Any]:
    return {"name": name, "args": {"question": question}, "id": call_id, "type": "tool_call"}


def test_the_tool_takes_a_plain_question(tool):
    assert isinstance(tool, BaseTool)
    assert tool.name == DEFAULT_TOOL_NAME
    assert set(tool.args) == {"question"}
    schema = tool.tool_call_schema.model_json_schema()
    assert schema["required"] == ["question"]
    assert schema["properties"]["question"]["type"] == "string"
    assert "question" in tool.description


def test_content_is_the_answer_with_its_citations(tool, graph):
    payload = json.loads(tool.invoke({"question": QUESTION}))
    direct = graph.invoke({"question": QUESTION})
    assert payload["answer"] == direct["answer"]
    assert payload["citations"] == [
        {"n": c["n"], "title": c["title"], "chunk_id": c["chunk_id"], "text": c["text"]}
        for c in direct["citations"]
    ]
    assert payload["citations"], "the lamp question is answered with a citation"


def test_a_tool_call_carries_the_evidence_as_artifact(tool, tiny_index):
    message = tool.invoke(tool_call(tool.name, QUESTION))
    assert isinstance(message, ToolMessage)
    assert message.tool_call_id == "call_1" and message.name == tool.name
    assert json.loads(message.content)["answer"]
    assert all(isinstance(d, LangChainDocument) for d in message.artifact)
    expected = SealRetriever(index=tiny_index).invoke(QUESTION)
    assert [(d.page_content, d.metadata) for d in message.artifact] == [
        (d.page_content, d.metadata) for d in expected
    ]


def test_content_only_and_async(tiny_index, tool):
    plain = make_tool(tiny_index, response_format="content", name="docs_qa", description="Ask.")
    assert plain.name == "docs_qa" and plain.description == "Ask."
    message = plain.invoke(tool_call("docs_qa", QUESTION))
    assert message.artifact is None
    assert asyncio.run(tool.ainvoke({"question": QUESTION})) == tool.invoke({"question": QUESTION})


def test_overrides_and_config(tiny_index):
    small = make_tool(tiny_index, config={"k": 1})
    assert len(small.invoke(tool_call(small.name, QUESTION)).artifact) == 1
    overridden = make_tool(tiny_index, overrides={"k": 2})
    assert len(overridden.invoke(tool_call(overridden.name, QUESTION)).artifact) == 2


@pytest.mark.parametrize("kind", ["vectorstore", "retriever"])
def test_make_tool_refuses_a_langchain_store_or_retriever(kind):
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=8))
    value = store if kind == "vectorstore" else store.as_retriever()
    with pytest.raises(InputError, match="needs a sealgraph index"):
        make_tool(value)


# -- graph.as_tool() -------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
def test_graph_as_tool_works_with_a_plain_question(graph, tool):
    # LangChain's own conversion of the plain compiled graph (no subclass, no class
    # swap): the input schema is the question and the run's bounded settings, and
    # LangChain's conversion asks for every key of it (make_tool asks for the question).
    assert type(graph) is CompiledStateGraph
    as_tool = graph.as_tool()
    assert as_tool.name == "sealgraph"
    assert set(as_tool.args) == {"question", "config"}
    result = as_tool.invoke({"question": QUESTION, "config": {}})
    direct = json.loads(tool.invoke({"question": QUESTION}))
    assert result["answer"] == direct["answer"]
    assert [c["chunk_id"] for c in result["citations"]] == [
        c["chunk_id"] for c in direct["citations"]
    ]
    named = graph.as_tool(name="lookup", description="Look it up.")
    assert (named.name, named.description) == ("lookup", "Look it up.")


def test_graph_copies_keep_as_tool(graph):
    configured = graph.with_config(tags=["x"])
    assert set(configured.as_tool().args) == {"question", "config"}


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
def test_explicit_arg_types_use_langchains_generic_conversion(graph):
    generic = graph.as_tool(arg_types={"question": str})
    result = generic.invoke({"question": QUESTION})
    assert isinstance(result, dict) and result["answer"]


# -- create_agent ----------------------------------------------------------------


class ScriptedChatModel(GenericFakeChatModel):
    """Replies with scripted messages; ``bind_tools`` returns the model itself."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self


def scripted(tool_name: str) -> ScriptedChatModel:
    return ScriptedChatModel(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[tool_call(tool_name, QUESTION, "call_seal")]),
                AIMessage(content="Ada Brightwater designed it."),
            ]
        )
    )


@pytest.mark.parametrize("how", ["index", "graph"])
def test_create_agent_calls_the_tool_and_answers(how, tiny_index, graph):
    seal_tool = make_tool(tiny_index) if how == "index" else make_tool(graph)
    agent = create_agent(scripted(seal_tool.name), tools=[seal_tool])
    result = agent.invoke({"messages": [{"role": "user", "content": QUESTION}]})
    messages = result["messages"]
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    call = messages[1].tool_calls[0]
    assert call["name"] == seal_tool.name and call["args"] == {"question": QUESTION}
    answer = messages[2]
    assert answer.tool_call_id == "call_seal" and answer.status == "success"
    payload = json.loads(answer.content)
    direct = graph.invoke({"question": QUESTION})
    assert payload["answer"] == direct["answer"]
    assert [c["chunk_id"] for c in payload["citations"]] == [
        c["chunk_id"] for c in direct["citations"]
    ]
    assert [d.metadata["chunk_id"] for d in answer.artifact] == [
        e["chunk_id"] for e in direct["evidence"]
    ]
    assert messages[3].content == "Ada Brightwater designed it."
