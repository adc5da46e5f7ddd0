"""Structured output that adapts, replies read the same way, retries that tell, one answer contract.

Scripted fake chat models (no HTTP): the method fall-through on unparsable replies
and its memory, JSON found in prose or code fences, what a retry sends back, the
answer contract ([n] markers or a list), replies that copy the prompt's example,
the prompts' shape, and how a model error is classified. The same behaviour
against a real HTTP endpoint (the fake server) is in
``tests/reliability/test_llm_servers.py``.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from support.fakes import ScriptedChatModel

from sealgraph.config import LLMConfig, SealConfig
from sealgraph.ledger.extract import passage_features
from sealgraph.ledger.gaps import Gap, need_items
from sealgraph.ledger.gazetteer import Gazetteer
from sealgraph.ledger.ledger import EntityLedger
from sealgraph.ledger.needs import question_needs
from sealgraph.model import Step
from sealgraph.nodes._common import EventWriter
from sealgraph.prompts import PROMPT_NAMES, prompt_example, prompt_messages
from sealgraph.reasoning.answer import SpanText
from sealgraph.reasoning.llm import (
    EXCERPT_CHARS,
    FEEDBACK_CHARS,
    FINAL,
    PERMANENT,
    TRANSIENT,
    UNSUPPORTED,
    AnswerOut,
    Assessment,
    Extraction,
    LLMReasoner,
    MethodUnavailable,
    NeedsReading,
    QueryPlan,
    cited_numbers,
    schema_hint,
)
from sealgraph.reasoning.llm._failures import error_kind
from sealgraph.reasoning.llm._structured import json_objects
from sealgraph.reasoning.offline import OfflineReasoner
from sealgraph.types import Chunk

_ids = itertools.count()
Scripted = ScriptedChatModel


def tool(name: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{next(_ids)}"}])


def text(content: str) -> AIMessage:
    return AIMessage(content=content)


def reasoner(*script: Any, **settings: Any) -> tuple[LLMReasoner, Scripted]:
    model = Scripted(script=list(script))
    return LLMReasoner(model, LLMConfig(**settings)), model


def chunk(chunk_id: str, title: str, body: str) -> Chunk:
    return Chunk(chunk_id, chunk_id.split("#")[0], title, (), 0, 0, len(body), body, 5)


# A small invented corpus (not from any benchmark).
GAZETTEER = Gazetteer([("orchard", "Glass Orchard (novel)"), ("vey", "Ilse Vey")])
ORCHARD = chunk("orchard#0", "Glass Orchard (novel)", "Glass Orchard is a 1988 novel by Ilse Vey.")
VEY = chunk("vey#0", "Ilse Vey", "Ilse Vey was born in Tallmoor in 1950.")
CHUNKS = [ORCHARD, VEY]
FEATURES = [passage_features(c, GAZETTEER) for c in CHUNKS]
QUESTION = "Where was the author of Glass Orchard born?"
NEEDS = question_needs(QUESTION, GAZETTEER)
ITEMS = need_items(NEEDS)
SPANS = [
    SpanText(1, "orchard", ORCHARD.title, ORCHARD.text),
    SpanText(2, "vey", VEY.title, VEY.text),
]
GAPS = [Gap("missing_relation", "Glass Orchard", "author born", "place", "no birthplace")]
READING = {
    "answer_type": "place",
    "hops": 2,
    "structure": "bridge",
    "entities": ["Glass Orchard"],
    "options": [],
    "answer_modifiers": [],
    "compared_attribute": "",
}
NO_FACTS = {"entities": [], "relations": [], "qualifiers": []}


def system_of(messages: list[BaseMessage]) -> str:
    assert isinstance(messages[0], SystemMessage)
    return str(messages[0].content)


# --- replies are read the same way, whatever the method ----------------------------------


def test_a_plain_reply_with_one_json_object_in_prose_is_parsed():
    reply = 'Sure! Here is my answer:\n{"answer": "Tallmoor [2]"}\nI hope this helps.'
    llm, model = reasoner(text(reply), structured_output_method="plain")
    out = llm.generate(NEEDS, SPANS, [])
    assert (out.value.answer, out.value.cited, out.fallback) == ("Tallmoor [2]", (2,), False)
    assert out.method == "plain" and out.llm_calls == 1
    # A plain completion is told to write JSON, and given the compact schema.
    system = system_of(model.sent[0])
    assert "JSON" in system and schema_hint(AnswerOut) in system


def test_a_json_object_in_a_code_fence_is_parsed():
    reply = '```json\n{"entities": [], "relations": [], "qualifiers": []}\n```'
    llm, _ = reasoner(text(reply), structured_output_method="json_mode")
    out = llm.extract(QUESTION, CHUNKS, FEATURES)
    assert not out.fallback and out.method == "json_mode"


def test_the_object_that_fits_the_schema_is_taken_among_several():
    reply = 'Example: {"x": 1}. My reply: {"queries": []}'
    llm, _ = reasoner(text(reply), structured_output_method="plain")
    out = llm.plan(NEEDS, GAPS, [], {}, 3)
    assert (out.value, out.fallback) == ([], False)


def test_json_objects_are_found_in_prose():
    assert json_objects('a {"a": 1} b {not json} c {"b": {"c": [1, 2]}}') == [
        {"a": 1},
        {"b": {"c": [1, 2]}},
    ]
    assert json_objects("no object [1, 2] here") == []


def test_a_reply_wrapped_in_one_key_is_unwrapped():
    llm, _ = reasoner(tool("Extraction", Extraction=NO_FACTS))
    out = llm.extract(QUESTION, CHUNKS, FEATURES)
    assert not out.fallback and out.llm_calls == 1


# --- auto: fall through unparsable replies, remember what works ----------------------------


def test_auto_falls_through_an_unparsable_reply_and_remembers_the_method():
    llm, model = reasoner(
        text("The author was born in Tallmoor."),  # no JSON: the first method is skipped
        tool("NeedsReading", **READING),
        tool("Extraction", **NO_FACTS),
    )
    assert llm.config.structured_output_method == "auto"
    assert llm.structured_output_method() is None
    first = llm.needs(QUESTION, GAZETTEER)
    assert not first.fallback and first.llm_calls == 2 and model.calls == 2
    # LangChain's base chat model has no method of its own: it calls tools first.
    assert first.method == "json_schema" == llm.structured_output_method()
    assert "function_calling gave an unparsable reply" in first.notes[0]
    assert "trying json_schema" in first.notes[0]
    assert "json_schema works for model" in first.notes[1] and "remembered" in first.notes[1]
    # The next step uses the remembered method straight away, with no note.
    second = llm.extract(QUESTION, CHUNKS, FEATURES)
    assert (second.llm_calls, second.notes, second.method) == (1, (), "json_schema")


def test_a_remembered_method_is_not_abandoned_for_one_bad_reply():
    llm, model = reasoner(
        tool("NeedsReading", **READING),
        text("no JSON this time"),
        tool("Extraction", **NO_FACTS),
    )
    assert not llm.needs(QUESTION, GAZETTEER).fallback
    out = llm.extract(QUESTION, CHUNKS, FEATURES)
    # Retried with the same method (and told why), not probed elsewhere.
    assert not out.fallback and out.llm_calls == 2
    assert out.notes[0].startswith("attempt 1 failed: unparsable reply")
    assert "no JSON Extraction object" in str(model.sent[2][-1].content)


def test_a_model_that_never_writes_json_falls_back_after_each_method_and_a_retry():
    llm, model = reasoner(*[text("just prose")] * 10, retries=1)
    out = llm.generate(NEEDS, SPANS, [])
    assert out.fallback and out.value == OfflineReasoner().generate(NEEDS, SPANS, []).value
    # function_calling, json_schema, json_mode, plain; then one retry of plain.
    assert out.llm_calls == model.calls == 5
    assert "unparsable reply" in out.fallback_reason
    # Later steps do not probe the methods that gave prose again.
    llm.plan(NEEDS, GAPS, [], {}, 3)
    assert model.calls == 7


# --- retries tell the model what was wrong ----------------------------------------------------


def test_a_retry_sends_the_rejected_reply_and_what_was_wrong_with_it():
    llm, model = reasoner(
        tool("AnswerOut", answer="Tallmoor"),  # cites nothing
        tool("AnswerOut", answer="Tallmoor [2]"),
    )
    out = llm.generate(NEEDS, SPANS, [])
    assert not out.fallback and out.value.cited == (2,) and out.llm_calls == 2
    first, retry = model.sent
    assert len(first) == 2 and isinstance(first[1], HumanMessage)
    assert retry[:2] == first  # the same system and user messages
    rejected, told = retry[2:]
    assert isinstance(rejected, AIMessage) and '"answer": "Tallmoor"' in rejected.content
    assert isinstance(told, HumanMessage)
    assert "rejected: the answer cites no passage" in told.content


def test_a_retry_after_a_timeout_resends_the_same_messages():
    llm, model = reasoner(TimeoutError("read timed out"), tool("AnswerOut", answer="Tallmoor [2]"))
    out = llm.generate(NEEDS, SPANS, [])
    assert not out.fallback and model.sent[1] == model.sent[0]


def test_the_reply_sent_back_and_the_one_noted_are_truncated():
    long = "x" * 5000
    llm, model = reasoner(tool("AnswerOut", answer=long), tool("AnswerOut", answer=long))
    out = llm.generate(NEEDS, SPANS, [])
    assert out.fallback
    assert len(model.sent[1][2].content) <= FEEDBACK_CHARS
    note = out.notes[0]
    assert note.startswith("attempt 1 failed: the answer cites no passage")
    assert len(note.split("; reply: ", 1)[1]) <= EXCERPT_CHARS


def test_schema_errors_name_unknown_and_missing_keys():
    llm, model = reasoner(
        tool("NeedsReading", hops=2, verdict="x"), tool("NeedsReading", **READING)
    )
    out = llm.needs(QUESTION, GAZETTEER)
    assert not out.fallback
    told = str(model.sent[1][-1].content)
    assert "unknown key(s) verdict" in told
    assert "missing required field(s) answer_type, structure, entities" in told


# --- one answer contract -----------------------------------------------------------------------


def test_the_answer_contract_reads_markers_without_a_citations_list():
    llm, _ = reasoner(tool("AnswerOut", answer="Tallmoor [2]."))
    out = llm.generate(NEEDS, SPANS, [])
    assert (out.value.cited, out.fallback, out.llm_calls) == ((2,), False, 1)
    assert not out.value.insufficient


def test_the_answer_contract_reads_a_list_without_markers_and_both_together():
    llm, _ = reasoner(tool("AnswerOut", answer="Tallmoor", citations=[2]))
    assert llm.generate(NEEDS, SPANS, []).value.cited == (2,)
    both = AnswerOut(answer="Ilse Vey [1] was born in Tallmoor [2; 1]", citations=[2])
    assert cited_numbers(both) == {1, 2}


def test_citations_to_spans_that_do_not_exist_are_rejected_and_counted_once():
    bad = tool("AnswerOut", answer="Tallmoor [2] [5]", citations=[2, 5], insufficient=False)
    llm, model = reasoner(bad, bad)
    out = llm.generate(NEEDS, SPANS, [])
    assert out.fallback and out.llm_calls == model.calls == 2
    assert out.value == OfflineReasoner().generate(NEEDS, SPANS, []).value
    reason = "the answer cites [5], which is not a passage of the context (its passages: [1], [2])"
    assert out.fallback_reason == reason
    assert reason in str(model.sent[1][-1].content)  # the retry is told
    # The trace: one note per rejected attempt (with the reply), one fallback for the step.
    w = EventWriter("generate", 0)
    w.outcome_notes(out, "generate")
    kinds = [e["kind"] for e in w.events]
    assert kinds.count("llm_fallback") == 1 and kinds.count("llm_note") == 2
    notes = [e["message"] for e in w.events if e["kind"] == "llm_note"]
    assert all('; reply: {"answer": "Tallmoor [2] [5]"' in n for n in notes)


def test_a_declined_answer_needs_no_citation():
    llm, _ = reasoner(tool("AnswerOut", answer="The birthplace is not stated.", insufficient=True))
    out = llm.generate(NEEDS, SPANS, GAPS)
    assert out.value.insufficient and out.value.cited == () and not out.fallback


# --- replies that copy the prompt's example ----------------------------------------------------


def test_a_plan_that_copies_the_example_query_is_rejected():
    example = prompt_example(Step.PLAN)["queries"][0]
    good = {"text": "Ilse Vey birthplace", "entity": "Ilse Vey", "gap_kind": "missing_relation"}
    copied = tool("QueryPlan", queries=[good, example])
    llm, model = reasoner(copied, tool("QueryPlan", queries=[good]))
    out = llm.plan(NEEDS, GAPS, [], {}, 3)
    assert [q.text for q in out.value] == ["Ilse Vey birthplace"] and out.llm_calls == 2
    assert "example of the instructions" in str(model.sent[1][-1].content)


def test_a_reply_that_is_the_example_is_rejected():
    llm, _ = reasoner(tool("NeedsReading", **prompt_example("needs")), retries=0)
    out = llm.needs(QUESTION, GAZETTEER)
    assert out.fallback and "copies the JSON example" in out.fallback_reason


# --- prompts: short system message, data in the user message ----------------------------------

SCHEMAS = {
    Step.NEEDS: NeedsReading,
    Step.EXTRACT: Extraction,
    Step.ASSESS: Assessment,
    Step.PLAN: QueryPlan,
    Step.GENERATE: AnswerOut,
}
VALUES = {
    "question": "Q?",
    "passages": "P",
    "ledger": "L",
    "gaps": "G",
    "issued": "I",
    "context": "C",
}


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_every_prompt_is_a_short_system_message_and_a_data_user_message(name):
    system, user = prompt_messages(name, **VALUES)
    assert "JSON" in system and "DATA" in system
    assert len(system) < 2000
    # The one-line example is a valid reply of the step (placeholders, not benchmark text).
    SCHEMAS[name].model_validate(prompt_example(name))
    assert json.dumps(prompt_example(name)) in system  # on one line
    for tag in ("documents", "context", "ledger", "gaps", "issued", "question"):
        assert f"<{tag}>" not in system  # data only in the user message
    assert "Q?" in user and "Q?" not in system


def test_the_extraction_user_message_has_the_question():
    llm, model = reasoner(tool("Extraction", **NO_FACTS))
    llm.extract(QUESTION, CHUNKS, FEATURES)
    assert f"Question (for focus only; do not answer it): {QUESTION}" in model.sent[0][1].content


@pytest.mark.parametrize(
    ("method", "has_schema"),
    [("function_calling", False), ("json_schema", False), ("json_mode", True), ("plain", True)],
)
def test_only_json_mode_and_plain_requests_carry_the_schema(method, has_schema):
    llm, model = reasoner(tool("Assessment", sufficient=True, gaps=[], supporting=[]))
    llm = LLMReasoner(model, LLMConfig(structured_output_method=method))
    llm.assess(NEEDS, ITEMS, FEATURES, EntityLedger())
    system = system_of(model.sent[0])
    assert (schema_hint(Assessment) in system) is has_schema
    assert "JSON" in system


def test_config_shape_of_the_token_bounds_and_the_call_budget():
    cfg = SealConfig().override({"llm.max_tokens.generate": "1024", "llm.max_calls": "5"})
    assert cfg.llm.max_tokens.generate == 1024 and cfg.llm.max_tokens.needs == 256
    assert cfg.llm.max_calls == 5 and cfg.llm.structured_output_method == "auto"
    assert SealConfig().override({"llm.max_calls": "null"}).llm.max_calls is None
    assert SealConfig().override({"llm.max_tokens.plan": "null"}).llm.max_tokens.plan is None


# --- how a model error is classified ---------------------------------------------------------


class _HTTP(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Error code: {status} - {message}")
        self.status_code = status


class ConnectError(Exception):
    """Named like httpx's, which the OpenAI SDK wraps in APIConnectionError."""


def _wrapped(cause: BaseException) -> Exception:
    try:
        raise RuntimeError("Connection error.") from cause
    except RuntimeError as exc:
        return exc


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (TimeoutError("read timed out"), TRANSIENT),
        (_HTTP(500, "fake internal error"), TRANSIENT),
        (_HTTP(429, "rate limited"), TRANSIENT),
        (
            _HTTP(
                500,
                'response_format type must be one of "text" or "json_object", but got: json_schema',
            ),
            UNSUPPORTED,
        ),
        (_HTTP(500, "tools param requires --jinja flag"), UNSUPPORTED),
        (_HTTP(400, '"auto" tool choice requires --enable-auto-tool-choice'), UNSUPPORTED),
        (_HTTP(400, "Invalid schema for response_format 'AnswerOut'"), UNSUPPORTED),
        (_HTTP(400, "This model's maximum context length is 4096 tokens"), FINAL),
        (_HTTP(401, "Incorrect API key provided"), PERMANENT),
        (_HTTP(404, "model 'tiny' not found"), PERMANENT),
        (ConnectionRefusedError(111, "Connection refused"), PERMANENT),
        (MethodUnavailable("NotImplementedError: no json_schema"), UNSUPPORTED),
        (_wrapped(ConnectError("[Errno 111] Connection refused")), PERMANENT),
    ],
)
def test_error_kinds(exc, kind):
    assert error_kind(exc) == kind


def test_a_reply_that_writes_the_examples_placeholders_is_rejected():
    from sealgraph.reasoning.llm._structured import placeholder_in

    example = {"answer": "ANSWER, as passage 2 states [2].", "citations": [2]}
    assert placeholder_in({"answer": "ANSWER, as passage 2 states [1].", "citations": [1]}, example)
    assert placeholder_in({"entities": ["NAME AS WRITTEN"]}, {"entities": ["NAME AS WRITTEN"]})
    # Real replies, acronyms included, pass.
    assert not placeholder_in({"answer": "The NASA team led it [1].", "citations": [1]}, example)
    assert not placeholder_in({"answer": "Dana Whitcombe [2]."}, example)


def test_a_reply_that_used_every_allowed_token_is_reported_as_cut():
    # Some servers end a cut tool call with finish_reason "tool_calls": the completion
    # tokens, equal to the step's bound, tell that it stopped there.
    cut = AIMessage(
        content='{"answer_type": "place", "hops": 2, "struc',
        usage_metadata={"input_tokens": 90, "output_tokens": 256, "total_tokens": 346},
        response_metadata={"finish_reason": "tool_calls"},
    )
    llm, _ = reasoner(cut, retries=0, structured_output_method="plain")
    out = llm.needs(QUESTION, GAZETTEER)
    assert out.fallback and "cut at llm.max_tokens.needs" in out.fallback_reason
