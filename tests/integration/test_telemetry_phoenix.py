"""End to end against a real Arize Phoenix server on 127.0.0.1.

Every reference pipeline runs its demo scenario, traced by OpenInference's LangChain
instrumentation and exported by ``otel.configure()`` over OTLP/HTTP; the spans are read
back through Phoenix's REST and GraphQL APIs, and its trace view is opened in headless
Chromium. Inside CI (``CI`` set) these tests always run: a missing Phoenix venv or
browser is a failure there, never a skip.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _leaks import content_of, leaks, people
from _otel import global_providers, restoring_langchain_patches
from _phoenix import LOOPBACK, Phoenix, available, listening_addresses, phoenix_server
from langgraph.checkpoint.memory import InMemorySaver

from trustgate import otel
from trustgate._demo.runner import SCENARIOS, DemoRun, run_scenario
from trustgate.otel.semconv import CrossingAttributes as C
from trustgate.otel.semconv import OpenInferenceAttributes as OI

PROJECT = "trustgate-e2e"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("TRUSTGATE_TEST_ARTIFACTS", ROOT / "test-artifacts"))
CHROMIUM = Path(os.environ.get("TRUSTGATE_CHROMIUM", "/usr/bin/chromium"))

# The filter expressions the README documents (Phoenix nests dotted attribute names, so
# trustgate's attributes are reached key by key).
FILTER_OVERRIDES = "attributes['trustgate']['crossing']['override_count'] > 0"
FILTER_HALTED = "span_kind == 'GUARDRAIL' and status_code == 'ERROR'"
FILTER_DECISION = "metadata['decision'] == 'modified'"
FILTER_KIND_TAG = "'override:field_override' in attributes['tag']['tags']"
FILTER_VALUE = "'REQUEST_CHANGES' in attributes['trustgate']['crossing']['override_values']"
FILTER_RUNS_ACTED = "attributes['trustgate']['run']['acted_count'] > 0"

if not available():
    if os.environ.get("CI"):
        raise RuntimeError("the Phoenix venv is missing in CI: run scripts/phoenix-venv.sh")
    pytest.skip(
        "Phoenix venv missing: run scripts/phoenix-venv.sh (make test does)",
        allow_module_level=True,
    )


@dataclass
class Exported:
    phoenix: Phoenix
    runs: list[DemoRun]
    spans: list[dict[str, Any]]
    warnings: list[str]


def _wait_for(phoenix: Phoenix, report_ids: set[str], timeout: float = 60) -> list[dict[str, Any]]:
    """Phoenix ingests asynchronously: wait until every crossing's span and every
    ancestor of a trustgate span is stored."""
    deadline = time.monotonic() + timeout
    while True:
        spans = phoenix.spans(PROJECT)
        ids = {s["attributes"].get(C.REPORT_ID) for s in spans}
        span_ids = {s["context"]["span_id"] for s in spans}
        orphans = [s["name"] for s in spans if s["parent_id"] not in (None, *span_ids)]
        roots = [s for s in spans if s["name"].startswith("trustgate.run ")]
        if report_ids <= ids and not orphans and len(roots) == len(SCENARIOS):
            waited = timeout - (deadline - time.monotonic())
            print(f"phoenix: {len(spans)} spans stored {waited:.1f}s after export", file=sys.stderr)
            return spans
        if time.monotonic() > deadline:
            raise AssertionError(
                f"Phoenix has {len(spans)} spans, {report_ids - ids} missing, orphans {orphans}"
            )
        time.sleep(0.5)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    workdir: Path = tmp_path_factory.mktemp("phoenix")
    mp = pytest.MonkeyPatch()
    mp.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={PROJECT}")
    for var in (otel.CAPTURE_CONTENT_ENV, otel.CONTENT_KEY_ENV, "OTEL_METRICS_EXPORTER"):
        mp.delenv(var, raising=False)
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.WARNING)
    logging.getLogger().addHandler(handler)
    try:
        with (
            phoenix_server(workdir) as phoenix,
            global_providers(None),
            restoring_langchain_patches(),
        ):
            tel = otel.configure(phoenix.url, batch=False, metric_export_interval_ms=60_000)
            inst = LangChainInstrumentor()
            inst.instrument(tracer_provider=tel.tracer_provider)
            try:
                runs = [run_scenario(name, InMemorySaver()) for name in sorted(SCENARIOS)]
            finally:
                inst.uninstrument()
                tel.shutdown()  # flushes spans, then tries the metrics once
            ids = {r.id for run in runs for r in run.reports}
            spans = _wait_for(phoenix, ids)
            yield Exported(phoenix, runs, spans, [r.getMessage() for r in records])
    finally:
        logging.getLogger().removeHandler(handler)
        mp.undo()


def _gates(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in spans if s["name"].startswith("trustgate.gate ")]


def _iso(ts: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def test_grpc_listens_on_loopback_only(exported: Exported) -> None:
    addresses = listening_addresses(exported.phoenix.grpc_port)
    assert addresses, "Phoenix's gRPC port is not listening"
    assert set(addresses) <= LOOPBACK, addresses


def test_one_gate_span_per_crossing_inside_its_run(exported: Exported) -> None:
    by_id = {s["context"]["span_id"]: s for s in exported.spans}
    gates = _gates(exported.spans)
    for run in exported.runs:
        mine = [g for g in gates if g["attributes"].get(OI.SESSION_ID) == run.thread_id]
        # one span per crossing, matched by report id
        assert sorted(g["attributes"][C.REPORT_ID] for g in mine) == sorted(
            r.id for r in run.reports
        ), run.pipeline
        (root,) = [s for s in exported.spans if s["name"] == f"trustgate.run {run.pipeline}"]
        assert root["parent_id"] is None
        for g in mine:
            assert g["span_kind"] == "GUARDRAIL"
            assert g["context"]["trace_id"] == root["context"]["trace_id"]
            parent = by_id[g["parent_id"]]  # the run that performed the crossing
            assert parent["context"]["trace_id"] == g["context"]["trace_id"]
            assert _iso(parent["start_time"]) <= _iso(g["start_time"])
            assert _iso(g["end_time"]) <= _iso(parent["end_time"])
            assert _iso(root["start_time"]) <= _iso(g["start_time"])
            assert _iso(g["end_time"]) <= _iso(root["end_time"])


def test_summary_status_and_session_read_at_a_glance(exported: Exported) -> None:
    reports = {r.id: r for run in exported.runs for r in run.reports}
    gates = _gates(exported.spans)
    acted = 0
    for g in gates:
        a = g["attributes"]
        report = reports[a[C.REPORT_ID]]
        assert a[OI.OUTPUT_VALUE].startswith(f"{report.decision}: ")
        assert a[OI.OUTPUT_VALUE] == a[C.SUMMARY]
        assert a[OI.SESSION_ID] == report.thread_id
        if report.decision == "pass":
            assert g["status_code"] in ("UNSET", "OK")
        elif report.decision == "halted":  # red is for a halt (or a crash) only
            acted += 1
            assert g["status_code"] == "ERROR"
            assert g["status_message"] == a[OI.OUTPUT_VALUE]
        else:  # an override that worked: OK, its events say what it did
            acted += 1
            assert g["status_code"] == "OK", report.decision
            assert any(e["name"].startswith("trustgate.override ") for e in g["events"])
        for ov in report.overrides:
            assert f"{ov.kind} {ov.target}" in a[OI.OUTPUT_VALUE] or "more" in a[OI.OUTPUT_VALUE]
    assert acted >= 4
    code_review = next(g for g in gates if g["attributes"][C.DECISION] == "modified")
    titles = [e["name"] for e in code_review["events"]]
    assert "gen_ai.evaluation.result" in titles
    assert any(t.startswith("trustgate.override ") for t in titles)


def test_no_claim_string_in_trustgate_spans(exported: Exported) -> None:
    ours = [s for s in exported.spans if s["name"].startswith("trustgate.")]
    text = json.dumps(ours)
    for run in exported.runs:
        secrets = set().union(*(content_of(r) for r in run.reports)) | people()
        assert leaks(secrets, text) == [], run.pipeline


def test_metrics_refusal_is_one_warning(exported: Exported) -> None:
    refused = [w for w in exported.warnings if "does not accept metrics (HTTP 405)" in w]
    assert len(refused) == 1, exported.warnings


def _graphql(phoenix: Phoenix, query: str, variables: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        phoenix.url + "/graphql",
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        body = json.load(resp)
    assert not body.get("errors"), body["errors"]
    return body["data"]


def _project_id(phoenix: Phoenix) -> str:
    return str(next(p["id"] for p in phoenix.get("/v1/projects")["data"] if p["name"] == PROJECT))


def _filtered(phoenix: Phoenix, condition: str) -> set[str]:
    query = """query($id: ID!, $c: String) { node(id: $id) { ... on Project {
        spans(first: 1000, filterCondition: $c) { edges { node { context { spanId } } } }
    } } }"""
    data = _graphql(phoenix, query, {"id": _project_id(phoenix), "c": condition})
    return {e["node"]["context"]["spanId"] for e in data["node"]["spans"]["edges"]}


def test_documented_phoenix_filters_find_the_overriding_crossings(exported: Exported) -> None:
    gates = _gates(exported.spans)

    def ids(pred: Any) -> set[str]:
        return {g["context"]["span_id"] for g in gates if pred(g["attributes"])}

    overriding = ids(lambda a: a[C.OVERRIDE_COUNT] > 0)
    assert overriding
    assert _filtered(exported.phoenix, FILTER_OVERRIDES) == overriding
    halted = ids(lambda a: a[C.DECISION] == "halted")
    assert halted
    assert _filtered(exported.phoenix, FILTER_HALTED) == halted
    request_changes = ids(lambda a: "REQUEST_CHANGES" in a.get(C.OVERRIDE_VALUES, ()))
    assert request_changes
    assert _filtered(exported.phoenix, FILTER_VALUE) == request_changes
    modified = ids(lambda a: a[C.DECISION] == "modified")
    assert _filtered(exported.phoenix, FILTER_DECISION) == modified
    assert _filtered(exported.phoenix, FILTER_KIND_TAG) == ids(
        lambda a: "field_override" in a[C.OVERRIDE_KINDS]
    )


def _browser_or_fail() -> None:
    if CHROMIUM.is_file():
        return
    message = (
        f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install -y chromium; "
        "`make test` does when it runs as root)"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def test_trace_view_shows_the_overriding_decision_without_a_click(exported: Exported) -> None:
    """Phoenix's trace view of the code-review run, as an engineer opens it: the
    overriding crossing's decision text is on screen before anything is clicked."""
    _browser_or_fail()
    from playwright.sync_api import sync_playwright

    run = next(r for r in exported.runs if r.pipeline == "code-review")
    (root,) = [s for s in exported.spans if s["name"] == "trustgate.run code-review"]
    overriding = next(
        g
        for g in _gates(exported.spans)
        if g["attributes"][OI.SESSION_ID] == run.thread_id and g["attributes"][C.OVERRIDE_COUNT] > 0
    )
    decision_text = overriding["attributes"][OI.OUTPUT_VALUE]
    url = (
        f"{exported.phoenix.url}/projects/{_project_id(exported.phoenix)}"
        f"/traces/{root['context']['trace_id']}"
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "phoenix-trace-view.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(url)
            found = page.get_by_text(decision_text, exact=False).first
            try:
                found.wait_for(state="visible", timeout=30_000)
            finally:
                page.screenshot(path=str(shot))
            assert found.is_visible()
            box = found.bounding_box()
            assert box is not None and box["y"] < 1000  # in the first screen, no scrolling
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000


def test_each_run_is_a_phoenix_session(exported: Exported) -> None:
    """session.id = the thread: Phoenix lists one session per run (it listed none)."""
    query = """query($id: ID!) { node(id: $id) { ... on Project {
        sessions(first: 100) { edges { node { sessionId numTraces } } }
    } } }"""
    data = _graphql(exported.phoenix, query, {"id": _project_id(exported.phoenix)})
    sessions = {
        e["node"]["sessionId"]: e["node"]["numTraces"] for e in data["node"]["sessions"]["edges"]
    }
    for run in exported.runs:
        assert sessions.get(run.thread_id) == 1, (run.pipeline, sessions)  # one trace per run


def test_the_value_an_override_set_from_configuration_reads_back(exported: Exported) -> None:
    """The code review's verdict override sets REQUEST_CHANGES, a constant of the gate's
    configuration: Phoenix holds it on the override event, with capture off; what the
    model wrote (APPROVE) it does not hold."""
    run = next(r for r in exported.runs if r.pipeline == "code-review")
    (gate,) = [
        g
        for g in _gates(exported.spans)
        if g["attributes"][OI.SESSION_ID] == run.thread_id
        and g["attributes"][C.DECISION] == "modified"
    ]
    events = [e for e in gate["events"] if e["name"] == "trustgate.override field_override"]
    values = {
        e["attributes"]["trustgate.override.target"]: e["attributes"].get(
            "trustgate.override.value"
        )
        for e in events
    }
    assert values["review.verdict"] == "REQUEST_CHANGES"
    assert list(gate["attributes"][C.OVERRIDE_VALUES]) == ["REQUEST_CHANGES", "null"]
    assert "APPROVE" not in json.dumps(gate).replace("trustgate.", "")


def test_each_run_root_counts_the_crossings_that_acted(exported: Exported) -> None:
    """What the trace list shows for each run: how many crossings acted, by decision."""
    roots = {}
    for run in exported.runs:
        (root,) = [s for s in exported.spans if s["name"] == f"trustgate.run {run.pipeline}"]
        roots[root["context"]["span_id"]] = run
        a = root["attributes"]
        acted = [r.decision for r in run.reports if r.decision != "pass"]
        assert a["trustgate.run.acted_count"] == len(acted), run.pipeline
        assert a["trustgate.run.crossing_count"] == len(run.reports)
        head = a[OI.OUTPUT_VALUE].splitlines()[0]
        assert head.startswith(f"{run.status}: "), head
        assert f"{len(acted)} acted on" in head, head
        assert f"acted:{len(acted)}" in a["tag.tags"]
        assert root["status_code"] != "ERROR"  # a halt is the run's outcome, not an error
    acted_roots = {
        sid for sid, run in roots.items() if any(r.decision != "pass" for r in run.reports)
    }
    assert _filtered(exported.phoenix, FILTER_RUNS_ACTED) == acted_roots
