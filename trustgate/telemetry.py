"""OpenTelemetry for trust gates: one span per crossing, one event per override, metrics.

Operators look for overrides in their tracing backend, so every crossing becomes one
``GUARDRAIL`` span (OpenInference conventions: Phoenix, Langfuse and Arize show it as
a guardrail) named ``trustgate.gate {gate}``, with one ``EVALUATOR`` child span per
verifier run and one ``trustgate.override`` span event per override. Because some
backends drop span events, the overrides are also summarised in attributes, and
``override_spans=True`` (or ``TRUSTGATE_OVERRIDE_SPANS=true``) emits each override as
a zero-length child span as well.

Nothing is cached at import time: the tracer and meter are looked up from the
provider passed in (``tracer_provider=`` / ``meter_provider=``) or the global one at
each crossing, so a provider installed later is honoured. With no SDK configured the
API hands out non-recording spans and the cost is the API no-op (the attribute work
is skipped when the span does not record).

What the gate must call (the integration contract)
--------------------------------------------------
Three calls, all in ``trustgate/gate.py``; ``TrustGate.check`` becomes (``acheck``
the same, with ``await _verify_async(...)`` inside the ``verifier_span`` block)::

    from trustgate import telemetry

    def check(self, update, *, node="", state=None, context=None, attempt=1,
              meta=None, config=None, parent=None):
        with telemetry.crossing_span(self.name, node, input_value=dict(update),
                                     config=config, parent=parent,
                                     attempt=attempt) as span:        # (1)
            meta = {...}
            crossing, has_claims = self._start(update, node, state, context, attempt)
            ...
            if not self._restore(crossing, key) and has_claims:
                for v in self.verifiers:
                    try:
                        with telemetry.verifier_span(span, v.name) as vs:   # (2)
                            found = _verify_sync(v, crossing.claims, crossing.evidence)
                            vs.record(found)
                        crossing.findings.extend(found)
                    except VerifierFailure as exc:
                        self._fail_verifier(crossing, exc)
                        break
            self._decide_once(crossing, meta, key)          # may raise GraphInterrupt
            result = self._finish(crossing, meta)
            telemetry.finish_crossing(span, result.report,
                                      output_value=result.update)      # (3)
            return result

1. ``crossing_span(gate_name, node, input_value=..., config=..., parent=...)``
   around the whole crossing, in the thread/task that runs it; ``node`` is the
   guarded node's name. The parent is found in this order: ``parent`` (see below),
   the span a LangChain tracer keeps for the run in ``config`` (``None`` picks up the
   ``RunnableConfig`` LangChain keeps in a context variable inside any LangGraph
   node, so ``guard()``'s gate node and the create_agent middleware need not pass
   it), else the current OpenTelemetry span. With OpenInference's instrumentation
   (which never makes its spans current) that is the run-id lookup; with
   OpenLLMetry's it is either; under a plain outer span it is the current span.
   Under ``guard()`` this nests the gate span in the gate node's span (a sibling
   right after the guarded node's span). To nest it in the guarded node's span
   itself, capture ``span_link(config)`` (a plain dict that survives checkpoints)
   while the guarded node runs (in ``wiring._wrap_node``, next to the staged
   update) and pass it as ``parent=``.
2. ``verifier_span(span, verifier_name)`` around each verifier run, with
   ``.record(findings)`` on success. An exception escaping it (a crash, a
   ``VerifierFailure``, a timeout) marks that verifier span ``error`` with the
   exception recorded, and is re-raised for the gate to handle as today. Spans a
   verifier opens in the gate's verifier thread nest under it, because the gate runs
   that thread in ``contextvars.copy_context()``.
3. ``finish_crossing(span, report, output_value=...)`` once, with the crossing's
   :class:`~trustgate.report.Report`, before leaving the ``with`` block: decision and
   override attributes, one ``trustgate.override`` event per override, status
   (ERROR only when ``report.error`` is set: a verifier or the gate crashed; a
   policy halt is an outcome, not an error) and the metrics. Call it on every path
   that returns a result, halts included.

A ``GraphInterrupt`` (a :class:`~trustgate.policy.Review` pausing the run) escaping
the block exports nothing: the crossing runs again on resume and finishes then, so a
reviewed crossing has exactly one span. The verifier spans of the paused attempt are
dropped with it (on resume the gate restores the findings instead of re-running the
verifiers, so the final span has no verifier children then; the findings are in its
attributes). Any other exception escaping the block ends the span with status ERROR
and the exception recorded, and counts a crossing with decision ``error``; a
:class:`~trustgate.errors.GateHalted` escaping it counts as ``halted``, not an error.

Content
-------
``input.value``, ``output.value`` and the overrides' before/after values are recorded
as sha256 and length only, unless content capture is on (``capture_content=True`` or
``TRUSTGATE_CAPTURE_CONTENT=true``); captured text is truncated to
``max_content_length`` (default 4096, ``TRUSTGATE_CONTENT_MAX_LENGTH``).

Metrics
-------
``trustgate.crossings`` (gate, node, decision), ``trustgate.findings`` (gate,
verifier, code, status, severity), ``trustgate.overrides`` (gate, kind) and the
histogram ``trustgate.gate.duration`` in seconds (gate, decision).

Example:
    ```python
    from trustgate import telemetry

    telemetry.configure()                     # OTLP/HTTP, honours OTEL_EXPORTER_OTLP_*
    graph = trustgate.guard(builder, {"reviewer": gate})
    graph.invoke(inputs)                      # one GUARDRAIL span per crossing
    ```
"""

from __future__ import annotations

import hashlib
import os
import time
import weakref
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, suppress
from contextvars import Token
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from langchain_core.runnables.config import var_child_runnable_config
from opentelemetry import context as otel_context
from opentelemetry import metrics as otel_metrics
from opentelemetry import trace as otel_trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from pydantic_core import to_json

from trustgate.findings import Finding
from trustgate.report import OverrideRecord, Report

__all__ = [
    "CAPTURE_CONTENT_ENV",
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

CAPTURE_CONTENT_ENV = "TRUSTGATE_CAPTURE_CONTENT"
CONTENT_MAX_LENGTH_ENV = "TRUSTGATE_CONTENT_MAX_LENGTH"
OVERRIDE_SPANS_ENV = "TRUSTGATE_OVERRIDE_SPANS"

_SCOPE = "trustgate"
_DEFAULT_MAX_CONTENT = 4096
_DEFAULT_MAX_EVENTS = 128
_TRUE = frozenset({"1", "true", "yes", "on"})

# OpenInference semantic conventions (kept as literals: no extra dependency).
SPAN_KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
INPUT_MIME = "input.mime_type"
OUTPUT_VALUE = "output.value"
OUTPUT_MIME = "output.mime_type"

Outcome = Literal["pass", "fail", "error"]


# --- providers ------------------------------------------------------------------------

# Keyed by provider object: looked up per crossing (never at import), so a provider
# set later, or one passed per call, is honoured; the cache only saves re-creating
# the tracer/instruments for the same provider. While no global provider is set the
# API hands back its proxies, whose tracers and meters would latch onto whatever
# provider is set later (and each proxy meter is kept by the API for ever): with no
# SDK, trustgate uses plain no-op objects instead and skips all attribute work.
_tracers: weakref.WeakKeyDictionary[Any, otel_trace.Tracer] = weakref.WeakKeyDictionary()
_instruments: weakref.WeakKeyDictionary[Any, _Instruments] = weakref.WeakKeyDictionary()
_NOOP_TRACER = otel_trace.NoOpTracer()


def _version() -> str:
    from trustgate import __version__

    return __version__


def _tracer(provider: otel_trace.TracerProvider | None) -> otel_trace.Tracer:
    if provider is None:
        provider = otel_trace.get_tracer_provider()
        if isinstance(provider, otel_trace.ProxyTracerProvider):
            return _NOOP_TRACER  # no SDK configured
    if isinstance(provider, otel_trace.NoOpTracerProvider):
        return _NOOP_TRACER
    try:
        return _tracers[provider]
    except (KeyError, TypeError):
        pass
    tracer = provider.get_tracer(_SCOPE, _version())
    with suppress(TypeError):  # a provider that is not weak-referenceable
        _tracers[provider] = tracer
    return tracer


@dataclass(frozen=True, slots=True)
class _Instruments:
    crossings: otel_metrics.Counter
    findings: otel_metrics.Counter
    overrides: otel_metrics.Counter
    duration: otel_metrics.Histogram
    noop: bool = False


def _make_instruments(meter: otel_metrics.Meter, noop: bool) -> _Instruments:
    return _Instruments(
        crossings=meter.create_counter(
            "trustgate.crossings", unit="{crossing}", description="Trust-gate crossings"
        ),
        findings=meter.create_counter(
            "trustgate.findings", unit="{finding}", description="Verifier findings"
        ),
        overrides=meter.create_counter(
            "trustgate.overrides", unit="{override}", description="Overrides of model output"
        ),
        duration=meter.create_histogram(
            "trustgate.gate.duration", unit="s", description="Duration of one crossing"
        ),
        noop=noop,
    )


_NOOP_INSTRUMENTS = _make_instruments(otel_metrics.NoOpMeter(_SCOPE), noop=True)


def _meters(provider: otel_metrics.MeterProvider | None) -> _Instruments:
    if provider is None:
        provider = otel_metrics.get_meter_provider()
        if type(provider).__name__ == "_ProxyMeterProvider":
            return _NOOP_INSTRUMENTS  # no SDK configured
    if isinstance(provider, otel_metrics.NoOpMeterProvider):
        return _NOOP_INSTRUMENTS
    try:
        return _instruments[provider]
    except (KeyError, TypeError):
        pass
    inst = _make_instruments(provider.get_meter(_SCOPE, _version()), noop=False)
    with suppress(TypeError):
        _instruments[provider] = inst
    return inst


# --- content ---------------------------------------------------------------------------


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default


def _serialise(value: Any) -> tuple[str, str]:
    """(text, mime type) of a value: strings as text, everything else as JSON."""
    if isinstance(value, str):
        return value, "text/plain"
    try:
        return to_json(value, fallback=repr).decode("utf-8"), "application/json"
    except Exception:  # a value that cannot even be repr'd still gets a span
        return repr(value), "text/plain"


def _digest(text: str) -> tuple[str, int]:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), len(text)


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"…[truncated {len(text) - limit} chars]"


@dataclass(frozen=True, slots=True)
class _ContentPolicy:
    capture: bool
    limit: int

    def value_attrs(self, prefix: str, value: Any, *, openinference: bool) -> dict[str, Any]:
        """Attributes for one recorded value: full text when captured, else hash+length."""
        text, mime = _serialise(value)
        sha, length = _digest(text)
        attrs: dict[str, Any] = {
            f"trustgate.{prefix}.sha256": sha,
            f"trustgate.{prefix}.length": length,
        }
        if openinference:
            if self.capture:
                attrs[f"{prefix}.value"] = _truncate(text, self.limit)
                attrs[f"{prefix}.mime_type"] = mime
            else:
                attrs[f"{prefix}.value"] = f"[content not captured: sha256={sha} length={length}]"
                attrs[f"{prefix}.mime_type"] = "text/plain"
        elif self.capture:
            attrs[f"trustgate.{prefix}"] = _truncate(text, self.limit)
        return attrs


_NO_CAPTURE = _ContentPolicy(capture=False, limit=_DEFAULT_MAX_CONTENT)


def _content_policy(capture: bool | None, limit: int | None) -> _ContentPolicy:
    capture = _env_flag(CAPTURE_CONTENT_ENV) if capture is None else bool(capture)
    if not capture:
        return _NO_CAPTURE
    if limit is None:
        limit = _env_int(CONTENT_MAX_LENGTH_ENV, _DEFAULT_MAX_CONTENT)
    return _ContentPolicy(capture=True, limit=limit)


# --- parent resolution ----------------------------------------------------------------------


def _run_config(config: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if config is not None:
        return config
    found = var_child_runnable_config.get()
    return found if isinstance(found, Mapping) else None


def _handler_span(handler: Any, run_id: Any) -> Span | None:
    """The span a LangChain tracing callback handler keeps for ``run_id``, if any.

    OpenInference's ``OpenInferenceTracer`` exposes ``get_span(run_id)`` (it never
    makes its spans current); OpenLLMetry's ``TraceloopCallbackHandler`` keeps
    ``spans: dict[UUID, SpanHolder]``. Both are duck-typed so neither package is
    imported here.
    """
    get_span = getattr(handler, "get_span", None)
    if callable(get_span):
        try:
            span = get_span(run_id)
        except Exception:
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
    """The OpenTelemetry context whose span is the LangChain run a gate runs in.

    ``config`` is a ``RunnableConfig`` (``None``: the one LangChain keeps for the
    running node). Its callback manager names the current run (``parent_run_id``)
    and carries the tracing handlers; the first handler holding a span for that run
    wins. Returns ``None`` when no LangChain tracer knows the run; the caller then
    falls back to the current OpenTelemetry context (a plain outer span, or
    OpenLLMetry's attached context).

    Example:
        ```python
        ctx = telemetry.parent_context(config)
        with tracer.start_as_current_span("mine", context=ctx): ...
        ```
    """
    cfg = _run_config(config)
    if cfg is None:
        return None
    callbacks = cfg.get("callbacks")
    handlers: Sequence[Any]
    if callbacks is None:
        return None
    if isinstance(callbacks, (list, tuple)):
        handlers = callbacks
        run_id = parent_run_id
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


SpanLink = dict[str, Any]
"""A span's identity as plain JSON (``trace_id``, ``span_id``, ``trace_flags``)."""


def span_link(config: Mapping[str, Any] | None = None) -> SpanLink | None:
    """The span of the running graph node, as a plain dict that survives checkpoints.

    ``guard()`` runs the gate in its own node after the guarded one, when the guarded
    node's span has already ended; capture this while the guarded node runs, keep it
    with the staged update, and pass it to :func:`crossing_span` as ``parent=`` to
    nest the gate span under the guarded node's span. Resolved like
    :func:`parent_context` (LangChain tracer by run id, else the current span);
    ``None`` when nothing is traced.

    Example:
        ```python
        link = telemetry.span_link(config)             # inside the guarded node
        ...
        with telemetry.crossing_span(gate, node, parent=link): ...   # in the gate
        ```
    """
    ctx = parent_context(config)
    span = otel_trace.get_current_span(ctx)
    sc = span.get_span_context()
    if not sc.is_valid:
        return None
    return {
        "trace_id": format(sc.trace_id, "032x"),
        "span_id": format(sc.span_id, "016x"),
        "trace_flags": int(sc.trace_flags),
    }


def _explicit_parent(parent: Any) -> otel_context.Context | None:
    if parent is None:
        return None
    if isinstance(parent, otel_context.Context):
        return parent
    if isinstance(parent, Span):
        return otel_trace.set_span_in_context(parent)
    if isinstance(parent, otel_trace.SpanContext):
        sc = parent
    elif isinstance(parent, Mapping):
        try:
            sc = otel_trace.SpanContext(
                trace_id=int(str(parent["trace_id"]), 16),
                span_id=int(str(parent["span_id"]), 16),
                is_remote=False,
                trace_flags=otel_trace.TraceFlags(int(parent.get("trace_flags", 1))),
            )
        except (KeyError, TypeError, ValueError):
            return None
    else:
        return None
    if not sc.is_valid:
        return None
    return otel_trace.set_span_in_context(otel_trace.NonRecordingSpan(sc))


# --- the crossing handle ---------------------------------------------------------------------


@dataclass
class VerifierSpan:
    """One verifier run's span; call :meth:`record` with the findings it returned."""

    span: Span
    name: str
    outcome: Outcome = "pass"
    findings: int = 0
    failed: int = 0

    def record(self, findings: Iterable[Finding]) -> None:
        """Set the outcome (``pass``/``fail``) and counts from the verifier's findings.

        Example:
            ```python
            with telemetry.verifier_span(span, v.name) as vs:
                vs.record(v.verify(claims, evidence))
            ```
        """
        total = failed = warned = 0
        for f in findings:
            total += 1
            if f.status == "fail":
                if f.severity == "block":
                    failed += 1
                else:
                    warned += 1
        self.findings, self.failed = total, failed
        self.outcome = "fail" if failed else "pass"
        if self.span.is_recording():
            self.span.set_attributes(
                {
                    "trustgate.verifier.outcome": self.outcome,
                    "trustgate.verifier.findings": total,
                    "trustgate.verifier.failed": failed,
                    "trustgate.verifier.warnings": warned,
                    "trustgate.verifier.passed": total - failed - warned,
                }
            )


@dataclass
class CrossingSpan:
    """The open span of one crossing, as yielded by :func:`crossing_span`."""

    span: Span
    gate: str
    node: str
    context: otel_context.Context
    content: _ContentPolicy
    override_spans: bool
    max_events: int | None
    tracer: otel_trace.Tracer
    instruments: _Instruments
    noop: bool = False
    started: float = field(default_factory=time.perf_counter)
    finished: bool = False
    verifiers: list[VerifierSpan] = field(default_factory=list)
    # Child spans wait here, ended by finish_crossing with their own end times, so a
    # crossing paused by an interrupt exports nothing at all.
    pending: list[tuple[Span, int]] = field(default_factory=list)

    @property
    def recording(self) -> bool:
        return self.span.is_recording()

    def _end_pending(self) -> None:
        pending, self.pending = self.pending, []
        for span, end in pending:
            span.end(end_time=end)


def _is_interrupt(exc: BaseException) -> bool:
    try:
        from langgraph.errors import GraphBubbleUp
    except ImportError:  # pragma: no cover - langgraph is a dependency
        return False
    return isinstance(exc, GraphBubbleUp)


def _is_halt(exc: BaseException) -> bool:
    from trustgate.errors import GateHalted

    return isinstance(exc, GateHalted)


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
    """Open the ``trustgate.gate {gate_name}`` span for one crossing and make it current.

    The parent is, in order: ``parent`` (a :func:`span_link` dict, a ``Span``,
    ``SpanContext`` or ``Context``); the span a LangChain tracer (OpenInference,
    OpenLLMetry) keeps for the run in ``config`` (or ``parent_run_id``); else the
    current OpenTelemetry context. Call :func:`finish_crossing` with the report
    before the block ends.

    Args:
        gate_name: the gate's name (span name ``trustgate.gate {gate_name}``).
        node: the guarded node's name.
        input_value: what the gate inspects (the guarded node's update).
        config: the running node's ``RunnableConfig``; ``None`` uses LangChain's
            context variable.
        parent_run_id: a LangChain run id to nest under, overriding the config's.
        parent: an explicit parent, e.g. the guarded node's :func:`span_link`.
        capture_content: record full text instead of sha256+length (default:
            ``TRUSTGATE_CAPTURE_CONTENT``).
        max_content_length: truncation limit for captured text.
        override_spans: also emit each override as a zero-length child span
            (default: ``TRUSTGATE_OVERRIDE_SPANS``).
        max_events: how many override events to emit at most (default: the span's
            event limit, 128 unless configured).

    Example:
        ```python
        with telemetry.crossing_span("inspector", "reviewer", input_value=update,
                                     config=config) as span:
            result = run_the_crossing()
            telemetry.finish_crossing(span, result.report, output_value=result.update)
        ```
    """
    return _CrossingScope(
        gate_name,
        node,
        input_value,
        config,
        parent_run_id,
        parent,
        attempt,
        tracer_provider,
        meter_provider,
        capture_content,
        max_content_length,
        override_spans,
        max_events,
    )


class _CrossingScope(AbstractContextManager[CrossingSpan]):
    """The context manager behind :func:`crossing_span` (a class: it is on the hot path)."""

    __slots__ = (
        "_attempt",
        "_capture",
        "_config",
        "_gate",
        "_handle",
        "_input",
        "_limit",
        "_max_events",
        "_meter_provider",
        "_node",
        "_override_spans",
        "_parent",
        "_parent_run_id",
        "_token",
        "_tracer_provider",
    )

    def __init__(
        self,
        gate: str,
        node: str,
        input_value: Any,
        config: Mapping[str, Any] | None,
        parent_run_id: Any,
        parent: Any,
        attempt: int | None,
        tracer_provider: otel_trace.TracerProvider | None,
        meter_provider: otel_metrics.MeterProvider | None,
        capture: bool | None,
        limit: int | None,
        override_spans: bool | None,
        max_events: int | None,
    ) -> None:
        self._gate, self._node, self._input = gate, node, input_value
        self._config, self._parent_run_id, self._parent = config, parent_run_id, parent
        self._attempt = attempt
        self._tracer_provider, self._meter_provider = tracer_provider, meter_provider
        self._capture, self._limit = capture, limit
        self._override_spans, self._max_events = override_spans, max_events
        self._token: Token[otel_context.Context] | None = None

    def __enter__(self) -> CrossingSpan:
        tracer = _tracer(self._tracer_provider)
        instruments = _meters(self._meter_provider)
        if tracer is _NOOP_TRACER:
            # no SDK: nothing records, so no parent lookup, no attributes, no context
            self._handle = CrossingSpan(
                span=otel_trace.INVALID_SPAN,
                gate=self._gate,
                node=self._node,
                context=otel_context.get_current(),
                content=_NO_CAPTURE,
                override_spans=False,
                max_events=self._max_events,
                tracer=tracer,
                instruments=instruments,
                noop=True,
            )
            return self._handle
        parent_ctx = _explicit_parent(self._parent)
        if parent_ctx is None:
            parent_ctx = parent_context(self._config, parent_run_id=self._parent_run_id)
        content = _content_policy(self._capture, self._limit)
        attrs: dict[str, Any] = {
            SPAN_KIND: "GUARDRAIL",
            "trustgate.gate.name": self._gate,
            "trustgate.gate.node": self._node,
        }
        if self._attempt is not None:
            attrs["trustgate.attempt"] = self._attempt
        attrs.update(content.value_attrs("input", self._input, openinference=True))
        span = tracer.start_span(
            f"trustgate.gate {self._gate}",
            context=parent_ctx,
            kind=SpanKind.INTERNAL,
            attributes=attrs,
        )
        ctx = otel_trace.set_span_in_context(span, parent_ctx)
        override_spans = self._override_spans
        self._handle = CrossingSpan(
            span=span,
            gate=self._gate,
            node=self._node,
            context=ctx,
            content=content,
            override_spans=_env_flag(OVERRIDE_SPANS_ENV)
            if override_spans is None
            else override_spans,
            max_events=self._max_events,
            tracer=tracer,
            instruments=instruments,
        )
        self._token = otel_context.attach(ctx)
        return self._handle

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        handle = self._handle
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None
        if exc is not None and _is_interrupt(exc):
            # paused for review: the crossing finishes after resume, in a new span
            handle.pending.clear()
            handle.finished = True
            return
        if handle.finished:
            return
        handle.finished = True
        if handle.noop:
            if exc is not None and not handle.instruments.noop:
                _count_crossing(handle, "halted" if _is_halt(exc) else "error")
            return
        span = handle.span
        handle._end_pending()
        if exc is not None:
            # the gate itself crashed (a GateHalted is an outcome, not a crash)
            if not _is_halt(exc):
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
                span.set_attribute("trustgate.decision", "error")
            _count_crossing(handle, "halted" if _is_halt(exc) else "error")
        # else: the gate never called finish_crossing; close the span, no decision
        span.end()


def verifier_span(
    crossing: CrossingSpan, verifier_name: str, *, attempt: int | None = None
) -> AbstractContextManager[VerifierSpan]:
    """A ``trustgate.verify {verifier}`` child span (``EVALUATOR``) for one verifier run.

    An exception escaping the block marks the run ``error`` (status ERROR, exception
    recorded) and is re-raised for the gate to handle.

    Example:
        ```python
        with telemetry.verifier_span(span, "citation_replay") as vs:
            vs.record(verifier.verify(claims, evidence))
        ```
    """
    return _VerifierScope(crossing, verifier_name, attempt)


class _VerifierScope(AbstractContextManager[VerifierSpan]):
    __slots__ = ("_attempt", "_crossing", "_name", "_token", "_vs")

    def __init__(self, crossing: CrossingSpan, name: str, attempt: int | None) -> None:
        self._crossing, self._name, self._attempt = crossing, name, attempt
        self._token: Token[otel_context.Context] | None = None

    def __enter__(self) -> VerifierSpan:
        crossing = self._crossing
        if crossing.noop:
            self._vs = VerifierSpan(span=otel_trace.INVALID_SPAN, name=self._name)
            crossing.verifiers.append(self._vs)
            return self._vs
        parent = crossing.context  # holds the gate span, whichever thread we are in
        attrs: dict[str, Any] = {
            SPAN_KIND: "EVALUATOR",
            "trustgate.verifier.name": self._name,
            "trustgate.gate.name": crossing.gate,
        }
        if self._attempt is not None:
            attrs["trustgate.attempt"] = self._attempt
        span = crossing.tracer.start_span(
            f"trustgate.verify {self._name}", context=parent, attributes=attrs
        )
        self._vs = VerifierSpan(span=span, name=self._name)
        crossing.verifiers.append(self._vs)
        self._token = otel_context.attach(otel_trace.set_span_in_context(span, parent))
        return self._vs

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        vs = self._vs
        if exc is not None and not _is_interrupt(exc):
            vs.outcome = "error"
            if vs.span.is_recording():
                vs.span.record_exception(exc)
                vs.span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
                vs.span.set_attribute("trustgate.verifier.outcome", "error")
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None
            self._crossing.pending.append((vs.span, time.time_ns()))


# --- finishing -------------------------------------------------------------------------------


def _event_limit(span: Span, explicit: int | None) -> int:
    if explicit is not None:
        return max(0, explicit)
    limits = getattr(span, "_limits", None)
    limit = getattr(limits, "max_events", None)
    return limit if isinstance(limit, int) and limit >= 0 else _DEFAULT_MAX_EVENTS


def _override_attrs(o: OverrideRecord, content: _ContentPolicy) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "trustgate.override.kind": o.kind,
        "trustgate.override.target": o.target,
        "trustgate.override.reason": o.reason,
        "trustgate.override.verifier": o.verifier or "",
    }
    attrs.update(content.value_attrs("override.before", o.before, openinference=False))
    attrs.update(content.value_attrs("override.after", o.after, openinference=False))
    return attrs


def _failed_verifiers(report: Report, crossing: CrossingSpan) -> list[str]:
    names = [f.verifier for f in report.findings if f.blocking]
    names += [v.name for v in crossing.verifiers if v.outcome == "error"]
    return list(dict.fromkeys(names))


def _count_crossing(crossing: CrossingSpan, decision: str) -> None:
    inst = crossing.instruments
    attrs = {"trustgate.gate.name": crossing.gate, "trustgate.decision": decision}
    inst.crossings.add(1, {**attrs, "trustgate.gate.node": crossing.node})
    inst.duration.record(time.perf_counter() - crossing.started, attrs)


def finish_crossing(
    crossing: CrossingSpan,
    report: Report,
    *,
    output_value: Any = None,
    exception: BaseException | None = None,
) -> None:
    """Record the crossing's outcome on its span, end the span and count the metrics.

    Sets ``trustgate.decision``, the override summary attributes, one
    ``trustgate.override`` event per override (up to the event limit; the rest are
    counted in ``trustgate.override.events_dropped``), and status ERROR only when
    ``report.error`` is set (a verifier or the gate crashed) — a halt by policy is an
    outcome. ``output_value`` is what the gate released (``None``: the decision).

    Example:
        ```python
        telemetry.finish_crossing(span, result.report, output_value=result.update)
        ```
    """
    if crossing.finished:
        return
    crossing.finished = True
    if crossing.noop:
        if not crossing.instruments.noop:
            _metrics(crossing, report)
        return
    span = crossing.span
    overrides = report.overrides
    if span.is_recording():
        _annotate(crossing, report, output_value, exception)
    crossing._end_pending()
    if crossing.override_spans and span.is_recording() and overrides:
        parent = otel_trace.set_span_in_context(span)
        for o in overrides:
            now = time.time_ns()
            child = crossing.tracer.start_span(
                f"trustgate.override {o.kind}",
                context=parent,
                start_time=now,
                attributes=_override_attrs(o, crossing.content),
            )
            child.end(end_time=now)
    span.end()
    if not crossing.instruments.noop:
        _metrics(crossing, report)


def _annotate(
    crossing: CrossingSpan, report: Report, output_value: Any, exception: BaseException | None
) -> None:
    span = crossing.span
    overrides = report.overrides
    out = (
        output_value
        if output_value is not None
        else {"decision": report.decision, "released": report.released}
    )
    by_kind: dict[str, int] = {}  # first-seen order
    for o in overrides:
        by_kind[o.kind] = by_kind.get(o.kind, 0) + 1
    kinds = list(by_kind)
    limit = _event_limit(span, crossing.max_events)
    errored = report.error is not None or exception is not None
    room = max(0, limit - (1 if errored else 0))
    emitted = min(len(overrides), room)
    dropped = len(overrides) - emitted
    summary = ", ".join(f"{k}×{n}" for k, n in by_kind.items()) or "none"
    attrs: dict[str, Any] = {
        "trustgate.decision": report.decision,
        "trustgate.released": report.released,
        "trustgate.report.id": report.id,
        "trustgate.attempt": report.attempt,
        "trustgate.override.count": len(overrides),
        "trustgate.override.kinds": kinds,
        "trustgate.override.targets": [o.target for o in overrides[:limit]],
        "trustgate.override.events_dropped": dropped,
        "trustgate.override.summary": (
            f"{len(overrides)} override(s): {summary}; "
            f"{emitted} event(s) emitted, {dropped} dropped"
        ),
        "trustgate.verifier.failed": _failed_verifiers(report, crossing),
        "trustgate.finding.count": len(report.findings),
        "trustgate.finding.failed": [f"{f.verifier}/{f.code}" for f in report.failed][:limit],
    }
    if report.thread_id:
        attrs["trustgate.thread_id"] = report.thread_id
    if report.approval is not None:
        attrs["trustgate.approval.decision"] = report.approval.decision
        if report.approval.who:
            attrs["trustgate.approval.who"] = report.approval.who
    attrs.update(crossing.content.value_attrs("output", out, openinference=True))
    span.set_attributes(attrs)
    for o in overrides[:emitted]:
        span.add_event("trustgate.override", _override_attrs(o, crossing.content))
    if errored:
        if exception is not None:
            span.record_exception(exception)
        else:
            span.add_event(
                "exception",
                {
                    "exception.type": "trustgate.VerifierError",
                    "exception.message": str(report.error),
                },
            )
        span.set_status(Status(StatusCode.ERROR, str(report.error or exception)))


def _metrics(crossing: CrossingSpan, report: Report) -> None:
    inst = crossing.instruments
    gate = crossing.gate
    _count_crossing(crossing, report.decision)
    if report.findings:
        groups = Counter((f.verifier, f.code, f.status, f.severity) for f in report.findings)
        for (verifier, code, status, severity), n in groups.items():
            inst.findings.add(
                n,
                {
                    "trustgate.gate.name": gate,
                    "trustgate.verifier.name": verifier,
                    "trustgate.finding.code": code,
                    "trustgate.finding.status": status,
                    "trustgate.finding.severity": severity,
                },
            )
    if report.overrides:
        for kind, n in Counter(o.kind for o in report.overrides).items():
            inst.overrides.add(n, {"trustgate.gate.name": gate, "trustgate.override.kind": kind})


# --- setup helper ------------------------------------------------------------------------------


@dataclass
class Telemetry:
    """What :func:`configure` installed; :meth:`shutdown` flushes and closes it."""

    tracer_provider: Any
    meter_provider: Any | None
    endpoint: str | None

    def force_flush(self, timeout_millis: int = 10_000) -> bool:
        ok = bool(self.tracer_provider.force_flush(timeout_millis))
        if self.meter_provider is not None:
            ok = bool(self.meter_provider.force_flush(timeout_millis)) and ok
        return ok

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        if self.meter_provider is not None:
            self.meter_provider.shutdown()


def _signal_endpoint(base: str, signal: str) -> str:
    return base.rstrip("/") + f"/v1/{signal}"


def configure(
    endpoint: str | None = None,
    *,
    service_name: str = "trustgate",
    headers: Mapping[str, str] | None = None,
    metrics: bool = True,
    set_global: bool = True,
    batch: bool = True,
    metric_export_interval_ms: int | None = None,
) -> Telemetry:
    """Install an SDK tracer (and meter) provider exporting OTLP/HTTP.

    Needs the ``otlp`` extra (``pip install 'trustgate[otlp]'``). Without
    ``endpoint`` the exporter reads the standard variables itself
    (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
    ``OTEL_EXPORTER_OTLP_HEADERS``, ``…_TIMEOUT``, ``…_COMPRESSION``, default
    ``http://localhost:4318``); ``endpoint`` is a base URL to which ``/v1/traces``
    and ``/v1/metrics`` are appended, as for ``OTEL_EXPORTER_OTLP_ENDPOINT``.
    ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` win over
    ``service_name``.

    Example:
        ```python
        tel = trustgate.telemetry.configure("http://127.0.0.1:6006")   # Phoenix
        try:
            graph.invoke(inputs)
        finally:
            tel.shutdown()
        ```
    """
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:  # pragma: no cover - depends on the install
        from trustgate.errors import ConfigurationError

        raise ConfigurationError(
            "telemetry.configure() needs the OTLP exporter: pip install 'trustgate[otlp]'"
        ) from exc
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    attrs: dict[str, Any] = {}
    if not os.environ.get("OTEL_SERVICE_NAME") and "service.name=" not in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    ):
        attrs["service.name"] = service_name
    resource = Resource.create(attrs)
    hdrs = dict(headers) if headers else None
    span_exporter = OTLPSpanExporter(
        endpoint=_signal_endpoint(endpoint, "traces") if endpoint else None, headers=hdrs
    )
    tracer_provider = TracerProvider(resource=resource)
    processor = BatchSpanProcessor(span_exporter) if batch else SimpleSpanProcessor(span_exporter)
    tracer_provider.add_span_processor(processor)
    meter_provider: Any | None = None
    if metrics:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(
                endpoint=_signal_endpoint(endpoint, "metrics") if endpoint else None,
                headers=hdrs,
            ),
            export_interval_millis=metric_export_interval_ms,
        )
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    if set_global:
        otel_trace.set_tracer_provider(tracer_provider)
        if meter_provider is not None:
            otel_metrics.set_meter_provider(meter_provider)
    return Telemetry(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        endpoint=endpoint,
    )
