"""End to end against a real Arize Phoenix server on 127.0.0.1.

A LangGraph graph traced with OpenInference's LangChain instrumentation runs one
crossing inside its ``reviewer`` node; the spans go over OTLP/HTTP through
``telemetry.configure()`` and are read back through Phoenix's REST API. Inside CI
(``CI`` set) this test always runs: a missing Phoenix venv is a failure there.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from _phoenix import LOOPBACK, Phoenix, available, listening_addresses, phoenix_server
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from trustgate import telemetry
from trustgate.findings import Finding
from trustgate.report import OverrideRecord, Report

PROJECT = "trustgate-e2e"

if not available():
    if os.environ.get("CI"):
        raise RuntimeError("the Phoenix venv is missing in CI: run scripts/phoenix-venv.sh")
    pytest.skip(
        "Phoenix venv missing: run scripts/phoenix-venv.sh (make test does)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    workdir: Path = tmp_path_factory.mktemp("phoenix")
    with phoenix_server(workdir) as server:
        yield server
    assert server.process.returncode is not None  # stopped by the fixture


class State(TypedDict, total=False):
    draft: str
    log: Annotated[list[str], operator.add]


FAILED = Finding.failed("citation_replay", "content_mismatch", "line 4 does not say that")


def graph() -> Any:
    def writer(state: State) -> State:
        return {"draft": "APPROVE"}

    def reviewer(state: State, config: RunnableConfig) -> State:
        with telemetry.crossing_span(
            "inspector", "writer", input_value=state["draft"], config=config
        ) as span:
            with telemetry.verifier_span(span, "citation_replay") as vs:
                vs.record([FAILED])
            report = Report(
                gate="inspector",
                node="writer",
                findings=[FAILED],
                decision="modified",
                overrides=[
                    OverrideRecord(
                        kind="field_override",
                        target="review.verdict",
                        before="APPROVE",
                        after="REQUEST_CHANGES",
                        reason="citation_replay/content_mismatch",
                        verifier="citation_replay",
                    ),
                    OverrideRecord(
                        kind="caveat", target="review.summary", reason="unresolved citation"
                    ),
                ],
                released=True,
            )
            telemetry.finish_crossing(span, report, output_value={"verdict": "REQUEST_CHANGES"})
        return {"log": ["reviewed"]}

    b = StateGraph(State)
    b.add_node("writer", writer)
    b.add_node("reviewer", reviewer)
    b.add_edge(START, "writer")
    b.add_edge("writer", "reviewer")
    b.add_edge("reviewer", END)
    return b.compile()


def wait_for(phoenix: Phoenix, names: set[str], timeout: float = 60) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        spans = phoenix.spans(PROJECT)
        if names <= {s["name"] for s in spans}:
            return spans
        if time.monotonic() > deadline:
            raise AssertionError(f"Phoenix has {[s['name'] for s in spans]}, wanted {names}")
        time.sleep(0.25)


def test_guardrail_span_in_phoenix(phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch) -> None:
    from _otel import global_providers
    from openinference.instrumentation.langchain import LangChainInstrumentor

    # gRPC must not listen beyond loopback
    addresses = listening_addresses(phoenix.grpc_port)
    assert addresses, "Phoenix's gRPC port is not listening"
    assert set(addresses) <= LOOPBACK, addresses

    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={PROJECT}")
    with global_providers(None):
        tel = telemetry.configure(phoenix.url, batch=False, metrics=False)
        inst = LangChainInstrumentor()
        inst.instrument(tracer_provider=tel.tracer_provider)
        try:
            graph().invoke({"draft": ""})
        finally:
            inst.uninstrument()
            tel.shutdown()

    spans = wait_for(
        phoenix, {"reviewer", "trustgate.gate inspector", "trustgate.verify citation_replay"}
    )
    by_name = {s["name"]: s for s in spans}
    gate = by_name["trustgate.gate inspector"]
    node = by_name["reviewer"]
    verify = by_name["trustgate.verify citation_replay"]

    assert gate["span_kind"] == "GUARDRAIL"
    assert gate["parent_id"] == node["context"]["span_id"]
    assert gate["context"]["trace_id"] == node["context"]["trace_id"]
    assert verify["span_kind"] == "EVALUATOR"
    assert verify["parent_id"] == gate["context"]["span_id"]
    assert verify["attributes"]["trustgate.verifier.outcome"] == "fail"

    a = gate["attributes"]
    assert a["trustgate.gate.name"] == "inspector"
    assert a["trustgate.gate.node"] == "writer"
    assert a["trustgate.decision"] == "modified"
    assert a["trustgate.override.count"] == 2
    assert a["trustgate.override.kinds"] == ["field_override", "caveat"]
    assert a["trustgate.verifier.failed"] == ["citation_replay"]
    assert a["input.value"].startswith("[content not captured: sha256=")
    assert "APPROVE" not in str(a)
    assert gate["status_code"] == "UNSET"

    events = [e for e in gate["events"] if e["name"] == "trustgate.override"]
    assert [e["attributes"]["trustgate.override.kind"] for e in events] == [
        "field_override",
        "caveat",
    ]
    assert events[0]["attributes"]["trustgate.override.target"] == "review.verdict"
    assert events[0]["attributes"]["trustgate.override.verifier"] == "citation_replay"
    assert events[0]["attributes"]["trustgate.override.reason"] == (
        "citation_replay/content_mismatch"
    )
