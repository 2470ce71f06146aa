"""Evidence a model can write is no evidence; the state before the step is.

A deep agent's model writes the fabricated line into its own virtual filesystem with a
``write_file`` tool, then cites it: a gate taking ``FromState("files")`` as evidence
verified the quote against the file the model wrote. ``guard()`` now refuses such a
gate, naming the node that writes the key, unless the key is marked trusted. And an
agent gate that takes ``messages`` as evidence no longer halts every honest run
because appending a message counted as rewriting the evidence: ``before_step=True``
reads the channel as it stood before the step, and only editing it is refused.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command
from typing_extensions import TypedDict

import trustgate
from trustgate import EvidenceSources, Finding, FromState, FunctionVerifier, TrustGate
from trustgate.errors import ConfigurationError, GateHalted
from trustgate.readers import LastAIText, ToolCallArgs
from trustgate.testing import lying_model

FAKE = "if order.total < 0: return None"


def _merge_files(left: dict[str, str] | None, right: dict[str, str] | None) -> dict[str, str]:
    return {**(left or {}), **(right or {})}


class FS(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    files: Annotated[dict[str, str], _merge_files]


@tool
def write_file(
    path: str, content: str, tool_call_id: Annotated[str, InjectedToolCallId]
) -> Command[Any]:
    """Write a file of the agent's workspace."""
    return Command(
        update={
            "files": {path: content},
            "messages": [ToolMessage(f"wrote {path}", tool_call_id=tool_call_id)],
        }
    )


@tool
def read_file(path: str) -> str:
    """Read a file of the agent's workspace."""
    return path


def _quote_in_files(calls: Any, evidence: Any) -> list[Finding]:
    files = evidence.get("files") or {}
    return [
        Finding.ok("quote", subject=c["id"])
        if c["args"].get("quote", "") in files.get(c["args"].get("file", ""), "")
        else Finding.failed("quote", "not_in_file", "the quote is not in the file", subject=c["id"])
        for c in calls
        if c["name"] == "close_ticket"
    ]


def _agent(tools: list[Any]) -> StateGraph:
    model = lying_model(
        AIMessage(
            "",
            tool_calls=[
                {"name": "write_file", "args": {"path": "billing.py", "content": FAKE}, "id": "w1"}
            ],
        ),
        AIMessage(
            "",
            tool_calls=[
                {
                    "name": "close_ticket",
                    "args": {"file": "billing.py", "quote": FAKE},
                    "id": "c1",
                }
            ],
        ),
        "BUG-7 is closed: the fix is already in billing.py.",
        repeat_last=True,
    )

    def agent(state: FS) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(FS)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    g.add_edge("tools", "agent")
    return g


def _files_gate(**source: Any) -> TrustGate:
    return TrustGate(
        "close_ticket",
        reads=ToolCallArgs(tools=["close_ticket"]),
        verifiers=[FunctionVerifier(_quote_in_files, name="quote")],
        evidence=EvidenceSources(extra={"files": FromState("files", **source)}),
        passthrough=["messages.text", "messages.tool_calls"],
    )


def test_evidence_a_model_can_write_through_a_tool_is_refused() -> None:
    with pytest.raises(ConfigurationError) as refused:
        trustgate.guard(_agent([write_file, read_file]), {"agent": _files_gate()})
    message = str(refused.value)
    assert "'files'" in message and "'tools'" in message and "runs tools" in message
    assert "trusted=True" in message


def test_tools_that_do_not_write_the_key_leave_it_evidence() -> None:
    guarded = trustgate.guard(_agent([read_file]), {"agent": _files_gate()})
    assert trustgate.guarded_nodes(guarded) == {"agent": ("close_ticket",)}


def test_a_model_node_whose_code_writes_the_key_is_a_writer() -> None:
    model = lying_model("noted")

    def notes(state: FS) -> dict[str, Any]:
        return {"files": {"notes.md": model.invoke("x").text}}

    def agent(state: FS) -> dict[str, Any]:
        return {"messages": [AIMessage("ok")]}

    g = StateGraph(FS)
    g.add_node("notes", notes)
    g.add_node("agent", agent)
    g.add_edge(START, "notes")
    g.add_edge("notes", "agent")
    g.add_edge("agent", END)
    with pytest.raises(ConfigurationError, match=r"'notes' calls a model"):
        trustgate.guard(g, {"agent": _files_gate()})


def test_laundering_through_the_files_is_stopped_when_marked_trusted_by_mistake() -> None:
    """What the refusal prevents: with the key marked trusted anyway, the fabricated
    quote is found in the file the model wrote, and the ticket would close."""
    closed: list[str] = []

    @tool
    def close_ticket(file: str, quote: str) -> str:
        """Close the ticket as already fixed."""
        closed.append(quote)
        return "closed"

    app = trustgate.guard(
        _agent([write_file, close_ticket]), {"agent": _files_gate(trusted=True)}
    ).compile()
    app.invoke({"messages": [HumanMessage("Is BUG-7 fixed?")]}, {"recursion_limit": 8})
    assert closed == [FAKE]  # trusted is the user's word: the refusal is the protection


# --- before_step: the messages channel as it stood before the step ---------------------------


class M(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def _cites_a_tool_result(claims: Any, evidence: Any) -> list[Finding]:
    seen = " ".join(str(m.content) for m in evidence.get("messages") or [])
    return [
        Finding.ok("grounded")
        if "42 open tickets" in seen
        else Finding.failed("grounded", "ungrounded", "no tool result says so")
    ]


def _message_graph(answer: Any) -> StateGraph:
    def agent(state: M) -> dict[str, Any]:
        return {"messages": answer(state)}

    g = StateGraph(M)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    return g


def _messages_gate(**source: Any) -> TrustGate:
    return TrustGate(
        "answer",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_cites_a_tool_result, name="grounded")],
        evidence=EvidenceSources(extra={"messages": FromState("messages", **source)}),
    )


HISTORY = [
    HumanMessage("How many tickets are open?", id="h1"),
    ToolMessage("42 open tickets", tool_call_id="t1", id="t1"),
]


def test_appending_to_the_evidence_channel_halted_every_honest_run() -> None:
    g = _message_graph(lambda s: [AIMessage("There are 42 open tickets.")])
    app = trustgate.guard(g, {"agent": _messages_gate()}).compile()
    with pytest.raises(GateHalted, match="evidence_rewritten"):
        app.invoke({"messages": list(HISTORY)})


def test_before_step_reads_the_channel_as_it_stood_and_lets_the_step_append() -> None:
    g = _message_graph(lambda s: [AIMessage("There are 42 open tickets.")])
    app = trustgate.guard(g, {"agent": _messages_gate(before_step=True)}).compile()
    out = app.invoke({"messages": list(HISTORY)})
    plain = g.compile().invoke({"messages": list(HISTORY)})
    assert [m.content for m in out["messages"]] == [m.content for m in plain["messages"]]


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: [ToolMessage("0 open tickets", tool_call_id="t1", id="t1"), AIMessage("ok")],
        lambda s: [RemoveMessage(id="t1"), AIMessage("There are 42 open tickets.")],
    ],
    ids=["replace", "remove"],
)
def test_before_step_still_refuses_editing_what_was_there(edit: Any) -> None:
    app = trustgate.guard(
        _message_graph(edit),
        {"agent": _messages_gate(before_step=True)},
    ).compile()
    with pytest.raises(GateHalted, match="evidence_rewritten"):
        app.invoke({"messages": list(HISTORY)})


def test_before_step_is_for_channels_that_only_grow() -> None:
    class P(TypedDict, total=False):
        messages: Annotated[list[AnyMessage], add_messages]
        record: str

    g = StateGraph(P)
    g.add_node("agent", lambda s: {"messages": [AIMessage("x")]})
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    gate = TrustGate(
        "g",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(lambda c, e: [], name="v")],
        evidence=EvidenceSources(record=FromState("record", before_step=True)),
    )
    with pytest.raises(ConfigurationError, match="only grows"):
        trustgate.guard(g, {"agent": gate})


def test_from_state_arguments_are_checked() -> None:
    with pytest.raises(ConfigurationError):
        FromState("")
    with pytest.raises(ConfigurationError):
        FromState("files", trusted="yes")  # type: ignore[arg-type]
