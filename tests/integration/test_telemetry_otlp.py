"""Wire tests: ``otel.configure()`` exporting OTLP/HTTP to a receiver on 127.0.0.1."""

from __future__ import annotations

import logging

import pytest
from _otel import global_providers, make_otel
from _otlp_receiver import attrs, otlp_receiver
from opentelemetry import metrics as otel_metrics
from opentelemetry import trace as otel_trace

from trustgate import Finding, Report, otel
from trustgate.otel.semconv import CrossingAttributes as C
from trustgate.otel.semconv import MetricNames as M
from trustgate.otel.semconv import OverrideAttributes as O
from trustgate.otel.semconv import VerifierAttributes as V
from trustgate.policies import OverrideRecord

REPORT = Report(
    gate="inspector",
    node="reviewer",
    findings=[Finding.failed("citation_replay", "content_mismatch", "no")],
    decision="modified",
    overrides=[
        OverrideRecord(
            kind="field_override",
            target="review.verdict",
            before="APPROVE",
            after="REQUEST_CHANGES",
            reason="citation_replay/content_mismatch",
            verifier="citation_replay",
        )
    ],
    released=True,
)


def crossing(tel: otel.Telemetry | None = None) -> None:
    with otel.crossing(
        "inspector",
        "reviewer",
        tracer_provider=tel.tracer_provider if tel else None,
        meter_provider=tel.meter_provider if tel else None,
    ) as c:
        with c.verifier("citation_replay") as vs:
            vs.record(REPORT.findings)
        c.finish(REPORT)


@pytest.fixture(autouse=True)
def _clean_otel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_METRICS_EXPORTER",
    ):
        monkeypatch.delenv(var, raising=False)


def test_spans_events_and_metrics_arrive_over_otlp_http() -> None:
    with otlp_receiver() as (url, received):
        tel = otel.configure(url, set_global=False, batch=False)
        try:
            crossing(tel)
            assert tel.force_flush()
        finally:
            tel.shutdown()
        spans = {s.name: (res, s) for res, s in received.spans()}
        assert set(spans) == {"trustgate.gate inspector", "trustgate.verify citation_replay"}
        res, gate = spans["trustgate.gate inspector"]
        _, verify = spans["trustgate.verify citation_replay"]
        assert res["service.name"] == "trustgate"
        a = attrs(gate.attributes)
        assert a["openinference.span.kind"] == "GUARDRAIL"
        assert a[C.DECISION] == "modified"
        assert a[C.OVERRIDE_KINDS] == ("field_override",)
        assert [e.name for e in gate.events] == [
            "gen_ai.evaluation.result",
            "trustgate.override field_override",
        ]
        assert attrs(gate.events[1].attributes)[O.TARGET] == "review.verdict"
        assert verify.parent_span_id == gate.span_id
        assert attrs(verify.attributes)[V.OUTCOME] == "fail"
        assert {M.CROSSINGS, M.FINDINGS, M.OVERRIDES, M.CROSSING_DURATION} <= (
            received.metric_names()
        )


@pytest.mark.parametrize("status", [404, 405])
def test_a_backend_without_metrics_keeps_the_traces(
    status: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Phoenix answers /v1/metrics with 405, MLflow with 404: one warning, metric
    export off, traces unaffected, no error logged by the exporter."""
    with otlp_receiver(metrics_status=status) as (url, received):
        tel = otel.configure(url, set_global=False, batch=False)
        try:
            with caplog.at_level(logging.WARNING):
                crossing(tel)
                tel.force_flush()
                crossing(tel)
                tel.force_flush()
        finally:
            tel.shutdown()
        assert received.refused_metrics == 1  # tried once, then off
        assert len([s for _, s in received.spans() if s.name.startswith("trustgate.gate")]) == 2
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.name for r in warnings] == ["trustgate.otel.sdk"], [r.getMessage() for r in warnings]
    assert f"does not accept metrics (HTTP {status})" in warnings[0].getMessage()


def test_otel_metrics_exporter_none_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    with otlp_receiver() as (url, received):
        tel = otel.configure(url, set_global=False, batch=False)
        try:
            assert tel.meter_provider is None and not tel.metrics
            crossing(tel)
        finally:
            tel.shutdown()
        assert received.metrics == [] and received.refused_metrics == 0
        assert received.spans()


def test_configure_honours_standard_env_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    with otlp_receiver() as (url, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cret")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "reviews-prod")
        monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
        tel = otel.configure(set_global=False, metrics=False)
        try:
            crossing(tel)
        finally:
            tel.shutdown()  # flushes the batch processor
        [(res, _gate)] = [(r, s) for r, s in received.spans() if s.name.startswith("trustgate.g")]
        assert res["service.name"] == "reviews-prod"
        assert res["deployment.environment"] == "test"
        assert received.headers[0]["x-api-key"] == "s3cret"
        assert received.metrics == []


def test_signal_specific_endpoint_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    with otlp_receiver() as (url, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url + "/v1/traces")
        tel = otel.configure(set_global=False, metrics=False, batch=False)
        try:
            crossing(tel)
        finally:
            tel.shutdown()
        assert len(received.spans()) == 2


def test_configure_sets_the_global_providers() -> None:
    with otlp_receiver() as (url, received), global_providers(None):
        tel = otel.configure(url, batch=False, metrics=False, headers={"x-k": "v"})
        try:
            assert otel_trace.get_tracer_provider() is tel.tracer_provider
            assert not tel.reused_tracer_provider
            crossing()
        finally:
            tel.shutdown()
        assert [s.name for _, s in received.spans()] == [
            "trustgate.verify citation_replay",
            "trustgate.gate inspector",
        ]
        assert received.headers[0]["x-k"] == "v"


def test_configure_uses_an_existing_sdk_provider_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An application's own SDK setup keeps working and receives the OTLP exporter:
    no second provider silently left aside."""
    app = make_otel()
    with otlp_receiver() as (url, received), global_providers(app):
        with caplog.at_level(logging.WARNING, logger="trustgate.otel.sdk"):
            tel = otel.configure(url, batch=False)
        try:
            assert tel.reused_tracer_provider and tel.reused_meter_provider
            assert tel.tracer_provider is app.tracer_provider
            assert otel_metrics.get_meter_provider() is app.meter_provider
            crossing()
        finally:
            tel.shutdown()
        # both the application's exporter and the OTLP one got the crossing
        assert len(app.named("trustgate.gate")) == 1
        assert len([s for _, s in received.spans() if s.name.startswith("trustgate.gate")]) == 1
        assert app.counter(M.CROSSINGS) == 1  # metrics go to the application's readers
        # shutdown closed only what configure() added: the application's provider works
        with app.tracer_provider.get_tracer("app").start_as_current_span("after"):
            pass
        assert app.named("after")
    assert "already installed" in caplog.text


def test_missing_otlp_extra_is_a_clear_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_exporter(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("opentelemetry.exporter"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_exporter)
    with pytest.raises(otel.OtlpExtraMissing, match=r"pip install 'langgraph-trustgate\[otlp\]'"):
        otel.configure("http://127.0.0.1:9", set_global=False)
