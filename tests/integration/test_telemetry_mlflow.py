"""End to end against a second real backend: an MLflow tracking server on 127.0.0.1.

The reference pipelines run their demo scenarios exported by ``otel.configure()`` over
OTLP/HTTP to MLflow (traces only: MLflow answers ``/v1/metrics`` with 404, which costs
one warning), and the traces are read back with MLflow's client. Inside CI (``CI`` set)
this always runs: a missing MLflow venv is a failure there.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _leaks import content_of, leaks, people
from _mlflow import EXPERIMENT, MLflow, available, mlflow_server
from _otel import global_providers
from langgraph.checkpoint.memory import InMemorySaver

from trustgate import otel
from trustgate._demo.runner import SCENARIOS, DemoRun, run_scenario
from trustgate.otel.semconv import CrossingAttributes as C
from trustgate.otel.semconv import OpenInferenceAttributes as OI

if not available():
    if os.environ.get("CI"):
        raise RuntimeError("the MLflow venv is missing in CI: run scripts/mlflow-venv.sh")
    pytest.skip(
        "MLflow venv missing: run scripts/mlflow-venv.sh (make test does)",
        allow_module_level=True,
    )


@dataclass
class Exported:
    runs: list[DemoRun]
    spans: list[dict[str, Any]]
    warnings: list[str]
    server: MLflow


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    workdir: Path = tmp_path_factory.mktemp("mlflow")
    mp = pytest.MonkeyPatch()
    for var in (otel.CAPTURE_CONTENT_ENV, otel.CONTENT_KEY_ENV, "OTEL_METRICS_EXPORTER"):
        mp.delenv(var, raising=False)
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.WARNING)
    logging.getLogger().addHandler(handler)
    try:
        with mlflow_server(workdir) as server, global_providers(None):
            tel = otel.configure(
                server.url, headers={"x-mlflow-experiment-id": EXPERIMENT}, batch=False
            )
            try:
                runs = [run_scenario(name, InMemorySaver()) for name in sorted(SCENARIOS)]
            finally:
                tel.shutdown()
            want = {r.id for run in runs for r in run.reports}
            deadline = time.monotonic() + 60
            while True:  # MLflow ingests asynchronously: every crossing and its ancestors
                spans = server.spans()
                have = {s["attributes"].get(C.REPORT_ID) for s in spans}
                known = {(s["trace_id"], s["span_id"]) for s in spans}
                orphans = [
                    s
                    for s in spans
                    if s["parent_id"] and (s["trace_id"], s["parent_id"]) not in known
                ]
                if (want <= have and not orphans) or time.monotonic() > deadline:
                    break
                time.sleep(1)
            yield Exported(runs, spans, [r.getMessage() for r in records], server)
    finally:
        logging.getLogger().removeHandler(handler)
        mp.undo()


def test_one_gate_span_per_crossing_inside_its_run(exported: Exported) -> None:
    by_id = {(s["trace_id"], s["span_id"]): s for s in exported.spans}
    gates = [s for s in exported.spans if s["name"].startswith("trustgate.gate ")]
    for run in exported.runs:
        mine = [g for g in gates if g["attributes"].get(OI.SESSION_ID) == run.thread_id]
        assert sorted(g["attributes"][C.REPORT_ID] for g in mine) == sorted(
            r.id for r in run.reports
        ), run.pipeline
        (root,) = [s for s in exported.spans if s["name"] == f"trustgate.run {run.pipeline}"]
        assert root["parent_id"] is None
        for g in mine:
            assert g["trace_id"] == root["trace_id"]  # one trace per run
            parent = by_id[(g["trace_id"], g["parent_id"])]
            assert parent["start_ns"] <= g["start_ns"] <= g["end_ns"] <= parent["end_ns"]


def test_mlflow_shows_the_summary_as_the_span_output(exported: Exported) -> None:
    reports = {r.id: r for run in exported.runs for r in run.reports}
    for g in (s for s in exported.spans if s["name"].startswith("trustgate.gate ")):
        a = g["attributes"]
        report = reports[a[C.REPORT_ID]]
        assert a["mlflow.spanType"] == "GUARDRAIL"
        assert a["mlflow.spanOutputs"] == a[OI.OUTPUT_VALUE]
        assert a[OI.OUTPUT_VALUE].startswith(f"{report.decision}: ")
        if report.decision == "halted":  # red for a halt (or a crash) only
            assert g["status"] == "ERROR"
            assert g["status_message"] == a[OI.OUTPUT_VALUE]
        elif report.decision != "pass":  # an override that worked
            assert g["status"] == "OK", report.decision
    root = next(s for s in exported.spans if s["name"] == "trustgate.run code-review")
    assert "acted on" in root["attributes"]["mlflow.spanOutputs"]


def test_no_claim_string_in_any_span(exported: Exported) -> None:
    text = json.dumps(exported.spans, default=str)
    for run in exported.runs:
        secrets = set().union(*(content_of(r) for r in run.reports)) | people()
        assert leaks(secrets, text) == [], run.pipeline


def test_missing_metrics_endpoint_is_one_warning(exported: Exported) -> None:
    refused = [w for w in exported.warnings if "does not accept metrics (HTTP 404)" in w]
    assert len(refused) == 1, exported.warnings
