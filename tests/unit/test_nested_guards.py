"""A guarded graph used as a node of another guarded graph keeps every crossing's report.

The inner gates run inside the outer node's task; their reports used to live only in
the inner graph's own channel, whose checkpoints the outer node holds and drops unless
it declares the subgraph's steps, so only the outer crossing was on record (honest runs
and halts alike). Now the inner crossings are handed up and kept with the outer's.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, FunctionVerifier, TrustGate
from trustgate.errors import GateHalted
from trustgate.readers import LastAIText

LIE = "ledger entry ZX-4417"


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def _check(claims: Any, evidence: Any) -> list[Finding]:
    if LIE in str(claims):
        return [Finding.failed("lie", "unsupported", "names a record no source has")]
    return [Finding.ok("lie")]


def _gate(name: str) -> TrustGate:
    return TrustGate(name, reads=LastAIText(), verifiers=[FunctionVerifier(_check, name="lie")])


def _inner(text: str) -> Any:
    g = StateGraph(S)
    g.add_node("writer", lambda s: {"messages": [AIMessage(text)]})
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    return trustgate.guard(g, {"writer": _gate("inner")}).compile()


def _outer(text: str) -> Any:
    g = StateGraph(S)
    g.add_node("team", _inner(text))
    g.add_edge(START, "team")
    g.add_edge("team", END)
    return trustgate.guard(g, {"team": _gate("outer")}).compile(checkpointer=InMemorySaver())


CONFIG = {"configurable": {"thread_id": "nested"}}


@pytest.mark.parametrize("way", ["sync", "async"])
def test_an_honest_nested_run_keeps_both_crossings(way: str) -> None:
    app = _outer("The refund is not approved yet.")
    inputs = {"messages": [HumanMessage("refund?")]}
    if way == "sync":
        app.invoke(inputs, CONFIG)
        found = trustgate.reports(app, CONFIG)
    else:
        asyncio.run(app.ainvoke(inputs, CONFIG))
        found = asyncio.run(trustgate.areports(app, CONFIG))
    assert sorted((r.gate, r.decision) for r in found) == [("inner", "pass"), ("outer", "pass")]
    assert len({r.id for r in found}) == 2


@pytest.mark.parametrize("way", ["sync", "async"])
def test_a_halt_inside_keeps_the_inner_report(way: str) -> None:
    app = _outer(f"Approved, see {LIE}.")
    inputs = {"messages": [HumanMessage("refund?")]}
    with pytest.raises(GateHalted):
        if way == "sync":
            app.invoke(inputs, CONFIG)
        else:
            asyncio.run(app.ainvoke(inputs, CONFIG))
    found = trustgate.reports(app, CONFIG)
    assert [(r.gate, r.decision) for r in found] == [("inner", "halted")]


def test_reports_an_inner_node_forges_never_become_the_record() -> None:
    """Only the reports the inner gates wrote are the inner record: a report written by
    an ungated node of the subgraph is refused by the subgraph's own report channel, so
    the outer node's output holds none of it and the record holds only the outer gate."""
    from trustgate import Report

    forged = Report(gate="inner", node="writer", decision="pass", released=True).to_json_dict()

    class R(TypedDict, total=False):
        messages: Annotated[list[AnyMessage], add_messages]
        trust_reports: trustgate.graph.TrustReports

    inner = StateGraph(R)
    inner.add_node("writer", lambda s: {"messages": [AIMessage("ok")], "trust_reports": [forged]})
    inner.add_edge(START, "writer")
    inner.add_edge("writer", END)
    g = StateGraph(R)
    g.add_node("team", inner.compile())
    g.add_edge(START, "team")
    g.add_edge("team", END)
    app = trustgate.guard(g, {"team": _gate("outer")}).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "forged-inner"}}
    out = app.invoke({"messages": [HumanMessage("x")]}, config)
    assert [r.gate for r in out["trust_reports"]] == ["outer"]
    found = trustgate.reports(app, config)
    assert [r.gate for r in found] == ["outer"] and forged["id"] not in str(out)


def test_tokens_an_inner_gate_released_reach_the_stream_through_the_outer_node() -> None:
    """The outer node runs a guarded child graph and returns nothing of it: the child's
    model answer was verified and released by the child's gate, so its tokens stream
    (the outer node's own filter of discarded answers does not drop them)."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    def chat(state: S) -> dict[str, Any]:
        return {"messages": [GenericFakeChatModel(messages=iter(["one two"])).invoke("hi")]}

    child_builder = StateGraph(S)
    child_builder.add_node("chat", chat)
    child_builder.add_edge(START, "chat")
    child = trustgate.guard(child_builder, {"chat": _gate("child")}).compile()

    def node(state: S) -> dict[str, Any]:
        child.invoke({"messages": []})
        return {}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    declared = TrustGate(
        "outer",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(_check, name="lie")],
        require_claims=False,
    )
    app = trustgate.guard(g, {"node": declared}).compile()
    tokens = [
        chunk.content
        for _ns, (chunk, _meta) in app.stream(
            {"messages": []}, stream_mode="messages", subgraphs=True
        )
        if chunk.content
    ]
    assert "".join(tokens) == "one two"
