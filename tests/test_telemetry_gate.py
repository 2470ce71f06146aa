"""Telemetry end to end through real gates in real guarded LangGraph graphs.

These tests need ``TrustGate.check``/``acheck`` to call ``trustgate.telemetry``
(``crossing_span`` around the crossing, ``verifier_span`` around each verifier run,
``finish_crossing`` with the report) using the global providers.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _gate_support import LIE, TRUTH, Review, cfg, inspector, reviewer_graph
from _otel import Otel, global_providers, make_otel, restoring_langchain_patches
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from opentelemetry.trace import StatusCode

from trustgate import telemetry
from trustgate.errors import GateHalted
from trustgate.findings import Finding
from trustgate.gate import TrustGate
from trustgate.policy import Halt, Override
from trustgate.policy import Review as ReviewPolicy
from trustgate.readers import FromKey
from trustgate.testing import lying_model
from trustgate.verifiers.base import Evidence, FunctionVerifier
from trustgate.wiring import guard


@pytest.fixture
def otel() -> Iterator[Otel]:
    o = make_otel()
    with global_providers(o):
        yield o


def gate_spans(otel: Otel) -> list[Any]:
    return otel.named("trustgate.gate")


def test_modified_crossing_one_guardrail_span(otel: Otel) -> None:
    app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()}).compile()
    out = app.invoke({"log": []})
    assert out["review"].verdict == "REQUEST_CHANGES"
    (span,) = gate_spans(otel)
    a = dict(span.attributes or {})
    assert span.name == "trustgate.gate inspector"
    assert a["openinference.span.kind"] == "GUARDRAIL"
    assert a["trustgate.gate.name"] == "inspector"
    assert a["trustgate.gate.node"] == "reviewer"
    assert a["trustgate.decision"] == "modified"
    assert a["trustgate.override.count"] == len(out["trust_reports"][0].overrides)
    assert "field_override" in a["trustgate.override.kinds"]
    assert a["trustgate.verifier.failed"] == ("replay",)
    assert "APPROVE" not in str(a)  # content capture is off by default
    events = [e for e in span.events if e.name == "trustgate.override"]
    assert len(events) == len(out["trust_reports"][0].overrides)
    first = dict(events[0].attributes or {})
    assert first["trustgate.override.kind"] == "field_override"
    assert first["trustgate.override.target"] == "review.verdict"
    (verify,) = otel.named("trustgate.verify")
    assert verify.name == "trustgate.verify replay"
    assert verify.parent is not None and verify.parent.span_id == span.context.span_id
    assert (verify.attributes or {})["trustgate.verifier.outcome"] == "fail"
    assert span.status.status_code == StatusCode.UNSET
    assert otel.counter("trustgate.crossings", **{"trustgate.decision": "modified"}) == 1
    assert otel.counter("trustgate.overrides", **{"trustgate.override.kind": "field_override"}) == 1


def test_passing_crossing(otel: Otel) -> None:
    app = guard(reviewer_graph(lying_model(TRUTH)), {"reviewer": inspector()}).compile()
    app.invoke({"log": []})
    (span,) = gate_spans(otel)
    a = dict(span.attributes or {})
    assert a["trustgate.decision"] == "pass"
    assert a["trustgate.override.count"] == 0
    assert span.events == ()
    assert (otel.one("trustgate.verify").attributes or {})["trustgate.verifier.outcome"] == "pass"


def test_halted_crossing_has_its_span_and_events(otel: Otel) -> None:
    app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector(Halt())}).compile(
        checkpointer=InMemorySaver()
    )
    with pytest.raises(GateHalted):
        app.invoke({"log": []}, cfg())
    (span,) = gate_spans(otel)
    a = dict(span.attributes or {})
    assert a["trustgate.decision"] == "halted"
    assert a["trustgate.released"] is False
    assert span.status.status_code == StatusCode.UNSET  # a halt by policy is not an error
    kinds = [dict(e.attributes or {})["trustgate.override.kind"] for e in span.events]
    assert "halt" in kinds


def _gate_with(verifier: Any) -> TrustGate:
    return TrustGate(
        "inspector",
        reads=FromKey("review", model=Review),
        verifiers=[verifier],
        policy=Override("review.verdict", "REQUEST_CHANGES"),
        passthrough=["log"],
    )


def test_crashing_verifier_is_an_error(otel: Otel) -> None:
    def boom(claims: Any, evidence: Evidence) -> list[Finding]:
        raise RuntimeError("disk on fire")

    gate = _gate_with(FunctionVerifier(boom, name="boom"))
    app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": gate}).compile()
    with pytest.raises(GateHalted):
        app.invoke({"log": []})
    (span,) = gate_spans(otel)
    assert span.status.status_code == StatusCode.ERROR
    assert (span.attributes or {})["trustgate.decision"] == "halted"
    assert "exception" in [e.name for e in span.events]
    boom_span = otel.one("trustgate.verify boom")
    assert boom_span.status.status_code == StatusCode.ERROR
    assert (boom_span.attributes or {})["trustgate.verifier.outcome"] == "error"


def test_verifier_thread_carries_the_context(otel: Otel) -> None:
    """A verifier with a timeout runs in a thread; its own spans nest under it."""
    seen: dict[str, Any] = {}

    def traced(claims: Any, evidence: Evidence) -> list[Finding]:
        seen["thread"] = threading.current_thread().name
        tracer = otel.tracer_provider.get_tracer("user")
        with tracer.start_as_current_span("read sources"):
            pass
        return [Finding.ok("traced")]

    gate = _gate_with(FunctionVerifier(traced, name="traced", timeout=5.0))
    guard(reviewer_graph(lying_model(TRUTH)), {"reviewer": gate}).compile().invoke({"log": []})
    assert seen["thread"].startswith("trustgate-verifier")
    verify = otel.one("trustgate.verify traced")
    inner = otel.one("read sources")
    assert inner.parent is not None and inner.parent.span_id == verify.context.span_id


def test_hanging_verifier_times_out_as_an_error(otel: Otel) -> None:
    release = threading.Event()

    def hang(claims: Any, evidence: Evidence) -> list[Finding]:
        release.wait(10)
        return [Finding.ok("hang")]

    gate = _gate_with(FunctionVerifier(hang, name="hang", timeout=0.2))
    app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": gate}).compile()
    try:
        with pytest.raises(GateHalted):
            app.invoke({"log": []})
    finally:
        release.set()
    assert (otel.one("trustgate.verify hang").attributes or {})[
        "trustgate.verifier.outcome"
    ] == "error"
    assert gate_spans(otel)[0].status.status_code == StatusCode.ERROR


def test_review_interrupt_and_resume_give_one_span(otel: Otel) -> None:
    app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector(ReviewPolicy())}).compile(
        checkpointer=InMemorySaver()
    )
    first = app.invoke({"log": []}, cfg())
    assert first["__interrupt__"]
    assert gate_spans(otel) == []  # paused: the crossing has not decided yet
    app.invoke(Command(resume={"type": "approve", "by": "alice"}), cfg())
    (span,) = gate_spans(otel)
    a = dict(span.attributes or {})
    assert a["trustgate.decision"] == "review"
    assert a["trustgate.approval.decision"] == "approve"
    assert a["trustgate.approval.who"] == "alice"


async def test_async_concurrent_runs_have_their_own_spans(otel: Otel) -> None:
    app = guard(reviewer_graph(lying_model(*[LIE] * 20)), {"reviewer": inspector()}).compile()
    tracer = otel.tracer_provider.get_tracer("app")

    async def one(i: int) -> int:
        with tracer.start_as_current_span(f"request {i}") as outer:
            await app.ainvoke({"log": []})
            return outer.get_span_context().trace_id

    traces = await asyncio.gather(*(one(i) for i in range(20)))
    spans = gate_spans(otel)
    assert len(spans) == 20
    assert sorted(s.context.trace_id for s in spans) == sorted(traces)
    for s in otel.named("trustgate.verify"):
        assert s.parent is not None
        assert s.parent.span_id in {g.context.span_id for g in spans}


def test_content_capture_opt_in(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(telemetry.CAPTURE_CONTENT_ENV, "true")
    guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()}).compile().invoke({"log": []})
    (span,) = gate_spans(otel)
    assert "return 42" in str((span.attributes or {})["input.value"])
    event = dict(span.events[0].attributes or {})
    assert event["trustgate.override.before"] == "APPROVE"


# --- create_agent middleware -------------------------------------------------------------------


def test_middleware_tool_gate_blocked_call_is_traced(otel: Otel) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    from trustgate.middleware import TrustGateMiddleware
    from trustgate.readers import ToolCallArgs

    def grounded(claims: Any, evidence: Evidence) -> list[Finding]:
        return [
            Finding.ok("grounded", subject=c["id"])
            if c["args"].get("quote") in (None, "return 1")
            else Finding.failed("grounded", "content_mismatch", "not in file", subject=c["id"])
            for c in claims
        ]

    @tool
    def close_item(path: str, quote: str) -> str:
        """Close a review item as already correct."""
        return "closed"

    gate = TrustGate(
        "tool_gate",
        reads=ToolCallArgs(),
        verifiers=[FunctionVerifier(grounded, name="grounded")],
        policy=Halt(),
    )
    calls = AIMessage(
        content="",
        tool_calls=[
            {"name": "close_item", "args": {"path": "a.py", "quote": "return 42"}, "id": "c1"}
        ],
    )
    agent = create_agent(
        lying_model(calls, "Done."),
        [close_item],
        middleware=[TrustGateMiddleware(tool_gates=[gate])],
    )
    agent.invoke({"messages": [HumanMessage("close it")]})
    spans = [s for s in gate_spans(otel) if s.name == "trustgate.gate tool_gate"]
    assert len(spans) == 1
    a = dict(spans[0].attributes or {})
    assert a["trustgate.decision"] == "halted"
    assert a["trustgate.gate.node"] == "tools"
    assert spans[0].status.status_code == StatusCode.UNSET


# --- nesting under LangChain tracers -----------------------------------------------------------


def _nested(otel: Otel, node_span_name: str) -> None:
    """The gate span is a child of the span of the node it guards (issue 5), not of the
    gate node guard() inserted after it."""
    (gate,) = gate_spans(otel)
    by_id = {s.context.span_id: s for s in otel.spans()}
    assert gate.parent is not None, "the gate span is a root"
    parent = by_id[gate.parent.span_id]
    assert parent.name == node_span_name, [s.name for s in otel.spans()]
    assert parent.context.trace_id == gate.context.trace_id


def test_nested_under_openinference(otel: Otel) -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=otel.tracer_provider)
    try:
        app = guard(reviewer_graph(lying_model(LIE, LIE)), {"reviewer": inspector()}).compile()
        app.invoke({"log": []})
        _nested(otel, "reviewer")  # the guarded node, not the gate node after it
        otel.exporter.clear()
        asyncio.run(app.ainvoke({"log": []}))
        _nested(otel, "reviewer")
    finally:
        inst.uninstrument()


def test_nested_under_openllmetry(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "false")
    inst = LangchainInstrumentor()
    with restoring_langchain_patches():  # its uninstrument() leaves its patches behind
        inst.instrument(tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
        try:
            app = guard(reviewer_graph(lying_model(LIE, LIE)), {"reviewer": inspector()})
            app = app.compile()
            app.invoke({"log": []})
            _nested(otel, "execute_task reviewer")
            otel.exporter.clear()
            asyncio.run(app.ainvoke({"log": []}))
            _nested(otel, "execute_task reviewer")
        finally:
            inst.uninstrument()


def test_nested_under_plain_outer_span(otel: Otel) -> None:
    tracer = otel.tracer_provider.get_tracer("app")
    app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()}).compile()
    with tracer.start_as_current_span("request") as outer:
        app.invoke({"log": []})
    (gate,) = gate_spans(otel)
    assert gate.context.trace_id == outer.get_span_context().trace_id


# --- Phoenix -------------------------------------------------------------------------------------


def test_guarded_graph_in_phoenix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from _phoenix import available, phoenix_server
    from openinference.instrumentation.langchain import LangChainInstrumentor

    if not available():
        if os.environ.get("CI"):
            raise AssertionError("the Phoenix venv is missing in CI")
        pytest.skip("Phoenix venv missing: run scripts/phoenix-venv.sh (make test does)")
    project = "trustgate-gate-e2e"
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
    with phoenix_server(tmp_path) as phoenix, global_providers(None):
        tel = telemetry.configure(phoenix.url, batch=False, metrics=False)
        inst = LangChainInstrumentor()
        inst.instrument(tracer_provider=tel.tracer_provider)
        try:
            app = guard(reviewer_graph(lying_model(LIE)), {"reviewer": inspector()}).compile()
            app.invoke({"log": []})
        finally:
            inst.uninstrument()
            tel.shutdown()
        deadline = time.monotonic() + 60
        while True:
            spans = phoenix.spans(project)
            ids = {s["context"]["span_id"] for s in spans}
            gates = [s for s in spans if s["name"] == "trustgate.gate inspector"]
            names = {s["name"] for s in spans}
            if gates and gates[0]["parent_id"] in ids and "trustgate.verify replay" in names:
                break
            assert time.monotonic() < deadline, names
            time.sleep(0.25)
    by_name = {s["name"]: s for s in spans}
    gate = by_name["trustgate.gate inspector"]
    assert gate["span_kind"] == "GUARDRAIL"
    by_id = {s["context"]["span_id"]: s for s in spans}
    assert by_id[gate["parent_id"]]["name"] == "reviewer"  # the node it guards
    assert gate["context"]["trace_id"] == by_name["reviewer"]["context"]["trace_id"]
    assert gate["attributes"]["trustgate.decision"] == "modified"
    assert gate["attributes"]["trustgate.gate.node"] == "reviewer"
    events = [e for e in gate["events"] if e["name"] == "trustgate.override"]
    assert events and events[0]["attributes"]["trustgate.override.kind"] == "field_override"
    assert by_name["trustgate.verify replay"]["parent_id"] == gate["context"]["span_id"]
