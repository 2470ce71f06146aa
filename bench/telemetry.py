"""What telemetry adds to a gate crossing, against a raw SDK span with the same content.

Paired in one run, interleaved round by round:

* ``off``       a gate crossing (``TrustGate.check``) with no SDK configured;
* ``on``        the same crossing with an SDK tracer provider (and, separately, an
                SDK meter provider too): the gate span, one verifier span and, for
                the overriding crossing, one ``trustgate.override`` event;
* ``raw``       the same crossing hand-instrumented with plain SDK calls: a span
                around it carrying the attributes and events the gate span had
                (copied from a captured crossing), one child span around the
                verifier: what a user writing the spans by hand would pay.

Both SDK sides use the same provider and a ``SimpleSpanProcessor`` into an exporter
that drops everything, so the figures are trustgate's cost, not an exporter's.

When ``TrustGate.check`` does not emit spans itself (the gate not wired to
``trustgate.telemetry`` yet), the ``on`` side wraps the crossing in
``crossing_span``/``verifier_span``/``finish_crossing`` exactly as the gate will,
and the output says so.

Target (a goal, not a gate): the telemetry a gate adds <= 1.3x the raw span's cost.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import metrics as otel_metrics
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

from trustgate import telemetry
from trustgate.findings import Finding
from trustgate.gate import TrustGate
from trustgate.policy import Override
from trustgate.verifiers.base import Evidence, FunctionVerifier

ROUNDS, RUNS = 15, 400


class DropExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def set_globals(tp: Any, mp: Any) -> None:
    """Swap the global providers (the API latches them once; benchmarks reset it)."""
    otel_trace._TRACER_PROVIDER_SET_ONCE = Once()
    otel_trace._TRACER_PROVIDER = None
    otel_metrics._internal._METER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    otel_metrics._internal._METER_PROVIDER = None  # type: ignore[attr-defined]
    if tp is not None:
        otel_trace.set_tracer_provider(tp)
    if mp is not None:
        otel_metrics.set_meter_provider(mp)


# The verifier opens its own span only in the unwired mode (the wired gate does it),
# or a raw SDK child span when the raw side is measured.
_handles: list[telemetry.CrossingSpan] = []
_raw_child: list[tuple[Any, str, dict[str, Any]]] = []


def make_gate(name: str, fail: bool) -> TrustGate:
    def check(claims: Any, evidence: Evidence) -> list[Finding]:
        if fail:
            found = [Finding.failed("replay", "content_mismatch", "line 4 differs")]
        else:
            found = [Finding.ok("replay")]
        if _handles:
            with telemetry.verifier_span(_handles[-1], "replay") as vs:
                vs.record(found)
        elif _raw_child:
            tracer, name, attrs = _raw_child[-1]
            with tracer.start_as_current_span(name, attributes=attrs):
                pass
        return found

    return TrustGate(
        name,
        reads="verdict",
        verifiers=[FunctionVerifier(check, name="replay")],
        policy=Override("verdict", "REQUEST_CHANGES") if fail else None,
    )


def gate_is_wired() -> bool:
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    set_globals(tp, None)
    try:
        make_gate("probe", False).check({"verdict": "APPROVE"}, node="n")
    finally:
        set_globals(None, None)
    return any(s.name.startswith("trustgate.gate") for s in exporter.get_finished_spans())


def crossing(gate: TrustGate, update: dict[str, Any], wired: bool, tp: Any, mp: Any) -> None:
    if wired:
        gate.check(update, node="writer")
        return
    with telemetry.crossing_span(
        gate.name, "writer", input_value=update, tracer_provider=tp, meter_provider=mp
    ) as span:
        _handles.append(span)
        try:
            result = gate.check(update, node="writer")
        finally:
            _handles.pop()
        telemetry.finish_crossing(span, result.report, output_value=result.update)


def capture(gate: TrustGate, update: dict[str, Any], wired: bool) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    set_globals(tp, None)
    try:
        crossing(gate, update, wired, tp, None)
    finally:
        set_globals(None, None)
    return list(exporter.get_finished_spans())


def raw_crossing(
    gate: TrustGate, update: dict[str, Any], spans: list[ReadableSpan], tp: TracerProvider
) -> Callable[[], None]:
    """The same crossing hand-instrumented with plain SDK calls and precomputed content."""
    gate_span = next(s for s in spans if s.name.startswith("trustgate.gate"))
    child = next(s for s in spans if s.name.startswith("trustgate.verify"))
    gate_attrs = dict(gate_span.attributes or {})
    child_attrs = dict(child.attributes or {})
    events = [(e.name, dict(e.attributes or {})) for e in gate_span.events]
    tracer = tp.get_tracer("raw")

    def run() -> None:
        with tracer.start_as_current_span(gate_span.name, attributes=gate_attrs) as span:
            _raw_child.append((tracer, child.name, child_attrs))
            try:
                gate.check(update, node="writer")
            finally:
                _raw_child.pop()
            for name, attrs in events:
                span.add_event(name, attrs)

    return run


def per_call(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    for _ in range(RUNS):
        fn()
    return (time.perf_counter() - t0) / RUNS


def main() -> None:
    wired = gate_is_wired()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(DropExporter()))
    mp = MeterProvider(metric_readers=[InMemoryMetricReader()])
    no_meter = otel_metrics.NoOpMeterProvider()
    mode = (
        "the gate emits its own telemetry (wired)"
        if wired
        else "the gate is not wired to trustgate.telemetry yet: 'on' wraps TrustGate.check "
        "in crossing_span/verifier_span/finish_crossing as the gate will"
    )
    print(f"bench/telemetry.py: {mode}")
    print(f"median of {ROUNDS} interleaved rounds x {RUNS} crossings; SimpleSpanProcessor")
    for label, fail in (("passing crossing", False), ("overriding crossing (1 event)", True)):
        gate = make_gate("bench", fail)
        update = {"verdict": "APPROVE"}
        raw = raw_crossing(gate, update, capture(gate, update, wired), tp)

        def off(gate: TrustGate = gate, update: dict[str, Any] = update) -> None:
            gate.check(update, node="writer")

        def on_noop(gate: TrustGate = gate, update: dict[str, Any] = update) -> None:
            crossing(gate, update, wired, None, None)

        def on(gate: TrustGate = gate, update: dict[str, Any] = update) -> None:
            crossing(gate, update, wired, tp, no_meter)

        def on_metrics(gate: TrustGate = gate, update: dict[str, Any] = update) -> None:
            crossing(gate, update, wired, tp, mp)

        # (function, global tracer provider, global meter provider) for the wired mode
        variants: dict[str, tuple[Callable[[], Any], Any, Any]] = {
            "off (no SDK)": (off, None, None),
            "on, API no-op": (on_noop, None, None),
            "on, SDK traces": (on, tp, None),
            "on, SDK traces+metrics": (on_metrics, tp, mp),
            "raw SDK spans": (raw, None, None),
        }
        samples: dict[str, list[float]] = {k: [] for k in variants}
        for r in range(ROUNDS):
            order = list(variants.items())
            if r % 2:
                order.reverse()
            for name, (fn, vtp, vmp) in order:
                if wired:
                    set_globals(vtp, vmp)
                samples[name].append(per_call(fn))
        set_globals(None, None)
        t = {k: statistics.median(v) for k, v in samples.items()}
        base = t["off (no SDK)"]
        raw_cost = t["raw SDK spans"] - base
        print(f"\n[{label}]")
        for name, value in t.items():
            added = value - base
            extra = ""
            if name.startswith("on"):
                extra = f"  adds {added * 1e6:7.1f} us = {added / raw_cost:4.2f}x the raw spans"
            elif name.startswith("raw"):
                extra = f"  adds {added * 1e6:7.1f} us"
            print(f"  {name:24s} {value * 1e6:8.1f} us{extra}")
        print("  target: 'on, SDK traces' adds <= 1.3x what the raw spans add")
    api_alone(tp)


def api_alone(tp: TracerProvider) -> None:
    """The telemetry calls alone against the same spans by hand, no gate in between."""
    gate = make_gate("bench", True)
    update = {"verdict": "APPROVE"}
    result = gate.check(update, node="writer")
    spans = capture(gate, update, False)
    gate_span = next(s for s in spans if s.name.startswith("trustgate.gate"))
    child = next(s for s in spans if s.name.startswith("trustgate.verify"))
    gate_attrs, child_attrs = dict(gate_span.attributes or {}), dict(child.attributes or {})
    events = [(e.name, dict(e.attributes or {})) for e in gate_span.events]
    tracer = tp.get_tracer("raw")
    no_meter = otel_metrics.NoOpMeterProvider()

    def ours() -> None:
        with telemetry.crossing_span(
            "bench", "writer", input_value=update, tracer_provider=tp, meter_provider=no_meter
        ) as span:
            with telemetry.verifier_span(span, "replay") as vs:
                vs.record(result.report.findings)
            telemetry.finish_crossing(span, result.report, output_value=result.update)

    def by_hand() -> None:
        with tracer.start_as_current_span(gate_span.name, attributes=gate_attrs) as span:
            with tracer.start_as_current_span(child.name, attributes=child_attrs):
                pass
            for name, attrs in events:
                span.add_event(name, attrs)

    samples: dict[str, list[float]] = {"telemetry API": [], "raw SDK spans": []}
    for r in range(ROUNDS):
        pair = [("telemetry API", ours), ("raw SDK spans", by_hand)]
        for name, fn in pair if r % 2 else pair[::-1]:
            samples[name].append(per_call(fn))
    t = {k: statistics.median(v) for k, v in samples.items()}
    print("\n[the calls alone, no gate: overriding crossing, SDK traces]")
    for name, value in t.items():
        print(f"  {name:24s} {value * 1e6:8.1f} us")
    print(f"  ratio {t['telemetry API'] / t['raw SDK spans']:4.2f}x (the rest is content hashing,")
    print("  override summaries and the parent lookup, which hand-written spans skip)")


if __name__ == "__main__":
    main()
