"""A release recorded before a crash is delivered by the worker that resumes the thread.

The record a gate keeps beside its task (what it released, for a delivery after a
crash) is sealed. It used to be sealed under the review key, and without one under a
random key of the process. A crash always means another process resumes, so with the
configuration a shared database asks for (the ledger key) the resumed worker could not
read the record: it ran the node again, decided anew and logged a second released
report for the same crossing, with possibly another output. The record is now sealed
under the key the gate seals its reports under: the configured ledger key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

import trustgate
from trustgate import Finding, FunctionVerifier, LastAIText, TrustGate
from trustgate.graph import _seal
from trustgate.testing import honest_model

FIRST, SECOND = "The refund is not approved yet.", "A second, different answer."
THIRD = "A third answer."


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


class Killed(Exception):
    """The worker died: nothing it writes lands (not KeyboardInterrupt, which asyncio
    lets out of the event loop)."""


class Crashing(InMemorySaver):
    """Every write after the gate saved its release record fails: the worker died
    between the release and the task's own saved writes."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = True
        self.dead = False

    def put_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        if self.dead:
            raise Killed("the worker was killed")
        super().put_writes(config, writes, task_id, task_path)
        if self.armed and any(c == "__trustgate_release__" for c, _v in writes):
            self.dead = True

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self.dead:
            raise Killed("the worker was killed")
        return super().put(config, checkpoint, metadata, new_versions)

    def revive(self) -> None:
        self.armed = self.dead = False


def _app(model: Any, saver: Any) -> Any:
    def agent(state: S) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(S)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    gate = TrustGate(
        "answer",
        reads=LastAIText(),
        verifiers=[FunctionVerifier(lambda c, e: [Finding.ok("answer")], name="answer")],
    )
    return trustgate.guard(g, {"agent": gate}).compile(checkpointer=saver)


def _another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What differs in the worker that resumes: its own random per-process key."""
    monkeypatch.setattr(_seal, "_random_key", None)


@pytest.fixture(autouse=True)
def _no_review_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_seal.KEY_ENV, raising=False)
    monkeypatch.delenv(_seal.KEY_FILE_ENV, raising=False)


def test_the_resuming_worker_delivers_the_release_under_the_ledger_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    crashing = Crashing()
    model = honest_model(FIRST, SECOND)
    config = {"configurable": {"thread_id": "ledger-key"}}
    with pytest.raises(Killed):
        _app(model, crashing).invoke({"messages": [HumanMessage("refund?")]}, config)
    crashing.revive()
    _another_process(monkeypatch)
    out = _app(model, crashing).invoke(None, config)
    assert len(model.calls) == 1  # the model was not asked again
    assert out["messages"][-1].text == FIRST
    (report,) = trustgate.reports(_app(model, crashing), config)
    assert report.deliveries == 2


async def test_an_async_resume_delivers_it_and_a_worker_with_another_key_decides_anew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    crashing = Crashing()
    model = honest_model(FIRST, SECOND, THIRD)
    config = {"configurable": {"thread_id": "async"}}
    with pytest.raises(Killed):
        await _app(model, crashing).ainvoke({"messages": [HumanMessage("refund?")]}, config)
    crashing.revive()
    _another_process(monkeypatch)
    out = await _app(model, crashing).ainvoke(None, config)
    assert len(model.calls) == 1 and out["messages"][-1].text == FIRST

    # the same crash, resumed by a worker configured with another ledger key: the record
    # cannot be read there, so that worker decides anew (and says so)
    crashing.armed = True
    with pytest.raises(Killed):
        await _app(model, crashing).ainvoke({"messages": [HumanMessage("and now?")]}, config)
    crashing.revive()
    monkeypatch.setenv("TRUSTGATE_LEDGER_KEY", "another-ledger-key-entirely-0123")
    out = await _app(model, crashing).ainvoke(None, config)
    assert len(model.calls) == 3 and out["messages"][-1].text == THIRD
