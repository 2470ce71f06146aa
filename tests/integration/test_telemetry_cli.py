"""``--otlp-endpoint`` / ``--no-metrics``: any trustgate command exports its crossings."""

from __future__ import annotations

import argparse
import collections

import pytest
from _otel import global_providers
from _otlp_receiver import attrs, otlp_receiver

from trustgate import Report, otel
from trustgate.cli import build_parser, main
from trustgate.cli._common import run
from trustgate.otel.semconv import CrossingAttributes as C
from trustgate.otel.semconv import MetricNames as M


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_METRICS_EXPORTER"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize(
    "argv",
    [
        ["--otlp-endpoint", "http://127.0.0.1:4318", "--no-metrics", "demo"],
        ["demo", "--otlp-endpoint", "http://127.0.0.1:4318", "--no-metrics"],
    ],
)
def test_options_before_or_after_the_command(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert args.otlp_endpoint == "http://127.0.0.1:4318"
    assert args.no_metrics is True


def test_options_are_optional() -> None:
    args = build_parser().parse_args(["demo"])
    assert getattr(args, "otlp_endpoint", None) is None
    assert getattr(args, "no_metrics", False) is False


def test_bad_endpoint_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--otlp-endpoint", "localhost:4318", "demo"]) == 2
    err = capsys.readouterr().err
    assert "not an http(s) URL" in err
    assert "Traceback" not in err


def _one_crossing(args: argparse.Namespace) -> int:
    # what a gated command does: the gate uses the global providers
    with otel.crossing("inspector", "reviewer") as c:
        c.finish(Report(gate="inspector", node="reviewer", decision="pass", released=True))
    return 0


def test_command_crossings_reach_the_collector() -> None:
    with otlp_receiver() as (url, received), global_providers(None):
        args = argparse.Namespace(handler=_one_crossing, otlp_endpoint=url)
        assert run(args) == 0
        # the command returned only after the exporters were flushed and shut down
        [(resource, span)] = received.spans()
        assert span.name == "trustgate.gate inspector"
        assert attrs(span.attributes)[C.DECISION] == "pass"
        assert resource["service.name"] == "trustgate-cli"
        assert M.CROSSINGS in received.metric_names()


def test_no_metrics_sends_traces_only() -> None:
    with otlp_receiver() as (url, received), global_providers(None):
        args = argparse.Namespace(handler=_one_crossing, otlp_endpoint=url, no_metrics=True)
        assert run(args) == 0
        assert len(received.spans()) == 1
        assert received.metrics == [] and received.refused_metrics == 0


def test_demo_against_a_traces_only_backend(capsys: pytest.CaptureFixture[str]) -> None:
    """A backend without /v1/metrics (Phoenix: 405) still gets every trace, one root
    span per pipeline run holding all of that run's crossings; exit 0, one warning."""
    with otlp_receiver(metrics_status=405) as (url, received), global_providers(None):
        assert main(["--otlp-endpoint", url, "demo", "--json"]) == 0
    captured = capsys.readouterr()
    assert '"pipelines"' in captured.out
    assert "Traceback" not in captured.err
    spans = [s for _, s in received.spans()]
    roots = [s for s in spans if s.name.startswith("trustgate.run ")]
    assert sorted(s.name for s in roots) == [
        "trustgate.run code-review",
        "trustgate.run compliance",
        "trustgate.run investigation",
        "trustgate.run postmortem",
    ]
    assert all(not s.parent_span_id for s in roots)
    root_traces = {s.trace_id for s in roots}
    gates = [s for s in spans if s.name.startswith("trustgate.gate ")]
    assert gates
    assert {g.trace_id for g in gates} <= root_traces  # no crossing is its own trace
    per_trace = collections.Counter(g.trace_id for g in gates)
    assert set(per_trace) == root_traces  # every pipeline crossed at least one gate
    sessions = {attrs(s.attributes)["session.id"] for s in roots}
    assert all(s.startswith("demo-") for s in sessions)
    for g in gates:
        assert attrs(g.attributes)["session.id"] in sessions
    assert received.refused_metrics == 1
