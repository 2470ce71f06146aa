"""OpenTelemetry test helpers: in-memory SDK providers and a global-provider reset."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry import metrics as otel_metrics
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@dataclass
class Otel:
    tracer_provider: TracerProvider
    exporter: InMemorySpanExporter
    meter_provider: MeterProvider
    reader: InMemoryMetricReader

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name.startswith(prefix)]

    def one(self, prefix: str) -> ReadableSpan:
        found = self.named(prefix)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def metric_points(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        points: list[Any] = []
        if data is None:
            return points
        for rm in data.resource_metrics:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name == name:
                        points.extend(m.data.data_points)
        return points

    def counter(self, name: str, **attrs: Any) -> int:
        total = 0
        for p in self.metric_points(name):
            if all(p.attributes.get(k) == v for k, v in attrs.items()):
                total += int(p.value)
        return total


def everything_exported(otel: Otel) -> list[dict[str, Any]]:
    """Every span, event, link, status and metric point exported, as plain dicts (for
    searching all of it for content, and for checking attribute types)."""
    out: list[dict[str, Any]] = []
    for s in otel.spans():
        out.append(
            {
                "what": "span",
                "name": s.name,
                "attributes": dict(s.attributes or {}),
                "status": s.status.description,
            }
        )
        out.extend(
            {"what": "event", "name": e.name, "attributes": dict(e.attributes or {})}
            for e in s.events
        )
        out.extend(
            {"what": "link", "name": s.name, "attributes": dict(link.attributes or {})}
            for link in s.links
        )
    data = otel.reader.get_metrics_data()
    for rm in data.resource_metrics if data is not None else ():
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                out.extend(
                    {"what": "metric", "name": m.name, "attributes": dict(p.attributes or {})}
                    for p in m.data.data_points
                )
    return out


def make_otel(span_limits: SpanLimits | None = None) -> Otel:
    exporter = InMemorySpanExporter()
    tp = TracerProvider(span_limits=span_limits)
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    mp = MeterProvider(metric_readers=[reader])
    return Otel(tp, exporter, mp, reader)


def _reset_globals() -> None:
    # The API allows setting the global providers once per process; tests that need
    # the global path reset the private latches (the SDK's own tests do the same).
    from opentelemetry.util._once import Once

    otel_trace._TRACER_PROVIDER_SET_ONCE = Once()
    otel_trace._TRACER_PROVIDER = None
    otel_metrics._internal._METER_PROVIDER_SET_ONCE = Once()
    otel_metrics._internal._METER_PROVIDER = None


@contextmanager
def global_providers(otel: Otel | None) -> Iterator[None]:
    """Install ``otel``'s providers as the global ones (``None``: no SDK at all).

    The providers that were global before (another fixture's, say) come back after.
    """
    before_tp = otel_trace._TRACER_PROVIDER
    before_mp = otel_metrics._internal._METER_PROVIDER
    _reset_globals()
    try:
        if otel is not None:
            otel_trace.set_tracer_provider(otel.tracer_provider)
            otel_metrics.set_meter_provider(otel.meter_provider)
        yield
    finally:
        _reset_globals()
        if before_tp is not None:
            otel_trace.set_tracer_provider(before_tp)
        if before_mp is not None:
            otel_metrics.set_meter_provider(before_mp)


def hexid(n: int) -> str:
    return format(n, "016x")


# Everything OpenLLMetry's LangchainInstrumentor patches. Its uninstrument() leaves
# the wrappers in place with this wrapt version (unwrap() does not recognise them), so
# its handler would keep tracing every later graph in the process: tests restore the
# originals themselves.
_PATCH_TARGETS = [
    ("langchain_core.callbacks", "BaseCallbackManager", "__init__"),
    ("langgraph.pregel", "Pregel", "stream"),
    ("langgraph.pregel", "Pregel", "astream"),
    ("langgraph.types", "Command", "__init__"),
    ("langgraph.prebuilt", None, "create_react_agent"),
    ("langgraph.prebuilt.chat_agent_executor", None, "create_react_agent"),
    ("langchain.agents", None, "create_agent"),
    ("langchain.agents.factory", None, "create_agent"),
    *[
        ("langchain.agents.middleware.types", "AgentMiddleware", hook)
        for hook in (
            "before_model",
            "after_model",
            "before_agent",
            "after_agent",
            "abefore_model",
            "aafter_model",
            "abefore_agent",
            "aafter_agent",
        )
    ],
]


@contextmanager
def restoring_langchain_patches() -> Iterator[None]:
    """Put back every attribute an instrumentor patched, whatever its uninstrument did."""
    import importlib

    saved: list[tuple[Any, str, Any]] = []
    for module_name, cls_name, attr in _PATCH_TARGETS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        owner = getattr(module, cls_name) if cls_name else module
        if attr in vars(owner):
            saved.append((owner, attr, vars(owner)[attr]))
    try:
        yield
    finally:
        for owner, attr, original in saved:
            setattr(owner, attr, original)
