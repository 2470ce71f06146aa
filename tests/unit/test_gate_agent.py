"""Gates before tools run: create_agent graphs and ToolNode graphs."""

from __future__ import annotations

from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from trustgate import Finding, TrustGate, reports
from trustgate.graph import TrustReports, guard
from trustgate.policies import BlockToolCalls
from trustgate.readers import ToolCallArgs
from trustgate.testing import lying_model
from trustgate.verifiers.base import Evidence, FunctionVerifier

FILES = {"a.py": "def f():\n    return 1\n"}


def _args_grounded(claims: Any, evidence: Evidence) -> list[Finding]:
    """close_item's quoted evidence must be in the file it names."""
    out = []
    for call in claims:
        if call["name"] != "close_item":
            out.append(Finding.ok("grounded", subject=call["id"]))
            continue
        args = call["args"]
        if args.get("quote", "") and args["quote"] in FILES.get(args.get("path", ""), ""):
            out.append(Finding.ok("grounded", subject=call["id"]))
        else:
            out.append(
                Finding.failed(
                    "grounded", "content_mismatch", "quote not in file", subject=call["id"]
                )
            )
    return out


def _gate() -> TrustGate:
    return TrustGate(
        "tool_gate",
        reads=ToolCallArgs(),
        verifiers=[FunctionVerifier(_args_grounded, name="grounded")],
        policy=BlockToolCalls(),
        require_claims=False,
        passthrough=["messages.text"],  # the answers' text is not what this gate checks
    )


def _script(executed: list[str]) -> tuple[Any, list[Any]]:
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

    model = lying_model(
        AIMessage(
            content="",
            tool_calls=[
                {"name": "close_item", "args": {"path": "a.py", "quote": "return 42"}, "id": "c1"},
                {"name": "read_file", "args": {"path": "a.py"}, "id": "c2"},
            ],
        ),
        # told that close_item was blocked, the model asks again for what it still needs
        AIMessage(
            content="", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "c3"}]
        ),
        "Done.",
    )
    return model, [close_item, read_file]


def test_create_agent_fabricated_tool_call_never_executes() -> None:
    executed: list[str] = []
    model, tools = _script(executed)
    agent = create_agent(model, tools, checkpointer=InMemorySaver())
    guarded = guard(agent, {"model": _gate()})
    config: Any = {"configurable": {"thread_id": "a"}}
    out = guarded.invoke({"messages": [HumanMessage("close the items")]}, config)
    assert executed == ["read_file:a.py"]  # close_item never ran; the model asked again
    assert "return 42" not in repr(out["messages"])  # the fabricated argument is nowhere
    ai = [m for m in out["messages"] if isinstance(m, AIMessage)]
    # the blocked call stays in the transcript without its arguments, answered by the error
    assert ai[0].tool_calls == [{"name": "close_item", "args": {}, "id": "c1", "type": "tool_call"}]
    told = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "c1"]
    assert len(told) == 1 and told[0].status == "error" and "blocked" in told[0].text
    assert [c["id"] for c in ai[1].tool_calls] == ["c3"]
    assert ai[-1].content == "Done."
    decisions = [r.decision for r in reports(guarded, config)]
    assert decisions == ["blocked", "pass", "pass"]
    blocked = reports(guarded, config)[0].overrides[0]
    assert blocked.kind == "tool_call_block" and blocked.before["name"] == "close_item"
    assert guarded.get_graph().draw_mermaid() == agent.get_graph().draw_mermaid()


class MsgState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    trust_reports: TrustReports


def test_toolnode_graph() -> None:
    executed: list[str] = []
    model, tools = _script(executed)

    def agent(state: MsgState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(MsgState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    out = guard(g, {"agent": _gate()}).compile().invoke({"messages": [HumanMessage("go")]})
    assert executed == ["read_file:a.py"]
    assert [r.decision for r in out["trust_reports"]] == ["blocked", "pass", "pass"]


async def test_create_agent_async() -> None:
    executed: list[str] = []
    model, tools = _script(executed)
    guarded = guard(create_agent(model, tools), {"model": _gate()})
    await guarded.ainvoke({"messages": [HumanMessage("close the items")]})
    assert executed == ["read_file:a.py"]
