"""Wire tests: ``telemetry.configure()`` exporting OTLP/HTTP to a receiver on 127.0.0.1."""

from __future__ import annotations

import pytest
from _otlp_receiver import attrs, otlp_receiver

from trustgate import telemetry
from trustgate.findings import Finding
from trustgate.report import OverrideRecord, Report

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


def crossing(tel: telemetry.Telemetry) -> None:
    with telemetry.crossing_span(
        "inspector",
        "reviewer",
        input_value="APPROVE",
        tracer_provider=tel.tracer_provider,
        meter_provider=tel.meter_provider,
    ) as span:
        with telemetry.verifier_span(span, "citation_replay") as vs:
            vs.record(REPORT.findings)
        telemetry.finish_crossing(span, REPORT)


@pytest.fixture(autouse=True)
def _clean_otel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
    ):
        monkeypatch.delenv(var, raising=False)


def test_spans_events_and_metrics_arrive_over_otlp_http() -> None:
    with otlp_receiver() as (url, received):
        tel = telemetry.configure(url, set_global=False, batch=False)
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
        assert a["trustgate.decision"] == "modified"
        assert a["trustgate.override.kinds"] == ("field_override",)
        assert [e.name for e in gate.events] == ["trustgate.override"]
        assert attrs(gate.events[0].attributes)["trustgate.override.target"] == "review.verdict"
        assert verify.parent_span_id == gate.span_id
        assert verify.trace_id == gate.trace_id
        assert attrs(verify.attributes)["trustgate.verifier.outcome"] == "fail"
        assert {
            "trustgate.crossings",
            "trustgate.findings",
            "trustgate.overrides",
            "trustgate.gate.duration",
        } <= received.metric_names()


def test_configure_honours_standard_env_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    with otlp_receiver() as (url, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cret")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "reviews-prod")
        monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
        tel = telemetry.configure(set_global=False, metrics=False)
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
        tel = telemetry.configure(set_global=False, metrics=False, batch=False)
        try:
            crossing(tel)
        finally:
            tel.shutdown()
        assert len(received.spans()) == 2


def test_configure_sets_the_global_providers() -> None:
    from _otel import global_providers
    from opentelemetry import trace as otel_trace

    with otlp_receiver() as (url, received), global_providers(None):
        tel = telemetry.configure(url, batch=False, metrics=False, headers={"x-k": "v"})
        try:
            assert otel_trace.get_tracer_provider() is tel.tracer_provider
            with telemetry.crossing_span("inspector", "reviewer") as span:
                telemetry.finish_crossing(span, REPORT)
        finally:
            tel.shutdown()
        assert [s.name for _, s in received.spans()] == ["trustgate.gate inspector"]
        assert received.headers[0]["x-k"] == "v"
