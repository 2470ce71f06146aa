"""Where a gate finds the claims in a guarded node's update.

A reader sees only the raw update the guarded node produced in this step, never the
accumulated state: a changes manifest left over from an earlier round must not be
verified again as if it were new (seed 000's stale-manifest bug). A reader returns
``None`` when the update carries no claims, and raises
:class:`~trustgate.errors.ClaimParseError` when it carries malformed ones; the gate
turns both into failed findings, never into a pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, ValidationError

from trustgate.errors import ClaimParseError, ConfigurationError

__all__ = [
    "ClaimsReader",
    "FromKey",
    "FunctionReader",
    "LastAIText",
    "ToolCallArgs",
    "as_reader",
    "last_ai_message",
]


@runtime_checkable
class ClaimsReader(Protocol):
    """Reads claims from one node update (a mapping of state key to written value)."""

    @property
    def target(self) -> str:
        """Where the claims live, for the report (``"verdict"``, ``"messages[-1]"``)."""
        ...

    def read(self, update: Mapping[str, Any]) -> Any: ...


def _messages_of(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (BaseMessage, dict, str)):
        return [value]
    if isinstance(value, Sequence):
        return list(value)
    return [value]


def last_ai_message(update: Mapping[str, Any], key: str = "messages") -> AIMessage | None:
    """The last AI message among the messages this update writes, if any."""
    for message in reversed(_messages_of(update.get(key))):
        if isinstance(message, AIMessage):
            return message
    return None


class FromKey:
    """Claims held in one state key: a pydantic model, a dict, or a JSON string.

    With ``model``, dicts and JSON strings are validated into it, so a changes
    manifest from structured output and the same manifest as raw JSON text are read
    alike; text that does not parse is a malformed claim, not a crash.

    Example:
        ```python
        TrustGate("manifest", reads=FromKey("manifest", model=Manifest), verifiers=[...])
        ```
    """

    def __init__(self, key: str, *, model: type[BaseModel] | None = None) -> None:
        self.key = key
        self.model = model

    @property
    def target(self) -> str:
        return self.key

    def read(self, update: Mapping[str, Any]) -> Any:
        if self.key not in update:
            return None
        value = update[self.key]
        if value is None:
            return None
        if self.model is None:
            if isinstance(value, str):
                try:
                    return json.loads(value)
                except ValueError:
                    return value
            return value
        if isinstance(value, self.model):
            return value
        try:
            if isinstance(value, (str, bytes)):
                return self.model.model_validate_json(value)
            if isinstance(value, BaseModel):
                return self.model.model_validate(value.model_dump())
            return self.model.model_validate(value)
        except ValidationError as exc:
            raise ClaimParseError(
                f"{self.key!r} does not hold a valid {self.model.__name__}: "
                f"{exc.error_count()} error(s): {exc.errors()[0]['msg']}"
            ) from exc


class LastAIText:
    """The text of the last AI message this step wrote (string or content blocks).

    Example:
        ```python
        TrustGate("draft", reads=LastAIText(), verifiers=[...], policy=Redact())
        ```
    """

    def __init__(self, key: str = "messages") -> None:
        self.key = key

    @property
    def target(self) -> str:
        return f"{self.key}[-1].content"

    def read(self, update: Mapping[str, Any]) -> Any:
        message = last_ai_message(update, self.key)
        if message is None:
            return None
        text = message.text
        return text if text.strip() else None


class ToolCallArgs:
    """The tool calls of the last AI message (``[{"name", "args", "id"}]``).

    ``tools`` restricts the read to the named tools. Claims read here are what a tool
    would act on, so the gate stands before the tools run.

    Example:
        ```python
        TrustGate("calls", reads=ToolCallArgs(tools=["close_item"]), verifiers=[...])
        ```
    """

    def __init__(self, tools: Sequence[str] | None = None, *, key: str = "messages") -> None:
        self.tools = frozenset(tools) if tools is not None else None
        self.key = key

    @property
    def target(self) -> str:
        return f"{self.key}[-1].tool_calls"

    def read(self, update: Mapping[str, Any]) -> Any:
        message = last_ai_message(update, self.key)
        if message is None or not message.tool_calls:
            return None
        calls = [
            {"name": c["name"], "args": dict(c["args"]), "id": c.get("id")}
            for c in message.tool_calls
            if self.tools is None or c["name"] in self.tools
        ]
        return calls or None


class FunctionReader:
    """Any function ``update -> claims | None`` as a reader."""

    def __init__(self, fn: Callable[[Mapping[str, Any]], Any], *, target: str = "update") -> None:
        self.fn = fn
        self._target = target

    @property
    def target(self) -> str:
        return self._target

    def read(self, update: Mapping[str, Any]) -> Any:
        return self.fn(update)


def as_reader(spec: ClaimsReader | str | Callable[[Mapping[str, Any]], Any]) -> ClaimsReader:
    """Coerce a reader spec: a reader, a state key (``FromKey``) or a function."""
    if isinstance(spec, str):
        return FromKey(spec)
    if isinstance(spec, ClaimsReader):
        return spec
    if callable(spec):
        return FunctionReader(spec)
    raise ConfigurationError(f"cannot read claims with {spec!r}")
