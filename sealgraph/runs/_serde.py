"""Reading stored checkpoints safely: an allow-list of types, and damaged rows refused.

:class:`StrictCheckpointSerializer` (built by :func:`strict_serializer`) is the
serializer of every saver sealgraph builds; :class:`ReadGuard` is the saver mixin
that turns a row that cannot be decoded into a :class:`~sealgraph.errors.CheckpointError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from sealgraph.errors import CheckpointError

CHECKPOINT_TYPES: frozenset[tuple[str, str]] = frozenset()
"""``(module, name)`` of every non-builtin type a sealgraph checkpoint may hold: none.

The state (:class:`sealgraph.graph.state.SealState`) and its events are plain
dicts, lists, strings, numbers, booleans and None, which msgpack stores
natively; LangGraph's own checkpoint fields are strings, numbers and dicts of
them. This was established by recording every object the serializer had to
encode as a typed extension during real runs (offline ``ask``, ``ask --step``,
``resume``, ``replay``, and LLM mode with a fake chat model): there were none.
So any typed value in a stored checkpoint was not written by sealgraph; it is
refused (see :class:`StrictCheckpointSerializer`). A type the state gains
later must be added here, as an exact ``(module, name)`` pair.
"""

# Msgpack extension codes of LangGraph's serializer (langgraph.checkpoint.serde.jsonplus).
_EXT_CONSTRUCTORS = frozenset({0, 1, 2, 4, 5})  # single arg, args, kwargs, pydantic v1/v2
_EXT_METHOD = 3  # calls a named method of a named type
_EXT_DELTA_SNAPSHOT = 7  # a plain container of other values


class StrictCheckpointSerializer(JsonPlusSerializer):
    """LangGraph's checkpoint serializer that loads only the types in :data:`CHECKPOINT_TYPES`.

    Writing is LangGraph's. Every stored value is checked before LangGraph
    rebuilds it, and nothing is imported or called to do the check:

    * msgpack: each typed extension must name an allowed ``(module, name)``;
      method-call, array and unknown extensions are refused;
    * legacy JSON: no LangChain serialisation envelope (``{"lc": ..., "type": ...}``)
      outside the allow-list;
    * pickle and any other encoding: refused (sealgraph never writes them).

    A refused value raises :class:`CheckpointError` naming the type and the store,
    rather than LangGraph's behaviour for a blocked type (a logged warning and
    the raw constructor argument silently put in the state), so a tampered run
    is never shown, replayed or resumed as if it were genuine.

    Args:
        label: The store, as named in error messages (path or password-free URL).
        allowed_types: ``(module, name)`` pairs that may be rebuilt.

    """

    def __init__(
        self,
        *,
        label: str = "(in memory)",
        allowed_types: frozenset[tuple[str, str]] = CHECKPOINT_TYPES,
    ) -> None:
        allowed = frozenset(allowed_types)
        # LangGraph's own gates, as strict as they go, behind the check of loads_typed:
        # an empty msgpack list means "LangGraph's built-in safe types only", never "all".
        super().__init__(
            pickle_fallback=False,
            allowed_json_modules=[(*module.split("."), name) for module, name in sorted(allowed)]
            or None,
            allowed_msgpack_modules=tuple(sorted(allowed)),
        )
        self.label = label
        self.allowed_types = allowed

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Load a stored value, refusing any type outside the allow-list.

        Raises:
            CheckpointError: The value names a type that is not allowed, uses an
                encoding sealgraph never writes, or cannot be decoded.

        """
        kind, payload = data
        if kind in ("null", "bytes", "bytearray"):
            return super().loads_typed(data)
        if kind == "msgpack":
            return self._loads_msgpack(payload)
        if kind == "json":
            return self._loads_json(payload)
        raise CheckpointError(self._refusal(f"a value encoded as {kind!r}"))

    def _refusal(self, what: str) -> str:
        return (
            f"refusing to read the checkpoint database {self.label}: it holds {what}, "
            "which sealgraph never writes, so it was not loaded "
            "(the database may have been tampered with; other runs in it stay readable)"
        )

    def _damaged(self, exc: BaseException) -> str:
        return (
            f"the checkpoint database {self.label} holds a damaged value "
            f"({type(exc).__name__}: {str(exc)[:120]}); it was not loaded"
        )

    def _loads_msgpack(self, payload: bytes) -> Any:
        refused: list[str] = []
        typed: list[int] = []

        def check(code: int, ext: bytes) -> None:
            # Only records what the extension names; the value itself is rebuilt by
            # LangGraph afterwards, and only when everything in it is allowed.
            typed.append(code)
            try:
                inner = ormsgpack.unpackb(ext, ext_hook=check, option=ormsgpack.OPT_NON_STR_KEYS)
            except Exception:  # a malformed extension: nothing in it may be rebuilt
                refused.append(f"an undecodable typed value (msgpack extension {code})")
                return None
            if code == _EXT_DELTA_SNAPSHOT:
                return None  # a container; its contents were just checked
            names = _ext_names(inner)
            if code not in _EXT_CONSTRUCTORS:  # method calls, arrays, unknown codes
                what = f"that calls {'.'.join(names)}" if names else f"(msgpack extension {code})"
                refused.append(f"a typed value {what}")
            elif names is None:
                refused.append(f"a malformed typed value (msgpack extension {code})")
            elif names[:2] not in self.allowed_types:
                refused.append(f"a value of type {names[0]}.{names[1]}")
            return None

        try:
            value = ormsgpack.unpackb(payload, ext_hook=check, option=ormsgpack.OPT_NON_STR_KEYS)
        except (ValueError, TypeError, RecursionError) as exc:
            raise CheckpointError(self._damaged(exc)) from None
        if refused:
            raise CheckpointError(self._refusal(refused[0]))
        if not typed:
            return value  # plain data: exactly what LangGraph would return
        return super().loads_typed(("msgpack", payload))

    def _loads_json(self, payload: bytes) -> Any:
        refused: list[str] = []
        envelopes: list[tuple[str, ...]] = []
        allowed = {(*module.split("."), name) for module, name in self.allowed_types}

        def check(obj: dict[str, Any]) -> dict[str, Any]:
            # LangChain's reviver turns {"lc": 1|2, "type": ..., "id": [...]} into an
            # object (or reads a secret from the environment); plain dicts pass.
            if isinstance(obj.get("lc"), int) and "type" in obj:
                ident = obj.get("id")
                parts = tuple(map(str, ident)) if isinstance(ident, list) else (str(ident),)
                envelopes.append(parts)
                if obj.get("type") != "constructor" or parts not in allowed:
                    refused.append(f"a serialised {obj.get('type')!s} of {'.'.join(parts)}")
            return obj

        try:
            value = json.loads(payload, object_hook=check)
        except (ValueError, TypeError, RecursionError) as exc:
            raise CheckpointError(self._damaged(exc)) from None
        if refused:
            raise CheckpointError(self._refusal(refused[0]))
        if envelopes:  # all allowed: LangGraph revives them (its json allow-list is the same)
            return super().loads_typed(("json", payload))
        return value


def _ext_names(inner: Any) -> tuple[str, ...] | None:
    """Return the ``(module, name)`` (plus the method of a method call) a decoded extension names."""
    if not isinstance(inner, (list, tuple)) or len(inner) < 3:
        return None
    if not (isinstance(inner[0], str) and isinstance(inner[1], str)):
        return None
    if len(inner) >= 4 and isinstance(inner[3], str):
        return (inner[0], inner[1], inner[3])
    return (inner[0], inner[1])


def strict_serializer(label: str = "(in memory)") -> StrictCheckpointSerializer:
    """Return the serializer every checkpointer sealgraph builds uses.

    Pass it to a saver you build yourself (``InMemorySaver(serde=strict_serializer())``)
    to get the same allow-list.
    """
    return StrictCheckpointSerializer(label=label)


_DECODE_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError)


class ReadGuard:
    """Saver mixin: a stored checkpoint that cannot be decoded is a :class:`CheckpointError`.

    Reading a run decodes every row of it (LangGraph's metadata JSON, the
    serialized checkpoint); a damaged or hand-edited row would otherwise surface
    as a traceback from deep inside LangGraph, or when the graph reads a
    checkpoint that is not a dict.
    """

    label: str

    def _damaged_row(self, config: Any, detail: str) -> CheckpointError:
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        which = f" of thread {thread!r}" if thread is not None else ""
        return CheckpointError(
            f"the checkpoint database {self.label} holds a damaged checkpoint{which} "
            f"({detail}); it was not loaded"
        )

    def _checked(self, config: Any, item: Any) -> Any:
        if item is None:
            return None
        checkpoint = item.checkpoint
        if not (
            isinstance(checkpoint, Mapping)
            and isinstance(checkpoint.get("channel_values"), Mapping)
            and isinstance(item.metadata, Mapping)
        ):
            raise self._damaged_row(config, "not a checkpoint")
        return item

    def get_tuple(self, config: Any) -> Any:
        """Return the checkpoint tuple of ``config``; a damaged row raises :class:`CheckpointError`."""
        try:
            item = super().get_tuple(config)  # type: ignore[misc]
        except _DECODE_ERRORS as exc:
            raise self._damaged_row(config, f"{type(exc).__name__}: {str(exc)[:120]}") from None
        return self._checked(config, item)

    def list(self, config: Any, **kwargs: Any) -> Iterator[Any]:
        """Yield the checkpoint tuples matching ``config``; a damaged row raises :class:`CheckpointError`."""
        rows = super().list(config, **kwargs)  # type: ignore[misc]
        try:
            while True:
                try:
                    item = next(rows)
                except StopIteration:
                    return
                except _DECODE_ERRORS as exc:
                    detail = f"{type(exc).__name__}: {str(exc)[:120]}"
                    raise self._damaged_row(config, detail) from None
                yield self._checked(config, item)
        finally:
            rows.close()  # release its cursor now, while the connection is open
