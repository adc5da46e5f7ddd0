"""The chat model: built from :class:`~sealgraph.config.LLMConfig`, or prepared when given.

Either way a ``ChatOpenAI`` ends up with the OpenAI SDK's own retries off and
guarded HTTP clients (:mod:`sealgraph.reasoning.llm._http`), so that every attempt
is counted, bounded by wall clock and bounded in size by the reasoner.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from sealgraph.config import LLMConfig
from sealgraph.errors import ConfigError
from sealgraph.reasoning.llm._http import guard_client, guarded_clients

log = logging.getLogger(__package__)

METHODS = ("function_calling", "json_schema", "json_mode", "plain")
"""Structured output methods in the order ``auto`` falls through them (after the
chat model's own default method, which it tries first)."""


def chat_model_from_config(config: LLMConfig):
    """Build ``ChatOpenAI`` for any OpenAI-compatible server from :class:`LLMConfig`.

    Its HTTP clients are guarded (:func:`~sealgraph.reasoning.llm._http.guarded_clients`):
    each attempt is bounded by wall clock and its reply by size.
    """
    import os

    from langchain_openai import ChatOpenAI

    key = os.environ.get(config.api_key_env)
    if not key and config.base_url is None:
        raise ConfigError(
            f"LLM mode needs an API key in ${config.api_key_env} (or set llm.base_url "
            "for a local OpenAI-compatible server)"
        )
    http_client, http_async_client = guarded_clients()
    return ChatOpenAI(
        model=config.model,
        base_url=config.base_url,
        api_key=key or "not-needed",
        temperature=config.temperature,
        timeout=config.timeout_s,
        max_retries=0,  # retries are ours, so every attempt is counted, bounded and logged
        http_client=http_client,
        http_async_client=http_async_client,
    )


def openai_chat_class() -> type | None:
    """Return LangChain's ``BaseChatOpenAI`` (None when langchain-openai is missing)."""
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # pragma: no cover - langchain-openai is a dependency
        return None
    return BaseChatOpenAI


_SDK_CLIENTS = ("client", "async_client", "root_client", "root_async_client")


def prepared_model(model: Any) -> Any:
    """Return ``model`` ready for bounded attempts (a copy when it was not).

    For a ``ChatOpenAI``: the OpenAI SDK's own retries off (the SDK retries
    timeouts and 5xx replies itself, twice by default, each retry with the full
    timeout, which would multiply a step's time behind our back), and HTTP
    clients whose transports bound each attempt by wall clock and its reply by
    size (:mod:`sealgraph.reasoning.llm._http`). Clients the user gave the model are
    guarded in place (requests outside an attempt pass through unchanged); missing
    ones are made. The copy is rebuilt from the model's fields, as LangChain's
    configurable fields do, minus the SDK clients, so that they are rebuilt.
    """
    cls = openai_chat_class()
    if cls is None or not isinstance(model, cls):
        return model
    given = {"http_client": model.http_client, "http_async_client": model.http_async_client}
    for name, client in given.items():
        if client is not None and not guard_client(client):
            log.warning(
                "the %s given to the chat model is not an httpx client sealgraph can guard: "
                "LLM attempts through it are bounded by its timeouts only",
                name,
            )
    if model.max_retries == 0 and all(c is not None for c in given.values()):
        return model
    fields = {
        k: v
        for k, v in model.__dict__.items()
        if k in type(model).model_fields and k not in _SDK_CLIENTS
    }
    if any(c is None for c in given.values()):
        proxy = fields.get("openai_proxy") or None
        made = dict(zip(given, guarded_clients(proxy=proxy), strict=True))
        fields.update({k: v if v is not None else made[k] for k, v in given.items()})
        if "openai_proxy" in fields:  # carried by the clients made (ChatOpenAI takes one)
            fields["openai_proxy"] = None
    return type(model)(**{**fields, "max_retries": 0})


def native_method(model: Any) -> str:
    """Return the structured output method the chat model class uses by default.

    ``ChatOpenAI`` defaults to ``json_schema`` (the server constrains generation to
    the schema, the surest way for a small model); a model whose
    ``with_structured_output`` has no ``method`` (LangChain's base class) calls tools.
    """
    try:
        param = inspect.signature(type(model).with_structured_output).parameters.get("method")
    except (AttributeError, TypeError, ValueError):
        param = None
    default = getattr(param, "default", None)
    return default if default in METHODS else "function_calling"


def max_tokens_param(config: LLMConfig, base: Any) -> str:
    """Return the request field that carries the token bound for a server at ``base``.

    ``llm.max_tokens_param = auto``: the OpenAI API reads ``max_completion_tokens``,
    other servers (a base URL elsewhere) ``max_tokens``.
    """
    param = config.max_tokens_param
    if param == "auto":  # the OpenAI API reads max_completion_tokens; other servers max_tokens
        other_server = bool(base) and "api.openai.com" not in str(base)
        param = "max_tokens" if other_server else "max_completion_tokens"
    return param
