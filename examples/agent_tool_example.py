"""sealgraph as a tool of a LangChain agent (``langchain.agents.create_agent``).

:func:`make_sealgraph_tool` wraps a compiled sealgraph graph as a tool that
answers one question from the indexed documents and returns the answer with its
citations (JSON). The agent decides when to call it; sealgraph does the
multi-hop retrieval, evidence repair and citation.

Run it::

    OPENAI_API_KEY=... python examples/agent_tool_example.py [INDEX_DIR] ["question"]

With an OpenAI key (or ``OPENAI_BASE_URL`` for any compatible server) the agent
is driven by ``gpt-4o-mini``. Without one, a scripted chat model stands in, so the
example runs offline: it calls the tool once and answers with what the tool
returned. The tests drive the agent the same way.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool, tool

from sealgraph import build_graph

DEFAULT_QUESTION = "Who leads the team that owns the Ledgerline Billing Service?"
TOOL_NAME = "ask_documents"

SYSTEM_PROMPT = (
    "You answer questions about the user's documents. Call the ask_documents tool "
    "with the question, then answer from its result, citing titles as given."
)


def make_sealgraph_tool(seal_graph: Any) -> BaseTool:
    """Wrap a compiled sealgraph graph as a LangChain tool named ``ask_documents``."""

    @tool(TOOL_NAME)
    def ask_documents(question: str) -> str:
        """Answer a (multi-hop) question from the indexed documents, with citations.

        Args:
            question: The full question, naming the entities it is about.

        """
        result = seal_graph.invoke({"question": question})
        return json.dumps(
            {
                "answer": result["answer"],
                "citations": [
                    {"n": c["n"], "title": c["title"], "chunk_id": c["chunk_id"], "text": c["text"]}
                    for c in result["citations"]
                ],
            },
            ensure_ascii=False,
        )

    return ask_documents


class ScriptedChatModel(GenericFakeChatModel):
    """A chat model that replies with scripted messages (for offline runs and tests).

    ``bind_tools`` returns the model itself: the script already knows which tool
    calls to make.
    """

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Accept the agent's tools and return the model unchanged."""
        return self


def scripted_model(question: str, final_answer: str) -> ScriptedChatModel:
    """Return a model that calls ``ask_documents(question)`` once, then replies ``final_answer``."""
    call = {
        "name": TOOL_NAME,
        "args": {"question": question},
        "id": "call_sealgraph_1",
        "type": "tool_call",
    }
    return ScriptedChatModel(
        messages=iter([AIMessage(content="", tool_calls=[call]), AIMessage(content=final_answer)])
    )


def build_agent(model: Any, seal_graph: Any):
    """Return an agent that can call sealgraph as its ``ask_documents`` tool."""
    return create_agent(model, tools=[make_sealgraph_tool(seal_graph)], system_prompt=SYSTEM_PROMPT)


def main(argv: list[str]) -> int:
    """Run the agent on one question and print the conversation."""
    if argv:
        index_dir = argv[0]
    else:
        from sealgraph.examples.demo import ensure_demo_index

        index_dir = str(ensure_demo_index())
    question = argv[1] if len(argv) > 1 else DEFAULT_QUESTION
    seal_graph = build_graph(index_dir)
    if os.environ.get("OPENAI_API_KEY"):
        from langchain_openai import ChatOpenAI

        model: Any = ChatOpenAI(model="gpt-4o-mini", temperature=0)
    else:
        print("(no OPENAI_API_KEY: a scripted model plays the agent)", file=sys.stderr)
        answer = json.loads(make_sealgraph_tool(seal_graph).invoke({"question": question}))[
            "answer"
        ]
        model = scripted_model(question, f"According to the documents: {answer}")
    agent = build_agent(model, seal_graph)
    result = agent.invoke({"messages": [{"role": "user", "content": question}]})
    for message in result["messages"]:
        content = (
            message.content if isinstance(message.content, str) else json.dumps(message.content)
        )
        calls = getattr(message, "tool_calls", None)
        suffix = f" -> calls {[c['name'] for c in calls]}" if calls else ""
        print(f"{message.type}: {content[:300]}{suffix}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
