"""The step registry: one record per LLM step, and a step added with a record alone."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel, ConfigDict
from support.fakes import ScriptedChatModel

from sealgraph.config import LLMConfig, SealConfig, StepTokens
from sealgraph.errors import ConfigError
from sealgraph.model import Step
from sealgraph.prompts import fence, load_prompt, unfence
from sealgraph.reasoning.base import StepOutcome
from sealgraph.reasoning.llm import STEPS, Ask, LLMReasoner, StepSpec, register_step
from sealgraph.reasoning.llm._steps import step_request
from sealgraph.reasoning.offline import OfflineReasoner

_ids = itertools.count()


def tool_reply(name: str, **args) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": f"call_{next(_ids)}"}]
    )


# --- a step of the test's own: its record, its reply schema, its offline function ---------


class Keywords(BaseModel):
    """The reply: the question's keywords."""

    model_config = ConfigDict(extra="forbid")
    words: list[str]


def offline_keywords(offline: OfflineReasoner, question: str) -> StepOutcome[list[str]]:
    return StepOutcome([w for w in question.lower().rstrip("?").split() if len(w) > 3])


def ask_keywords(question: str) -> Ask[Keywords, list[str]] | StepOutcome[list[str]]:
    if not question.strip():
        return StepOutcome([])  # nothing to ask
    return Ask(
        {"question": fence(question)},  # the needs prompt's one placeholder
        lambda r: [unfence(w) for w in r.words],
        lambda r: None if r.words else "no keyword named",
    )


KEYWORDS = StepSpec(
    "keywords", "needs", Keywords, 64, offline_keywords, ask_keywords, "The question's keywords."
)
QUESTION = "Who directed the film Quiet Harbour?"


@pytest.fixture
def keywords_step(monkeypatch):
    monkeypatch.setitem(STEPS, KEYWORDS.name, KEYWORDS)
    return KEYWORDS


def test_every_builtin_step_has_one_record():
    assert list(STEPS)[: len(Step)] == list(Step)
    bounds = StepTokens()
    for step in Step:
        spec = STEPS[step]
        assert spec.name == step and spec.prompt == step.value
        assert load_prompt(spec.prompt)
        assert spec.max_tokens == bounds.for_step(step) == getattr(bounds, step.value)
        assert spec.schema.model_config.get("extra") == "forbid"
        assert spec.offline is getattr(OfflineReasoner, step.value)
        assert spec.doc


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered already"):
        register_step(STEPS[Step.NEEDS])


def test_a_step_added_with_its_record_runs_in_the_llm_reasoner(keywords_step):
    model = ScriptedChatModel(script=[tool_reply("Keywords", words=["Quiet Harbour", "director"])])
    llm = LLMReasoner(model, LLMConfig(retries=0))
    out = llm.run_step(keywords_step, QUESTION)
    assert out.value == ["Quiet Harbour", "director"]
    assert (out.llm_calls, out.fallback, model.calls) == (1, False, 1)
    assert QUESTION in model.prompts[0]  # the prompt file filled with the ask's values


def test_a_step_added_with_its_record_falls_back_on_its_offline_function(keywords_step):
    model = ScriptedChatModel(
        script=[tool_reply("Keywords", words=[]), AIMessage(content="no JSON here")]
    )
    llm = LLMReasoner(model, LLMConfig(retries=1))
    out = llm.run_step(keywords_step, QUESTION)
    assert out.fallback and out.llm_calls == 2
    assert "no keyword named" in " ".join(out.notes)  # the step's own check rejected a reply
    assert out.value == ["directed", "film", "quiet", "harbour"]
    assert OfflineReasoner().run_step(keywords_step, QUESTION).value == out.value


def test_a_step_with_nothing_to_ask_makes_no_call(keywords_step):
    model = ScriptedChatModel(script=[])
    out = LLMReasoner(model).run_step(keywords_step, "  ")
    assert out.value == [] and model.calls == 0


def test_the_async_twin_runs_the_same_record(keywords_step):
    model = ScriptedChatModel(script=[tool_reply("Keywords", words=["Quiet Harbour"])])
    out = asyncio.run(LLMReasoner(model).arun_step(keywords_step, QUESTION))
    assert out.value == ["Quiet Harbour"] and out.llm_calls == 1


def test_a_new_steps_token_bound_is_its_records_unless_the_config_names_one(keywords_step):
    model = ScriptedChatModel(script=[])
    llm = LLMReasoner(model)
    request = step_request(keywords_step, llm.offline, QUESTION)
    assert llm._runner.bound(request) == 64
    config = SealConfig().override({"llm.max_tokens.keywords": 200}).llm
    llm = LLMReasoner(model, config)
    assert llm._runner.bound(request) == 200
    assert config.max_tokens.generate == 512  # the built-in steps keep their fields


def test_a_token_bound_for_no_step_is_rejected_when_the_llm_reasoner_is_built():
    config = SealConfig().override({"llm.max_tokens.keywrods": 200}).llm
    with pytest.raises(ConfigError, match=r"llm\.max_tokens\.keywrods: no LLM step"):
        LLMReasoner(ScriptedChatModel(script=[]), config)
    with pytest.raises(ConfigError, match="not a step name"):
        SealConfig().override({"llm.max_tokens.Bad-Name": 200})
    with pytest.raises(ConfigError, match="greater than or equal to 16"):
        SealConfig().override({"llm.max_tokens.keywords": 3})
