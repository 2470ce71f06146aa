"""What a gate that may pause lends its durable tasks (the node's input, a verifier's
request, by an opaque key) is scoped to the crossing that lends it, not to the process:
a run in the same process, on another thread or asyncio task, cannot read another run's
request by its key, and nothing is left once a run ended, however it ended.

The private registry of ``trustgate.graph._node`` is the subject here."""

from __future__ import annotations

import asyncio
import secrets
import threading
from types import SimpleNamespace
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate
from trustgate.graph import _node
from trustgate.policies import Review
from trustgate.readers import LastAIText
from trustgate.verifiers.base import FunctionVerifier


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    who: str


def _gate() -> TrustGate:
    return TrustGate(
        "text",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(lambda c, e: [Finding.ok("fine")], name="fine")],
        policy=Review(),  # may pause: the node call and the check are durable tasks
    )


def _app(node: Any) -> Any:
    g = StateGraph(S)
    g.add_node("agent", node)
    g.add_edge(START, "agent")
    return trustgate.guard(g, {"agent": _gate()}).compile(checkpointer=InMemorySaver())


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every key the node module lends a request under, in order."""
    made: list[str] = []

    def token_hex(n: int) -> str:
        key = secrets.token_hex(n)
        made.append(key)
        return key

    monkeypatch.setattr(_node, "secrets", SimpleNamespace(token_hex=token_hex))
    return made


def _visible(key: str) -> bool:
    try:
        _node._take_request(key)
    except RuntimeError:
        return False
    return True


def _start(who: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        {"messages": [HumanMessage("go")], "who": who},
        {"configurable": {"thread_id": who}},
    )


def test_two_threaded_runs_do_not_see_each_others_requests(keys: list[str]) -> None:
    a_inside, a_go = threading.Event(), threading.Event()
    seen_by_b: list[bool] = []
    own_seen: dict[str, bool] = {}

    def node(state: S) -> dict[str, Any]:
        own_seen[state["who"]] = _visible(keys[-1])  # its own request, inside its task
        if state["who"] == "a":
            a_inside.set()
            assert a_go.wait(30)
        elif state["who"] == "b":
            seen_by_b.extend(_visible(k) for k in a_keys)
        else:
            raise ValueError("the run dies inside its crossing")
        return {"messages": [AIMessage(f"reply to {state['who']}")]}

    app = _app(node)
    out: dict[str, Any] = {}
    a = threading.Thread(target=lambda: out.setdefault("a", app.invoke(*_start("a"))))
    a.start()
    try:
        assert a_inside.wait(30)
        a_keys = list(keys)
        assert a_keys  # run a is inside its crossing, its input lent
        assert not any(_visible(k) for k in a_keys)  # not from this thread either
        b = app.invoke(*_start("b"))
    finally:
        a_go.set()
        a.join(30)
    assert seen_by_b == [False] * len(a_keys)
    assert out["a"]["messages"][-1].content == "reply to a"
    assert b["messages"][-1].content == "reply to b"
    with pytest.raises(Exception):  # noqa: B017 - the node error, however it is withheld
        app.invoke(*_start("c"))
    assert own_seen == {"a": True, "b": True, "c": True}
    # every run over, the died one too: nothing lent is left anywhere
    assert not any(_visible(k) for k in keys)
    assert dict(_node._REQUESTS.get()) == {}


def test_two_async_runs_do_not_see_each_others_requests(keys: list[str]) -> None:
    async def main() -> tuple[Any, Any, list[bool]]:
        a_inside, a_go = asyncio.Event(), asyncio.Event()
        seen_by_b: list[bool] = []
        a_keys: list[str] = []

        async def node(state: S) -> dict[str, Any]:
            assert _visible(keys[-1])  # its own request, inside its task
            if state["who"] == "a":
                a_inside.set()
                await a_go.wait()
            else:
                seen_by_b.extend(_visible(k) for k in a_keys)
            return {"messages": [AIMessage(f"reply to {state['who']}")]}

        app = _app(node)

        async def run_b() -> Any:
            await a_inside.wait()
            a_keys.extend(keys)
            try:
                return await app.ainvoke(*_start("b"))
            finally:
                a_go.set()

        a, b = await asyncio.gather(app.ainvoke(*_start("a")), run_b())
        assert a_keys
        return a, b, seen_by_b

    a, b, seen_by_b = asyncio.run(main())
    assert seen_by_b and not any(seen_by_b)
    assert a["messages"][-1].content == "reply to a"
    assert b["messages"][-1].content == "reply to b"
    assert not any(_visible(k) for k in keys)
