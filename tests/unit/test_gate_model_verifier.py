"""The blind model verifier as a gate step (seed 004)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from trustgate import Finding, TrustGate, reports
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.evidence.brief import Brief
from trustgate.graph import TrustReports
from trustgate.policies import Caveat, Rerender
from trustgate.readers import LastAIText
from trustgate.testing import ScriptedChatModel, honest_model, lying_model
from trustgate.verifiers.base import Evidence, EvidenceSources, FromState, FunctionVerifier
from trustgate.verifiers.contracts.blind import ModelVerifier
from trustgate.verifiers.contracts.citations import check_citations

BRIEF = Brief(citations=["ISO/IEC 27001:2022 clause 5.9"])
CLEAN = "Keep an inventory of assets (ISO/IEC 27001:2022 clause 5.9)."
INVENTED = CLEAN + " Audit it yearly per ISO/IEC 27001:2022 clause 9.2."
PASS = '{"pass": true, "issues": []}'


class DraftState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    brief: Brief
    secret_sources: str
    trust_issues: list[str]
    trust_reports: TrustReports


def contract() -> FunctionVerifier:
    def check(claims: Any, evidence: Evidence) -> list[Finding]:
        return check_citations(claims, evidence.require("brief")) or [Finding.ok("contract")]

    return FunctionVerifier(check, name="contract")


def app_for(writer_model: Any, verifier: ModelVerifier, then: Any = None) -> Any:
    def writer(state: DraftState) -> dict[str, Any]:
        prompt: list[BaseMessage] = [
            SystemMessage("Write from: " + state["secret_sources"]),
            HumanMessage("Draft the policy."),
        ]
        if state.get("trust_issues"):
            prompt.append(HumanMessage("Fix: " + "; ".join(state["trust_issues"])))
        return {"messages": [writer_model.invoke(prompt)]}

    gate = TrustGate(
        "blind",
        reads=LastAIText(),
        verifiers=[contract(), verifier],
        policy=Rerender(to="writer", then=then or Caveat()),
        evidence=EvidenceSources(brief=FromState("brief")),
    )
    g = StateGraph(DraftState)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    from trustgate.graph import guard

    return guard(g, {"writer": gate}).compile(checkpointer=InMemorySaver())


def _inputs() -> dict[str, Any]:
    return {"messages": [HumanMessage("go")], "brief": BRIEF, "secret_sources": "SOURCES-XYZ"}


def cfg(t: str = "t") -> Any:
    return {"configurable": {"thread_id": t}}


def test_verifier_sees_only_brief_and_draft_and_release_on_pass() -> None:
    judge = honest_model(PASS)
    app = app_for(honest_model(CLEAN), ModelVerifier(judge))
    out = app.invoke(_inputs(), cfg())
    assert out["messages"][-1].content == CLEAN
    (seen,) = judge.calls
    text = " ".join(str(m.content) for m in seen)
    assert "BRIEF" in text and CLEAN in text and "27001" in text
    assert "SOURCES-XYZ" not in text and "Draft the policy" not in text
    assert [r.decision for r in reports(app, cfg())] == ["pass"]


def test_deterministic_failure_overrides_the_model_pass() -> None:
    judge = lying_model(PASS, PASS)  # waves the invented clause through, twice
    writer = lying_model(INVENTED, INVENTED)
    app = app_for(writer, ModelVerifier(judge))
    out = app.invoke(_inputs(), cfg())
    assert len(writer.calls) == 2  # exactly one re-render
    assert "9.2" in " ".join(str(m.content) for m in writer.calls[1])
    released = out["messages"][-1].content
    assert released.startswith("> **Caveat:**")
    assert "clause 9.2" not in released.split("\n\n", 1)[1]
    assert [r.decision for r in reports(app, cfg())] == ["rerendered", "caveated"]


_RELEASE = threading.Event()


@pytest.fixture(autouse=True)
def _release_hung_models() -> Iterator[None]:
    """A hung model's thread waits for the test to end, then answers (no sleeping)."""
    _RELEASE.clear()
    yield
    _RELEASE.set()


def _hang(messages: list[BaseMessage]) -> str:
    _RELEASE.wait(30)
    return PASS


@pytest.mark.parametrize(
    "replies",
    [
        ["The draft looks fine to me.", "Yes, it passes."],  # prose, twice
        [_hang, _hang],  # outage, twice
        ['{"pass": true, "issues": ["x"]}', '{"pass": true}{"pass": true}'],  # malformed
    ],
)
def test_unusable_verdict_retried_once_then_halted(replies: list[Any]) -> None:
    judge = ScriptedChatModel(responses=replies)
    writer = honest_model(CLEAN)
    app = app_for(writer, ModelVerifier(judge, timeout=0.3))
    with pytest.raises(GateHalted) as info:
        app.invoke(_inputs(), cfg())
    assert len(judge.calls) == 2  # exactly one retry
    report = info.value.report
    assert report.decision == "halted" and not report.released and report.error
    assert report.failed[-1].verifier == "model_verifier"
    state = app.get_state(cfg()).values
    assert all(CLEAN not in str(m.content) for m in state["messages"])  # in-flight unreleased


def test_one_bad_reply_then_a_good_one_passes() -> None:
    judge = ScriptedChatModel(responses=["Looks fine.", PASS])
    app = app_for(honest_model(CLEAN), ModelVerifier(judge))
    out = app.invoke(_inputs(), cfg())
    assert out["messages"][-1].content == CLEAN
    assert len(judge.calls) == 2


async def test_async_timeout_retried_once_then_halted() -> None:
    judge = ScriptedChatModel(responses=[_hang, _hang])
    app = app_for(honest_model(CLEAN), ModelVerifier(judge, timeout=0.3))
    with pytest.raises(GateHalted):
        await app.ainvoke(_inputs(), cfg())
    _RELEASE.set()  # before the event loop closes: it waits for the hung model's thread
    assert len(judge.calls) == 2


def test_model_fail_verdict_rerenders_with_its_issues() -> None:
    judge = lying_model('{"pass": false, "issues": ["contradicts judgment 1"]}', PASS)
    writer = lying_model(CLEAN, CLEAN)
    app = app_for(writer, ModelVerifier(judge))
    app.invoke(_inputs(), cfg())
    assert "contradicts judgment 1" in str(writer.calls[1][-1].content)
    assert [r.decision for r in reports(app, cfg())] == ["rerendered", "pass"]


def test_configuration() -> None:
    with pytest.raises(ConfigurationError):
        ModelVerifier(honest_model(PASS), timeout=0)
    with pytest.raises(ConfigurationError):
        ModelVerifier(honest_model(PASS), retries=-1)
    assert "model_verifier" in repr(ModelVerifier(honest_model(PASS)))
    assert isinstance(AIMessage(content=PASS).text, str)
