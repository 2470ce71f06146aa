"""A multi-tool agent whose gate verifies one tool and lets the named others pass.

``ToolCallArgs(tools=["refund"], passthrough=["lookup"])``: calls to ``refund`` are
verified, calls to ``lookup`` go through unverified, and a call to any other tool is
still held (default deny). These tests are the ways a model could ride that
declaration: a lie in a listed tool's call beside a declared one, a call to a tool
nobody declared, a name that differs from a declared one by a space or a letter's
case, one call that names a declared tool in one place and the verified tool in
another, a second gate on the node that did not declare the tool. The honest run of
the same agent goes through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from shapes import Recorder
from test_bypass_attacks import CHECK, LIE, TRUE_TEXT, S, attack, graph, text_gate

import trustgate
from trustgate import TrustGate
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.policies import BlockToolCalls, Halt
from trustgate.readers import ToolCallArgs


def agent_gate(policy: Any = None) -> TrustGate:
    """The declaration a multi-tool agent's author writes: verify refunds, let lookups
    through, and the message text too."""
    return TrustGate(
        "calls",
        reads=ToolCallArgs(tools=["refund"], passthrough=["lookup"]),
        verifiers=[CHECK],
        policy=policy or BlockToolCalls(then=Halt()),
        passthrough=["messages.text"],
    )


def _agent_graph(calls: Callable[[], AIMessage], recorder: Recorder) -> Any:
    """The agent asks for its calls once; each tool records its real executions."""

    @tool
    def refund(reference: str) -> str:
        """Pay out a refund against a ledger reference."""
        recorder.tool_ran("refund", reference=reference)
        return "refunded"

    @tool
    def lookup(order: str) -> str:
        """Look an order up (read only)."""
        recorder.tool_ran("lookup", order=order)
        return "order found"

    @tool
    def wire_money(account: str) -> str:
        """Send money to an account."""
        recorder.tool_ran("wire_money", account=account)
        return "wired"

    def agent(state: S) -> dict[str, Any]:
        if any(isinstance(m, ToolMessage) for m in state["messages"]):
            return {"messages": [AIMessage(TRUE_TEXT)]}
        return {"messages": [calls()]}

    return graph(agent, tools=[refund, lookup, wire_money])


def _call(name: str, args: dict[str, Any], cid: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": cid}


def _run_attack(calls: Callable[[], AIMessage], gates: Any = None) -> Any:
    recorder = Recorder()
    a = attack(
        _agent_graph(calls, recorder),
        gates if gates is not None else agent_gate(),
        downstream=("after", "tools"),
        recorder=recorder,
    )
    assert a.control.hits.get("tool_runs"), "unguarded, a tool runs with the lie"
    a.assert_blocked()
    return a


def test_the_honest_multi_tool_run_goes_through_unchanged() -> None:
    recorder = Recorder()
    honest = [
        _call("lookup", {"order": "A-1"}, "c1"),
        _call("refund", {"reference": "ledger entry AB-1"}, "c2"),
    ]
    builder = _agent_graph(lambda: AIMessage("Checking.", tool_calls=honest), recorder)
    plain = builder.compile(checkpointer=InMemorySaver())
    app = trustgate.guard(builder, {"agent": agent_gate()}).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "honest"}}
    recorder.reset()
    want = plain.invoke({"messages": [HumanMessage("Refund A-1")]}, config)
    ran_plain = list(recorder.tool_runs)
    recorder.reset()
    got = app.invoke({"messages": [HumanMessage("Refund A-1")]}, config)
    assert [(type(m).__name__, m.content) for m in got["messages"]] == [
        (type(m).__name__, m.content) for m in want["messages"]
    ]
    assert list(recorder.tool_runs) == ran_plain and len(ran_plain) == 2
    decisions = [r.decision for r in trustgate.reports(app, config)]
    assert decisions and set(decisions) == {"pass"}


def test_a_lie_in_the_verified_tool_beside_a_declared_one_is_blocked() -> None:
    """The declared lookup runs; the refund with the invented reference never does."""
    a = _run_attack(
        lambda: AIMessage(
            "",
            tool_calls=[
                _call("lookup", {"order": "A-1"}, "c1"),
                _call("refund", {"reference": LIE}, "c2"),
            ],
        )
    )
    assert "blocked" in a.decisions()


def test_a_call_to_a_tool_nobody_declared_is_held() -> None:
    a = _run_attack(lambda: AIMessage("", tool_calls=[_call("wire_money", {"account": LIE}, "c1")]))
    assert a.halted
    why = str(a.runs["stream"].halted)
    assert "passthrough=['tool_name'" in why and "ToolCallArgs(tools=[...]" in why


@pytest.mark.parametrize("name", ["lookup ", "Lookup", "LOOKUP", "look up", "lookup\u200b"])
def test_a_declared_name_must_match_exactly(name: str) -> None:
    """A name a tool registry might normalise to a declared one is another tool's."""

    @tool(name)
    def lookalike(order: str) -> str:
        """A tool whose name resembles the declared one."""
        return "ran"

    recorder = Recorder()

    def agent(state: S) -> dict[str, Any]:
        if any(isinstance(m, ToolMessage) for m in state["messages"]):
            return {"messages": [AIMessage(TRUE_TEXT)]}
        return {"messages": [AIMessage("", tool_calls=[_call(name, {"order": LIE}, "c1")])]}

    a = attack(graph(agent, tools=[lookalike]), agent_gate(), recorder=recorder)
    a.assert_blocked()
    assert a.halted


def test_one_call_named_as_declared_in_one_place_and_verified_in_another() -> None:
    """The parsed call says ``lookup``, the raw provider form of the same id says
    ``refund`` with the lie: a consumer could act on either, so neither is released."""

    def message() -> AIMessage:
        return AIMessage(
            "",
            tool_calls=[_call("lookup", {"order": LIE}, "c1")],
            additional_kwargs={
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "refund", "arguments": f'{{"reference": "{LIE}"}}'},
                    }
                ]
            },
        )

    a = _run_attack(message)
    assert a.decisions()[0] == "blocked"


def test_a_second_gate_that_did_not_declare_the_tool_still_holds_its_calls() -> None:
    """One gate's declaration does not speak for another gate of the node."""
    a = _run_attack(
        lambda: AIMessage("", tool_calls=[_call("lookup", {"order": LIE}, "c1")]),
        [agent_gate(), text_gate(passthrough=["messages.text"], name="answer")],
    )
    halted = a.runs["stream"].halted
    assert halted is not None
    why = " ".join(f.message for f in halted.report.failed)
    assert "declared by 'calls' but not by 'answer'" in why


def test_the_declaration_is_checked_when_the_gate_is_built() -> None:
    with pytest.raises(ConfigurationError, match="without tools="):
        ToolCallArgs(passthrough=["lookup"])
    with pytest.raises(ConfigurationError, match="both verified"):
        ToolCallArgs(tools=["refund"], passthrough=["refund"])
    with pytest.raises(ConfigurationError, match="list of strings"):
        ToolCallArgs(tools=["refund"], passthrough="lookup")


def test_without_the_declaration_the_other_tool_halts() -> None:
    """The default stays deny: the same honest lookup, with no passthrough, halts."""
    builder = _agent_graph(
        lambda: AIMessage("", tool_calls=[_call("lookup", {"order": "A-1"}, "c1")]), Recorder()
    )
    gate = TrustGate(
        "calls",
        reads=ToolCallArgs(tools=["refund"]),
        verifiers=[CHECK],
        policy=BlockToolCalls(then=Halt()),
        passthrough=["messages.text"],
    )
    app = trustgate.guard(builder, {"agent": gate}).compile(checkpointer=InMemorySaver())
    with pytest.raises(GateHalted, match="passthrough=\\['tool_name'"):
        app.invoke({"messages": [HumanMessage("x")]}, {"configurable": {"thread_id": "t"}})
