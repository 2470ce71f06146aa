"""A release is recorded beside its step's checkpoint only once that checkpoint is saved.

Under ``durability="async"`` (LangGraph's default) a step's checkpoint is saved in the
background while the step's tasks run. A release record written beside a checkpoint
that is not saved yet dies with it when the worker does: the resumed run starts a step
earlier, under other task ids, cannot find the record and decides the crossing anew
(the model asked again, possibly another answer released). So the gate waits for the
save before it records the release.

Here the saver holds every checkpoint save until the gate's verifier has run, so the
step's checkpoint is still on its way when the crossing is ready to record its
release; the order of the saver's calls is what is asserted (no duration).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, FunctionVerifier, LastAIText, TrustGate


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


class Slow(InMemorySaver):
    """Saves each checkpoint only once the gate's verifier ran; records the order."""

    def __init__(self) -> None:
        super().__init__()
        self.verified = threading.Event()
        self.order: list[tuple[str, str]] = []

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.verified.wait(10)
        out = super().put(config, checkpoint, metadata, new_versions)
        self.order.append(("checkpoint", checkpoint["id"]))
        return out

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        await asyncio.to_thread(self.verified.wait, 10)
        out = super().put(config, checkpoint, metadata, new_versions)
        self.order.append(("checkpoint", checkpoint["id"]))
        return out

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if any(c == "__trustgate_release__" for c, _v in writes):
            self.order.append(("release", config["configurable"]["checkpoint_id"]))
        super().put_writes(config, writes, task_id, task_path)


def _app(saver: Slow) -> Any:
    def check(claims: Any, evidence: Any) -> Finding:
        saver.verified.set()
        return Finding.ok("answer")

    g = StateGraph(S)
    g.add_node("agent", lambda s: {"messages": [AIMessage("The refund is not approved yet.")]})
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    gate = TrustGate("answer", reads=LastAIText(), verifiers=[FunctionVerifier(check)])
    return trustgate.guard(g, {"agent": gate}).compile(checkpointer=saver)


def _saved_first(order: list[tuple[str, str]]) -> None:
    [at] = [i for i, (kind, _id) in enumerate(order) if kind == "release"]
    released_beside = order[at][1]
    saved = [
        i for i, (kind, cid) in enumerate(order) if kind == "checkpoint" and cid == released_beside
    ]
    assert saved and saved[0] < at, order


def test_a_release_is_recorded_after_its_checkpoint_is_saved() -> None:
    saver = Slow()
    config: Any = {"configurable": {"thread_id": "sync"}}
    _app(saver).invoke({"messages": [HumanMessage("refund?")]}, config)
    _saved_first(saver.order)


async def test_a_release_is_recorded_after_its_checkpoint_is_saved_async() -> None:
    saver = Slow()
    config: Any = {"configurable": {"thread_id": "async"}}
    await _app(saver).ainvoke({"messages": [HumanMessage("refund?")]}, config)
    _saved_first(saver.order)
