"""``--otlp-endpoint``: any trustgate command exports its crossings over OTLP/HTTP."""

from __future__ import annotations

import argparse

import pytest
from _otel import global_providers
from _otlp_receiver import attrs, otlp_receiver

from trustgate import telemetry
from trustgate.cli import build_parser, main
from trustgate.cli._common import run
from trustgate.report import Report


@pytest.mark.parametrize(
    "argv",
    [
        ["--otlp-endpoint", "http://127.0.0.1:4318", "demo"],
        ["demo", "--otlp-endpoint", "http://127.0.0.1:4318"],
    ],
)
def test_option_before_or_after_the_command(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert args.otlp_endpoint == "http://127.0.0.1:4318"


def test_option_is_optional() -> None:
    assert getattr(build_parser().parse_args(["demo"]), "otlp_endpoint", None) is None


def test_bad_endpoint_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--otlp-endpoint", "localhost:4318", "demo"]) == 2
    err = capsys.readouterr().err
    assert "not an http(s) URL" in err
    assert "Traceback" not in err


def test_command_crossings_reach_the_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)

    def handler(args: argparse.Namespace) -> int:
        # what a gated command does: the gate uses the global providers
        with telemetry.crossing_span("inspector", "reviewer", input_value="x") as span:
            telemetry.finish_crossing(
                span, Report(gate="inspector", node="reviewer", decision="pass", released=True)
            )
        return 0

    with otlp_receiver() as (url, received), global_providers(None):
        args = argparse.Namespace(handler=handler, otlp_endpoint=url)
        assert run(args) == 0
        # the command returned only after the exporters were flushed and shut down
        [(resource, span)] = received.spans()
        assert span.name == "trustgate.gate inspector"
        assert attrs(span.attributes)["trustgate.decision"] == "pass"
        assert resource["service.name"] == "trustgate-cli"
        assert "trustgate.crossings" in received.metric_names()


def test_demo_runs_with_an_endpoint(capsys: pytest.CaptureFixture[str]) -> None:
    with otlp_receiver() as (url, _received), global_providers(None):
        assert main(["--otlp-endpoint", url, "demo", "--json"]) == 0
    assert '"pipelines"' in capsys.readouterr().out
