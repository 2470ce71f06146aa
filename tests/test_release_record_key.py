"""A release recorded before a crash is delivered by the worker that resumes the thread.

The record a gate keeps beside its task (what it released, for a delivery after a
crash) is sealed. It used to be sealed under the review key, and without one under a
random key of the process. A crash always means another process resumes, so with the
configuration a shared database asks for (the ledger key) the resumed worker could not
read the record: it ran the node again, decided anew and logged a second released
report for the same crossing, with possibly another output. The record is now sealed
under the key of the database it is kept in: the report log's key when the run's
checkpointer is a ``ReportingSaver`` (``connect()``), else the configured ledger key.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
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
from trustgate.persistence import ReportingSaver, SqliteReportHistory
from trustgate.testing import honest_model

pytestmark = pytest.mark.unit

FIRST, SECOND = "The refund is not approved yet.", "A second, different answer."
THIRD = "A third answer."


class S(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


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
            raise KeyboardInterrupt("the worker was killed")
        super().put_writes(config, writes, task_id, task_path)
        if self.armed and any(c == "__trustgate_release__" for c, _v in writes):
            self.dead = True

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self.dead:
            raise KeyboardInterrupt("the worker was killed")
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
    with pytest.raises(KeyboardInterrupt):
        _app(model, crashing).invoke({"messages": [HumanMessage("refund?")]}, config)
    crashing.revive()
    _another_process(monkeypatch)
    out = _app(model, crashing).invoke(None, config)
    assert len(model.calls) == 1  # the model was not asked again
    assert out["messages"][-1].text == FIRST
    (report,) = trustgate.reports(_app(model, crashing), config)
    assert report.deliveries == 2


def test_the_release_is_sealed_under_the_key_of_the_database_it_is_kept_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No key in the environment: the database was opened with ``key=``; a worker with
    that database's key delivers, one with another key decides anew (and says so)."""
    monkeypatch.delenv("TRUSTGATE_LEDGER_KEY", raising=False)
    monkeypatch.delenv("TRUSTGATE_LEDGER_KEY_FILE", raising=False)
    crashing = Crashing()
    path = tmp_path / "reports.db"
    model = honest_model(FIRST, SECOND, THIRD)
    config = {"configurable": {"thread_id": "database-key"}}

    def saver(key: str) -> ReportingSaver:
        return ReportingSaver(crashing, SqliteReportHistory(path, key=key))

    key = "the-database-key-0123456789"
    with pytest.raises(KeyboardInterrupt):
        _app(model, saver(key)).invoke({"messages": [HumanMessage("refund?")]}, config)
    crashing.revive()
    _another_process(monkeypatch)
    out = _app(model, saver(key)).invoke(None, config)
    assert len(model.calls) == 1 and out["messages"][-1].text == FIRST
    (report,) = saver(key).report_log.history(thread="database-key")
    assert report.deliveries == 2

    # the same crash read by a worker holding another key: not delivered, decided anew
    crashing.armed = True
    with pytest.raises(KeyboardInterrupt):
        _app(model, saver(key)).invoke({"messages": [HumanMessage("and now?")]}, config)
    crashing.revive()
    out = _app(model, saver("another-key-entirely-0123")).invoke(None, config)
    assert len(model.calls) == 3 and out["messages"][-1].text == THIRD
