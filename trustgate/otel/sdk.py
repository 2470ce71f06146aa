"""``configure()``: an SDK exporting OTLP/HTTP, for applications that have none.

trustgate itself needs only ``opentelemetry-api``; the SDK and the OTLP exporter are
the ``otlp`` extra, needed by this module alone. An application that already installed
an SDK tracer provider keeps it: ``configure()`` adds its exporter to that provider
and says so, instead of silently writing to a second provider that never becomes
global.

Metrics are exported too unless ``metrics=False`` or ``OTEL_METRICS_EXPORTER=none``.
Tracing backends such as Arize Phoenix (HTTP 405) and MLflow (HTTP 404) take traces but
have no OTLP metrics endpoint: the first such answer turns metric export off for the
session with one warning, and traces keep flowing.

A collector that is down or never answers holds nothing: every export has a short
timeout (``export_timeout``, 3 s), ``batch=False`` exports from a background thread
through a bounded queue (a full queue drops spans and counts them), and ``shutdown()``
returns within ``shutdown_timeout`` (5 s) whatever the collector does, also at
interpreter exit (see :mod:`trustgate.otel._export`).
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import metrics as otel_metrics
from opentelemetry import trace as otel_trace

from trustgate._meta import DISTRIBUTION, install_hint
from trustgate.errors import ConfigurationError

__all__ = ["DISTRIBUTION", "Telemetry", "configure", "missing_extra_error"]

logger = logging.getLogger(__name__)

_EXTRA_HINT = install_hint("otlp")
_NO_METRICS_ENDPOINT = frozenset({404, 405})
_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.metric_exporter"


class OtlpExtraMissing(ConfigurationError):
    """``configure()`` needs the OpenTelemetry SDK and OTLP exporter (the ``otlp`` extra)."""


def missing_extra_error(exc: ImportError) -> OtlpExtraMissing:
    return OtlpExtraMissing(
        f"trustgate.otel.configure() needs the OpenTelemetry SDK and OTLP exporter, "
        f"which are not installed ({exc.name or exc}): {_EXTRA_HINT}"
    )


@dataclass
class Telemetry:
    """What :func:`configure` installed or reused; :meth:`shutdown` flushes and closes.

    ``reused_tracer_provider`` / ``reused_meter_provider`` say an SDK provider was
    already global and was used instead of a new one; ``metrics`` says whether metric
    export is on.
    """

    tracer_provider: Any
    meter_provider: Any | None
    endpoint: str | None
    reused_tracer_provider: bool = False
    reused_meter_provider: bool = False
    metrics: bool = True
    shutdown_timeout: float = 5.0
    _processor: Any = field(default=None, repr=False)
    _closed: bool = field(default=False, repr=False)

    @property
    def dropped_spans(self) -> int:
        """Spans dropped instead of waiting (``batch=False``: a full queue, or still
        queued at shutdown); the batch processor's own drops are logged by the SDK."""
        return int(getattr(self._processor, "dropped", 0))

    def force_flush(self, timeout_millis: int = 10_000) -> bool:
        """Export what is pending; ``False`` when that took longer than the timeout."""

        def flush() -> None:
            ok = bool(self.tracer_provider.force_flush(timeout_millis))
            if self.meter_provider is not None and not self.reused_meter_provider:
                ok = bool(self.meter_provider.force_flush(timeout_millis)) and ok
            if not ok:
                raise TimeoutError("an exporter did not flush in time")

        from trustgate.otel._export import within

        return within(timeout_millis / 1000, flush, "telemetry flush")

    def shutdown(self, timeout: float | None = None) -> bool:
        """Flush and close what configure() created (never a provider it reused).

        Returns within ``timeout`` seconds (default: ``configure(shutdown_timeout=)``,
        5 s) even when the collector does not answer; ``False`` then, and what was not
        exported by that time is dropped.
        """
        if self._closed:
            return True
        self._closed = True
        atexit.unregister(self._at_exit)
        from trustgate.otel._export import within

        limit = self.shutdown_timeout if timeout is None else timeout
        return within(limit, self._close, "telemetry shutdown")

    def _close(self) -> None:
        if self.reused_tracer_provider:
            if self._processor is not None:
                self._processor.force_flush()
                self._processor.shutdown()
        else:
            self.tracer_provider.shutdown()
        if self.meter_provider is not None and not self.reused_meter_provider:
            self.meter_provider.shutdown(timeout_millis=self.shutdown_timeout * 1000)

    def _at_exit(self) -> None:
        # what the SDK's providers would do at exit, with this object's bound
        self.shutdown()


def _signal_endpoint(base: str, signal: str) -> str:
    return base.rstrip("/") + f"/v1/{signal}"


def _is_sdk_provider(provider: Any) -> bool:
    return not isinstance(
        provider, (otel_trace.ProxyTracerProvider, otel_trace.NoOpTracerProvider)
    ) and hasattr(provider, "add_span_processor")


def _has_meter_sdk(provider: Any) -> bool:
    return type(provider).__name__ != "_ProxyMeterProvider" and not isinstance(
        provider, otel_metrics.NoOpMeterProvider
    )


_missing = threading.local()


class _QuietMissingEndpoint(logging.Filter):
    """Drops the exporter's own error for a backend without a metrics endpoint (ours,
    one clear warning, replaces it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_missing, "status", None)


_FILTER = _QuietMissingEndpoint()


def _metric_exporter(
    endpoint: str | None, headers: dict[str, str] | None, timeout: float | None
) -> Any:
    """An OTLP/HTTP metric exporter that turns itself off on HTTP 404/405."""
    import requests
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult

    class _StatusSession(requests.Session):
        def request(self, method: Any, url: Any, *args: Any, **kwargs: Any) -> Any:
            resp = super().request(method, url, *args, **kwargs)
            if resp.status_code in _NO_METRICS_ENDPOINT:
                _missing.status = resp.status_code
            return resp

    inner = OTLPMetricExporter(
        endpoint=endpoint, headers=headers, session=_StatusSession(), timeout=timeout
    )
    logging.getLogger(_EXPORTER_LOGGER).addFilter(_FILTER)

    class _OptionalMetrics(MetricExporter):
        def __init__(self) -> None:
            super().__init__(
                preferred_temporality=inner._preferred_temporality,
                preferred_aggregation=inner._preferred_aggregation,
            )
            self.disabled: int | None = None

        def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kw: Any) -> Any:
            if self.disabled is not None:
                return MetricExportResult.SUCCESS
            _missing.status = None
            try:
                result = inner.export(metrics_data, timeout_millis=timeout_millis, **kw)
                status = getattr(_missing, "status", None)
            finally:
                _missing.status = None
            if status is not None:
                self.disabled = int(status)
                logger.warning(
                    "the OTLP endpoint %s does not accept metrics (HTTP %d); metric export "
                    "is off for this session, traces are unaffected (use metrics=False or "
                    "--no-metrics, or OTEL_METRICS_EXPORTER=none, to skip the attempt)",
                    inner._endpoint,
                    status,
                )
                return MetricExportResult.SUCCESS
            return result

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return bool(inner.force_flush(timeout_millis))

        def shutdown(self, timeout_millis: float = 30_000, **kw: Any) -> None:
            inner.shutdown(timeout_millis=timeout_millis)

    return _OptionalMetrics()


def _metrics_wanted(metrics: bool | None) -> bool:
    if metrics is not None:
        return metrics
    return os.environ.get("OTEL_METRICS_EXPORTER", "").strip().lower() != "none"


def _limit(value: float | None, what: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigurationError(f"{what} must be a finite number of seconds, not {value!r}")
    if value <= 0:
        raise ConfigurationError(f"{what} must be > 0 seconds: {value!r}")
    return float(value)


def _export_timeout(value: float | None, signal: str) -> float | None:
    """The exporter's timeout: the argument, else the standard variables (the exporter
    reads them itself when given ``None``), else trustgate's short default."""
    from trustgate.otel._export import DEFAULT_EXPORT_TIMEOUT

    if value is not None:
        return _limit(value, "export_timeout", DEFAULT_EXPORT_TIMEOUT)
    if os.environ.get(f"OTEL_EXPORTER_OTLP_{signal}_TIMEOUT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_TIMEOUT"
    ):
        return None
    return DEFAULT_EXPORT_TIMEOUT


def configure(
    endpoint: str | None = None,
    *,
    service_name: str = "trustgate",
    headers: Mapping[str, str] | None = None,
    metrics: bool | None = None,
    set_global: bool = True,
    batch: bool = True,
    metric_export_interval_ms: int | None = None,
    export_timeout: float | None = None,
    shutdown_timeout: float | None = None,
    max_queue_size: int | None = None,
) -> Telemetry:
    """Export traces (and metrics) over OTLP/HTTP; needs the ``otlp`` extra.

    Without ``endpoint`` the exporters read the standard variables themselves
    (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
    ``OTEL_EXPORTER_OTLP_HEADERS``, …, default ``http://localhost:4318``); ``endpoint``
    is a base URL to which ``/v1/traces`` and ``/v1/metrics`` are appended.
    ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` win over ``service_name``.
    ``metrics=None`` exports metrics unless ``OTEL_METRICS_EXPORTER=none``.

    Nothing waits on a collector that is down: ``export_timeout`` (seconds, default
    3; else ``OTEL_EXPORTER_OTLP_TIMEOUT`` / ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` when
    set) bounds each export, retries included; ``batch=True`` sends spans in batches
    from the SDK's background thread, ``batch=False`` sends each span as soon as it
    ends, also from a background thread, through a queue of ``max_queue_size`` spans
    (default 2048; a full queue drops spans, counted in
    :attr:`Telemetry.dropped_spans`); :meth:`Telemetry.shutdown` (called at exit if
    you do not) returns within ``shutdown_timeout`` seconds (default 5).

    When an SDK tracer provider is already global (your own setup, a collector
    sidecar's, ``opentelemetry-instrument``'s), it is used: the OTLP exporter is added
    to it and a warning says so; likewise an existing SDK meter provider is used as it
    is (its own readers export). :meth:`Telemetry.shutdown` closes only what this call
    created.

    Raises:
        OtlpExtraMissing: the SDK or exporter is not installed
            (``pip install 'langgraph-trustgate[otlp]'``).

    Example:
        ```python
        tel = trustgate.otel.configure("http://127.0.0.1:6006")   # Phoenix
        try:
            graph.invoke(inputs)
        finally:
            tel.shutdown()
        ```
    """
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider

        from trustgate.otel._export import (
            DEFAULT_MAX_QUEUE_SIZE,
            DEFAULT_SHUTDOWN_TIMEOUT,
            BackgroundSpanProcessor,
            BoundedBatchSpanProcessor,
        )
    except ImportError as exc:
        raise missing_extra_error(exc) from exc

    closing = _limit(shutdown_timeout, "shutdown_timeout", DEFAULT_SHUTDOWN_TIMEOUT)
    queue = DEFAULT_MAX_QUEUE_SIZE if max_queue_size is None else max_queue_size
    if isinstance(queue, bool) or not isinstance(queue, int) or queue < 1:
        raise ConfigurationError(f"max_queue_size must be a whole number >= 1: {queue!r}")

    attrs: dict[str, Any] = {}
    if not os.environ.get("OTEL_SERVICE_NAME") and "service.name=" not in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    ):
        attrs["service.name"] = service_name
    resource = Resource.create(attrs)
    hdrs = dict(headers) if headers else None
    span_exporter = OTLPSpanExporter(
        endpoint=_signal_endpoint(endpoint, "traces") if endpoint else None,
        headers=hdrs,
        timeout=_export_timeout(export_timeout, "TRACES"),
    )
    processor: Any = (
        BoundedBatchSpanProcessor(span_exporter, shutdown_timeout=closing)
        if batch
        else BackgroundSpanProcessor(span_exporter, max_queue_size=queue, shutdown_timeout=closing)
    )

    current = otel_trace.get_tracer_provider()
    reused = set_global and _is_sdk_provider(current)
    if reused:
        logger.warning(
            "an OpenTelemetry SDK tracer provider is already installed (%s); trustgate "
            "added its OTLP exporter to it instead of installing a second one",
            type(current).__name__,
        )
        tracer_provider: Any = current
    elif set_global and not isinstance(
        current, (otel_trace.ProxyTracerProvider, otel_trace.NoOpTracerProvider)
    ):
        raise ConfigurationError(
            f"a tracer provider that is not the OpenTelemetry SDK's is global "
            f"({type(current).__name__}); pass set_global=False and use the returned "
            "provider, or add an OTLP exporter to yours"
        )
    else:
        # closed by Telemetry's own exit hook, which keeps to shutdown_timeout
        tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    tracer_provider.add_span_processor(processor)

    want_metrics = _metrics_wanted(metrics)
    meter_provider: Any | None = None
    meter_reused = False
    if want_metrics:
        current_mp = otel_metrics.get_meter_provider()
        if set_global and _has_meter_sdk(current_mp):
            logger.warning(
                "an OpenTelemetry meter provider is already installed (%s); trustgate's "
                "metrics go to its readers",
                type(current_mp).__name__,
            )
            meter_provider, meter_reused = current_mp, True
        else:
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            reader = PeriodicExportingMetricReader(
                _metric_exporter(
                    _signal_endpoint(endpoint, "metrics") if endpoint else None,
                    hdrs,
                    _export_timeout(export_timeout, "METRICS"),
                ),
                export_interval_millis=metric_export_interval_ms,
            )
            meter_provider = MeterProvider(
                resource=resource, metric_readers=[reader], shutdown_on_exit=False
            )
    if set_global:
        if not reused:
            otel_trace.set_tracer_provider(tracer_provider)
        if meter_provider is not None and not meter_reused:
            otel_metrics.set_meter_provider(meter_provider)
    telemetry = Telemetry(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        endpoint=endpoint,
        reused_tracer_provider=reused,
        reused_meter_provider=meter_reused,
        metrics=want_metrics,
        shutdown_timeout=closing,
        _processor=processor,
    )
    atexit.register(telemetry._at_exit)
    return telemetry
