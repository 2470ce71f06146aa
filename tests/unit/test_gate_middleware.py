"""TrustGateMiddleware inside create_agent: model output and tool calls."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from trustgate import Cut, Finding, TrustGate, reports
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.graph import TrustGateMiddleware
from trustgate.policies import Caveat, Halt, Review
from trustgate.readers import LastAIText, ToolCallArgs
from trustgate.testing import lying_model
from trustgate.verifiers.base import Evidence, FunctionVerifier

FILES = {"a.py": "def f():\n    return 1\n"}


def _grounded(claims: Any, evidence: Evidence) -> list[Finding]:
    out = []
    for call in claims:
        quote = call["args"].get("quote")
        if quote is None or quote in FILES.get(call["args"].get("path", ""), ""):
            out.append(Finding.ok("grounded", subject=call["id"]))
        else:
            out.append(
                Finding.failed(
                    "grounded", "content_mismatch", "quote not in file", subject=call["id"]
                )
            )
    return out


TOOL_GATE = TrustGate(
    "tool_gate",
    reads=ToolCallArgs(),
    verifiers=[FunctionVerifier(_grounded, name="grounded")],
    policy=Halt(),
)


def _tools(executed: list[str]) -> list[Any]:
    @tool
    def close_item(path: str, quote: str) -> str:
        """Close a review item as already correct."""
        executed.append(f"close_item:{path}")
        return "closed"

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        executed.append(f"read_file:{path}")
        return FILES.get(path, "")

    return [close_item, read_file]


CALLS = AIMessage(
    content="",
    tool_calls=[
        {"name": "close_item", "args": {"path": "a.py", "quote": "return 42"}, "id": "c1"},
        {"name": "read_file", "args": {"path": "a.py"}, "id": "c2"},
    ],
)


def test_blocked_tool_call_returns_error_tool_message() -> None:
    executed: list[str] = []
    agent = create_agent(
        lying_model(CALLS, "Done."),
        _tools(executed),
        middleware=[TrustGateMiddleware(tool_gates=[TOOL_GATE])],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "m"}}
    out = agent.invoke({"messages": [HumanMessage("close it")]}, config)
    assert executed == ["read_file:a.py"]
    blocked = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "c1"]
    assert blocked and blocked[0].status == "error"
    assert "grounded/content_mismatch" in str(blocked[0].content)
    decisions = sorted(r.decision for r in reports(agent, config))
    assert decisions == ["halted", "pass"]


async def test_async_tool_gate() -> None:
    executed: list[str] = []
    agent = create_agent(
        lying_model(CALLS, "Done."),
        _tools(executed),
        middleware=[TrustGateMiddleware(tool_gates=[TOOL_GATE])],
    )
    await agent.ainvoke({"messages": [HumanMessage("close it")]})
    assert executed == ["read_file:a.py"]


def _no_invented(claims: Any, evidence: Evidence) -> list[Finding]:
    if "9.2" in claims:
        return [
            Finding.failed(
                "contract",
                "invented_citation",
                "not approved",
                subject="ISO 27001 9.2",
                proposals=[Cut(text=t) for t in ["ISO 27001 9.2"]],
            )
        ]
    return [Finding.ok("contract")]


def test_model_gate_rewrites_the_answer() -> None:
    gate = TrustGate(
        "answer",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_no_invented, name="contract")],
        policy=Caveat(),
    )
    agent = create_agent(
        lying_model("Audit yearly per ISO 27001 9.2."),
        [],
        middleware=[TrustGateMiddleware(model_gates=[gate])],
    )
    out = agent.invoke({"messages": [HumanMessage("draft")]})
    final = out["messages"][-1]
    assert final.content.startswith("> **Caveat:**")
    assert "ISO 27001 9.2" not in final.content.split("\n\n", 1)[1]
    assert len([m for m in out["messages"] if isinstance(m, AIMessage)]) == 1
    assert [r.decision for r in out["trust_reports"]] == ["caveated"]


def test_model_gate_halt_raises() -> None:
    gate = TrustGate(
        "answer",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_no_invented, name="contract")],
        policy=Halt(),
    )
    agent = create_agent(
        lying_model("Audit yearly per ISO 27001 9.2."),
        [],
        middleware=[TrustGateMiddleware(model_gates=[gate])],
    )
    with pytest.raises(GateHalted):
        agent.invoke({"messages": [HumanMessage("draft")]})


def test_needs_a_gate() -> None:
    with pytest.raises(ConfigurationError):
        TrustGateMiddleware()


def test_a_model_gate_cannot_ask_a_person() -> None:
    """Around the model call a resumed step would call the model again, and the
    person's answer would release a response they never saw: refused up front."""
    gate = TrustGate(
        "answer",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_no_invented, name="contract")],
        policy=Review(),
    )
    with pytest.raises(ConfigurationError, match="guard"):
        TrustGateMiddleware(model_gates=[gate])
    TrustGateMiddleware(tool_gates=[gate])  # a tool call is gated again, unchanged, on resume


def test_a_tool_returning_a_command_keeps_its_report() -> None:
    """The tool gate's report reaches ``trust_reports`` whatever the tool returns."""

    @tool
    def close_item(path: str, quote: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Close a review item as already correct."""
        return Command(update={"messages": [ToolMessage("closed", tool_call_id=tool_call_id)]})

    calls = AIMessage(
        content="",
        tool_calls=[
            {"name": "close_item", "args": {"path": "a.py", "quote": "return 1"}, "id": "c1"}
        ],
    )
    agent = create_agent(
        lying_model(calls, "Done."),
        [close_item],
        middleware=[TrustGateMiddleware(tool_gates=[TOOL_GATE])],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "cmd"}}
    out = agent.invoke({"messages": [HumanMessage("close it")]}, config)
    assert any(isinstance(m, ToolMessage) and m.text == "closed" for m in out["messages"])
    assert [(r.gate, r.decision) for r in out["trust_reports"]] == [("tool_gate", "pass")]


def test_model_step_reports_reach_the_state() -> None:
    """Each model step's crossing is recorded in ``trust_reports``, the halted ones
    beside the failed task (``trustgate.reports`` reads both)."""
    gate = TrustGate(
        "answer",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_no_invented, name="contract")],
        policy=Halt(),
    )
    agent = create_agent(
        lying_model("Audit yearly.", "Audit yearly per ISO 27001 9.2."),
        [],
        middleware=[TrustGateMiddleware(model_gates=[gate])],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "r"}}
    agent.invoke({"messages": [HumanMessage("draft")]}, config)
    with pytest.raises(GateHalted):
        agent.invoke({"messages": [HumanMessage("again")]}, config)
    assert [r.decision for r in reports(agent, config)] == ["pass", "halted"]
    texts = [m.text for m in agent.get_state(config).values["messages"]]
    assert texts == ["draft", "Audit yearly.", "again"]  # the halted step wrote nothing


def test_a_langchain_that_hides_inner_commands_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Model gates that could not see what inner ``wrap_model_call`` middleware writes
    beside the response are refused when the middleware is built, not half-wired."""
    from trustgate import _compat
    from trustgate.errors import LangGraphCompatibilityError

    gate = TrustGate(
        "answer",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(lambda c, e: [], name="none")],
        policy=Halt(),
    )
    _compat.check_model_call_chain.cache_clear()
    monkeypatch.setattr(_compat, "model_call_commands", lambda handler: None)
    try:
        with pytest.raises(LangGraphCompatibilityError, match="wrap_model_call"):
            TrustGateMiddleware(model_gates=[gate])
    finally:
        _compat.check_model_call_chain.cache_clear()
