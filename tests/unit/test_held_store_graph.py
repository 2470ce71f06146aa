"""A guarded memory node that writes and then searches behaves as it does unguarded.

Inside a guarded node the store's writes wait for the gate; its searches and namespace
listings see them (a langmem-style node puts a memory, then searches for what it knows).
When the gate halts, the held writes never reach the real store.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, TrustGate
from trustgate.errors import GateHalted
from trustgate.readers import FromKey
from trustgate.verifiers.base import FunctionVerifier

MEMORY = "prefers green tea"
SEEN: list[list[str]] = []
"""What each run of the node found when it searched (before any gate decided)."""


class S(TypedDict, total=False):
    topic: str
    recalled: list[str]
    spaces: list[list[str]]


def remember(state: S, runtime: Runtime[Any]) -> dict[str, Any]:
    store = runtime.store
    assert store is not None
    store.put(("memories", "ann"), "drink", {"text": MEMORY})
    store.delete(("memories", "ann"), "stale")
    found = store.search(("memories",))
    SEEN.append([i.value["text"] for i in found])
    return {
        "recalled": [i.value["text"] for i in found],
        "spaces": [list(ns) for ns in store.list_namespaces(prefix=("memories",))],
    }


async def aremember(state: S, runtime: Runtime[Any]) -> dict[str, Any]:
    store = runtime.store
    assert store is not None
    await store.aput(("memories", "ann"), "drink", {"text": MEMORY})
    await store.adelete(("memories", "ann"), "stale")
    found = await store.asearch(("memories",))
    SEEN.append([i.value["text"] for i in found])
    return {
        "recalled": [i.value["text"] for i in found],
        "spaces": [list(ns) for ns in await store.alist_namespaces(prefix=("memories",))],
    }


def graph(node: Any) -> StateGraph[Any, Any, Any, Any]:
    g = StateGraph(S)
    g.add_node("remember", node)
    g.add_edge(START, "remember")
    g.add_edge("remember", END)
    return g


def seeded() -> InMemoryStore:
    store = InMemoryStore()
    store.put(("memories", "ann"), "stale", {"text": "prefers coffee"})
    store.put(("memories", "bob"), "drink", {"text": "prefers juice"})
    return store


def gate(passes: bool) -> TrustGate:
    def check(recalled: Any, evidence: Any) -> list[Finding]:
        if passes:
            return [Finding.ok("recall")]
        return [Finding.failed("recall", "unsupported", "the recalled memory is not sourced")]

    return TrustGate(
        "recall",
        reads=FromKey("recalled"),
        verifiers=[FunctionVerifier(check, name="recall")],
        passthrough=["store", "spaces"],
    )


def run(node: Any, store: InMemoryStore, gates: dict[str, TrustGate] | None) -> dict[str, Any]:
    builder = trustgate.guard(graph(node), gates) if gates else graph(node)
    app = builder.compile(checkpointer=InMemorySaver(), store=store)
    config = {"configurable": {"thread_id": "t"}}
    if asyncio.iscoroutinefunction(node):
        return dict(asyncio.run(app.ainvoke({"topic": "drinks"}, config)))
    return dict(app.invoke({"topic": "drinks"}, config))


@pytest.mark.parametrize("node", [remember, aremember], ids=["sync", "async"])
def test_put_then_search_returns_the_same_guarded_and_unguarded(node: Any) -> None:
    plain = run(node, seeded(), None)
    assert plain["recalled"] == [MEMORY, "prefers juice"]
    store = seeded()
    assert run(node, store, {"remember": gate(passes=True)}) == plain
    # released: the writes reached the real store once the gate passed
    assert [i.value["text"] for i in store.search(("memories", "ann"))] == [MEMORY]


@pytest.mark.parametrize("node", [remember, aremember], ids=["sync", "async"])
def test_a_halt_keeps_the_held_put_the_node_searched_out_of_the_real_store(node: Any) -> None:
    store = seeded()
    SEEN.clear()
    with pytest.raises(GateHalted):
        run(node, store, {"remember": gate(passes=False)})
    assert SEEN == [[MEMORY, "prefers juice"]]  # the node's search saw its held writes
    assert store.get(("memories", "ann"), "drink") is None
    assert store.get(("memories", "ann"), "stale") is not None  # the delete was held too
    assert [i.key for i in store.search(("memories",))] == ["stale", "drink"]
