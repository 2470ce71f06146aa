"""A gate that passes changes nothing about the graph.

Each test builds a shape the previous design broke (an extra step, a refused shape, a
crash), runs it unguarded and guarded by a passing gate, and compares. LangGraph's own
test suite, run with every node guarded (tests/oracle/test_langgraph_oracle.py), is the wider
check; these pin the cases by name.
"""

from __future__ import annotations

import operator
from enum import Enum
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, TimeoutPolicy
from typing_extensions import TypedDict

import trustgate
from trustgate import TrustGate
from trustgate.testing import ScriptedChatModel


def _pass(name: str = "pass") -> TrustGate:
    return TrustGate(name, reads=None, passthrough="*")


def _all(builder: StateGraph[Any, Any, Any, Any]) -> Any:
    return trustgate.guard(builder, {n: _pass(f"pass_{n}") for n in builder.nodes})


class Log(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    n: int


def _no_reports(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k != "trust_reports"}
    return value


def test_no_extra_step_recursion_limit_is_the_same() -> None:
    """A ReAct loop that stops gracefully at a recursion limit unguarded does guarded."""

    @tool
    def ping(x: str) -> str:
        """Ping."""
        return "pong"

    def loop(messages: list[Any]) -> AIMessage:
        return AIMessage(
            content="", tool_calls=[{"name": "ping", "args": {"x": "a"}, "id": f"c{len(messages)}"}]
        )

    for limit in (5, 9, 12):
        model = ScriptedChatModel(responses=[loop], repeat_last=True)
        plain = create_agent(model, [ping])
        guarded = trustgate.guard(
            plain,
            {
                "model": TrustGate(
                    "calls",
                    reads=trustgate.ToolCallArgs(),
                    verifiers=[trustgate.FunctionVerifier(lambda c, e: [], name="none")],
                    passthrough=["messages.text"],
                )
            },
        )
        outcomes = []
        for app in (plain, guarded):
            try:
                app.invoke({"messages": [HumanMessage("go")]}, {"recursion_limit": limit})
                outcomes.append("done")
            except GraphRecursionError:
                outcomes.append("recursion")
        assert outcomes[0] == outcomes[1], (limit, outcomes)


def test_update_state_as_a_guarded_node_and_history_match() -> None:
    def a(state: Log) -> dict[str, Any]:
        return {"log": ["a"]}

    def b(state: Log) -> dict[str, Any]:
        return {"log": ["b"]}

    g = StateGraph(Log)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    runs = []
    for app in (
        g.compile(checkpointer=InMemorySaver()),
        _all(g).compile(checkpointer=InMemorySaver()),
    ):
        cfg: Any = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": []}, cfg)
        app.update_state(cfg, {"log": ["edited"]}, as_node="a")
        snap = app.get_state(cfg)
        history = [
            (s.next, _no_reports(s.values), s.metadata.get("step"))
            for s in app.get_state_history(cfg)
        ]
        runs.append((snap.next, _no_reports(snap.values), history))
    assert runs[0] == runs[1]


def test_repeated_writes_to_one_key_in_one_step_are_kept() -> None:
    def node(state: Log) -> Command[Any]:
        return Command(update=[("log", ["one"]), ("log", ["two"])])

    g = StateGraph(Log)
    g.add_node("n", node)
    g.add_edge(START, "n")
    assert _no_reports(_all(g).compile().invoke({"log": []})) == g.compile().invoke({"log": []})


class Node(str, Enum):  # noqa: UP042 - str(Node.A) is "Node.A", which broke before
    A = "a"


def test_int_thread_ids_enum_node_names_and_a_waiting_edge_into_end() -> None:
    g = StateGraph(Log)
    g.add_node(Node.A, lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, Node.A)
    g.add_edge(START, "b")
    g.add_edge([Node.A, "b"], END)
    app = _all(g).compile(checkpointer=InMemorySaver())
    out = app.invoke({"log": []}, {"configurable": {"thread_id": 1}})
    assert sorted(out["log"]) == ["a", "b"]
    assert {r.thread_id for r in trustgate.reports(app, {"configurable": {"thread_id": 1}})} == {
        "1"
    }


class Untracked(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    scratch: Annotated[Any, UntrackedValue]


def test_untracked_values_are_not_checkpointed_by_the_gate() -> None:
    class Unpicklable:
        def __reduce__(self) -> Any:
            raise TypeError("never serialise me")

    g = StateGraph(Untracked)
    g.add_node("a", lambda s: {"scratch": Unpicklable(), "log": ["a"]})
    g.add_edge(START, "a")
    app = _all(g).compile(checkpointer=InMemorySaver())
    assert app.invoke({"log": []}, {"configurable": {"thread_id": "u"}})["log"] == ["a"]


async def test_node_timeouts_stay_langgraphs() -> None:
    async def slow(state: Log) -> dict[str, Any]:
        return {"log": ["slow"]}

    g = StateGraph(Log)
    g.add_node("a", slow, timeout=TimeoutPolicy(run_timeout=5))
    g.add_edge(START, "a")
    compiled = g.compile()
    guarded = trustgate.guard(compiled, {"a": _pass()})
    assert _no_reports(await guarded.ainvoke({"log": []})) == await compiled.ainvoke({"log": []})


def test_root_channel_state_is_guarded() -> None:
    g: StateGraph[Any, Any, Any, Any] = StateGraph(Annotated[list, operator.add])  # type: ignore[arg-type]
    g.add_node("a", lambda s: ["a"])
    g.add_node("b", lambda s: ["b"])
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = _all(g).compile(checkpointer=InMemorySaver())
    cfg: Any = {"configurable": {"thread_id": "r"}}
    assert app.invoke([], cfg) == g.compile().invoke([])
    assert [r.node for r in trustgate.reports(app, cfg)] == ["a", "b"]


class Dataish(TypedDict, total=False):
    x: int


def test_routers_read_keys_the_node_returned_outside_the_schema() -> None:
    def node(state: Dataish) -> dict[str, Any]:
        return {"x": 1, "extra": "go"}

    def route(state: dict[str, Any]) -> str:
        return END if state.get("extra") == "go" else "node"

    g = StateGraph(Dataish)
    g.add_node("node", node)
    g.add_edge(START, "node")
    g.add_conditional_edges("node", route)
    assert _no_reports(_all(g).compile().invoke({"x": 0})) == g.compile().invoke({"x": 0})


def test_guarded_graph_draws_like_the_original() -> None:
    inner = StateGraph(Log)
    inner.add_node("i", lambda s: {"log": ["i"]})
    inner.add_edge(START, "i")
    g = StateGraph(Log)
    g.add_node("sub", inner.compile())
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "sub")
    g.add_edge("sub", "b")
    plain = g.compile()
    guarded = _all(g).compile()
    assert guarded.get_graph().draw_mermaid() == plain.get_graph().draw_mermaid()
    assert guarded.get_graph(xray=True).draw_mermaid() == plain.get_graph(xray=True).draw_mermaid()
    assert guarded.get_graph().to_json() == plain.get_graph().to_json()
