"""Helpers shared by the crossing and run spans: tracer lookup, exception records."""

from __future__ import annotations

import traceback
import weakref
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from opentelemetry import trace as otel_trace

from trustgate.otel._content import ContentPolicy

if TYPE_CHECKING:
    from trustgate._report import Report

__all__ = [
    "NOOP_TRACER",
    "exception_attrs",
    "halt_report",
    "is_bubble_up",
    "tracer_for",
    "type_name",
]

_SCOPE = "trustgate"
NOOP_TRACER = otel_trace.NoOpTracer()


def _version() -> str:
    from trustgate._meta import VERSION

    return VERSION


_tracers: weakref.WeakKeyDictionary[Any, otel_trace.Tracer] = weakref.WeakKeyDictionary()


_last_tracer: tuple[weakref.ref[Any], bool, otel_trace.Tracer] | None = None


def tracer_for(provider: otel_trace.TracerProvider | None) -> otel_trace.Tracer:
    """The tracer of ``provider`` (``None``: the global one), or a no-op without an SDK.

    Looked up per crossing, never at import, so a provider installed later is honoured;
    cached per provider (the SDK builds a new tracer on every ``get_tracer`` call), and
    the last one answered by identity (the isinstance checks against the API's abstract
    classes cost more than the rest of the lookup).
    """
    global _last_tracer
    ambient = provider is None
    if provider is None:
        provider = otel_trace.get_tracer_provider()
    last = _last_tracer
    if last is not None and last[0]() is provider and last[1] is ambient:
        return last[2]
    tracer = _tracer_for(provider, ambient)
    try:
        _last_tracer = (weakref.ref(provider), ambient, tracer)
    except TypeError:  # a provider that is not weak-referenceable: not remembered
        _last_tracer = None
    return tracer


def _tracer_for(provider: otel_trace.TracerProvider, ambient: bool) -> otel_trace.Tracer:
    if ambient and isinstance(provider, otel_trace.ProxyTracerProvider):
        return NOOP_TRACER  # no SDK configured
    if isinstance(provider, otel_trace.NoOpTracerProvider):
        return NOOP_TRACER
    try:
        return _tracers[provider]
    except (KeyError, TypeError):
        pass  # not seen yet, or not weak-referenceable: look it up
    tracer = provider.get_tracer(_SCOPE, _version())
    with suppress(TypeError):  # a provider that is not weak-referenceable
        _tracers[provider] = tracer
    return tracer


def is_bubble_up(exc: BaseException) -> bool:
    """A LangGraph interrupt or command bubbling up: the crossing is not over."""
    try:
        from langgraph.errors import GraphBubbleUp
    except ImportError:  # pragma: no cover - langgraph is a dependency
        return False
    return isinstance(exc, GraphBubbleUp)


def halt_report(exc: BaseException) -> Report | None:
    from trustgate.errors import GateHalted

    return exc.report if isinstance(exc, GateHalted) else None


def type_name(exc: BaseException) -> str:
    cls = type(exc)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def exception_attrs(exc: BaseException, content: ContentPolicy) -> dict[str, Any]:
    """An ``exception`` event: the message and the rendered traceback (which ends with
    the message) only when capture is on; frames and type always."""
    if content.capture:
        message = content.text(str(exc))[0]
        stack = "".join(traceback.format_exception(exc))
    else:
        message = f"{type(exc).__name__} (message not captured)"
        stack = "".join(traceback.format_tb(exc.__traceback__)) + type_name(exc)
    return {
        "exception.type": type_name(exc),
        "exception.message": message,
        "exception.stacktrace": stack,
        "exception.escaped": False,
    }
