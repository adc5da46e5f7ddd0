"""SealConfig: defaults, round trip, dotted overrides, validation errors."""

from __future__ import annotations

import json

import pytest

from sealgraph.config import LLMConfig, SealConfig, UtilityWeights, parse_set_args
from sealgraph.errors import ConfigError, SealgraphError


def test_defaults_are_valid_and_documented():
    cfg = SealConfig()
    assert cfg.k == 5 and cfg.max_loops == 3 and cfg.replacement
    assert cfg.epsilon >= 0 and cfg.dwell >= 0
    assert SealConfig.from_dict(None) == cfg
    assert SealConfig.from_dict({}) == cfg
    assert SealConfig.from_dict(cfg.to_dict()) == cfg


def test_to_dict_is_json_safe_and_round_trips():
    cfg = SealConfig(
        k=5,
        epsilon=0.1,
        utility=UtilityWeights(novelty=0.0),
        llm=LLMConfig(base_url="http://localhost:8000/v1", model="qwen"),
    )
    data = json.loads(json.dumps(cfg.to_dict()))
    assert SealConfig.from_dict(data) == cfg
    assert data["utility"]["novelty"] == 0.0
    assert data["llm"]["base_url"] == "http://localhost:8000/v1"


def test_config_is_frozen():
    cfg = SealConfig()
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises ValidationError
        cfg.k = 7  # type: ignore[misc]


def test_partial_nested_dict_keeps_other_defaults():
    cfg = SealConfig.from_dict({"utility": {"redundancy": 0.9}, "pack": {"delta": 0.4}})
    assert cfg.utility.redundancy == 0.9
    assert cfg.utility.gap_coverage == UtilityWeights().gap_coverage
    assert cfg.pack.delta == 0.4


def test_override_with_dotted_keys_and_json_strings():
    cfg = SealConfig().override(
        {
            "k": "5",
            "epsilon": "0.05",
            "replacement": "false",
            "utility.novelty": "0.2",
            "llm.base_url": "http://127.0.0.1:8080/v1",
            "llm.model": "gpt-4o",
            "retrieval": '{"rrf_k": 10}',
        }
    )
    assert cfg.k == 5
    assert cfg.epsilon == 0.05
    assert cfg.replacement is False
    assert cfg.utility.novelty == 0.2
    assert cfg.utility.corroboration == UtilityWeights().corroboration  # siblings kept
    assert cfg.llm.base_url == "http://127.0.0.1:8080/v1"
    assert cfg.retrieval.rrf_k == 10
    assert cfg.retrieval.pool == SealConfig().retrieval.pool  # nested dicts merge


def test_override_null_and_typed_values():
    cfg = SealConfig(llm=LLMConfig(base_url="http://x")).override({"llm.base_url": "null"})
    assert cfg.llm.base_url is None
    assert SealConfig().override({"k": 4}).k == 4
    assert SealConfig().override({}) == SealConfig()
    assert SealConfig().override(None) == SealConfig()


def test_string_fields_keep_strings_that_look_like_json():
    cfg = SealConfig().override({"llm.model": "7", "tokenizer_model": "cl100k_base"})
    assert cfg.llm.model == "7"
    assert cfg.tokenizer_model == "cl100k_base"


def test_override_into_free_form_dict_fields():
    cfg = SealConfig().override({"pack.section_priors.History": "1.5"})
    assert cfg.pack.section_priors == {"History": 1.5}
    cfg = cfg.override({"pack.section_priors": '{"Mission": 0.5}'})
    assert cfg.pack.section_priors == {"History": 1.5, "Mission": 0.5}


def test_override_does_not_mutate_the_original():
    cfg = SealConfig()
    cfg.override({"k": "9"})
    assert cfg.k == 5


@pytest.mark.parametrize(
    "key",
    ["kk", "utility.novel", "utility.novelty.x", "llm.model.name", "nope.k", "pack.delta.x"],
)
def test_unknown_key_is_a_config_error(key):
    with pytest.raises(ConfigError, match="unknown config key"):
        SealConfig().override({key: "1"})


@pytest.mark.parametrize(
    "data",
    [
        {"k": 0},
        {"k": -1},
        {"epsilon": -0.01},
        {"max_loops": -1},
        {"budget": 1},
        {"utility": {"novelty": -1}},
        {"llm": {"temperature": 3}},
        {"llm": {"structured_output_method": "xml"}},
        {"pack": {"delta": 0}},
        {"k": "three"},
        {"surprise": 1},
        {"utility": {"surprise": 1}},
    ],
)
def test_invalid_values_are_config_errors(data):
    with pytest.raises(ConfigError, match="invalid configuration"):
        SealConfig.from_dict(data)


def test_error_message_names_the_field():
    with pytest.raises(ConfigError) as err:
        SealConfig().override({"utility.novelty": "-2"})
    assert "utility.novelty" in str(err.value)
    assert isinstance(err.value, SealgraphError)


@pytest.mark.parametrize("data", [[1, 2], "k=3", 3])
def test_non_mapping_config_is_a_config_error(data):
    with pytest.raises(ConfigError):
        SealConfig.from_dict(data)  # type: ignore[arg-type]


def test_parse_set_args():
    assert parse_set_args(["k=5", "utility.novelty=0.2", "llm.model=a=b"]) == {
        "k": "5",
        "utility.novelty": "0.2",
        "llm.model": "a=b",
    }
    assert parse_set_args(None) == {}
    for bad in (["k"], ["=5"], [" =5"]):
        with pytest.raises(ConfigError, match="key=value"):
            parse_set_args(bad)


def test_cli_pairs_feed_override():
    cfg = SealConfig().override(parse_set_args(["k=4", "dwell=2", "utility.redundancy=0"]))
    assert (cfg.k, cfg.dwell, cfg.utility.redundancy) == (4, 2, 0.0)
