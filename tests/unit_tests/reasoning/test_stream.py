"""Streaming the answer in LangGraph's ``messages`` mode, and async runs that leave the loop free.

A fake chat model that streams its (JSON) reply in small tokens drives the LLM
reasoner through the graph: only the generate node's answer text streams (the
other steps' JSON calls are tagged ``nostream``), also when sealgraph runs as a
subgraph; ``ainvoke`` awaits the model (``_agenerate``) without blocking the loop.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, NotRequired, TypedDict

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.graph import END, START, StateGraph
from pydantic import Field

from sealgraph import build_graph
from sealgraph.reasoning.stream import partial_answer

QUESTION = "Where was the studio that designed the Lumen Lamp founded?"
ANSWER = "The studio was founded in Port Ellis [1], a harbour town &amp; port."
REPLIES = {  # a distinctive key of each step's JSON schema hint → the reply
    "citations": {"answer": ANSWER, "citations": [1], "insufficient": False},
    "sufficient": {"sufficient": True, "gaps": [], "supporting": [1]},
    "answer_type": {
        "answer_type": "place",
        "hops": 1,
        "structure": "single",
        "entities": ["Lumen Lamp"],
        "options": [],
        "answer_modifiers": [],
        "compared_attribute": "",
    },
    "relations": {"entities": [], "relations": [], "qualifiers": []},
    "queries": {"queries": []},
}
CONFIG = {"llm": {"structured_output_method": "plain"}}


class StepModel(BaseChatModel):
    """Replies to each step with its JSON, streamed in 5-character tokens; async calls sleep."""

    delay_s: float = 0.0
    calls: list[str] = Field(default_factory=list)
    awaited: int = 0

    @property
    def _llm_type(self) -> str:
        return "step-model"

    def _reply(self, messages: Any) -> str:
        system = str(messages[0].content)
        for key, reply in REPLIES.items():
            if f'"{key}"' in system:
                self.calls.append(key)
                return json.dumps(reply)
        raise AssertionError("unknown step")

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self._reply(messages)))])

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.awaited += 1
        await asyncio.sleep(self.delay_s)
        return self._generate(messages)

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        text = self._reply(messages)
        for i in range(0, len(text), 5):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=text[i : i + 5]))
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs):
        text = self._reply(messages)
        for i in range(0, len(text), 5):
            await asyncio.sleep(self.delay_s / 10)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=text[i : i + 5]))
            if run_manager:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk


def split(parts):
    """(answer tokens from the generate node, nodes of any other message chunks, final values)."""
    tokens, others, values = [], [], None
    for mode, data in parts:
        if mode == "values":
            values = data
            continue
        message, meta = data
        if meta.get("langgraph_node") == "generate":
            assert isinstance(message, AIMessageChunk)
            tokens.append(message.content)
        else:
            others.append(meta.get("langgraph_node"))
    return tokens, others, values


def test_partial_answer_reads_the_growing_answer_field():
    assert partial_answer('```json\n{"answer": "Port El') == "Port El"
    assert partial_answer('{"answer": "a &am') == "a "  # the entity is held back
    assert partial_answer('{"answer": "a &amp; b"') == "a & b"
    assert partial_answer('{"citat') is None


def test_the_answer_streams_token_by_token_and_the_json_steps_do_not(tiny_index):
    model = StepModel()
    graph = build_graph(tiny_index, llm=model, config=CONFIG)
    tokens, others, values = split(
        graph.stream({"question": QUESTION}, stream_mode=["messages", "values"])
    )
    assert values["answer"] == "The studio was founded in Port Ellis [1], a harbour town & port."
    assert len(tokens) > 5
    assert "".join(tokens) == values["answer"]
    assert others == []  # needs, extract and assess made JSON calls: none streamed
    assert {"answer_type", "relations", "sufficient", "citations"} <= set(model.calls)


def test_the_answer_streams_with_astream(tiny_index):
    graph = build_graph(tiny_index, llm=StepModel(), config=CONFIG)

    async def run():
        return [
            p
            async for p in graph.astream({"question": QUESTION}, stream_mode=["messages", "values"])
        ]

    tokens, others, values = split(asyncio.run(run()))
    assert len(tokens) > 5 and "".join(tokens) == values["answer"]
    assert others == []


class ParentState(TypedDict):
    question: str
    answer: NotRequired[str]


def test_the_answer_streams_from_sealgraph_as_a_subgraph(tiny_index):
    builder = StateGraph(ParentState)
    builder.add_node("sealgraph", build_graph(tiny_index, llm=StepModel(), config=CONFIG))
    builder.add_edge(START, "sealgraph")
    builder.add_edge("sealgraph", END)
    parent = builder.compile()
    tokens, final = [], None
    for ns, mode, data in parent.stream(
        {"question": QUESTION}, stream_mode=["messages", "values"], subgraphs=True
    ):
        if mode == "values" and not ns:
            final = data
        elif mode == "messages":
            message, meta = data
            assert meta["langgraph_node"] == "generate" and ns[0].startswith("sealgraph:")
            tokens.append(message.content)
    assert len(tokens) > 5 and "".join(tokens) == final["answer"]


def test_the_offline_answer_comes_as_one_message(tiny_index):
    graph = build_graph(tiny_index)
    tokens, others, values = split(
        graph.stream({"question": QUESTION}, stream_mode=["messages", "values"])
    )
    assert tokens == [values["answer"]] and others == []


def test_ainvoke_awaits_the_model_and_leaves_the_event_loop_free(tiny_index):
    model = StepModel(delay_s=0.2)
    graph = build_graph(tiny_index, llm=model, config=CONFIG)
    sync = build_graph(tiny_index, llm=StepModel(), config=CONFIG).invoke({"question": QUESTION})

    async def run():
        ticks = 0
        done = asyncio.Event()

        async def ticker():
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        task = asyncio.create_task(ticker())
        out = await graph.ainvoke({"question": QUESTION})
        done.set()
        await task
        return out, ticks

    out, ticks = asyncio.run(run())
    assert out["answer"] == sync["answer"]
    assert model.awaited == len(model.calls) >= 4  # at 0.2 s each, awaited on the loop
    assert ticks >= 40  # the loop ticked all along (0.8 s of model calls at 10 ms a tick)
