"""Deprecated: the telemetry API of the previous release, now in :mod:`trustgate.otel`.

Kept for this release only (importing it warns); new code uses :mod:`trustgate.otel`
(``otel.crossing``, ``CrossingSpan.verifier``, ``CrossingSpan.finish``). The shims map
the old calls onto it. ``input_value`` and ``output_value`` are accepted and ignored:
the crossing span now records what the gate read (the report's claims) and what it changed (the
overrides), not the node's whole update.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from opentelemetry import metrics as otel_metrics
from opentelemetry import trace as otel_trace

from trustgate._lazy import deprecated_module
from trustgate.otel import (
    CAPTURE_CONTENT_ENV,
    CONTENT_KEY_ENV,
    CONTENT_MAX_LENGTH_ENV,
    OVERRIDE_SPANS_ENV,
    CrossingSpan,
    SpanLink,
    VerifierSpan,
    parent_context,
    span_link,
)
from trustgate.otel import crossing as _crossing

if TYPE_CHECKING:
    from trustgate._report import Report
    from trustgate.otel.sdk import Telemetry, configure

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "CONTENT_KEY_ENV",
    "CONTENT_MAX_LENGTH_ENV",
    "OVERRIDE_SPANS_ENV",
    "CrossingSpan",
    "SpanLink",
    "Telemetry",
    "VerifierSpan",
    "configure",
    "crossing_span",
    "finish_crossing",
    "parent_context",
    "span_link",
    "verifier_span",
]

deprecated_module("trustgate.telemetry", "import trustgate.otel")


def crossing_span(
    gate_name: str,
    node: str,
    *,
    input_value: Any = None,
    config: Mapping[str, Any] | None = None,
    parent_run_id: Any = None,
    parent: Any = None,
    attempt: int | None = None,
    tracer_provider: otel_trace.TracerProvider | None = None,
    meter_provider: otel_metrics.MeterProvider | None = None,
    capture_content: bool | None = None,
    max_content_length: int | None = None,
    override_spans: bool | None = None,
    max_events: int | None = None,
) -> AbstractContextManager[CrossingSpan]:
    """Deprecated: :func:`trustgate.otel.crossing` (``input_value`` is ignored)."""
    return _crossing(
        gate_name,
        node,
        config=config,
        parent_run_id=parent_run_id,
        parent=parent,
        attempt=attempt,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
        max_content_length=max_content_length,
        override_spans=override_spans,
        max_events=max_events,
    )


def verifier_span(
    crossing: CrossingSpan, verifier_name: str, *, attempt: int | None = None
) -> AbstractContextManager[VerifierSpan]:
    """Deprecated: :meth:`trustgate.otel.CrossingSpan.verifier`."""
    return crossing.verifier(verifier_name)


def finish_crossing(
    crossing: CrossingSpan,
    report: Report,
    *,
    output_value: Any = None,
    exception: BaseException | None = None,
) -> None:
    """Deprecated: :meth:`trustgate.otel.CrossingSpan.finish` (``output_value`` ignored)."""
    crossing.finish(report, exception=exception)


def __getattr__(name: str) -> Any:
    if name in ("Telemetry", "configure"):
        from trustgate.otel import sdk

        return getattr(sdk, name)
    raise AttributeError(f"module 'trustgate.telemetry' has no attribute {name!r}")
