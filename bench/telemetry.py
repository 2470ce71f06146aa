"""What telemetry adds to a gate crossing: on vs off, and vs hand-written raw spans.

Measured side by side in one run, interleaved round by round, for an overriding
crossing (one failed verifier, one field override) whose node update carries 1 KiB,
128 KiB or 1 MiB beside the small field the gate reads:

* ``off``          ``TrustGate.check`` with no SDK installed;
* ``on, API no-op`` the same with the API's no-op providers (what a library user without
                   an SDK pays);
* ``on, traces``   an SDK tracer provider: the gate span, its verifier and policy child
                   spans, the evaluation and override events;
* ``on, +metrics`` the same with an SDK meter provider too;
* ``raw``          the crossing with no SDK in the gate, instrumented by hand with plain
                   SDK calls: the same three spans with the attributes and events a
                   captured crossing had (precomputed): what writing the spans yourself
                   would cost.

The SDK sides share one provider with a ``SimpleSpanProcessor`` into an exporter that
drops everything, so the figures are trustgate's cost, not an exporter's.

What to look for: the telemetry's added cost does not grow with the update (the gate
measures only what it read and changed), and stays near the raw spans' cost.
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

from trustgate._findings import Finding
from trustgate._gate import TrustGate
from trustgate.policies import Override
from trustgate.verifiers.base import Evidence, FunctionVerifier

ROUNDS, RUNS = 11, 200
SIZES = {"1 KiB": 1024, "128 KiB": 128 * 1024, "1 MiB": 1024 * 1024}


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


# the raw side's verifier child span: (tracer, name, attributes), set while it runs
_raw_child: list[tuple[Any, str, dict[str, Any]]] = []


def make_gate() -> TrustGate:
    def replay(claims: Any, evidence: Evidence) -> list[Finding]:
        found = [Finding.failed("replay", "content_mismatch", "line 4 differs")]
        if _raw_child:
            tracer, name, attrs = _raw_child[-1]
            with tracer.start_as_current_span(name, attributes=attrs) as span:
                span.set_attribute("trustgate.verifier.outcome", "fail")
        return found

    return TrustGate(
        "bench",
        reads="verdict",
        verifiers=[FunctionVerifier(replay, name="replay")],
        policy=Override("verdict", "REQUEST_CHANGES"),
        passthrough=["blob"],  # the payload that sizes the update: declared, not checked
    )


def capture(gate: TrustGate, update: dict[str, Any]) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    set_globals(tp, None)
    try:
        gate.check(update, node="writer")
    finally:
        set_globals(None, None)
    return list(exporter.get_finished_spans())


def raw_crossing(
    gate: TrustGate, update: dict[str, Any], spans: list[ReadableSpan], tp: TracerProvider
) -> Callable[[], None]:
    """The same crossing, gate uninstrumented, with the same spans written by hand."""
    by_prefix = {s.name.split(" ")[0]: s for s in spans}
    gate_span = by_prefix["trustgate.gate"]
    verify = by_prefix["trustgate.verify"]
    policy = by_prefix["trustgate.policy"]
    gate_attrs = dict(gate_span.attributes or {})
    events = [(e.name, dict(e.attributes or {})) for e in gate_span.events]
    verify_attrs, policy_attrs = dict(verify.attributes or {}), dict(policy.attributes or {})
    tracer = tp.get_tracer("raw")

    def run() -> None:
        with tracer.start_as_current_span(gate_span.name) as span:
            _raw_child.append((tracer, verify.name, verify_attrs))
            try:
                gate.check(update, node="writer")
            finally:
                _raw_child.pop()
            with tracer.start_as_current_span(policy.name, attributes=policy_attrs):
                pass
            span.set_attributes(gate_attrs)
            for name, attrs in events:
                span.add_event(name, attrs)

    return run


def per_call(fn: Callable[[], Any]) -> float:
    # CPU time of this process: on a shared machine, wall time mostly measures the others
    t0 = time.process_time()
    for _ in range(RUNS):
        fn()
    return (time.process_time() - t0) / RUNS


def main() -> None:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(DropExporter()))
    mp = MeterProvider(metric_readers=[InMemoryMetricReader()])
    noop_tp, noop_mp = otel_trace.NoOpTracerProvider(), otel_metrics.NoOpMeterProvider()
    gate = make_gate()
    print("bench/telemetry.py: an overriding crossing (1 failed verifier, 1 field override)")
    print(
        f"process CPU time, median of {ROUNDS} interleaved rounds x {RUNS} crossings; "
        "SimpleSpanProcessor"
    )
    print(f"{'update':>8} {'variant':16} {'per crossing':>13} {'added':>10} {'vs raw':>7}")
    for label, size in SIZES.items():
        update = {"verdict": "APPROVE", "blob": "x" * size}
        raw = raw_crossing(gate, update, capture(gate, update), tp)

        def check(update: dict[str, Any] = update) -> None:
            gate.check(update, node="writer")

        variants: dict[str, tuple[Callable[[], Any], Any, Any]] = {
            "off (no SDK)": (check, None, None),
            "on, API no-op": (check, noop_tp, noop_mp),
            "on, traces": (check, tp, None),
            "on, +metrics": (check, tp, mp),
            "raw SDK spans": (raw, None, None),
        }
        samples: dict[str, list[float]] = {k: [] for k in variants}
        for r in range(ROUNDS):
            order = list(variants.items())
            for name, (fn, vtp, vmp) in order[::-1] if r % 2 else order:
                set_globals(vtp, vmp)
                samples[name].append(per_call(fn))
        set_globals(None, None)
        t = {k: statistics.median(v) for k, v in samples.items()}
        base = t["off (no SDK)"]
        raw_added = t["raw SDK spans"] - base
        for name, value in t.items():
            added = value - base
            ratio = f"{added / raw_added:6.2f}x" if name.startswith("on") and raw_added else ""
            shown = f"{added * 1e6:8.1f}us" if name != "off (no SDK)" else ""
            print(f"{label:>8} {name:16} {value * 1e6:11.1f}us {shown:>10} {ratio:>7}")
    print("ratios: telemetry's added cost / the hand-written spans' added cost, same run")


if __name__ == "__main__":
    main()
