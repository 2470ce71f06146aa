"""Where a crossing's span belongs: the run that performs the crossing.

A gate runs inside a LangGraph task. Its span's parent is that task's own run: the span
a LangChain tracer (OpenInference, OpenLLMetry) keeps for the run named in the task's
``RunnableConfig``, else the current OpenTelemetry span. OpenInference never makes its
spans current, so the run id lookup is the only way to find its span; both handlers
are duck-typed, so neither package is imported here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.trace import Span

from trustgate import _compat

__all__ = ["SpanLink", "explicit_context", "parent_context", "run_config", "span_link"]

logger = logging.getLogger(__name__)

SpanLink = dict[str, Any]
"""A span's identity as plain JSON (``trace_id``, ``span_id``, ``trace_flags``)."""


def run_config(config: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """``config``, else the ``RunnableConfig`` LangChain keeps for the running node."""
    if config is not None:
        return config
    return _compat.current_config()


def _handler_span(handler: Any, run_id: Any) -> Span | None:
    """The span a LangChain tracing callback handler keeps for ``run_id``, if any.

    OpenInference's ``OpenInferenceTracer`` exposes ``get_span(run_id)``; OpenLLMetry's
    ``TraceloopCallbackHandler`` keeps ``spans: dict[UUID, SpanHolder]``.
    """
    get_span = getattr(handler, "get_span", None)
    if callable(get_span):
        try:
            span = get_span(run_id)
        except Exception as exc:
            logger.warning("tracer %s.get_span failed: %s", type(handler).__name__, exc)
            span = None
        if isinstance(span, Span):
            return span
    spans = getattr(handler, "spans", None)
    if isinstance(spans, Mapping):
        holder = spans.get(run_id)
        span = getattr(holder, "span", holder)
        if isinstance(span, Span):
            return span
    return None


def parent_context(
    config: Mapping[str, Any] | None = None, *, parent_run_id: Any = None
) -> otel_context.Context | None:
    """The OpenTelemetry context whose span is the LangChain run the caller runs in.

    ``config`` is a ``RunnableConfig`` (``None``: the one LangChain keeps for the
    running node). Its callback manager names the current run and carries the tracing
    handlers; the first handler holding a span for that run wins. ``None`` when no
    LangChain tracer knows the run (the caller then uses the current context).

    Example:
        ```python
        ctx = otel.parent_context(config)
        with tracer.start_as_current_span("mine", context=ctx): ...
        ```
    """
    cfg = run_config(config)
    if cfg is None:
        return None
    callbacks = cfg.get("callbacks")
    if callbacks is None:
        return None
    handlers: Sequence[Any]
    if isinstance(callbacks, (list, tuple)):
        handlers, run_id = callbacks, parent_run_id
    else:
        handlers = list(getattr(callbacks, "handlers", None) or ())
        run_id = (
            parent_run_id
            if parent_run_id is not None
            else getattr(callbacks, "parent_run_id", None)
        )
    if run_id is None:
        return None
    for handler in handlers:
        span = _handler_span(handler, run_id)
        if span is not None and span.get_span_context().is_valid:
            return otel_trace.set_span_in_context(span)
    return None


def span_link(config: Mapping[str, Any] | None = None) -> SpanLink | None:
    """The span of the running graph node as a plain dict that survives checkpoints.

    Resolved like :func:`parent_context` (LangChain tracer by run id, else the current
    span); ``None`` when nothing is traced. Pass it to ``crossing(..., link=...)`` to
    link a crossing to a run other than its parent (the guarded node's run, when the
    gate runs somewhere else).

    Example:
        ```python
        link = otel.span_link(config)          # inside the guarded node
        ```
    """
    ctx = parent_context(config)
    sc = otel_trace.get_current_span(ctx).get_span_context()
    if not sc.is_valid:
        return None
    return {
        "trace_id": format(sc.trace_id, "032x"),
        "span_id": format(sc.span_id, "016x"),
        "trace_flags": int(sc.trace_flags),
    }


def span_context_of(value: Any) -> otel_trace.SpanContext | None:
    """A valid SpanContext from a span link dict, Span, SpanContext or Context."""
    if value is None:
        return None
    sc: otel_trace.SpanContext | None
    if isinstance(value, otel_context.Context):
        sc = otel_trace.get_current_span(value).get_span_context()
    elif isinstance(value, Span):
        sc = value.get_span_context()
    elif isinstance(value, otel_trace.SpanContext):
        sc = value
    elif isinstance(value, Mapping):
        try:
            sc = otel_trace.SpanContext(
                trace_id=int(str(value["trace_id"]), 16),
                span_id=int(str(value["span_id"]), 16),
                is_remote=False,
                trace_flags=otel_trace.TraceFlags(int(value.get("trace_flags", 1))),
            )
        except (KeyError, TypeError, ValueError):
            logger.warning("ignoring an unusable span link: %r", value)
            return None
    else:
        return None
    return sc if sc is not None and sc.is_valid else None


def explicit_context(parent: Any) -> otel_context.Context | None:
    """A context to start a span in, from an explicit parent in any accepted form."""
    if isinstance(parent, otel_context.Context):
        return parent
    if isinstance(parent, Span):
        return otel_trace.set_span_in_context(parent)
    sc = span_context_of(parent)
    if sc is None:
        return None
    return otel_trace.set_span_in_context(otel_trace.NonRecordingSpan(sc))
