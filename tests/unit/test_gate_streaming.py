"""Streaming never leaks: held tokens are released only after the gate."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from trustgate import Cut, Finding, TrustGate
from trustgate.errors import GateHalted
from trustgate.graph import TrustReports, guard
from trustgate.policies import BlockToolCalls, Caveat, Halt, Rerender
from trustgate.readers import LastAIText, ToolCallArgs
from trustgate.testing import honest_model, lying_model
from trustgate.verifiers.base import Evidence, FunctionVerifier

HONEST = "Checkout latency rose to 9.2 seconds at 14:02. The alert fired at 14:03."
LIE = "Retain records per ISO 27001 9.2 for audits. Review them yearly."


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    trust_issues: list[str]
    trust_reports: TrustReports


def no_invented(claims: Any, evidence: Evidence) -> list[Finding]:
    if "ISO 27001 9.2" in claims:
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


def app_for(model: Any, policy: Any) -> Any:
    def writer(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    gate = TrustGate(
        "blind",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(no_invented, name="contract")],
        policy=policy,
    )
    g = StateGraph(S)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    return guard(g, {"writer": gate}).compile()


def _no_reports(value: Any) -> Any:
    """Everything but the reports (their claims are the record of what was refused)."""
    if isinstance(value, dict):
        return {k: _no_reports(v) for k, v in value.items() if k != "trust_reports"}
    if isinstance(value, (list, tuple)):
        return [_no_reports(v) for v in value]
    return value


def _tokens(parts: list[Any]) -> list[str]:
    return [str(chunk.content) for chunk, _meta in parts]


def test_honest_run_streams_in_chunks() -> None:
    app = app_for(honest_model(HONEST), Halt())
    parts = list(app.stream({"messages": [HumanMessage("go")]}, stream_mode="messages"))
    tokens = [t for t in _tokens(parts) if t]
    assert len(tokens) > 5  # really token by token
    assert "".join(tokens) == HONEST


def test_lying_run_no_token_of_the_removed_citation() -> None:
    app = app_for(lying_model(LIE, LIE), Rerender(to="writer", then=Caveat()))
    parts = list(
        app.stream({"messages": [HumanMessage("go")]}, stream_mode=["messages", "updates"])
    )
    streamed = "".join(str(d[0].content) for m, d in parts if m == "messages")
    assert "9.2" not in streamed.split("\n\n", 1)[-1]
    assert streamed.startswith("> **Caveat:**")
    updates = repr([{k: v for k, v in (d or {}).items()} for m, d in parts if m == "updates"])
    assert "__trustgate" not in updates


def test_halted_run_streams_nothing_of_the_lie() -> None:
    app = app_for(lying_model(LIE), Halt())
    seen: list[Any] = []
    with pytest.raises(GateHalted):
        for part in app.stream(
            {"messages": [HumanMessage("go")]}, stream_mode=["messages", "values"]
        ):
            seen.append(part)
    assert not [p for p in seen if p[0] == "messages"]
    values = [d for m, d in seen if m == "values"]
    assert all("ISO" not in str(v.get("messages")) for v in values)


def test_fabricated_tool_argument_never_streamed() -> None:
    model = lying_model(
        AIMessage(
            content="",
            tool_calls=[
                {"name": "close", "args": {"quote": "return 42"}, "id": "c1"},
                {"name": "read", "args": {"path": "a.py"}, "id": "c2"},
            ],
        ),
        AIMessage(content="", tool_calls=[{"name": "read", "args": {"path": "a.py"}, "id": "c3"}]),
    )

    def agent(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def grounded(claims: Any, evidence: Evidence) -> list[Finding]:
        return [
            Finding.failed("g", "invented", "quote not in file", subject=c["id"])
            if "42" in str(c["args"])
            else Finding.ok("g", subject=c["id"])
            for c in claims
        ]

    gate = TrustGate(
        "tool_gate",
        reads=ToolCallArgs(),
        verifiers=[FunctionVerifier(grounded, name="g")],
        policy=BlockToolCalls(),
        passthrough=["messages.text"],
    )
    g = StateGraph(S)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    app = guard(g, {"agent": gate}).compile()
    parts = list(app.stream({"messages": [HumanMessage("go")]}, stream_mode="messages"))
    assert "return 42" not in repr(parts)
    call_ids = {c.get("id") for chunk, _ in parts for c in getattr(chunk, "tool_calls", [])}
    # the first answer's tokens were held and dropped; the consumer sees the released
    # transcript: the blocked call without its arguments, then the model's new answer
    assert call_ids == {"c1", "c3"}


def test_subgraphs_true() -> None:
    inner = app_for(lying_model(LIE), Halt())
    outer = StateGraph(S)
    outer.add_node("sub", inner)
    outer.add_edge(START, "sub")
    app = outer.compile()
    seen: list[Any] = []
    with pytest.raises(GateHalted):
        for part in app.stream(
            {"messages": [HumanMessage("go")]}, stream_mode="messages", subgraphs=True
        ):
            seen.append(part)
    assert "ISO" not in repr(seen)
    honest = StateGraph(S)
    honest.add_node("sub", app_for(honest_model(HONEST), Halt()))
    honest.add_edge(START, "sub")
    parts = list(
        honest.compile().stream(
            {"messages": [HumanMessage("go")]},
            stream_mode="messages",
            subgraphs=True,
        )
    )
    assert "".join(str(d[0].content) for _ns, d in parts) == HONEST
    assert all(ns for ns, _ in parts)


async def test_astream_and_events() -> None:
    app = app_for(honest_model(HONEST), Halt())
    tokens = [
        str(c.content)
        async for c, _m in app.astream({"messages": [HumanMessage("go")]}, stream_mode="messages")
    ]
    assert "".join(tokens) == HONEST and len(tokens) > 5

    lying = app_for(lying_model(LIE, LIE), Rerender(to="writer", then=Caveat()))
    events = [e async for e in lying.astream_events({"messages": [HumanMessage("go")]})]
    # what the writer's model streamed was held, then dropped (both attempts were
    # rewritten): no model event reaches the consumer, the lie is in none of them
    model_events = [e for e in events if e["event"].startswith(("on_chat_model", "on_llm"))]
    assert model_events == []
    assert "9.2" not in repr([_no_reports(e) for e in events])
    (end,) = [e for e in events if e["event"] == "on_chain_end" and e["name"] == "writer"]
    released = end["data"]["output"]["messages"][-1].content
    assert released.startswith("> **Caveat:**")
    assert "9.2" not in released.split("\n\n", 1)[1]

    fresh = app_for(honest_model(HONEST), Halt())
    honest = [e async for e in fresh.astream_events({"messages": [HumanMessage("go")]})]
    chunks = [e for e in honest if e["event"] == "on_chat_model_stream"]
    assert "".join(str(e["data"]["chunk"].content) for e in chunks) == HONEST


def test_task_and_debug_views_do_not_show_held_input() -> None:
    app = app_for(lying_model(LIE), Halt())
    seen: list[Any] = []
    with pytest.raises(GateHalted):
        for part in app.stream(
            {"messages": [HumanMessage("go")]}, stream_mode=["tasks", "debug", "messages"]
        ):
            seen.append(part)
    text = repr(seen)
    assert "__trustgate" not in text
    # the lie appears only inside reports (their claims are the record of what was refused)
    leaks = [p for p in seen if "for audits" in repr(p) and "trust_reports" not in repr(p)]
    assert leaks == []
