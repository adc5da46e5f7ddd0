"""The LLM reasoner: schema-checked LLM calls, bounded in time and calls, with offline fallback.

Each SEAL step makes one call per loop when the model answers well (extraction is
batched over the new passages): one call reads the question's needs before the
search, then extract, assess and plan each loop, and generate once. Need support
for packing costs no call of its own: the assess reply names the passages that
support the needs.

**Messages.** Each step sends a short system message (the task, the reply's fields,
a one-line JSON example with placeholder values) and a user message holding the
question and the fenced data (``sealgraph/prompts/<step>.md``, one file per
:class:`~sealgraph.model.Step`). For JSON mode and
plain completions the system message also carries the reply's compact JSON schema.

**Structured output that adapts.** ``llm.structured_output_method = auto`` (the
default) first asks the way the chat model class does by default (``json_schema``
for ``ChatOpenAI``), then falls through function_calling → json_schema → json_mode
→ plain when the server answers that a method is unsupported (HTTP 4xx/5xx whose
message says so: ``response_format type must be one of "text" or "json_object"``,
``tools param requires --jinja flag``, ...) or when the reply holds no JSON at all.
The method that answers with JSON is remembered per (base_url, model) for the
reasoner's lifetime, shared by its runs, and noted in the trace when it took a
probe to find. Whatever the method, the reply is read the same way (a tool call's
arguments, else the one JSON object in its text, code fences and prose around it
allowed) and validated against its pydantic schema, which forbids unknown keys: a
reply that does not validate (``{"totally": "wrong"}``, ``{}``, plain text) is a
failure, never an empty extraction or plan.

**Retries that tell.** A rejected reply is retried (``llm.retries``) with two more
messages: the reply as the model wrote it (truncated), then what was wrong with it.
A timeout or a passing server error is retried as it was. A permanent failure (a
refused connection, a rejected key, a missing model, a server that supports no
method) is not retried: it opens the run's LLM circuit (:attr:`StepOutcome.circuit`,
kept in the graph state as ``llm_circuit``), and every later step of that run falls
back without a call. The trace keeps each rejected reply (truncated) in its note and
counts one fallback per step.

**Bounded cost.** Each request carries the step's ``llm.max_tokens.<step>`` (as
``max_tokens`` for a server with a base URL, see ``llm.max_tokens_param``); a run
makes at most ``llm.max_calls`` calls (probes and retries included; the graph
state's ``llm_calls`` counts them); and time is bounded at two levels (see
:class:`~sealgraph.config.LLMConfig`): a step, all its attempts included, gets at
most ``step_bound_s`` and never more than what the run has left of ``deadline_s``
(``time_left``, kept in the graph state); each HTTP attempt ends, by wall clock,
when what was left of the step is spent, whatever the server does (a body trickled
a byte at a time included), and each of its socket reads waits ``timeout_s`` at
most. When the run's time or calls are spent, steps fall back without making a call.

**Bounded replies.** A reply is bounded by its own size, not by the ``usage`` the
server reports: its HTTP body may hold at most
``min(64 KiB + 1 KiB × llm.max_tokens.<step>, 8 MiB)`` (8 MiB for a step without a
token bound; :func:`~sealgraph.reasoning.llm._http.reply_byte_bound`). Reading stops
as soon as a body grows past it, so a 50 MB reply is never held, and the step
falls back ("reply too large", not retried: the server ignores the token bound).
Both bounds live in the HTTP clients the reasoner gives ``ChatOpenAI``
(:mod:`sealgraph.reasoning.llm._http`).

One step is one LangChain chain built per call: the attempt (model calls, schema
and sanity checks) ``.with_retry`` for ``LLMConfig.retries`` more attempts, then
``.with_fallbacks`` to the offline reasoner, which does that step instead; the
outcome says so (and why), so the graph logs the fallback.

**Modules.**

* :mod:`.reasoner`: :class:`LLMReasoner`: ``run_step`` runs any step's record; one thin
  method (and its async twin) per built-in step.
* :mod:`._steps`: the step registry (:data:`STEPS`), one :class:`StepSpec` per step:
  its prompt, reply schema, token bound, offline fallback and ``ask`` (prompt values,
  the step's checks of a reply, how a reply becomes the step's value).
* :mod:`._convert`: a needs reading and an extraction turned into the ledger's types.
* :mod:`._attempts`: one step run end to end: the bounds checked before a call, the
  attempts (methods tried in turn), retries, the circuit and the offline fallback.
* :mod:`._structured`: the structured output methods and their fall-through, the
  messages, and the reading and checking of replies.
* :mod:`._request`: what a step asks for (``StepRequest``) and the book-keeping of
  one call of it (``StepRun``).
* :mod:`._failures`: the failure exceptions, their kinds and their one-line accounts.
* :mod:`._client`: the chat model, built from ``LLMConfig`` or prepared when given.
* :mod:`._http`: the guarded HTTP clients (wall-clock and size bounds per attempt).

**Adding an LLM step** is one record (:class:`StepSpec`) and what it names:

1. the record, registered in :mod:`._steps` (``register_step(StepSpec(name, prompt,
   schema, max_tokens, offline, ask, doc))``) with its ``ask``: the step's arguments
   to the prompt's values, the step's check of a reply and the value a reply makes;
2. its prompt file, ``sealgraph/prompts/<prompt>.md`` (``# System`` with a
   ``JSON example``, ``# User`` with the fenced data last);
3. its reply schema in :mod:`._schemas`;
4. its offline fallback in :mod:`sealgraph.reasoning.offline` (a method of
   :class:`~sealgraph.reasoning.offline.OfflineReasoner`, or a function taking the
   offline reasoner first);
5. the node that runs it, ``run.reasoner.run_step(STEPS[name], ...)``;
6. its test.

The rest is derived from the record: both reasoners run it with ``run_step`` (and
``arun_step``, awaited in async runs), its notes and events carry its name, and its
token bound is ``llm.max_tokens.<name>`` when set, else the record's ``max_tokens``.
The built-in steps (:class:`~sealgraph.model.Step`) also keep a method each on the
reasoners, and a field each in :class:`~sealgraph.config.StepTokens`. The tests
check that every built-in step has a record, a prompt file and a token bound.
"""

from sealgraph.reasoning.llm._attempts import (
    CIRCUIT_OPEN,
    MAX_CALLS_SPENT,
    MIN_ATTEMPT_S,
    RUN_DEADLINE_SPENT,
)
from sealgraph.reasoning.llm._client import METHODS, chat_model_from_config
from sealgraph.reasoning.llm._failures import (
    EXCERPT_CHARS,
    FINAL,
    PERMANENT,
    TRANSIENT,
    UNSUPPORTED,
    MethodUnavailable,
    StepFailed,
)
from sealgraph.reasoning.llm._request import FEEDBACK_CHARS
from sealgraph.reasoning.llm._schemas import (
    AnswerOut,
    Assessment,
    ExtractedEntity,
    ExtractedQualifier,
    ExtractedRelation,
    Extraction,
    GapOut,
    NeedsReading,
    QueryOut,
    QueryPlan,
)
from sealgraph.reasoning.llm._steps import STEPS, Ask, StepSpec, cited_numbers, register_step
from sealgraph.reasoning.llm._structured import schema_hint
from sealgraph.reasoning.llm.reasoner import LLMReasoner

__all__ = [
    "CIRCUIT_OPEN",
    "EXCERPT_CHARS",
    "FEEDBACK_CHARS",
    "FINAL",
    "MAX_CALLS_SPENT",
    "METHODS",
    "MIN_ATTEMPT_S",
    "PERMANENT",
    "RUN_DEADLINE_SPENT",
    "STEPS",
    "TRANSIENT",
    "UNSUPPORTED",
    "AnswerOut",
    "Ask",
    "Assessment",
    "ExtractedEntity",
    "ExtractedQualifier",
    "ExtractedRelation",
    "Extraction",
    "GapOut",
    "LLMReasoner",
    "MethodUnavailable",
    "NeedsReading",
    "QueryOut",
    "QueryPlan",
    "StepFailed",
    "StepSpec",
    "chat_model_from_config",
    "cited_numbers",
    "register_step",
    "schema_hint",
]
