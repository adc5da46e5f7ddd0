"""What a run needs besides its state: what a caller passes, and what the run settles on.

* :class:`SealContext` is LangGraph's ``context_schema``: what a caller may pass per
  run (``graph.invoke(..., context=...)``; a JSON client such as the LangGraph
  server sends a dict). Every field is optional.
* :class:`RunContext` is what the nodes read: the run's index, reasoner, config,
  corpus knowledge and lexicon, settled once per run by :func:`settle` from the
  caller's :class:`SealContext` and the context the graph was built with.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sealgraph.config import SealConfig, apply_run_overrides, check_run_overrides
from sealgraph.errors import InputError
from sealgraph.index.protocol import SearchIndex, require_search_index
from sealgraph.model import Step
from sealgraph.reasoning.base import Reasoner
from sealgraph.text.lexicon import Lexicon, lexicon_of

if TYPE_CHECKING:  # pragma: no cover
    from sealgraph.ledger.knowledge import CorpusKnowledge

__all__ = ["KnowledgeHolder", "RunContext", "SealContext", "settle"]


_REASONER_STEPS = (*Step, "support")
"""The methods a reasoner must have: one per built-in LLM step, and packing's support."""


@dataclass(init=False)
class SealContext:
    """What a caller may change per run (LangGraph ``context_schema``).

    Pass one as ``graph.invoke(..., context=SealContext(...))`` (or a dict with
    these keys) to swap the index, reasoner or config for one run. Every field is
    optional: a field left as None is taken from the context the graph was built
    with, so ``context={}`` (what the LangGraph server sends) and ``context=None``
    run the built graph unchanged.

    It is checked where it is made, before any node runs (LangGraph makes it from a
    client's dict at the start of a run): an unknown field, an index or a reasoner that
    is not an object built in Python (a served client can send only JSON), or a config
    that sets what a run may not, is a one-line :class:`InputError` or
    :class:`ConfigError` for the caller, never a failure inside a node.
    """

    index: SearchIndex | None = None
    """A loaded index (:class:`sealgraph.index.Index`, or any other
    :class:`~sealgraph.index.protocol.SearchIndex`); None keeps the graph's own index."""
    reasoner: Reasoner | None = None
    """The offline or the LLM reasoner; None keeps the graph's own reasoner."""
    config: SealConfig | dict[str, Any] | None = None
    """A :class:`SealConfig` (from code: replaces the graph's), or a dict of a run's own
    overrides (what a JSON client can send: only the bounded keys of
    :data:`sealgraph.config.RUN_OVERRIDES`, applied on the graph's config); None keeps
    the graph's own."""
    _settled: RunContext | None = field(default=None, repr=False, compare=False)
    """The run's :class:`RunContext`, once :func:`settle` made it (one per run)."""

    def __init__(
        self,
        index: SearchIndex | None = None,
        reasoner: Reasoner | None = None,
        config: SealConfig | dict[str, Any] | None = None,
        **unknown: Any,
    ) -> None:
        if unknown:
            names = ", ".join(sorted(map(repr, unknown)))
            raise InputError(
                f"unknown run context field {names}: a run's context takes index, reasoner "
                "and config"
            )
        if index is not None:
            require_search_index(
                index,
                where="the run context (SealContext.index)",
                expected="sealgraph.index.load_index(...) in Python; a served client cannot "
                "send one",
            )
        if reasoner is not None and not all(
            callable(getattr(reasoner, step, None)) for step in _REASONER_STEPS
        ):
            raise InputError(
                f"the run context's reasoner must be a reasoner object built in Python, got "
                f"{type(reasoner).__name__}; a served graph's reasoner is chosen when it is "
                "built (SEALGRAPH_LLM), not by a client"
            )
        if config is not None and not isinstance(config, SealConfig):
            check_run_overrides(config)
        self.index = index
        self.reasoner = reasoner
        self.config = config
        self._settled = None


@dataclass(frozen=True)
class RunContext:
    """Everything a node reads besides the state, settled once per run.

    The graph makes one when it is compiled (its defaults, shared by its runs); a
    run that passes a :class:`SealContext` gets its own, made once by :func:`settle`
    and shared by all the run's nodes.
    """

    index: SearchIndex
    """The index the run searches."""
    reasoner: Reasoner
    """The reasoner of the run's steps (offline or LLM)."""
    config: SealConfig
    """The run's effective configuration, validated once."""
    lexicon: Lexicon
    """The language the run reads in: the index's own (the config's for an index
    that records none)."""
    corpus: KnowledgeHolder = field(repr=False, compare=False)
    """Holds the corpus knowledge of :attr:`index` (made on first use, then shared)."""

    @property
    def knowledge(self) -> CorpusKnowledge:
        """Corpus tables, gazetteer and passage features of :attr:`index`."""
        return self.corpus.get()

    @classmethod
    def build(
        cls,
        index: SearchIndex,
        reasoner: Reasoner,
        config: SealConfig,
        knowledge: CorpusKnowledge | None = None,
    ) -> RunContext:
        """Return the context of a graph built over ``index``.

        ``knowledge``: the index's corpus knowledge when the caller holds one
        already (an evaluation builds several graphs over one index).
        """
        return cls(
            index=index,
            reasoner=reasoner,
            config=config,
            lexicon=lexicon_of(index, config.lexicon),
            corpus=KnowledgeHolder(index, knowledge),
        )


class KnowledgeHolder:
    """The corpus knowledge of one index, made on first use (once, under a lock)."""

    def __init__(self, index: SearchIndex, knowledge: CorpusKnowledge | None = None) -> None:
        self._index = index
        self._knowledge = knowledge
        self._lock = threading.Lock()

    def get(self) -> CorpusKnowledge:
        """Return the knowledge, making it on the first call."""
        if self._knowledge is None:
            with self._lock:
                if self._knowledge is None:
                    from sealgraph.ledger.knowledge import CorpusKnowledge

                    self._knowledge = CorpusKnowledge(self._index)
        return self._knowledge


def settle(
    given: object, default: RunContext, input_config: Mapping[str, Any] | None = None
) -> RunContext:
    """Return the :class:`RunContext` of a run whose caller passed ``given``.

    ``input_config`` is the run input's own ``config`` (``{"question": q, "config":
    {"k": 2}}``): overrides of the same allow-list as a context's dict, applied last.

    ``given`` may be None (the built graph's context applies), a
    :class:`SealContext` with some fields left None (LangGraph builds one from a
    dict such as the server's ``context={}``), or any other object: a parent
    graph's own context (sealgraph running as a subgraph), which is not sealgraph's
    to read. The result is kept on the :class:`SealContext`, so a run's nodes
    share one settled context and its config is validated once.

    Raises:
        InputError: The given index is not a sealgraph index, or the config is
            neither a SealConfig nor a dict.
        ConfigError: The dict of overrides sets what a run may not.

    """
    if not isinstance(given, SealContext):
        given = None
    elif given._settled is not None:
        return given._settled
    if given is None:
        if not input_config:
            return default
        config = apply_run_overrides(default.config, input_config)
        return dataclasses.replace(default, config=config, lexicon=default.lexicon)
    index = default.index if given.index is None else given.index
    if index is not default.index:
        require_search_index(
            index,
            where="the run context (SealContext.index)",
            expected="sealgraph.index.load_index(...)",
        )
    config = _run_config(given.config, default.config)
    if input_config:
        config = apply_run_overrides(config, input_config)
    run = RunContext(
        index=index,
        reasoner=default.reasoner if given.reasoner is None else given.reasoner,
        config=config,
        lexicon=lexicon_of(index, config.lexicon),
        # Another index's knowledge is made for this run (once, on its first use).
        corpus=default.corpus if index is default.index else KnowledgeHolder(index),
    )
    given._settled = run
    return run


def _run_config(given: object, default: SealConfig) -> SealConfig:
    if given is None:
        return default
    if isinstance(given, SealConfig):
        return given
    if isinstance(given, Mapping):  # what a JSON client can send: a run's own overrides
        return apply_run_overrides(default, given)
    raise InputError(
        f"the run context's config must be a SealConfig or a dict, got {type(given).__name__}"
    )
