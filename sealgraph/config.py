"""One validated configuration object for the whole pipeline.

:class:`SealConfig` is a frozen pydantic model. It round-trips through
:meth:`SealConfig.to_dict` / :meth:`SealConfig.from_dict`, and
:meth:`SealConfig.override` applies dotted ``key=value`` overrides as given on the
command line (``--set utility.novelty=0.2``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from sealgraph.errors import ConfigError, TokenizerError
from sealgraph.model import Step
from sealgraph.packing.config import STRICT, PackConfig

__all__ = [
    "RUN_OVERRIDES",
    "LLMConfig",
    "PackConfig",
    "RetrievalConfig",
    "SealConfig",
    "StepTokens",
    "UtilityWeights",
    "apply_run_overrides",
    "check_run_overrides",
    "flatten_overrides",
]


class RetrievalConfig(BaseModel):
    """Hybrid retrieval settings."""

    model_config = STRICT

    lexical_weight: float = Field(default=1.0, ge=0)
    """Weight of the lexical (BM25) ranking in the fusion."""
    dense_weight: float = Field(default=1.0, ge=0)
    """Weight of the dense ranking in the fusion (ignored without an embedder)."""
    rrf_k: int = Field(default=60, ge=1)
    """Reciprocal-rank-fusion constant: score = Σ w / (rrf_k + rank)."""
    pool: int = Field(default=30, ge=1)
    """Candidates taken from each retriever before fusion."""


class UtilityWeights(BaseModel):
    """λ weights of the entity-first utility S(c) = λ1·GapCov + λ2·Corr + λ3·Nov − λ4·Red.

    Defaults come from the sweep recorded in docs/benchmarks.md (HotpotQA k=3 and
    2WikiMultiHopQA k=5 dev samples): novelty is logged for every candidate but
    weighted 0, because on encyclopedic corpora "brings new entities" favours
    distractors over the second hop.
    """

    model_config = STRICT

    gap_coverage: float = Field(default=1.0, ge=0)
    """λ1: how much of the open gaps the candidate closes."""
    corroboration: float = Field(default=0.4, ge=0)
    """λ2: how well the candidate links to entities already in the ledger and the question."""
    novelty: float = Field(default=0.0, ge=0)
    """λ3: share of the candidate's entities not yet in the ledger."""
    redundancy: float = Field(default=0.1, ge=0)
    """λ4: overlap with passages already in the evidence set."""


class StepTokens(BaseModel):
    """Most tokens one reply of each LLM step may generate (``llm.max_tokens.<step>``).

    Sent with every request, so a small model cannot generate until its context is
    full. A reply cut at the bound is rejected (and says so), then retried. None sends
    no bound for that step.

    The built-in steps have a field each. A step added later (its record in
    :data:`sealgraph.reasoning.llm.STEPS`) brings its own bound and needs no field:
    ``llm.max_tokens.<its name>=N`` overrides it all the same. Such a name is checked
    against the registered steps when the LLM reasoner is built (no step of that
    name is a :class:`~sealgraph.errors.ConfigError` there).
    """

    model_config = ConfigDict(**{**STRICT, "extra": "allow"})
    __pydantic_extra__: dict[str, Annotated[int, Field(ge=16)] | None] = Field(init=False)

    needs: int | None = Field(default=256, ge=16)
    """Reading the question's needs."""
    extract: int | None = Field(default=768, ge=16)
    """One batched extraction over the new passages."""
    assess: int | None = Field(default=384, ge=16)
    """The sufficiency gate's gaps and supporting passages."""
    plan: int | None = Field(default=256, ge=16)
    """The micro-queries of one loop."""
    generate: int | None = Field(default=512, ge=16)
    """The cited answer."""

    @model_validator(mode="after")
    def _step_names(self) -> StepTokens:
        for name in self.model_extra or {}:
            if not _STEP_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a step name (lowercase letters, digits, _)")
        return self

    def for_step(self, step: Step | str, default: int | None = None) -> int | None:
        """Return the token bound of LLM step ``step``: the one set here, else ``default``.

        ``default`` is the step's own bound (its record's ``max_tokens``); every
        built-in step has a field here, so its bound is always the field's.
        """
        name = str(step)
        if name in type(self).model_fields:
            return getattr(self, name)
        return (self.model_extra or {}).get(name, default)

    def named(self) -> tuple[str, ...]:
        """Return the step names this config sets a bound for beyond the built-in fields."""
        return tuple(self.model_extra or {})


_STEP_NAME = re.compile(r"[a-z][a-z0-9_]*")


StructuredOutputMethod = Literal["auto", "json_schema", "function_calling", "json_mode", "plain"]
"""How a reply is asked for: ``auto`` (adapt to the server), one of LangChain's
``with_structured_output`` methods, or ``plain`` (a plain completion whose text is
searched for one JSON object)."""


class LLMConfig(BaseModel):
    """Settings of the OpenAI-compatible chat model used in LLM mode."""

    model_config = STRICT

    model: str = "gpt-4o-mini"
    """Chat model name."""
    base_url: str | None = None
    """Base URL of any OpenAI-compatible server; None uses the OpenAI API."""
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable that holds the API key."""
    temperature: float = Field(default=0.0, ge=0, le=2)
    """Sampling temperature (0 keeps runs as repeatable as the server allows)."""
    timeout_s: float = Field(default=30.0, gt=0)
    """Timeout of each socket operation of an HTTP attempt (connect, each read) in
    seconds. The attempt as a whole ends by wall clock when what is left of its step
    (and of the run's ``deadline_s``) is spent, whatever the server does: a server
    that trickles its reply a byte at a time is cut there too."""
    retries: int = Field(default=1, ge=0, le=5)
    """Retries of a failed, unparsable or schema-invalid reply before the step falls back
    to the offline reasoner. A retry after a rejected reply tells the model what was
    wrong with it; a permanent error (connection refused, authentication, an
    unsupported method) is never retried: it opens the run's LLM circuit."""
    step_deadline_s: float | None = Field(default=None, gt=0)
    """Overall bound of one LLM step, all its attempts included; None derives it as
    ``timeout_s × (retries + 1)``. A step never gets more than what is left of
    ``deadline_s``; when its time is spent, no further attempt starts and the step
    falls back."""
    deadline_s: float = Field(default=60.0, gt=0)
    """LLM time one run may spend over all its steps and loops (the graph state's
    ``llm_seconds`` counts it, so a resumed run keeps its account). Once it is spent,
    the remaining steps go straight to the offline reasoner, no call made, and each
    logs the fallback ("run deadline spent")."""
    structured_output_method: StructuredOutputMethod = "auto"
    """How replies are asked for. ``auto`` starts with the chat model's own default
    method (``json_schema`` for ``ChatOpenAI``) and, when the server answers that a
    method is unsupported (HTTP 4xx/5xx saying so) or the model's reply holds no JSON
    at all, falls through function_calling → json_schema → json_mode → plain; the
    method that works is remembered per (base_url, model) for the reasoner's
    lifetime. A named method is used alone: a server that rejects it opens the run's
    LLM circuit (see docs/llm.md)."""
    max_tokens: StepTokens = Field(default_factory=StepTokens)
    """Most tokens each step's reply may generate (``llm.max_tokens.generate=1024``).
    A reply is also bounded by its own size, whatever the server reports: past
    64 KiB + 1 KiB per token (8 MiB at most, and for a step without a bound) it is cut
    while it arrives and rejected (see :func:`sealgraph.reasoning._http.reply_byte_bound`)."""
    max_tokens_param: Literal["auto", "max_tokens", "max_completion_tokens"] = "auto"
    """Request field that carries the bound. ``ChatOpenAI`` sends
    ``max_completion_tokens``, which llama-cpp-python's server (and llama.cpp's before
    2026) ignores; ``auto`` sends ``max_tokens`` to any server with a base URL and
    ``max_completion_tokens`` to the OpenAI API (which rejects the two together)."""
    max_calls: int | None = Field(default=60, ge=0)
    """LLM calls one run may make over all its steps, retries and method probes
    included (the graph state's ``llm_calls`` counts them). Once spent, the remaining
    steps fall back without a call ("llm.max_calls spent"). None: no bound but
    ``deadline_s``."""

    @property
    def step_bound_s(self) -> float:
        """Seconds one LLM step may take before ``deadline_s`` is considered."""
        if self.step_deadline_s is not None:
            return self.step_deadline_s
        return self.timeout_s * (self.retries + 1)


class SealConfig(BaseModel):
    """Every knob of the SEAL controller, retrieval, packing and generation."""

    model_config = STRICT

    k: int = Field(default=5, ge=1, le=100)
    """Fixed evidence-set size: |E_t| = k at every step."""
    max_loops: int = Field(default=3, ge=0, le=50)
    """Loop budget L: most repair loops after the initial search."""
    epsilon: float = Field(default=0.02, ge=0)
    """Hysteresis ε: swap only if S(c*) > S(victim) + ε."""
    dwell: int = Field(default=1, ge=0)
    """Loops a newly inserted passage is protected from eviction."""
    replacement: bool = True
    """False turns fixed-k replacement off: new passages are appended (the ``expand`` ablation)."""
    micro_query_k: int = Field(default=15, ge=1)
    """Candidates fetched per micro-query."""
    max_micro_queries: int = Field(default=6, ge=1)
    """Most micro-queries issued in one loop (one per gap, highest-priority gaps first)."""
    budget: int = Field(default=800, ge=16)
    """Token budget of the final rendered context."""
    tokenizer_model: str = "gpt-4o"
    """Model (or tiktoken encoding name) whose tokenizer counts the budget."""
    min_answerability: float = Field(default=0.0, ge=0.0, le=1.0)
    """Offline answers decline below this answerability: the share of the question's
    corpus-rare words that the best one or two packed passages hold
    (:mod:`sealgraph.reasoning.answerability`). 0 (the default) never declines for it:
    on the tuning half of the development sets no threshold declined any unanswerable
    question while keeping answerable declines at or under 10 % on every set
    (docs/benchmarks.md), so the score is reported for you to calibrate on your own
    questions. An LLM's answer is its own judgement; the score is still reported."""
    decline_unseen_names: bool = True
    """Offline answers decline when the question names something no chunk of the corpus
    holds ("gRPC" over docs that never write it; a typo of a word in the packed passages
    aside), ``missing`` naming it (:func:`sealgraph.reasoning.answerability.unseen_names`).
    An LLM's answer is its own judgement."""
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    """Hybrid retrieval settings."""
    utility: UtilityWeights = Field(default_factory=UtilityWeights)
    """λ weights of the entity-first utility."""
    pack: PackConfig = Field(default_factory=PackConfig)
    """Packing settings."""
    llm: LLMConfig = Field(default_factory=LLMConfig)
    """LLM-mode settings (unused offline)."""
    lexicon: str = "english"
    """Language the offline reader reads (stop words, question words, stemmer...; see
    :mod:`sealgraph.text.lexicon`): ``"english"`` or a ``"package.module:NAME"`` path to a
    :class:`sealgraph.text.lexicon.Lexicon`. New indexes are built with it and record it;
    a run over an index reads with the index's lexicon (this one only for an index
    that records none)."""

    @field_validator("lexicon")
    @classmethod
    def _known_lexicon(cls, value: str, info: ValidationInfo) -> str:
        from sealgraph.text.lexicon import get_lexicon, import_lexicon

        value = value.strip()
        # A config built in Python (no validation context) or from the user's own
        # flags may import a lexicon module; one built from data may not.
        trusted = not (info.context or {}).get("untrusted", False)
        try:
            (import_lexicon if trusted else get_lexicon)(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("tokenizer_model")
    @classmethod
    def _known_tokenizer(cls, value: str) -> str:
        from sealgraph.text.tokens import encoding_for_model

        try:
            encoding_for_model(value)
        except TokenizerError as exc:
            raise ValueError(str(exc)) from None
        return value.strip()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, trusted: bool = True) -> SealConfig:
        """Build a config from a (possibly partial, possibly nested) dict.

        Args:
            data: The settings.
            trusted: Whether the dict is the user's own (code, flags, the server's
                environment). A dict from data (a run database, a served client)
                passes False: it may not name a lexicon module to import.

        """
        if data is not None and not isinstance(data, Mapping):
            raise ConfigError(
                f"invalid configuration: expected a mapping of settings, got {type(data).__name__}"
            )
        try:
            return cls.model_validate(dict(data or {}), context={"untrusted": not trusted})
        except ValidationError as exc:
            raise ConfigError(_explain(exc)) from None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe nested dict that :meth:`from_dict` turns back into this config."""
        return self.model_dump(mode="json")

    def override(self, overrides: Mapping[str, Any] | None, *, trusted: bool = True) -> SealConfig:
        """Return a copy with dotted-key overrides applied (``{"utility.novelty": 0.2}``).

        Nested dicts are merged too, so ``{"pack": {"delta": 0.4}}`` works.
        String values are parsed as JSON when they look like numbers, booleans or objects,
        except for string settings, which keep the text as given (``llm.model=7``).
        Free-form dict settings take new keys (``pack.section_priors.History=1.5``).
        ``trusted`` as in :meth:`from_dict`.
        """
        if not overrides:
            return self
        data = self.to_dict()
        for key, value in overrides.items():
            _set_dotted(data, str(key), value)
        return SealConfig.from_dict(data, trusted=trusted)


_DEFAULTS = SealConfig()
"""The default config: the settings that exist, for checking a run's keys."""

RUN_OVERRIDES: Mapping[str, tuple[float, float | None]] = {
    "k": (1, 50),
    "max_loops": (0, 10),
    "budget": (16, 32_000),
    "retrieval.pool": (1, 500),
    "max_micro_queries": (1, 20),
    "micro_query_k": (1, 100),
    "min_answerability": (0.0, 1.0),
    "llm.max_calls": (0, None),
    "llm.deadline_s": (0, None),
}
"""What one run may change, and within which bounds: ``key -> (least, most)``.

A run's own overrides (the input's ``config``, or a dict in the run context) come
from whoever calls a graph, which for a served graph is a stranger: they order
bounded work, nothing else. A most of None means "no more than the graph was
built with" (a client may lower the LLM calls and time a run may spend, never
raise them). Everything else, the LLM client and its key included, is fixed when
the graph is built."""


def check_run_overrides(overrides: object) -> dict[str, Any]:
    """Check a run's own overrides as far as they can be without the graph's config.

    The shape (a mapping), the keys (settings that exist) and the values of the
    allow-listed keys (:data:`RUN_OVERRIDES`: numbers within their fixed bounds) are
    checked where a run's input or context is made, before any node runs; a key
    outside the allow-list is left to :func:`apply_run_overrides`, which accepts it
    only when it repeats the graph's own value. Returns the overrides as dotted keys.

    Raises:
        ConfigError: Not a mapping, an unknown key, or an allow-listed value out of bounds.

    """
    if not isinstance(overrides, Mapping):
        raise ConfigError(
            f"a run's config must be a mapping of settings, got {type(overrides).__name__}"
        )
    try:
        flat = flatten_overrides(overrides)
    except RecursionError:
        raise ConfigError("a run's config is nested too deeply") from None
    known = flatten_overrides(_DEFAULTS.to_dict())
    for key, raw in flat.items():
        if key not in known and not _free_form_dict(key.split(".")[:-1]):
            raise ConfigError(f"unknown config key {key!r} in a run's config")
        if key in RUN_OVERRIDES:
            _check_bounds(key, raw, RUN_OVERRIDES[key][1])
    return flat


def _check_bounds(key: str, raw: Any, most: float | None) -> Any:
    # A run's value of an allow-listed key: a number within (least, most).
    least = RUN_OVERRIDES[key][0]
    value = coerce_value(raw)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not least <= value
        or (most is not None and value > most)
    ):
        bound = "no more than the graph's" if RUN_OVERRIDES[key][1] is None else str(most)
        raise ConfigError(f"a run's {key} must be a number from {least:g} to {bound}, got {raw!r}")
    return value


def apply_run_overrides(base: SealConfig, overrides: Mapping[str, Any] | None) -> SealConfig:
    """Return ``base`` with a run's own overrides applied, as :data:`RUN_OVERRIDES` allows.

    Nested dicts count as dotted keys (``{"retrieval": {"pool": 50}}``). A key
    outside the allow-list is accepted only when it sets the value ``base``
    already has (a run recorded by ``ask`` repeats the settings its graph was
    built with). Values are validated strictly; nothing is imported.

    Raises:
        ConfigError: A key that a run may not change, or a value out of its bounds.

    """
    if not overrides:
        return base
    flat = check_run_overrides(overrides)
    current = flatten_overrides(base.to_dict())
    changed = {}
    for key, raw in flat.items():
        value = coerce_value(raw) if not isinstance(current.get(key), str) else raw
        if key in current and _same(value, current[key]):
            continue  # sets what the graph already has
        if key not in RUN_OVERRIDES:
            allowed = ", ".join(RUN_OVERRIDES)
            raise ConfigError(
                f"a run may not change {key!r}: its config may set only {allowed} (within "
                f"bounds); everything else is chosen when the graph is built"
            )
        most = RUN_OVERRIDES[key][1]
        changed[key] = _check_bounds(key, raw, current.get(key) if most is None else most)
    return base.override(changed, trusted=False) if changed else base


def flatten_overrides(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Return overrides as dotted keys (``{"llm": {"model": "m"}}`` -> ``{"llm.model": "m"}``).

    A free-form dict setting (``pack.section_priors``) stays one key.
    """
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and not _free_form_dict(name.split(".")):
            out.update(flatten_overrides(value, name + "."))
        else:
            out[name] = value
    return out


def _same(a: Any, b: Any) -> bool:
    return (type(a) is type(b) and a == b) or (
        isinstance(a, int | float)
        and isinstance(b, int | float)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


def parse_set_args(pairs: list[str] | None) -> dict[str, Any]:
    """Parse CLI ``key=value`` pairs into a dotted-override dict."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ConfigError(f"--set expects key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        if not key.strip():
            raise ConfigError(f"--set expects key=value, got {pair!r}")
        out[key.strip()] = value
    return out


def coerce_value(value: Any) -> Any:
    """Read a ``--set`` value as JSON when it is JSON (numbers, booleans, objects), else as text.

    Raises:
        ConfigError: The value is JSON nested too deeply to read.

    """
    if isinstance(value, str):
        try:
            return json.loads(value)
        except RecursionError:
            raise ConfigError(f"config value nested too deeply: {value[:60]!r}...") from None
        except ValueError:
            return value
    return value


def _free_form_dict(parts: list[str]) -> bool:
    """Return True when the dotted path names a ``dict[...]`` field (not a nested model)."""
    model: type[BaseModel] = SealConfig
    for i, part in enumerate(parts):
        field = model.model_fields.get(part)
        if field is None:
            return False
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            model = ann
            continue
        return i == len(parts) - 1 and get_origin(ann) is dict
    return False


def _open_model(parts: list[str]) -> bool:
    """Return True when the dotted path names a settings model that takes new keys.

    That is ``llm.max_tokens``, which takes a bound for any LLM step
    (:class:`StepTokens`); its own validation checks the names and values.
    """
    model: type[BaseModel] = SealConfig
    for part in parts:
        field = model.model_fields.get(part)
        ann = None if field is None else field.annotation
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return False
        model = ann
    return bool(parts) and model.model_config.get("extra") == "allow"


def _set_dotted(data: dict[str, Any], key: str, raw: Any) -> None:
    parts = key.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            raise ConfigError(f"unknown config key {key!r}")
        node = child
    leaf = parts[-1]
    if leaf not in node and not _free_form_dict(parts[:-1]) and not _open_model(parts[:-1]):
        raise ConfigError(f"unknown config key {key!r}")
    current = node.get(leaf)
    keep_text = isinstance(current, str) and isinstance(raw, str) and raw.strip() != "null"
    value = raw if keep_text else coerce_value(raw)
    if isinstance(current, dict) and isinstance(value, Mapping):
        node[leaf] = {**node[leaf], **value}
    else:
        node[leaf] = value


def _explain(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "config"
        lines.append(f"{loc}: {err['msg']}")
    return "invalid configuration: " + "; ".join(lines)
