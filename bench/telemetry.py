"""What telemetry adds to a gate crossing: on vs off, and vs hand-written raw spans.

Measured side by side in one run, interleaved round by round, for an overriding
crossing (one failed verifier, one field override) whose node update carries 1 KiB,
128 KiB or 1 MiB beside the small field the gate reads:

* ``off``           ``TrustGate.check`` with no SDK installed;
* ``on, API no-op`` the same with the API's no-op providers (what a library user without
                    an SDK pays);
* ``on, traces``    an SDK tracer provider: the gate span, its verifier and policy child
                    spans, the evaluation and override events;
* ``on, +metrics``  the same with an SDK meter provider too;
* ``raw spans``     the crossing with no SDK in the gate, instrumented by hand with plain
                    SDK calls: the same three spans with the attributes, events and
                    status a captured crossing had (precomputed): what writing the spans
                    yourself would cost;
* ``raw +metrics``  the same, plus the crossing's metrics recorded by hand (the same
                    instruments, attributes and values trustgate records).

The SDK sides share one provider with a ``SimpleSpanProcessor`` into an exporter that
drops everything, so the figures are trustgate's cost, not an exporter's. The verifier
runs inline (as trustgate's own bounded verifiers do), so no thread hand-off adds noise.

Each round runs every variant once (the order reverses every other round) after a
warm-up; a variant's added cost is taken against ``off`` in the same round, and the
ratio (trustgate's added cost over the hand-written one's) round by round, printed as
the median and the range over the rounds.

What to look for: the telemetry's added cost does not grow with the update (the gate
measures only what it read and changed), and stays near the raw spans' cost.
Target (a goal, not a gate): traces <= 1.3x the hand-written spans.
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
from trustgate.otel.metrics import DURATION_BUCKETS
from trustgate.policies import Override
from trustgate.verifiers.base import Evidence

ROUNDS, RUNS = 15, 150
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


class Replay:
    """A verifier that fails one finding, run inline (``bounded``) like trustgate's own."""

    name = "replay"
    timeout = None
    bounded = True

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        found = [Finding.failed("replay", "content_mismatch", "line 4 differs")]
        if _raw_child:
            tracer, name, attrs = _raw_child[-1]
            with tracer.start_as_current_span(name, attributes=attrs) as span:
                span.set_attribute("trustgate.verifier.outcome", "fail")
        return found


def make_gate() -> TrustGate:
    return TrustGate(
        "bench",
        reads="verdict",
        verifiers=[Replay()],
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
    gate: TrustGate,
    update: dict[str, Any],
    spans: list[ReadableSpan],
    tp: TracerProvider,
    mp: MeterProvider | None = None,
) -> Callable[[], None]:
    """The same crossing, gate uninstrumented, with the same spans written by hand (and,
    with ``mp``, the same metrics)."""
    by_prefix = {s.name.split(" ")[0]: s for s in spans}
    gate_span = by_prefix["trustgate.gate"]
    verify = by_prefix["trustgate.verify"]
    policy = by_prefix["trustgate.policy"]
    gate_attrs = dict(gate_span.attributes or {})
    events = [(e.name, dict(e.attributes or {})) for e in gate_span.events]
    verify_attrs, policy_attrs = dict(verify.attributes or {}), dict(policy.attributes or {})
    status = gate_span.status
    tracer = tp.get_tracer("raw")
    record = raw_metrics(mp) if mp is not None else None

    def run() -> None:
        started = time.perf_counter()
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
            span.set_status(status)
        if record is not None:
            record(time.perf_counter() - started)

    return run


def raw_metrics(mp: MeterProvider) -> Callable[[float], None]:
    """The crossing's metrics written by hand: what trustgate records for it."""
    meter = mp.get_meter("raw")
    crossings = meter.create_counter("raw.crossings", unit="{crossing}")
    findings = meter.create_counter("raw.findings", unit="{finding}")
    overrides = meter.create_counter("raw.overrides", unit="{override}")
    duration = meter.create_histogram(
        "raw.crossing.duration", unit="s", explicit_bucket_boundaries_advisory=DURATION_BUCKETS
    )
    base = {"trustgate.gate.name": "bench", "trustgate.decision": "modified"}
    node = {**base, "trustgate.node.name": "writer"}
    finding = {
        "trustgate.gate.name": "bench",
        "trustgate.verifier.name": "replay",
        "trustgate.finding.code": "content_mismatch",
        "trustgate.finding.status": "fail",
        "trustgate.finding.severity": "block",
    }
    override = {"trustgate.gate.name": "bench", "trustgate.override.kind": "field_override"}

    def record(seconds: float) -> None:
        crossings.add(1, node)
        duration.record(seconds, base)
        findings.add(1, finding)
        overrides.add(1, override)

    return record


def per_call(fn: Callable[[], Any]) -> float:
    # CPU time of this process: on a shared machine, wall time mostly measures the others
    t0 = time.process_time()
    for _ in range(RUNS):
        fn()
    return (time.process_time() - t0) / RUNS


def spread(values: list[float], scale: float, fmt: str) -> str:
    lo, mid, hi = (
        fmt.format(v * scale) for v in (min(values), statistics.median(values), max(values))
    )
    return f"{mid} ({lo}-{hi})"


def main() -> None:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(DropExporter()))
    mp = MeterProvider(metric_readers=[InMemoryMetricReader()])
    noop_tp, noop_mp = otel_trace.NoOpTracerProvider(), otel_metrics.NoOpMeterProvider()
    gate = make_gate()
    print("bench/telemetry.py: an overriding crossing (1 failed verifier, 1 field override)")
    print(
        f"process CPU time per crossing, {RUNS} crossings per round, median (min-max) over "
        f"{ROUNDS} interleaved rounds; SimpleSpanProcessor"
    )
    print(f"{'update':>8} {'variant':15} {'per crossing us':>22} {'added us':>20} {'vs raw':>18}")
    compare = {"on, traces": "raw spans", "on, +metrics": "raw +metrics"}
    for label, size in SIZES.items():
        update = {"verdict": "APPROVE", "blob": "x" * size}
        spans = capture(gate, update)
        raw = raw_crossing(gate, update, spans, tp)
        raw_m = raw_crossing(gate, update, spans, tp, mp)

        def check(update: dict[str, Any] = update) -> None:
            gate.check(update, node="writer")

        variants: dict[str, tuple[Callable[[], Any], Any, Any]] = {
            "off (no SDK)": (check, None, None),
            "on, API no-op": (check, noop_tp, noop_mp),
            "on, traces": (check, tp, None),
            "on, +metrics": (check, tp, mp),
            "raw spans": (raw, None, None),
            "raw +metrics": (raw_m, None, None),
        }
        for fn, vtp, vmp in variants.values():  # warm-up, not measured
            set_globals(vtp, vmp)
            for _ in range(RUNS // 3):
                fn()
        samples: dict[str, list[float]] = {k: [] for k in variants}
        for r in range(ROUNDS):
            order = list(variants.items())
            for name, (fn, vtp, vmp) in order[::-1] if r % 2 else order:
                set_globals(vtp, vmp)
                samples[name].append(per_call(fn))
        set_globals(None, None)
        off = samples["off (no SDK)"]
        added = {k: [v - o for v, o in zip(vs, off, strict=True)] for k, vs in samples.items()}
        for name, values in samples.items():
            shown = spread(added[name], 1e6, "{:.1f}") if name != "off (no SDK)" else ""
            ratio = ""
            if name in compare:
                base = added[compare[name]]
                ratio = spread(
                    [a / b for a, b in zip(added[name], base, strict=True) if b > 0], 1, "{:.2f}"
                )
            print(
                f"{label:>8} {name:15} {spread(values, 1e6, '{:.1f}'):>22} {shown:>20} {ratio:>18}"
            )
    print(
        "added: against off in the same round; vs raw: trustgate's added cost over the "
        "hand-written one's (traces vs raw spans, +metrics vs raw +metrics), round by round"
    )


if __name__ == "__main__":
    main()
