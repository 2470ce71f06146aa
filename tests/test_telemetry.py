"""Telemetry through the integration API with real Reports and in-memory SDK exporters.

The gate calls ``crossing_span`` / ``verifier_span`` / ``finish_crossing``; these
tests drive the same calls with real :class:`~trustgate.report.Report` objects,
inside real LangGraph graphs where nesting matters.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import operator
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any

import pytest
from _otel import Otel, global_providers, hexid, make_otel, restoring_langchain_patches
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import SpanLimits
from opentelemetry.trace import StatusCode
from typing_extensions import TypedDict

from trustgate import telemetry
from trustgate.errors import GateHalted
from trustgate.findings import Finding
from trustgate.report import OverrideRecord, Report


@pytest.fixture
def otel() -> Otel:
    return make_otel()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


LIE = "APPROVE: everything is already correct"
FAILED = Finding.failed("citation_replay", "content_mismatch", "line 4 does not say that")
PASSED = Finding.ok("citation_replay")


def modified_report(n_overrides: int = 1) -> Report:
    overrides = [
        OverrideRecord(
            kind="field_override",
            target="review.verdict",
            before="APPROVE",
            after="REQUEST_CHANGES",
            reason="citation_replay/content_mismatch",
            verifier="citation_replay",
        )
    ]
    overrides += [
        OverrideRecord(
            kind="sentence_delete",
            target=f"draft[{i}]",
            before=f"invented sentence {i}",
            after=None,
            reason="uncited_causal",
            verifier="draft",
        )
        for i in range(n_overrides - 1)
    ]
    return Report(
        gate="inspector",
        node="reviewer",
        claims=[{"file": "app.py", "line": 4}],
        findings=[PASSED, FAILED],
        decision="modified",
        overrides=overrides,
        released=True,
    )


def run_crossing(
    otel: Otel,
    report: Report,
    *,
    input_value: Any = LIE,
    output_value: Any = None,
    verifier_findings: list[Finding] | None = None,
    **kwargs: Any,
) -> None:
    with telemetry.crossing_span(
        report.gate,
        report.node,
        input_value=input_value,
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        **kwargs,
    ) as span:
        with telemetry.verifier_span(span, "citation_replay") as vs:
            vs.record(verifier_findings if verifier_findings is not None else [PASSED, FAILED])
        telemetry.finish_crossing(span, report, output_value=output_value)


# --- attributes, events, children ----------------------------------------------------------


def test_gate_span_attributes(otel: Otel) -> None:
    run_crossing(otel, modified_report(), output_value={"verdict": "REQUEST_CHANGES"})
    span = otel.one("trustgate.gate")
    assert span.name == "trustgate.gate inspector"
    a = dict(span.attributes or {})
    assert a["openinference.span.kind"] == "GUARDRAIL"
    assert a["trustgate.gate.name"] == "inspector"
    assert a["trustgate.gate.node"] == "reviewer"
    assert a["trustgate.decision"] == "modified"
    assert a["trustgate.released"] is True
    assert a["trustgate.override.count"] == 1
    assert a["trustgate.override.kinds"] == ("field_override",)
    assert a["trustgate.override.targets"] == ("review.verdict",)
    assert a["trustgate.override.events_dropped"] == 0
    assert "1 override(s): field_override×1" in str(a["trustgate.override.summary"])
    assert a["trustgate.verifier.failed"] == ("citation_replay",)
    assert a["trustgate.finding.failed"] == ("citation_replay/content_mismatch",)
    assert a["input.mime_type"] == "text/plain"
    assert a["output.mime_type"] == "text/plain"
    assert a["trustgate.input.sha256"] == sha(LIE)
    assert a["trustgate.input.length"] == len(LIE)
    assert span.status.status_code == StatusCode.UNSET


def test_content_capture_is_off_by_default(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(telemetry.CAPTURE_CONTENT_ENV, raising=False)
    run_crossing(otel, modified_report(), output_value={"verdict": "REQUEST_CHANGES"})
    span = otel.one("trustgate.gate")
    everything = json.dumps(
        [dict(span.attributes or {})] + [dict(e.attributes or {}) for e in span.events],
        default=str,
    )
    assert LIE not in everything
    assert "REQUEST_CHANGES" not in json.dumps(dict(span.attributes or {}), default=str)
    assert "APPROVE" not in json.dumps([dict(e.attributes or {}) for e in span.events])
    a = dict(span.attributes or {})
    assert a["input.value"] == f"[content not captured: sha256={sha(LIE)} length={len(LIE)}]"
    event = dict(span.events[0].attributes or {})
    assert event["trustgate.override.before.sha256"] == sha("APPROVE")
    assert event["trustgate.override.before.length"] == len("APPROVE")
    assert "trustgate.override.before" not in event


def test_content_capture_by_env_and_argument(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(telemetry.CAPTURE_CONTENT_ENV, "true")
    run_crossing(otel, modified_report(), output_value={"verdict": "REQUEST_CHANGES"})
    a = dict(otel.one("trustgate.gate").attributes or {})
    assert a["input.value"] == LIE
    assert json.loads(str(a["output.value"])) == {"verdict": "REQUEST_CHANGES"}
    assert a["output.mime_type"] == "application/json"
    event = dict(otel.one("trustgate.gate").events[0].attributes or {})
    assert event["trustgate.override.before"] == "APPROVE"
    assert event["trustgate.override.after"] == "REQUEST_CHANGES"

    otel.exporter.clear()
    monkeypatch.delenv(telemetry.CAPTURE_CONTENT_ENV)
    run_crossing(otel, modified_report(), input_value="x" * 50, capture_content=True,
                 max_content_length=10)  # fmt: skip
    a = dict(otel.one("trustgate.gate").attributes or {})
    assert str(a["input.value"]).startswith("x" * 10 + "…[truncated 40 chars]")
    assert a["trustgate.input.length"] == 50


def test_content_capture_argument_beats_env(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(telemetry.CAPTURE_CONTENT_ENV, "true")
    run_crossing(otel, modified_report(), capture_content=False)
    assert LIE not in str(dict(otel.one("trustgate.gate").attributes or {}))


def test_one_event_per_override(otel: Otel) -> None:
    run_crossing(otel, modified_report(n_overrides=4))
    span = otel.one("trustgate.gate")
    events = [e for e in span.events if e.name == "trustgate.override"]
    assert len(events) == 4
    first = dict(events[0].attributes or {})
    assert first["trustgate.override.kind"] == "field_override"
    assert first["trustgate.override.verifier"] == "citation_replay"
    assert first["trustgate.override.target"] == "review.verdict"
    assert first["trustgate.override.reason"] == "citation_replay/content_mismatch"
    assert {dict(e.attributes or {})["trustgate.override.target"] for e in events[1:]} == {
        "draft[0]",
        "draft[1]",
        "draft[2]",
    }
    a = dict(span.attributes or {})
    assert a["trustgate.override.count"] == 4
    assert a["trustgate.override.kinds"] == ("field_override", "sentence_delete")


def test_verifier_child_spans(otel: Otel) -> None:
    report = modified_report()
    with telemetry.crossing_span(
        "inspector", "reviewer", input_value=LIE, tracer_provider=otel.tracer_provider
    ) as span:
        with telemetry.verifier_span(span, "citation_replay") as vs:
            vs.record(
                [PASSED, FAILED, Finding.failed("citation_replay", "x", "w", severity="warn")]
            )
        with telemetry.verifier_span(span, "hash_check") as vs:
            vs.record([Finding.ok("hash_check")])
        telemetry.finish_crossing(span, report)
    gate = otel.one("trustgate.gate")
    replay = otel.one("trustgate.verify citation_replay")
    hashes = otel.one("trustgate.verify hash_check")
    for child in (replay, hashes):
        assert child.parent is not None
        assert child.parent.span_id == gate.context.span_id
        assert child.context.trace_id == gate.context.trace_id
        assert (child.attributes or {})["openinference.span.kind"] == "EVALUATOR"
    r = dict(replay.attributes or {})
    assert r["trustgate.verifier.outcome"] == "fail"
    assert (r["trustgate.verifier.findings"], r["trustgate.verifier.failed"]) == (3, 1)
    assert (r["trustgate.verifier.warnings"], r["trustgate.verifier.passed"]) == (1, 1)
    assert (hashes.attributes or {})["trustgate.verifier.outcome"] == "pass"


def test_crashed_verifier_is_an_error(otel: Otel) -> None:
    report = Report(
        gate="inspector",
        node="reviewer",
        findings=[Finding.failed("flaky", "verifier_error", "RuntimeError: disk on fire")],
        decision="halted",
        overrides=[OverrideRecord(kind="halt", target="reviewer", reason="flaky/verifier_error")],
        released=False,
        error="flaky: RuntimeError: disk on fire",
    )
    with telemetry.crossing_span(
        "inspector", "reviewer", input_value=LIE, tracer_provider=otel.tracer_provider
    ) as span:
        with pytest.raises(RuntimeError), telemetry.verifier_span(span, "flaky"):
            raise RuntimeError("disk on fire")
        telemetry.finish_crossing(span, report)
    flaky = otel.one("trustgate.verify flaky")
    assert flaky.status.status_code == StatusCode.ERROR
    assert (flaky.attributes or {})["trustgate.verifier.outcome"] == "error"
    assert [e.name for e in flaky.events] == ["exception"]
    assert (flaky.events[0].attributes or {})["exception.type"] == "RuntimeError"
    gate = otel.one("trustgate.gate")
    assert gate.status.status_code == StatusCode.ERROR
    assert "disk on fire" in str(gate.status.description)
    assert "exception" in [e.name for e in gate.events]
    assert (gate.attributes or {})["trustgate.verifier.failed"] == ("flaky",)
    assert (gate.attributes or {})["trustgate.decision"] == "halted"


def test_policy_halt_is_not_an_error(otel: Otel) -> None:
    report = Report(
        gate="inspector",
        node="reviewer",
        findings=[FAILED],
        decision="halted",
        overrides=[OverrideRecord(kind="halt", target="reviewer", reason="unresolved")],
        released=False,
    )
    run_crossing(otel, report)
    gate = otel.one("trustgate.gate")
    assert gate.status.status_code == StatusCode.UNSET
    assert [e.name for e in gate.events] == ["trustgate.override"]
    assert (gate.events[0].attributes or {})["trustgate.override.kind"] == "halt"
    assert (gate.attributes or {})["trustgate.released"] is False


def test_gate_halted_raised_through_the_block_is_not_an_error(otel: Otel) -> None:
    report = Report(gate="g", node="n", decision="halted", released=False, findings=[FAILED])
    with (
        pytest.raises(GateHalted),
        telemetry.crossing_span(
            "g", "n", tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
        ),
    ):
        raise GateHalted(report)
    gate = otel.one("trustgate.gate")
    assert gate.status.status_code == StatusCode.UNSET
    assert otel.counter("trustgate.crossings", **{"trustgate.decision": "halted"}) == 1


def test_gate_crash_ends_span_with_error(otel: Otel) -> None:
    with (
        pytest.raises(KeyError),
        telemetry.crossing_span(
            "g", "n", tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
        ) as span,
    ):
        with telemetry.verifier_span(span, "ok") as vs:
            vs.record([])
        raise KeyError("gate bug")
    gate = otel.one("trustgate.gate")
    assert gate.status.status_code == StatusCode.ERROR
    assert (gate.events[0].attributes or {})["exception.type"] == "KeyError"
    assert (gate.attributes or {})["trustgate.decision"] == "error"
    assert otel.one("trustgate.verify ok").parent.span_id == gate.context.span_id  # type: ignore[union-attr]
    assert otel.counter("trustgate.crossings", **{"trustgate.decision": "error"}) == 1


def test_event_limit_overflow_is_summarised() -> None:
    otel = make_otel(SpanLimits(max_events=5))
    run_crossing(otel, modified_report(n_overrides=8))
    span = otel.one("trustgate.gate")
    assert len([e for e in span.events if e.name == "trustgate.override"]) == 5
    a = dict(span.attributes or {})
    assert a["trustgate.override.count"] == 8
    assert a["trustgate.override.events_dropped"] == 3
    assert "5 event(s) emitted, 3 dropped" in str(a["trustgate.override.summary"])


def test_default_event_limit_is_128(otel: Otel) -> None:
    run_crossing(otel, modified_report(n_overrides=130))
    span = otel.one("trustgate.gate")
    assert len(span.events) == 128
    assert (span.attributes or {})["trustgate.override.events_dropped"] == 2


def test_override_spans_opt_in(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    run_crossing(otel, modified_report(n_overrides=3))
    assert otel.named("trustgate.override") == []
    otel.exporter.clear()
    monkeypatch.setenv(telemetry.OVERRIDE_SPANS_ENV, "true")
    run_crossing(otel, modified_report(n_overrides=3))
    gate = otel.one("trustgate.gate")
    children = otel.named("trustgate.override")
    assert [c.name for c in children] == [
        "trustgate.override field_override",
        "trustgate.override sentence_delete",
        "trustgate.override sentence_delete",
    ]
    for c in children:
        assert c.parent is not None and c.parent.span_id == gate.context.span_id
        assert c.start_time == c.end_time
    assert (children[0].attributes or {})["trustgate.override.target"] == "review.verdict"
    assert len(gate.events) == 3  # the events are still there


# --- metrics ------------------------------------------------------------------------------------


def test_metrics(otel: Otel) -> None:
    run_crossing(otel, modified_report(n_overrides=3))
    run_crossing(otel, modified_report(n_overrides=1))
    passing = Report(gate="inspector", node="reviewer", findings=[PASSED], decision="pass",
                     released=True)  # fmt: skip
    run_crossing(otel, passing, verifier_findings=[PASSED])
    assert otel.counter("trustgate.crossings") == 3
    assert otel.counter("trustgate.crossings", **{"trustgate.decision": "modified"}) == 2
    assert otel.counter("trustgate.crossings", **{"trustgate.decision": "pass"}) == 1
    assert otel.counter("trustgate.crossings", **{"trustgate.gate.node": "reviewer"}) == 3
    assert (
        otel.counter(
            "trustgate.findings",
            **{
                "trustgate.verifier.name": "citation_replay",
                "trustgate.finding.code": "content_mismatch",
                "trustgate.finding.status": "fail",
            },
        )
        == 2
    )
    assert otel.counter("trustgate.findings", **{"trustgate.finding.code": "ok"}) == 3
    assert otel.counter("trustgate.overrides", **{"trustgate.override.kind": "field_override"}) == 2
    assert (
        otel.counter("trustgate.overrides", **{"trustgate.override.kind": "sentence_delete"}) == 2
    )
    hist = otel.metric_points("trustgate.gate.duration")
    assert sum(p.count for p in hist) == 3
    assert all(p.min >= 0 for p in hist)


# --- providers ---------------------------------------------------------------------------------


def test_no_sdk_is_the_api_noop() -> None:
    with global_providers(None):
        with telemetry.crossing_span("g", "n", input_value=LIE) as span:
            assert not span.recording
            with telemetry.verifier_span(span, "v") as vs:
                vs.record([FAILED])
            telemetry.finish_crossing(span, modified_report())
        assert not otel_trace.get_current_span().get_span_context().is_valid


def test_global_provider_set_after_import_is_used() -> None:
    with global_providers(None), telemetry.crossing_span("g", "n") as span:
        telemetry.finish_crossing(span, modified_report())
    later = make_otel()
    with global_providers(later):
        with telemetry.crossing_span("g", "n") as span:
            telemetry.finish_crossing(span, modified_report())
        assert len(later.named("trustgate.gate")) == 1
        assert later.counter("trustgate.crossings") == 1
    other = make_otel()
    with global_providers(other):
        with telemetry.crossing_span("g", "n") as span:
            telemetry.finish_crossing(span, modified_report())
        assert len(other.named("trustgate.gate")) == 1
        assert len(later.named("trustgate.gate")) == 1


def test_explicit_providers_win_over_global(otel: Otel) -> None:
    glob = make_otel()
    with global_providers(glob):
        run_crossing(otel, modified_report())
    assert glob.spans() == []
    assert len(otel.named("trustgate.gate")) == 1


# --- nesting -----------------------------------------------------------------------------------


def test_nested_under_plain_outer_span(otel: Otel) -> None:
    tracer = otel.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("request") as outer:
        run_crossing(otel, modified_report())
    gate = otel.one("trustgate.gate")
    assert gate.parent is not None
    assert gate.parent.span_id == outer.get_span_context().span_id


def test_thread_pool_children_nest_under_the_gate(otel: Otel) -> None:
    """The gate runs verifiers in threads under ``contextvars.copy_context()``."""
    with telemetry.crossing_span(
        "inspector", "reviewer", tracer_provider=otel.tracer_provider
    ) as span:

        def verify() -> None:
            with telemetry.verifier_span(span, "threaded") as vs:
                tracer = otel.tracer_provider.get_tracer("user-verifier")
                with tracer.start_as_current_span("read file"):
                    pass
                vs.record([PASSED])

        ctx = contextvars.copy_context()
        with ThreadPoolExecutor(1) as pool:
            pool.submit(ctx.run, verify).result()
        telemetry.finish_crossing(span, modified_report())
    gate = otel.one("trustgate.gate")
    threaded = otel.one("trustgate.verify threaded")
    inner = otel.one("read file")
    assert threaded.parent is not None and threaded.parent.span_id == gate.context.span_id
    assert inner.parent is not None and inner.parent.span_id == threaded.context.span_id


async def test_async_concurrent_crossings_keep_their_own_parents(otel: Otel) -> None:
    tracer = otel.tracer_provider.get_tracer("app")

    async def one(i: int) -> int:
        with tracer.start_as_current_span(f"run {i}") as outer:
            with telemetry.crossing_span(
                f"gate{i}", "n", tracer_provider=otel.tracer_provider
            ) as span:
                await asyncio.sleep(0)
                with telemetry.verifier_span(span, "v") as vs:
                    await asyncio.sleep(0)
                    vs.record([PASSED])
                telemetry.finish_crossing(
                    span, Report(gate=f"gate{i}", node="n", decision="pass", released=True)
                )
            return outer.get_span_context().span_id

    outers = await asyncio.gather(*(one(i) for i in range(20)))
    for i, outer_id in enumerate(outers):
        gate = next(s for s in otel.spans() if s.name == f"trustgate.gate gate{i}")
        assert gate.parent is not None and gate.parent.span_id == outer_id
    verifies = otel.named("trustgate.verify")
    gate_ids = {s.context.span_id for s in otel.named("trustgate.gate")}
    assert len(verifies) == 20
    assert {v.parent.span_id for v in verifies if v.parent} == gate_ids


class GraphState(TypedDict, total=False):
    text: str
    log: Annotated[list[str], operator.add]


def _graph(otel: Otel) -> Any:
    """A real LangGraph graph whose ``reviewer`` node runs one crossing itself."""

    def write(state: GraphState) -> GraphState:
        return {"text": LIE}

    def reviewer(state: GraphState, config: RunnableConfig) -> GraphState:
        with telemetry.crossing_span(
            "inspector",
            "writer",
            input_value=state["text"],
            config=config,
            tracer_provider=otel.tracer_provider,
        ) as span:
            with telemetry.verifier_span(span, "citation_replay") as vs:
                vs.record([FAILED])
            telemetry.finish_crossing(span, modified_report())
        return {"log": ["reviewed"]}

    b = StateGraph(GraphState)
    b.add_node("writer", write)
    b.add_node("reviewer", reviewer)
    b.add_edge(START, "writer")
    b.add_edge("writer", "reviewer")
    b.add_edge("reviewer", END)
    return b.compile()


def _assert_nested_under_node(otel: Otel, node: str = "reviewer") -> None:
    gate = otel.one("trustgate.gate")
    nodes = [s for s in otel.spans() if s.name == node]
    assert len(nodes) == 1, [s.name for s in otel.spans()]
    assert gate.parent is not None, "gate span is a root"
    assert hexid(gate.parent.span_id) == hexid(nodes[0].context.span_id)
    assert gate.context.trace_id == nodes[0].context.trace_id
    verify = otel.one("trustgate.verify")
    assert verify.parent is not None and verify.parent.span_id == gate.context.span_id


@pytest.fixture
def openinference(otel: Otel) -> Iterator[Otel]:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    inst = LangChainInstrumentor()
    with restoring_langchain_patches():
        inst.instrument(tracer_provider=otel.tracer_provider)
        try:
            yield otel
        finally:
            inst.uninstrument()


@pytest.fixture
def openllmetry(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Otel]:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "false")
    inst = LangchainInstrumentor()
    with restoring_langchain_patches():
        inst.instrument(tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
        try:
            yield otel
        finally:
            inst.uninstrument()


def test_nested_under_openinference_node_span(openinference: Otel) -> None:
    _graph(openinference).invoke({"text": ""})
    _assert_nested_under_node(openinference)
    # OpenInference does not make its spans current; the run id found the node span
    assert (openinference.one("trustgate.gate").attributes or {})["trustgate.gate.node"] == (
        "writer"
    )


async def test_nested_under_openinference_node_span_async(openinference: Otel) -> None:
    await _graph(openinference).ainvoke({"text": ""})
    _assert_nested_under_node(openinference)


def test_nested_under_openinference_without_passing_config(openinference: Otel) -> None:
    def reviewer(state: GraphState) -> GraphState:
        with telemetry.crossing_span(
            "inspector", "writer", tracer_provider=openinference.tracer_provider
        ) as span:
            telemetry.finish_crossing(span, modified_report())
        return {"log": ["ok"]}

    b = StateGraph(GraphState)
    b.add_node("reviewer", reviewer)
    b.add_edge(START, "reviewer")
    b.compile().invoke({"text": ""})
    gate = openinference.one("trustgate.gate")
    node = next(s for s in openinference.spans() if s.name == "reviewer")
    assert gate.parent is not None and gate.parent.span_id == node.context.span_id


def test_nested_under_openllmetry_node_span(openllmetry: Otel) -> None:
    # One test for sync and async: OpenLLMetry's uninstrument() does not undo all of
    # its patches, so instrumenting twice in one process loses the node spans.
    for run in ("sync", "async"):
        openllmetry.exporter.clear()
        graph = _graph(openllmetry)
        if run == "sync":
            graph.invoke({"text": ""})
        else:
            asyncio.run(graph.ainvoke({"text": ""}))
        gate = openllmetry.one("trustgate.gate")
        node = [s for s in openllmetry.spans() if s.name == "execute_task reviewer"]
        assert len(node) == 1, [s.name for s in openllmetry.spans()]
        assert gate.parent is not None, run
        assert gate.parent.span_id == node[0].context.span_id, run
        verify = openllmetry.one("trustgate.verify")
        assert verify.parent is not None and verify.parent.span_id == gate.context.span_id


# --- interrupts -------------------------------------------------------------------------------


def test_interrupt_exports_nothing_and_resume_gives_one_span(otel: Otel) -> None:
    with (
        pytest.raises(GraphInterrupt),
        telemetry.crossing_span(
            "inspector",
            "reviewer",
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
        ) as span,
    ):
        with telemetry.verifier_span(span, "citation_replay") as vs:
            vs.record([FAILED])
        raise GraphInterrupt(())
    assert otel.spans() == []
    assert otel.counter("trustgate.crossings") == 0
    run_crossing(otel, modified_report())  # the resumed crossing
    assert len(otel.named("trustgate.gate")) == 1
    assert len(otel.named("trustgate.verify")) == 1
    assert otel.counter("trustgate.crossings") == 1


def test_review_interrupt_in_a_graph_has_one_span_after_resume(otel: Otel) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command, interrupt

    def reviewer(state: GraphState, config: RunnableConfig) -> GraphState:
        with telemetry.crossing_span(
            "inspector", "writer", config=config, tracer_provider=otel.tracer_provider
        ) as span:
            with telemetry.verifier_span(span, "citation_replay") as vs:
                vs.record([FAILED])
            answer = interrupt({"trustgate": "review"})
            report = Report(
                gate="inspector",
                node="writer",
                findings=[FAILED],
                decision="review",
                overrides=[OverrideRecord(kind="review", target="writer", reason=str(answer))],
                released=True,
            )
            telemetry.finish_crossing(span, report)
        return {"log": ["reviewed"]}

    b = StateGraph(GraphState)
    b.add_node("reviewer", reviewer)
    b.add_edge(START, "reviewer")
    graph = b.compile(checkpointer=InMemorySaver())
    cfg: RunnableConfig = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"text": LIE}, cfg)
    assert otel.named("trustgate") == []
    graph.invoke(Command(resume="approved by alice"), cfg)
    gate = otel.one("trustgate.gate")
    assert (gate.attributes or {})["trustgate.decision"] == "review"
    assert len(otel.named("trustgate.verify")) == 1


def test_finish_twice_is_harmless(otel: Otel) -> None:
    with telemetry.crossing_span("g", "n", tracer_provider=otel.tracer_provider) as span:
        telemetry.finish_crossing(span, modified_report())
        telemetry.finish_crossing(span, modified_report())
    assert len(otel.named("trustgate.gate")) == 1


def test_block_without_finish_still_ends_the_span(otel: Otel) -> None:
    with telemetry.crossing_span("g", "n", tracer_provider=otel.tracer_provider):
        pass
    assert len(otel.named("trustgate.gate")) == 1


# --- explicit parents: span_link survives a checkpoint ----------------------------------------


class LinkState(TypedDict, total=False):
    link: dict[str, Any] | None
    log: Annotated[list[str], operator.add]


def test_span_link_nests_the_gate_under_the_guarded_node(openinference: Otel) -> None:
    """guard() runs the gate after the guarded node ended: the link carries its span."""
    from langgraph.checkpoint.memory import InMemorySaver

    otel = openinference

    def writer(state: LinkState, config: RunnableConfig) -> LinkState:
        return {"link": telemetry.span_link(config)}

    def gate_node(state: LinkState, config: RunnableConfig) -> LinkState:
        with telemetry.crossing_span(
            "inspector",
            "writer",
            config=config,
            parent=state["link"],
            tracer_provider=otel.tracer_provider,
        ) as span:
            with telemetry.verifier_span(span, "citation_replay") as vs:
                vs.record([FAILED])
            telemetry.finish_crossing(span, modified_report())
        return {"log": ["gated"]}

    b = StateGraph(LinkState)
    b.add_node("writer", writer)
    b.add_node("inspector", gate_node)
    b.add_edge(START, "writer")
    b.add_edge("writer", "inspector")
    b.add_edge("inspector", END)
    graph = b.compile(checkpointer=InMemorySaver())
    out = graph.invoke({}, {"configurable": {"thread_id": "t"}})
    assert isinstance(out["link"], dict)  # plain JSON: checkpointed with the state
    gate = otel.one("trustgate.gate")
    writer_span = next(s for s in otel.spans() if s.name == "writer")
    assert gate.parent is not None
    assert gate.parent.span_id == writer_span.context.span_id
    assert gate.context.trace_id == writer_span.context.trace_id
    assert out["link"]["span_id"] == hexid(writer_span.context.span_id)
    verify = otel.one("trustgate.verify")
    assert verify.parent is not None and verify.parent.span_id == gate.context.span_id


def test_span_link_of_a_plain_current_span(otel: Otel) -> None:
    tracer = otel.tracer_provider.get_tracer("app")
    assert telemetry.span_link() is None  # nothing traced
    with tracer.start_as_current_span("node") as node:
        link = telemetry.span_link()
    assert link is not None
    run_crossing(otel, modified_report(), parent=link)
    gate = otel.one("trustgate.gate")
    assert gate.parent is not None
    assert gate.parent.span_id == node.get_span_context().span_id


def test_parent_forms(otel: Otel) -> None:
    tracer = otel.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("a") as a:
        pass
    for parent in (a, a.get_span_context(), otel_trace.set_span_in_context(a)):
        otel.exporter.clear()
        run_crossing(otel, modified_report(), parent=parent)
        gate = otel.one("trustgate.gate")
        assert gate.parent is not None and gate.parent.span_id == a.get_span_context().span_id
    # an unusable link falls back to the current context instead of failing the crossing
    otel.exporter.clear()
    with tracer.start_as_current_span("outer") as outer:
        run_crossing(otel, modified_report(), parent={"trace_id": "zz", "span_id": 1})
    gate = otel.one("trustgate.gate")
    assert gate.parent is not None
    assert gate.parent.span_id == outer.get_span_context().span_id


def test_public_names() -> None:
    import trustgate

    assert trustgate.telemetry is telemetry
    assert trustgate.configure_telemetry is telemetry.configure
    assert trustgate.Telemetry is telemetry.Telemetry
    assert {"telemetry", "configure_telemetry", "Telemetry"} <= set(trustgate.__all__)


def test_global_providers_helper_restores_what_was_there() -> None:
    outer, inner = make_otel(), make_otel()
    with global_providers(outer):
        with global_providers(inner):
            assert otel_trace.get_tracer_provider() is inner.tracer_provider
        assert otel_trace.get_tracer_provider() is outer.tracer_provider


def test_verifier_span_nests_even_in_a_thread_without_the_context(otel: Otel) -> None:
    """A pool that does not copy contextvars still gets the verifier span right."""
    with telemetry.crossing_span("g", "n", tracer_provider=otel.tracer_provider) as span:

        def verify() -> None:
            assert not otel_trace.get_current_span().get_span_context().is_valid
            with telemetry.verifier_span(span, "bare-thread") as vs:
                vs.record([PASSED])

        with ThreadPoolExecutor(1) as pool:
            pool.submit(verify).result()
        telemetry.finish_crossing(span, modified_report())
    gate = otel.one("trustgate.gate")
    v = otel.one("trustgate.verify bare-thread")
    assert v.parent is not None and v.parent.span_id == gate.context.span_id
