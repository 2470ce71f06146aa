"""What a report says on the custom stream: nothing the model, a verifier or a person
wrote, unless content capture is on; the durable record keeps it all."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, Report, TrustGate
from trustgate.errors import GateHalted
from trustgate.policies import Approval, Halt, OverrideRecord, Review
from trustgate.readers import LastAIText
from trustgate.verifiers.base import FunctionVerifier

LIE = "ledger entry ZX-4417"
LIE_TEXT = f"The refund was approved, see {LIE}."


def _full() -> Report:
    return Report(
        gate="text",
        node="agent",
        claims=[LIE_TEXT],
        findings=[
            Finding.failed("lie_check", "unsupported", f"{LIE} is in no source", subject=LIE_TEXT),
            Finding.failed(
                "lie_check", "unverified_output", "nobody read it", subject="messages[1].text"
            ),
            Finding.ok("lie_check", detail={"seen": LIE}),
        ],
        decision="reviewed",
        overrides=[
            OverrideRecord(
                kind="sentence_delete",
                target="messages.text",
                before=LIE_TEXT,
                after="Open question: which record?",
                reason=f"unsupported: {LIE}",
                verifier="lie_check",
            )
        ],
        released=True,
        error=f"lie_check: ValueError: cannot read {LIE}",
        approval=Approval(decision="approve", who="Alice Example", what="approve x", message=LIE),
        accounting={"messages[1].text": "verified"},
    )


def test_content_free_keeps_what_happened_and_drops_what_was_said() -> None:
    full = _full()
    free = full.content_free()
    assert LIE not in free.model_dump_json() and "Alice" not in free.model_dump_json()
    assert free.id == full.id and free.decision == "reviewed" and free.released
    assert free.claims == []
    assert [(f.verifier, f.status, f.severity, f.code) for f in free.findings] == [
        (f.verifier, f.status, f.severity, f.code) for f in full.findings
    ]
    assert free.findings[0].message == "lie_check/unsupported"
    assert all(f.detail == {} for f in free.findings)
    # a part name stays (where the node wrote), a subject quoting the model goes
    assert [f.subject for f in free.findings] == [None, "messages[1].text", None]
    (o,) = free.overrides
    assert (o.kind, o.target, o.verifier) == ("sentence_delete", "messages.text", "lie_check")
    assert o.before is None and o.after is None and o.reason == ""
    assert free.approval is not None
    assert free.approval.decision == "approve" and free.approval.when == full.approval.when
    assert free.approval.who is None and free.approval.message is None
    assert free.error == "lie_check: ValueError"
    assert free.accounting == full.accounting
    assert full.claims == [LIE_TEXT]  # the original is untouched
    assert (
        Report(gate="g", node="n", decision="halted", released=False, error=LIE)
        .content_free()
        .error
        == "error"
    )


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def _check(claims: Any, evidence: Any) -> list[Finding]:
    if LIE in str(claims):
        return [Finding.failed("lie_check", "unsupported", f"{LIE} is in no source")]
    return [Finding.ok("lie_check")]


def _app(policy: Any) -> Any:
    g = StateGraph(S)
    g.add_node("agent", lambda s: {"messages": [AIMessage(LIE_TEXT)]})
    g.add_edge(START, "agent")
    gate = TrustGate(
        "text",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_check, name="lie_check")],
        policy=policy,
    )
    return trustgate.guard(g, {"agent": gate}).compile(checkpointer=InMemorySaver())


def _custom(app: Any, inputs: Any, config: Any) -> list[Report]:
    out: list[Report] = []
    try:
        for mode, data in app.stream(inputs, config, stream_mode=["custom", "updates"]):
            if mode == "custom":
                out.append(data["trustgate"])
    except GateHalted:
        pass
    return out


def test_the_streamed_report_is_content_free_and_the_record_is_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRUSTGATE_CAPTURE_CONTENT", raising=False)
    app = _app(Halt())
    config = {"configurable": {"thread_id": "halt"}}
    (streamed,) = _custom(app, {"messages": [HumanMessage("go")]}, config)
    assert streamed.decision == "halted" and streamed.claims == []
    assert LIE not in streamed.model_dump_json()
    (kept,) = trustgate.reports(app, config)
    assert kept.id == streamed.id and LIE in kept.model_dump_json()
    with pytest.raises(GateHalted) as info:
        app.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "h2"}})
    assert LIE in info.value.report.model_dump_json()  # the halt carries the full report


def test_a_reviewed_release_streams_no_name_and_no_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRUSTGATE_CAPTURE_CONTENT", raising=False)
    app = _app(Review())
    config = {"configurable": {"thread_id": "review"}}
    _custom(app, {"messages": [HumanMessage("go")]}, config)
    resume = Command(resume={"type": "approve", "by": "Alice Example", "message": LIE})
    (streamed,) = _custom(app, resume, config)
    assert streamed.decision == "reviewed" and streamed.approval is not None
    assert streamed.approval.who is None and "Alice" not in streamed.model_dump_json()
    assert LIE not in streamed.model_dump_json()
    (kept,) = trustgate.reports(app, config)
    assert kept.approval is not None and kept.approval.who == "Alice Example"


def test_content_capture_streams_the_full_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRUSTGATE_CAPTURE_CONTENT", "true")
    (streamed,) = _custom(
        _app(Halt()), {"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "c"}}
    )
    assert streamed.claims and LIE in streamed.model_dump_json()
    monkeypatch.setenv("TRUSTGATE_CAPTURE_CONTENT", "false")
    (streamed,) = _custom(
        _app(Halt()), {"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "d"}}
    )
    assert LIE not in streamed.model_dump_json()


def test_the_agent_middleware_streams_its_report_content_free(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain.agents import create_agent

    from trustgate.graph import TrustGateMiddleware
    from trustgate.testing import lying_model

    monkeypatch.delenv("TRUSTGATE_CAPTURE_CONTENT", raising=False)
    gate = TrustGate(
        "text",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_check, name="lie_check")],
        policy=Halt(),
    )
    agent = create_agent(
        lying_model(LIE_TEXT), [], middleware=[TrustGateMiddleware(model_gates=[gate])]
    )
    streamed = _custom(agent, {"messages": [HumanMessage("go")]}, {})
    assert [r.decision for r in streamed] == ["halted"]
    assert LIE not in streamed[0].model_dump_json()


def test_the_shipped_lie_check_searches_the_streamed_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from trustgate.testing import LieNotBlocked, assert_lie_blocked

    monkeypatch.setenv("TRUSTGATE_CAPTURE_CONTENT", "true")
    with pytest.raises(LieNotBlocked, match="custom stream inside a gate's report"):
        assert_lie_blocked(_app(Halt()), {"messages": [HumanMessage("go")]}, [LIE])
    monkeypatch.delenv("TRUSTGATE_CAPTURE_CONTENT")
    check = assert_lie_blocked(_app(Halt()), {"messages": [HumanMessage("go")]}, [LIE])
    assert check.halted and [r.decision for r in check.reports] == ["halted"]
