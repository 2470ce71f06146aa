"""Crossing metrics: counts of crossings, findings and overrides, and a duration histogram.

Instruments are created per meter provider (the one passed in, else the global one),
never at import. While no SDK is installed the API would hand out proxy instruments
that latch onto whatever provider comes later (and keeps each proxy meter for ever);
trustgate uses plain no-op instruments then and skips the bookkeeping.

The duration histogram is in seconds with explicit bucket advice from 0.5 ms to 60 s:
a crossing takes well under a millisecond to a few seconds (a model verifier), which
the SDK's default millisecond-scale buckets would lump into one.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from opentelemetry import metrics as otel_metrics

from trustgate.otel.semconv import CrossingAttributes as C
from trustgate.otel.semconv import MetricNames as M
from trustgate.otel.semconv import OverrideAttributes as O
from trustgate.otel.semconv import VerifierAttributes as V

__all__ = ["DURATION_BUCKETS", "Instruments", "instruments"]

SCOPE = "trustgate"

DURATION_BUCKETS: tuple[float, ...] = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)
"""Bucket boundaries advised for ``trustgate.crossing.duration`` (seconds)."""


def _version() -> str:
    from trustgate._meta import VERSION

    return VERSION


@dataclass(frozen=True, slots=True)
class Instruments:
    """The instruments of one meter provider."""

    crossings: otel_metrics.Counter
    findings: otel_metrics.Counter
    overrides: otel_metrics.Counter
    duration: otel_metrics.Histogram
    noop: bool = False

    def record(
        self,
        gate: str,
        node: str,
        decision: str,
        seconds: float,
        findings: Iterable[tuple[str, str, str, str]] = (),
        override_kinds: Iterable[str] = (),
    ) -> None:
        """Count one crossing: ``findings`` as (verifier, code, status, severity)."""
        if self.noop:
            return
        base = {C.GATE_NAME: gate, C.DECISION: decision}
        self.crossings.add(1, {**base, C.NODE_NAME: node})
        self.duration.record(seconds, base)
        counted: dict[tuple[str, str, str, str], int] = {}
        for key in findings:  # (a dict, not a Counter: this runs once per crossing)
            counted[key] = counted.get(key, 0) + 1
        for (verifier, code, status, severity), n in counted.items():
            self.findings.add(
                n,
                {
                    C.GATE_NAME: gate,
                    V.NAME: verifier,
                    V.FINDING_CODE: code,
                    V.FINDING_STATUS: status,
                    V.FINDING_SEVERITY: severity,
                },
            )
        kinds: dict[str, int] = {}
        for kind in override_kinds:
            kinds[kind] = kinds.get(kind, 0) + 1
        for kind, n in kinds.items():
            self.overrides.add(n, {C.GATE_NAME: gate, O.KIND: kind})


def _make(meter: otel_metrics.Meter, noop: bool) -> Instruments:
    return Instruments(
        crossings=meter.create_counter(
            M.CROSSINGS, unit="{crossing}", description="Trust-gate crossings, by decision"
        ),
        findings=meter.create_counter(
            M.FINDINGS, unit="{finding}", description="Verifier findings, by code"
        ),
        overrides=meter.create_counter(
            M.OVERRIDES, unit="{override}", description="Overrides of model output, by kind"
        ),
        duration=meter.create_histogram(
            M.CROSSING_DURATION,
            unit="s",
            description="Duration of one crossing",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        ),
        noop=noop,
    )


NOOP = _make(otel_metrics.NoOpMeter(SCOPE), noop=True)
_cache: weakref.WeakKeyDictionary[Any, Instruments] = weakref.WeakKeyDictionary()


_last: tuple[weakref.ref[Any], bool, Instruments] | None = None


def instruments(provider: otel_metrics.MeterProvider | None = None) -> Instruments:
    """The instruments for ``provider`` (``None``: the global provider); the last
    provider's are answered by identity."""
    global _last
    ambient = provider is None
    if provider is None:
        provider = otel_metrics.get_meter_provider()
    last = _last
    if last is not None and last[0]() is provider and last[1] is ambient:
        return last[2]
    inst = _instruments(provider, ambient)
    try:
        _last = (weakref.ref(provider), ambient, inst)
    except TypeError:  # a provider that is not weak-referenceable: not remembered
        _last = None
    return inst


def _instruments(provider: otel_metrics.MeterProvider, ambient: bool) -> Instruments:
    if ambient and type(provider).__name__ == "_ProxyMeterProvider":
        return NOOP  # no SDK configured
    if isinstance(provider, otel_metrics.NoOpMeterProvider):
        return NOOP
    try:
        return _cache[provider]
    except (KeyError, TypeError):
        pass  # not seen yet, or not weak-referenceable: make them
    inst = _make(provider.get_meter(SCOPE, _version()), noop=False)
    with suppress(TypeError):  # a provider that is not weak-referenceable
        _cache[provider] = inst
    return inst
