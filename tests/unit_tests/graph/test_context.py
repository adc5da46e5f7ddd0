"""A run's context: what a caller may pass, settled once into what the nodes read."""

from __future__ import annotations

import pytest

from sealgraph.config import SealConfig
from sealgraph.errors import ConfigError, InputError
from sealgraph.graph.context import RunContext, SealContext, settle
from sealgraph.reasoning.offline import OfflineReasoner


@pytest.fixture
def default(tiny_index):
    return RunContext.build(tiny_index, OfflineReasoner(), SealConfig(k=3))


def test_nothing_given_is_the_graphs_own_context(default):
    assert settle(None, default) is default
    assert settle(SealContext(), default).config == default.config
    assert settle(object(), default) is default  # a parent graph's context: not ours


def test_a_context_is_settled_once_and_overrides_only_its_fields(default):
    given = SealContext(config={"max_loops": 1})
    run = settle(given, default)
    assert settle(given, default) is run  # every node of the run reads the same value
    assert (run.config.k, run.config.max_loops) == (3, 1)
    assert run.index is default.index and run.reasoner is default.reasoner


def test_the_inputs_config_comes_last(default):
    run = settle(SealContext(config={"k": 2}), default, {"k": 4})
    assert run.config.k == 4
    assert settle(None, default, {"budget": 300}).config.budget == 300
    assert settle(None, default, {}) is default


@pytest.mark.parametrize(
    ("fields", "error", "needle"),
    [
        ({"reasoner": "llm"}, InputError, "reasoner must be a reasoner object"),
        ({"index": "./idx"}, InputError, "needs a sealgraph index"),
        ({"config": {"k": 0}}, ConfigError, "a run's k must be a number from 1 to 50"),
        ({"config": {"nope": 1}}, ConfigError, "unknown config key 'nope'"),
        ({"config": ["k", 2]}, ConfigError, "must be a mapping"),
        ({"other": 1}, InputError, "unknown run context field 'other'"),
    ],
)
def test_what_a_client_cannot_send_is_refused_where_the_context_is_made(fields, error, needle):
    with pytest.raises(error, match=needle):
        SealContext(**fields)
