"""OpenTelemetry for trust gates: a span per crossing an on-call engineer can read at a glance.

Every crossing becomes one ``GUARDRAIL`` span ``trustgate.gate {gate}`` (OpenInference
conventions: Phoenix, Arize and Langfuse show it as a guardrail) whose ``output.value``
and status description say what the gate did, in one content-free line::

    modified: field_override review.verdict (citation_replay/content_mismatch)

with an ``EVALUATOR`` child span per verifier run, a ``gen_ai.evaluation.result`` event
per verifier, one ``trustgate.override {kind}`` event per override, ``session.id`` = the
LangGraph thread, ``tag.tags`` and ``metadata`` for list views, and metrics
(``trustgate.crossings``, ``trustgate.findings``, ``trustgate.overrides``, the
``trustgate.crossing.duration`` histogram in seconds). Names are constants in
:mod:`trustgate.otel.semconv`.

Like OpenTelemetry's own instrumentations, trustgate depends on the API only: spans go
to the tracer provider passed in or the global one, and cost the API's no-op when no
SDK is installed. :func:`configure` (the ``otlp`` extra) installs an OTLP/HTTP
exporter for applications that have none.

Content stays out by default: no model text, claim text, finding message, reason or
person's name in any attribute, event, status or exception unless capture is on
(``TRUSTGATE_CAPTURE_CONTENT=true``); digests only with a per-deployment key
(``TRUSTGATE_CONTENT_KEY``), as HMAC-SHA256.

Example:
    ```python
    from trustgate import otel

    otel.configure("http://127.0.0.1:6006")      # or your own SDK setup
    with otel.pipeline_run("code-review", thread_id="t1"):
        graph.invoke(inputs, {"configurable": {"thread_id": "t1"}})
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trustgate.otel import semconv
from trustgate.otel._content import (
    CAPTURE_CONTENT_ENV,
    CONTENT_KEY_ENV,
    CONTENT_MAX_LENGTH_ENV,
    OVERRIDE_SPANS_ENV,
)
from trustgate.otel._parent import SpanLink, parent_context, span_link
from trustgate.otel.metrics import DURATION_BUCKETS
from trustgate.otel.runs import PipelineRun, pipeline_run
from trustgate.otel.spans import CrossingSpan, VerifierSpan, crossing, summarise

if TYPE_CHECKING:
    from trustgate.otel.sdk import OtlpExtraMissing, Telemetry, configure

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "CONTENT_KEY_ENV",
    "CONTENT_MAX_LENGTH_ENV",
    "DURATION_BUCKETS",
    "OVERRIDE_SPANS_ENV",
    "CrossingSpan",
    "OtlpExtraMissing",
    "PipelineRun",
    "SpanLink",
    "Telemetry",
    "VerifierSpan",
    "configure",
    "crossing",
    "parent_context",
    "pipeline_run",
    "semconv",
    "span_link",
    "summarise",
]

_SDK_NAMES = frozenset({"OtlpExtraMissing", "Telemetry", "configure"})


def __getattr__(name: str) -> Any:
    # sdk.py imports nothing of the SDK at module level either, but keeping it out of
    # ``import trustgate`` keeps that import as small as the API.
    if name in _SDK_NAMES:
        from trustgate.otel import sdk

        return getattr(sdk, name)
    raise AttributeError(f"module 'trustgate.otel' has no attribute {name!r}")
